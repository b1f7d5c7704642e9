// HuggingFace config.json -> ModelConfig, following the families' modeling code in
// transformers (models/<family>/modeling_<family>.py) and Megatron-Bridge's converters
// (src/megatron/bridge/models/<family>/*_bridge.py), which map the same fields onto
// Megatron's TransformerConfig.
#include "megamem/hf_config.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "modules/module_spec.hpp"

namespace megamem {
namespace {

using json = nlohmann::json;

constexpr std::int64_t kMaxSize = std::int64_t{1} << 22;  // normalize()'s sanity bound

enum class Family {
  llama,
  qwen2,
  qwen3,
  qwen2_moe,
  qwen3_moe,
  mixtral,
  deepseek,
  glm4_moe,
  gpt_oss,
  nemotron_h,
  qwen3_next,
  minimax_m2,
  gemma3,
  olmoe,
  ernie45,
  exaone4,
  deepseek_v4,
  kimi_k3
};

// Reads fields of one JSON object, each failure an Error naming the field.
class Reader {
 public:
  explicit Reader(const json& object) : object_(object) {}

  const json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

  // The first of `keys` that config.json has (else the first, which an error then names): a
  // field its writers spell differently.
  const char* spelling(std::initializer_list<const char*> keys) const {
    for (const char* key : keys) {
      if (find(key)) return key;
    }
    return *keys.begin();
  }

  // An integer in [min, max]; missing -> the fallback, or an Error when there is none.
  Expected<std::int64_t> integer(const char* key, std::int64_t min_value, std::int64_t max_value,
                                 std::optional<std::int64_t> fallback = std::nullopt) const {
    const json* value = find(key);
    if (!value) {
      if (fallback) return *fallback;
      return Error{key, "is missing from config.json"};
    }
    if (!value->is_number_integer()) {
      return Error{key, std::string("expects an integer, got ") + value->type_name()};
    }
    if (value->is_number_unsigned() &&
        value->get<std::uint64_t>() > static_cast<std::uint64_t>(max_value)) {
      return Error{key, "is out of range (at most " + std::to_string(max_value) + ")"};
    }
    const std::int64_t number = value->get<std::int64_t>();
    if (number < min_value || number > max_value) {
      return Error{key, "must be between " + std::to_string(min_value) + " and " +
                            std::to_string(max_value) + ", got " + std::to_string(number)};
    }
    return number;
  }

  // An integer for an int field of ModelConfig: max_value is at most kMaxSize, so it fits.
  Expected<int> int_field(const char* key, std::int64_t min_value, std::int64_t max_value,
                          std::optional<std::int64_t> fallback = std::nullopt) const {
    const Expected<std::int64_t> number = integer(key, min_value, max_value, fallback);
    if (!number) return number.error();
    return static_cast<int>(*number);
  }

  Expected<bool> boolean(const char* key, bool fallback) const {
    return typed<bool>(key, fallback, &json::is_boolean, "true or false");
  }

  Expected<std::string> text(const char* key, const std::string& fallback) const {
    return typed<std::string>(key, fallback, &json::is_string, "a string");
  }

  Expected<double> number(const char* key, double fallback) const {
    return typed<double>(key, fallback, &json::is_number, "a number");
  }

 private:
  // A value of one JSON type; missing -> the fallback, another type -> an Error naming it.
  template <class T>
  Expected<T> typed(const char* key, const T& fallback, bool (json::*is_type)() const noexcept,
                    const char* expected) const {
    const json* value = find(key);
    if (!value) return fallback;
    if (!(value->*is_type)()) {
      return Error{key, std::string("expects ") + expected + ", got " + value->type_name()};
    }
    return value->get<T>();
  }

  const json& object_;
};

// Unwraps Expected<T> into `target` or returns its Error from the enclosing function.
#define MM_READ(target, expression)                 \
  do {                                              \
    auto read_result_ = (expression);               \
    if (!read_result_) return read_result_.error(); \
    target = *read_result_;                         \
  } while (false)

// Layer count, widths and vocabulary, which every family has. A Qwen MoE config whose layers
// are all MoE may leave intermediate_size out (Qwen3.5's qwen3_5_moe_text): 0 until
// read_qwen_moe knows whether a dense layer needs it;
// transformers' NemotronHConfig takes the layer count from its layers_block_type list and
// writes num_hidden_layers as null (configuration_nemotron_h.py).
std::optional<Error> read_dimensions(const Reader& r, bool ffn_optional, ModelConfig& m) {
  const json* block_types = r.find("layers_block_type");
  if (block_types && block_types->is_array() && !block_types->empty()) {
    const auto listed = static_cast<std::int64_t>(block_types->size());
    MM_READ(m.num_layers, r.int_field("num_hidden_layers", 1, kMaxSize, listed));
  } else {
    MM_READ(m.num_layers, r.int_field("num_hidden_layers", 1, kMaxSize));
  }
  MM_READ(m.hidden_size, r.int_field("hidden_size", 1, kMaxSize));
  MM_READ(m.num_attention_heads, r.int_field("num_attention_heads", 1, kMaxSize));
  MM_READ(m.ffn_hidden_size,
          r.int_field("intermediate_size", ffn_optional ? 0 : 1, kMaxSize,
                      ffn_optional ? std::optional<std::int64_t>(0) : std::nullopt));
  MM_READ(m.vocab_size, r.integer("vocab_size", 1, std::int64_t{1} << 31));
  return std::nullopt;
}

// Embedding tying, dropout and linear biases as every family here sets them.
std::optional<Error> read_tying_and_dropout(const Reader& r, ModelConfig& m) {
  bool tied = false;
  MM_READ(tied, r.boolean("tie_word_embeddings", false));
  m.untie_embeddings_and_output_weights = !tied;
  double attention_dropout = 0.0;
  MM_READ(attention_dropout, r.number("attention_dropout", 0.0));
  if (!(attention_dropout >= 0.0 && attention_dropout <= 1.0)) {
    return Error{"attention_dropout", "must be between 0 and 1"};
  }
  m.attention_dropout = attention_dropout;
  m.hidden_dropout = 0.0;
  m.add_bias_linear = false;
  return std::nullopt;
}

// Activation, normalization, position embedding, embedding tying and dropout.
std::optional<Error> read_layer_style(const Reader& r, ModelConfig& m, bool swigluoai = false) {
  // Every family here uses a gated MLP: act(gate_proj(x)) * up_proj(x) -> Megatron SwiGLU.
  // MiniMax-M3's swigluoai is the clamped quick-GELU GLU (read_minimax_m3).
  std::string act;
  MM_READ(act, r.text("hidden_act", "silu"));
  if (act != "silu" && act != "swish" && !(swigluoai && act == "swigluoai")) {
    return Error{"hidden_act", "'" + act + "' is not supported: Megatron's gated MLP here is " +
                                   "SwiGLU (hidden_act silu)"};
  }
  m.activation = Activation::swiglu;
  // RMSNorm in all of these families (rms_norm_eps).
  m.normalization = Normalization::rmsnorm;
  m.position_embedding = PositionEmbedding::rope;
  if (const json* scaling = r.find("rope_scaling"); scaling && scaling->is_object()) {
    const Reader rope(*scaling);
    std::string type;
    MM_READ(type, rope.text("type", ""));
    if (type.empty()) MM_READ(type, rope.text("rope_type", ""));
    if (type == "yarn") m.position_embedding = PositionEmbedding::yarn;
  }
  return read_tying_and_dropout(r, m);
}

// Nemotron-H (transformers models/nemotron_h/modeling_nemotron_h.py; Megatron-Bridge
// models/nemotronh/nemotron_h_bridge.py): squared-ReLU MLP (mlp_hidden_act relu2), RMSNorm,
// no position embedding (the bridge sets position_embedding_type "none").
std::optional<Error> read_nemotron_h_style(const Reader& r, ModelConfig& m) {
  std::string act;
  MM_READ(act, r.text("mlp_hidden_act", "relu2"));
  if (act != "relu2") {
    return Error{"mlp_hidden_act", "'" + act + "' is not supported: Nemotron-H's MLP is " +
                                       "squared ReLU (mlp_hidden_act relu2)"};
  }
  m.activation = Activation::squared_relu;
  m.normalization = Normalization::rmsnorm;
  m.position_embedding = PositionEmbedding::none;
  return read_tying_and_dropout(r, m);
}

// Query groups and head dimension of (non-MLA) attention, and Qwen3's per-head q/k norms.
std::optional<Error> read_attention_heads(const Reader& r, Family family, ModelConfig& m) {
  const std::int64_t hidden = m.hidden_size;
  const std::int64_t heads = m.num_attention_heads;
  std::int64_t kv_heads = 0;
  MM_READ(kv_heads, r.integer("num_key_value_heads", 1, kMaxSize, heads));
  if (kv_heads != heads) m.num_query_groups = static_cast<int>(kv_heads);
  std::int64_t head_dim = 0;
  if (r.find("head_dim")) {
    MM_READ(head_dim, r.integer("head_dim", 1, kMaxSize));
  } else if (hidden % heads != 0) {
    return Error{"head_dim", "is missing and hidden_size " + std::to_string(hidden) +
                                 " is not divisible by num_attention_heads " +
                                 std::to_string(heads)};
  } else {
    head_dim = hidden / heads;
  }
  m.kv_channels = static_cast<int>(head_dim);

  if (family == Family::qwen3 || family == Family::qwen3_moe || family == Family::qwen3_next) {
    m.qk_layernorm = true;  // modeling_qwen3.py: q_norm and k_norm per head
  }
  if (family == Family::glm4_moe) {
    // modeling_glm4_moe.py: q_norm and k_norm per head when use_qk_norm (GLM-4.5, 4.6; not Air).
    MM_READ(m.qk_layernorm, r.boolean("use_qk_norm", false));
  }
  return std::nullopt;
}

// Linear-layer biases: fixed by the Qwen2 families, attention_bias/mlp_bias elsewhere.
std::optional<Error> read_biases(const Reader& r, Family family, HfImport& out) {
  ModelConfig& m = out.model;
  if (family == Family::qwen2 || family == Family::qwen2_moe) {
    m.add_qkv_bias = true;  // modeling_qwen2.py: q/k/v_proj with bias=True, o_proj without
    return std::nullopt;
  }
  bool attention_bias = false, mlp_bias = false;
  MM_READ(attention_bias, r.boolean("attention_bias", false));
  if (family == Family::glm4_moe) {
    m.add_qkv_bias = attention_bias;  // modeling_glm4_moe.py: q/k/v_proj biased, o_proj never
    return std::nullopt;
  }
  if (family == Family::gpt_oss) {
    // modeling_gpt_oss.py: the router and the experts always have biases, q/k/v/o_proj with
    // attention_bias; Megatron-Bridge gpt_oss_bridge.py sets add_bias_linear.
    m.add_bias_linear = true;
    m.add_qkv_bias = attention_bias;
    if (!attention_bias) {
      out.notes.push_back(
          "attention_bias false: Megatron's --add-bias-linear (needed for the expert biases) "
          "also biases the attention projections");
    }
    return std::nullopt;
  }
  MM_READ(mlp_bias, r.boolean("mlp_bias", false));
  if (attention_bias && mlp_bias) {
    m.add_bias_linear = true;
  } else if (attention_bias) {
    m.add_qkv_bias = true;
    out.notes.push_back(
        "attention_bias also biases o_proj; Megatron's --add-qkv-bias covers "
        "q, k and v only, so hidden_size parameters per layer are left out");
  } else if (mlp_bias) {
    m.add_bias_linear = true;
    out.notes.push_back(
        "mlp_bias without attention_bias has no Megatron flag; "
        "--add-bias-linear also adds the attention biases");
  }
  return std::nullopt;
}

// Sliding-window attention is not modelled; say so when the config uses it.
std::optional<Error> note_sliding_window(const Reader& r, HfImport& out) {
  // Qwen gates the window with use_sliding_window; Mistral and Mixtral use any sliding_window.
  bool sliding = false;
  MM_READ(sliding, r.boolean("use_sliding_window", false));
  if (out.model_type == "mistral" || out.model_type == "mixtral") {
    const json* window = r.find("sliding_window");
    sliding = window && window->is_number() && window->get<double>() > 0.0;
  }
  if (sliding) {
    out.notes.push_back("sliding-window attention is estimated as full causal attention");
  }
  return std::nullopt;
}

std::optional<Error> read_gemma3_common(const Reader& r, HfImport& out);

// Kimi K3's language model (text_config, model_type kimi_linear) as Megatron-Bridge's
// kimi/kimi_k3_bridge.py KimiK3Bridge.provider_bridge builds it: SiTU-GLU (hidden_act situ;
// the bridge keeps SiLU as the config marker and the spec installs SiTUAndMul), RMSNorm, no
// position embedding (MLA without RoPE), untied embeddings, no biases, no dropout.
std::optional<Error> read_kimi_k3_style(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  std::string act;
  MM_READ(act, r.text("hidden_act", "situ"));
  if (act != "situ" && act != "silu") {
    return Error{"hidden_act", "'" + act + "' is not Kimi K3's gated SiTU (hidden_act situ)"};
  }
  if (act == "situ") {
    out.notes.push_back(
        "hidden_act situ: Kimi K3's SiTU-GLU (kimi_k3_ops.py situ_and_mul) has SwiGLU's "
        "weights; its fp32 intermediates are priced with the K3 layer (m.attn-res)");
  }
  m.activation = Activation::swiglu;
  m.normalization = Normalization::rmsnorm;
  m.position_embedding = PositionEmbedding::none;
  return read_tying_and_dropout(r, m);
}

// The attention and MLP shared by every family (dense part).
std::optional<Error> read_common(const Reader& r, Family family, HfImport& out) {
  if (family == Family::gemma3) return read_gemma3_common(r, out);
  // Qwen3-Next's and DeepSeek-V4's configs may leave intermediate_size out (all MoE).
  const bool ffn_optional = family == Family::qwen3_next || family == Family::deepseek_v4;
  if (auto error = read_dimensions(r, ffn_optional, out.model)) return error;
  if (family == Family::nemotron_h) {
    if (auto error = read_nemotron_h_style(r, out.model)) return error;
    if (auto error = read_attention_heads(r, family, out.model)) return error;
    return read_biases(r, family, out);
  }
  if (family == Family::kimi_k3) return read_kimi_k3_style(r, out);
  if (auto error = read_layer_style(r, out.model, out.model_type.starts_with("minimax_m3")))
    return error;
  // Attention is MLA (DeepSeek-V4's hybrid), read separately.
  if (family == Family::deepseek || family == Family::deepseek_v4) return std::nullopt;
  if (auto error = read_attention_heads(r, family, out.model)) return error;
  if (auto error = read_biases(r, family, out)) return error;
  return note_sliding_window(r, out);
}

// MoE layers of the Qwen MoE families: every decoder_sparse_step-th layer, except
// mlp_only_layers (modeling_qwen2_moe.py Qwen2MoeDecoderLayer).
std::optional<Error> read_qwen_moe(const Reader& r, Family family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t step = 1;
  MM_READ(m.num_experts, r.int_field("num_experts", 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
  MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize));
  MM_READ(step, r.integer("decoder_sparse_step", 1, kMaxSize, 1));
  std::set<std::int64_t> dense_layers;
  if (const json* only = r.find("mlp_only_layers")) {
    if (!only->is_array()) return Error{"mlp_only_layers", "expects a list of layer indices"};
    for (const json& index : *only) {
      if (!index.is_number_integer() || index.get<std::int64_t>() < 0 ||
          index.get<std::int64_t>() >= m.num_layers) {
        return Error{"mlp_only_layers", "expects layer indices below num_hidden_layers"};
      }
      dense_layers.insert(index.get<std::int64_t>());
    }
  }
  std::vector<std::uint8_t> pattern(static_cast<std::size_t>(m.num_layers));
  bool all_moe = true;
  for (int i = 0; i < m.num_layers; ++i) {
    const bool moe = dense_layers.count(i) == 0 && (i + 1) % step == 0;
    pattern[static_cast<std::size_t>(i)] = moe ? 1 : 0;
    all_moe = all_moe && moe;
  }
  if (!all_moe) m.moe_layer_pattern = std::move(pattern);
  if (m.ffn_hidden_size == 0) {
    if (!all_moe) return Error{"intermediate_size", "is missing and some layers are dense"};
    // Unused with every layer MoE; TransformerConfig's default (transformer_config.py).
    m.ffn_hidden_size = 4 * m.hidden_size;
  }
  if (family == Family::qwen2_moe || family == Family::qwen3_next) {
    std::int64_t shared = 0;
    MM_READ(shared, r.integer("shared_expert_intermediate_size", 0, kMaxSize, 0));
    if (shared > 0) {
      m.moe_shared_expert_intermediate_size = static_cast<int>(shared);
      m.moe_shared_expert_gate = true;  // Qwen2MoeSparseMoeBlock.shared_expert_gate
    }
  }
  return std::nullopt;
}

// num_local_experts experts, top num_experts_per_tok: Mixtral's spelling, which gpt-oss,
// MiniMax-M2/M3 and Llama-4 keep.
std::optional<Error> read_local_experts(const Reader& r, ModelConfig& m) {
  MM_READ(m.num_experts, r.int_field("num_local_experts", 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
  return std::nullopt;
}

// Mixtral: every layer MoE, experts as large as the dense MLP would be.
std::optional<Error> read_mixtral(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  if (auto error = read_local_experts(r, m)) return error;
  m.moe_ffn_hidden_size = m.ffn_hidden_size;
  return std::nullopt;
}

// Fine-grained routed experts with shared experts, the first first_k_dense_replace layers
// dense (modeling_deepseek.py DeepseekV3DecoderLayer, modeling_glm4_moe.py Glm4MoeDecoderLayer),
// and the MTP layers. `topk_method` names the routing a config without the field uses.
std::optional<Error> read_shared_expert_moe(const Reader& r, const char* topk_method_default,
                                            ModelConfig& m) {
  MM_READ(m.num_experts, r.int_field("n_routed_experts", 0, kMaxSize, 0));
  if (m.num_experts > 0) {
    std::int64_t shared = 0, first_dense = 0, freq = 1;
    MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
    MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize));
    MM_READ(shared, r.integer("n_shared_experts", 0, kMaxSize, 0));
    MM_READ(first_dense, r.integer("first_k_dense_replace", 0, m.num_layers, 0));
    MM_READ(freq, r.integer("moe_layer_freq", 1, kMaxSize, 1));
    if (shared * m.moe_ffn_hidden_size > kMaxSize) {
      return Error{"n_shared_experts", "times moe_intermediate_size is out of range"};
    }
    m.moe_shared_expert_intermediate_size = static_cast<int>(shared * m.moe_ffn_hidden_size);
    std::vector<std::uint8_t> pattern(static_cast<std::size_t>(m.num_layers));
    bool all_moe = true;
    for (int i = 0; i < m.num_layers; ++i) {
      const bool moe = i >= first_dense && i % freq == 0;
      pattern[static_cast<std::size_t>(i)] = moe ? 1 : 0;
      all_moe = all_moe && moe;
    }
    if (!all_moe) m.moe_layer_pattern = std::move(pattern);
    std::string topk_method;
    MM_READ(topk_method, r.text("topk_method", topk_method_default));
    // noaux_tc: e_score_correction_bias, Megatron's --moe-router-enable-expert-bias buffer.
    m.moe_router_enable_expert_bias = topk_method == "noaux_tc";
  }
  MM_READ(m.mtp_num_layers, r.int_field("num_nextn_predict_layers", 0, kMaxSize, 0));
  return std::nullopt;
}

// A Nemotron-H layer pattern: the symbol string (NVIDIA's remote-code config), or the list of
// block types transformers' NemotronHConfig writes since it took the model in
// (layers_block_type, mtp_layers_block_type: "mamba", "attention", "mlp", "moe", which its
// hybrid_override_pattern property spells M * - E). Empty when neither is there.
Expected<std::string> nemotron_h_pattern(const Reader& r, const char* text_key,
                                         const char* list_key) {
  const json* list = r.find(list_key);
  if (!list) return r.text(text_key, "");
  if (!list->is_array() || list->empty()) {
    return Error{list_key, "expects a list of block types (mamba, attention, mlp, moe)"};
  }
  static constexpr std::pair<std::string_view, char> kSymbols[] = {
      {"mamba", 'M'}, {"attention", '*'}, {"mlp", '-'}, {"moe", 'E'}};
  std::string pattern;
  for (const json& type : *list) {
    const auto known = std::find_if(std::begin(kSymbols), std::end(kSymbols), [&](const auto& k) {
      return type.is_string() && type.get<std::string>() == k.first;
    });
    if (known == std::end(kSymbols)) {
      return Error{list_key, "has a block type other than mamba, attention, mlp and moe"};
    }
    pattern += known->second;
  }
  return pattern;
}

// Nemotron 3's MoE ('E') layers as nemotron_h_bridge.py provider_bridge reads them:
// n_routed_experts, num_experts_per_tok, moe_intermediate_size, the shared experts'
// moe_shared_expert_intermediate_size (CONFIG_MAPPING) and the optional moe_latent_size;
// sigmoid routing with an expert bias (moe_router_enable_expert_bias = True).
std::optional<Error> read_nemotron_h_moe(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  const bool has_moe = m.hybrid_layer_pattern.find('E') != std::string::npos;
  if (!has_moe) return std::nullopt;
  MM_READ(m.num_experts, r.int_field("n_routed_experts", 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
  MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize));
  std::int64_t shared = 0;
  MM_READ(shared, r.integer("n_shared_experts", 0, kMaxSize, 0));
  MM_READ(m.moe_shared_expert_intermediate_size,
          r.int_field("moe_shared_expert_intermediate_size", 0, kMaxSize,
                      std::min<std::int64_t>(shared * m.moe_ffn_hidden_size, kMaxSize)));
  MM_READ(m.moe_latent_size, r.int_field("moe_latent_size", 0, kMaxSize, 0));
  m.moe_router_enable_expert_bias = true;
  bool overlap = true;
  MM_READ(overlap, r.boolean("moe_shared_expert_overlap", true));
  if (m.moe_latent_size > 0 && overlap) {
    out.notes.push_back(
        "the Bridge turns on moe_shared_expert_overlap unless config.json says false; "
        "Megatron refuses it with latent MoE in training (moe_layer.py), so leave it off");
  }
  return std::nullopt;
}

// Nemotron 3's MTP (nemotron_h_bridge.py _hf_mtp_config): num_nextn_predict_layers depths of
// mtp_hybrid_override_pattern, which HybridModelProvider.finalize appends to the pattern as
// "/<mtp>" per depth; mtp_use_repeated_layer defaults to True (one set of weights).
std::optional<Error> read_nemotron_h_mtp(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t depths = 0;
  MM_READ(depths, r.integer("num_nextn_predict_layers", 0, 64, 0));
  if (depths == 0) return std::nullopt;
  std::string mtp;
  MM_READ(mtp, nemotron_h_pattern(r, "mtp_hybrid_override_pattern", "mtp_layers_block_type"));
  if (mtp.empty()) {
    return Error{"mtp_hybrid_override_pattern",
                 "is missing: a config with num_nextn_predict_layers > 0 must define it or "
                 "mtp_layers_block_type (nemotron_h_bridge.py)"};
  }
  for (std::int64_t depth = 0; depth < depths; ++depth) m.hybrid_layer_pattern += "/" + mtp;
  m.mtp_num_layers = static_cast<int>(depths);
  MM_READ(m.mtp_use_repeated_layer, r.boolean("mtp_use_repeated_layer", true));
  return std::nullopt;
}

// Nemotron-H's Mamba-2 mixers and its hybrid_override_pattern (one symbol per layer; the
// NemotronH bridge passes it to Megatron's HybridModel), with Nemotron 3's MoE layers and
// MTP. MambaMixer asserts a conv bias and no projection biases, and its causal conv1d is 4
// wide (mamba_mixer.py).
std::optional<Error> read_nemotron_h(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  MM_READ(m.hybrid_layer_pattern,
          nemotron_h_pattern(r, "hybrid_override_pattern", "layers_block_type"));
  if (m.hybrid_layer_pattern.empty()) {
    return Error{"hybrid_override_pattern",
                 "is missing from config.json, as is layers_block_type (they place the layers)"};
  }
  if (auto error = read_nemotron_h_moe(r, out)) return error;
  if (auto error = read_nemotron_h_mtp(r, out)) return error;
  std::int64_t conv = 0;
  MM_READ(m.mamba_head_dim, r.int_field("mamba_head_dim", 1, kMaxSize));
  MM_READ(m.mamba_num_heads, r.int_field("mamba_num_heads", 1, kMaxSize));
  // NVIDIA's remote-code config writes n_groups, ssm_state_size and conv_kernel; transformers'
  // own NemotronHConfig (models/nemotron_h/configuration_nemotron_h.py) takes mamba_n_groups
  // and mamba_d_conv, and other exports write mamba_num_groups / mamba_state_dim.
  MM_READ(m.mamba_num_groups,
          r.int_field(r.spelling({"n_groups", "mamba_n_groups", "mamba_num_groups"}), 1, kMaxSize));
  MM_READ(
      m.mamba_state_dim,
      r.int_field(r.spelling({"ssm_state_size", "mamba_d_state", "mamba_state_dim"}), 1, kMaxSize));
  const char* conv_key = r.spelling({"conv_kernel", "mamba_d_conv"});
  MM_READ(conv, r.integer(conv_key, 1, kMaxSize, 4));
  if (conv != 4) return Error{conv_key, "must be 4: MambaMixer's d_conv is fixed at 4"};
  bool conv_bias = true, proj_bias = false;
  MM_READ(conv_bias, r.boolean("use_conv_bias", true));
  MM_READ(proj_bias, r.boolean("mamba_proj_bias", false));
  if (!conv_bias || proj_bias) {
    return Error{conv_bias ? "mamba_proj_bias" : "use_conv_bias",
                 "MambaMixer asserts conv_bias and no projection bias (mamba_mixer.py)"};
  }
  return std::nullopt;
}

// DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): the indexer's index_topk, index_n_heads
// and index_head_dim, as Megatron-Bridge's glm5_bridge.py provider_bridge maps them to
// dsa_indexer_* (index_topk_freq and index_skip_topk_offset when present). The bridge also
// trains the indexer (loss coefficient 0.001, sparse) and its recipes pick the cuDNN kernels:
// training settings, said in a note.
std::optional<Error> read_sparse_attention(const Reader& r, HfImport& out) {
  if (!r.find("index_topk")) return std::nullopt;
  ModelConfig& m = out.model;
  MM_READ(m.dsa_indexer_topk, r.int_field("index_topk", 1, kMaxSize));
  MM_READ(m.dsa_indexer_n_heads, r.int_field("index_n_heads", 1, kMaxSize));
  MM_READ(m.dsa_indexer_head_dim, r.int_field("index_head_dim", 1, kMaxSize));
  MM_READ(m.dsa_indexer_topk_freq, r.int_field("index_topk_freq", 1, kMaxSize, 1));
  MM_READ(m.dsa_indexer_skip_topk_offset, r.int_field("index_skip_topk_offset", 0, kMaxSize, 0));
  m.add_bias_linear = false;  // AbsorbedMLASelfAttention has no linear biases
  out.notes.push_back(
      "DeepSeek sparse attention: Megatron-Bridge trains its indexer (--dsa-indexer-loss-coeff "
      "0.001 --dsa-indexer-use-sparse-loss) with the cuDNN kernels (--dsa-kernel-backend "
      "cudnn); Megatron-Core's defaults are no indexer loss and the PyTorch reference kernels");
  return std::nullopt;
}

// DeepSeek-V2/V3/V3.2, Moonlight, Kimi-K2 and GLM-5: MLA, then the shared-expert MoE.
std::optional<Error> read_deepseek(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  m.multi_latent_attention = true;
  MM_READ(m.q_lora_rank, r.int_field("q_lora_rank", 0, kMaxSize, 0));  // null = plain q_proj
  MM_READ(m.kv_lora_rank, r.int_field("kv_lora_rank", 1, kMaxSize));
  MM_READ(m.qk_head_dim, r.int_field("qk_nope_head_dim", 1, kMaxSize));
  MM_READ(m.qk_pos_emb_head_dim, r.int_field("qk_rope_head_dim", 1, kMaxSize));
  MM_READ(m.v_head_dim, r.int_field("v_head_dim", 1, kMaxSize));
  m.qk_layernorm = true;  // q_a_layernorm and kv_a_layernorm (Megatron: --qk-layernorm)
  bool attention_bias = false;
  MM_READ(attention_bias, r.boolean("attention_bias", false));
  if (attention_bias) {
    out.notes.push_back("attention_bias (MLA projection biases) is not represented");
  }
  if (std::optional<Error> error = read_sparse_attention(r, out)) return error;
  return read_shared_expert_moe(r, "", m);
}

// GLM-4.5, GLM-4.5-Air, GLM-4.6: GQA attention (read_common) and DeepSeek-V3's MoE layout. The
// router always keeps e_score_correction_bias (modeling_glm4_moe.py Glm4MoeTopkRouter; Megatron-
// Bridge glm45_bridge.py sets moe_router_enable_expert_bias). partial_rotary_factor (Megatron
// --rotary-percent) changes no memory megamem models.
std::optional<Error> read_glm4_moe(const Reader& r, Family, HfImport& out) {
  return read_shared_expert_moe(r, "noaux_tc", out.model);
}

// gpt-oss's layer_types as --window-attn-skip-freq: N when every N-th layer (1-based) is
// full attention and the rest sliding, 0 when all slide (transformer/utils.py
// is_layer_window_attention). Missing: configuration_gpt_oss.py's default, alternating from a
// sliding first layer.
std::optional<Error> read_window_layers(const Reader& r, ModelConfig& m) {
  const json* types = r.find("layer_types");
  m.window_attn_skip_freq = 2;
  if (!types) return std::nullopt;
  if (!types->is_array() || types->size() != static_cast<std::size_t>(m.num_layers)) {
    return Error{"layer_types", "expects one entry per layer (num_hidden_layers)"};
  }
  for (int freq = 0; freq <= m.num_layers; freq += (freq == 0 ? 2 : 1)) {
    m.window_attn_skip_freq = freq;
    bool same = true;
    for (int i = 0; i < m.num_layers && same; ++i) {
      const json& type = (*types)[static_cast<std::size_t>(i)];
      same = type.is_string() &&
             type.get<std::string>() ==
                 (layer_is_windowed(m, i) ? "sliding_attention" : "full_attention");
    }
    if (same) return std::nullopt;
  }
  return Error{"layer_types",
               "has no Megatron --window-attn-skip-freq equivalent (every N-th layer full "
               "attention, the others sliding_attention)"};
}

// MTP layers config.json names that the bridge does not build: a note with the count and why.
void note_unbuilt_mtp(HfImport& out, const char* key, std::int64_t layers, const char* why) {
  if (layers <= 0) return;
  out.notes.push_back(std::string(key) + " " + std::to_string(layers) + ": " + why +
                      ", so none are estimated");
}

// MiniMax-M2 (M2.1, M2.5, M2.7) as Megatron-Bridge's minimax_m2/minimax_m2_bridge.py builds it:
// every layer MoE, num_local_experts experts of intermediate_size, top num_experts_per_tok,
// sigmoid routing with e_score_correction_bias (use_routing_bias: moe_router_enable_expert_bias),
// QK norm (use_qk_norm), partial RoPE (rotary_dim, no memory megamem models).
std::optional<Error> read_minimax_m2(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t shared = 0, mtp_modules = 0;
  if (auto error = read_local_experts(r, m)) return error;
  MM_READ(shared, r.integer("shared_intermediate_size", 0, kMaxSize, 0));
  MM_READ(m.moe_router_enable_expert_bias, r.boolean("use_routing_bias", false));
  MM_READ(m.qk_layernorm, r.boolean("use_qk_norm", false));
  MM_READ(mtp_modules, r.integer("num_mtp_modules", 0, kMaxSize, 0));
  m.moe_ffn_hidden_size = m.ffn_hidden_size;
  m.moe_shared_expert_intermediate_size = static_cast<int>(shared);
  if (m.qk_layernorm) {
    // minimax_m2_provider.py FullDimQNorm / FullDimKNorm: one RMSNorm over all heads' q (k).
    out.notes.push_back(
        "the full-dimension QK norm (one RMSNorm over all heads, Bridge's FullDimQNorm/"
        "FullDimKNorm) is estimated as Megatron's per-head QK norm: its weights are "
        "(heads + query groups - 2) x head_dim larger per layer, and its unfused fp32 "
        "RMSNorm saves more than the fused norm priced here");
  }
  note_unbuilt_mtp(out, "num_mtp_modules", mtp_modules,
                   "Megatron-Bridge maps no MTP modules for minimax_m2");
  return std::nullopt;
}

// Gemma 3's sliding/global interleave as --window-size and --window-attn-skip-freq: layer_types
// when config.json lists them, else every sliding_window_pattern-th layer global
// (configuration_gemma3.py, default 6); the window as gemma3_provider.py's
// Gemma3TEDotProductAttention passes it to TE: (sliding_window - 1, 0).
std::optional<Error> read_gemma3_window(const Reader& r, ModelConfig& m) {
  std::int64_t window = 0, pattern = 0;
  MM_READ(window, r.integer("sliding_window", 0, kMaxSize, 4096));
  MM_READ(pattern, r.integer("sliding_window_pattern", 1, kMaxSize, 6));
  m.window_size = window > 1 ? static_cast<int>(window - 1) : 0;
  if (m.window_size == 0) return std::nullopt;
  if (r.find("layer_types")) return read_window_layers(r, m);
  m.window_attn_skip_freq = pattern > 1 ? static_cast<int>(pattern) : 0;
  return std::nullopt;
}

// Gemma 3's language model (gemma3_text; configuration_gemma3.py Gemma3TextConfig supplies the
// fields config.json leaves out) as Megatron-Bridge builds it (gemma/gemma3_provider.py,
// gemma3_bridge.py): GQA with per-head QK norm, sandwich norms, gated GELU MLP, RMSNorm, tied
// embeddings.
std::optional<Error> read_gemma3_common(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  std::string act;
  bool tied = true;
  MM_READ(m.num_layers, r.int_field("num_hidden_layers", 1, kMaxSize, 26));
  MM_READ(m.hidden_size, r.int_field("hidden_size", 1, kMaxSize, 2304));
  MM_READ(m.num_attention_heads, r.int_field("num_attention_heads", 1, kMaxSize, 8));
  MM_READ(m.num_query_groups, r.int_field("num_key_value_heads", 1, kMaxSize, 4));
  MM_READ(m.kv_channels, r.int_field("head_dim", 1, kMaxSize, 256));
  MM_READ(m.ffn_hidden_size, r.int_field("intermediate_size", 1, kMaxSize, 9216));
  MM_READ(m.vocab_size, r.integer("vocab_size", 1, std::int64_t{1} << 31, 262208));
  MM_READ(act, r.text("hidden_activation", "gelu_pytorch_tanh"));
  MM_READ(tied, r.boolean("tie_word_embeddings", true));
  if (act != "gelu_pytorch_tanh" && act != "gelu") {
    return Error{"hidden_activation", "'" + act + "' is not Gemma 3's gated GELU"};
  }
  if (m.num_query_groups == m.num_attention_heads) m.num_query_groups = 0;
  // Gemma3ModelProvider: gated_linear_unit with fast_gelu, which has SwiGLU's shapes and which
  // Megatron does not fuse (mlp.py's unfused glu(); Gemma 2's and 4's providers set it too);
  // RMSNorm (zero-centred gamma), QK norm, RoPE, no biases, no dropout.
  m.activation = Activation::swiglu;
  m.fast_gelu = true;
  m.normalization = Normalization::rmsnorm;
  m.position_embedding = PositionEmbedding::rope;
  m.qk_layernorm = true;
  m.post_sublayer_norms = true;  // post_attention_ and post_feedforward_layernorm
  m.add_bias_linear = false;
  m.hidden_dropout = 0.0;
  m.attention_dropout = 0.0;
  m.untie_embeddings_and_output_weights = !tied;
  out.notes.push_back(
      "the gated GELU MLP (gelu_pytorch_tanh) has SwiGLU's shapes; Bridge's fast_gelu is not "
      "fused, so it is priced with mlp.py's unfused glu() (m.fast-gelu)");
  return read_gemma3_window(r, m);
}

// OLMoE as Megatron-Bridge's olmoe/olmoe_bridge.py builds it: every layer MoE, num_experts
// experts of intermediate_size (moe_ffn_hidden_size), top num_experts_per_tok, softmax routing
// with the sequence auxiliary loss; QK norm always on (OLMoESelfAttention in olmoe_provider.py).
std::optional<Error> read_olmoe(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::string scoring;
  MM_READ(m.num_experts, r.int_field("num_experts", 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
  MM_READ(scoring, r.text("scoring_func", "softmax"));
  if (scoring != "softmax") {
    // olmoe_bridge.py: "OlMoE only supports scoring_func='softmax'".
    return Error{"scoring_func",
                 "'" + scoring + "': Megatron-Bridge builds OLMoE with softmax only"};
  }
  m.moe_ffn_hidden_size = m.ffn_hidden_size;
  m.qk_layernorm = true;
  // olmoe_provider.py OLMoESelfAttention: q_layernorm and k_layernorm over all heads at once.
  out.notes.push_back(
      "the full-dimension QK norm (one RMSNorm over all heads' q and one over all heads' k, "
      "Bridge's OLMoESelfAttention) is estimated as Megatron's per-head QK norm: its weights "
      "are 2 x (heads - 1) x head_dim larger per layer, and its saved inputs are priced as the "
      "fused per-head norm's");
  if (r.find("clip_qkv")) {
    out.notes.push_back(
        "clip_qkv is not built by Megatron-Bridge's OLMoE bridge and changes no "
        "memory megamem models");
  }
  return std::nullopt;
}

// ERNIE 4.5 writes some MoE sizes as an int or as a list per modality (text first); the text
// value, as ernie_45_bridge.py takes it.
Expected<std::int64_t> ernie_first(const Reader& r, const char* key, std::int64_t min_value,
                                   std::int64_t fallback) {
  const json* value = r.find(key);
  if (!value || !value->is_array()) return r.integer(key, min_value, kMaxSize, fallback);
  if (value->empty() || !(*value)[0].is_number_integer()) {
    return Error{key, "expects an integer or a list of integers"};
  }
  const std::int64_t first = (*value)[0].get<std::int64_t>();
  if (first < min_value || first > kMaxSize) return Error{key, "is out of range"};
  return first;
}

// ERNIE 4.5's dense and MoE layers as ernie_45_bridge.py lays them out: mlp_layer_types when
// listed, else the first moe_layer_start_index layers dense (default 1) and the rest MoE; the
// bridge reads neither moe_layer_end_index nor moe_layer_interval.
std::optional<Error> read_ernie45_layers(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  std::vector<std::uint8_t> pattern(static_cast<std::size_t>(m.num_layers), 1);
  if (const json* types = r.find("mlp_layer_types")) {
    if (!types->is_array() || types->size() != pattern.size()) {
      return Error{"mlp_layer_types", "expects one entry per layer (num_hidden_layers)"};
    }
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      const json& type = (*types)[i];
      pattern[i] = type.is_string() && type.get<std::string>() == "dense" ? 0 : 1;
    }
  } else {
    std::int64_t start = 0, end = 0, interval = 0;
    MM_READ(start, ernie_first(r, "moe_layer_start_index", 0, 1));
    MM_READ(end, ernie_first(r, "moe_layer_end_index", 0, m.num_layers - 1));
    MM_READ(interval, ernie_first(r, "moe_layer_interval", 1, 1));
    for (std::int64_t i = 0; i < std::min<std::int64_t>(start, m.num_layers); ++i) {
      pattern[static_cast<std::size_t>(i)] = 0;
    }
    if (end < m.num_layers - 1 || interval != 1) {
      out.notes.push_back(
          "moe_layer_end_index / moe_layer_interval are not read by Megatron-Bridge's ERNIE "
          "bridge, which makes every layer from moe_layer_start_index on MoE; so does megamem");
    }
  }
  bool all_moe = true;
  for (const std::uint8_t moe : pattern) all_moe = all_moe && moe == 1;
  if (!all_moe) m.moe_layer_pattern = std::move(pattern);
  return std::nullopt;
}

// ERNIE 4.5's text MoE (Ernie4_5_MoeForCausalLM) as Megatron-Bridge's ernie/ernie_45_bridge.py
// builds it: moe_num_experts experts of moe_intermediate_size, top moe_k, moe_num_shared_experts
// shared experts of the same width (Bridge defaults 64, 6, 2), sigmoid routing with the expert
// bias, no linear biases (use_bias ignored), interleaved RoPE, and no MTP layers.
std::optional<Error> read_ernie45(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t experts = 0, topk = 0, width = 0, shared = 0, mtp = 0;
  bool bias = false;
  MM_READ(experts, ernie_first(r, "moe_num_experts", 1, 64));
  MM_READ(topk, r.integer("moe_k", 1, experts, 6));
  MM_READ(width, ernie_first(r, "moe_intermediate_size", 1, m.ffn_hidden_size));
  MM_READ(shared, r.integer("moe_num_shared_experts", 0, kMaxSize, 2));
  MM_READ(mtp, r.integer("num_nextn_predict_layers", 0, kMaxSize, 0));
  MM_READ(bias, r.boolean("use_bias", false));
  if (shared * width > kMaxSize) {
    return Error{"moe_num_shared_experts", "times moe_intermediate_size is out of range"};
  }
  m.num_experts = static_cast<int>(experts);
  m.moe_router_topk = static_cast<int>(topk);
  m.moe_ffn_hidden_size = static_cast<int>(width);
  m.moe_shared_expert_intermediate_size = static_cast<int>(shared * width);
  m.moe_router_enable_expert_bias = true;  // moe_statics.e_score_correction_bias
  m.add_bias_linear = false;
  m.add_qkv_bias = false;
  if (bias) {
    out.notes.push_back("use_bias: Megatron-Bridge builds ERNIE 4.5 without linear biases");
  }
  if (mtp > 0) {
    out.notes.push_back("num_nextn_predict_layers " + std::to_string(mtp) +
                        ": Megatron-Bridge builds no MTP layers for ERNIE 4.5 (the checkpoints "
                        "ship no MTP weights), so none are estimated");
  }
  return read_ernie45_layers(r, out);
}

// gpt-oss: every layer MoE with biased experts, learned attention sinks, sliding-window
// attention on alternate layers (Megatron-Bridge gpt_oss_bridge.py).
std::optional<Error> read_gpt_oss(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t window = 0;
  if (auto error = read_local_experts(r, m)) return error;
  MM_READ(window, r.integer("sliding_window", 0, kMaxSize, 0));
  m.moe_ffn_hidden_size = m.ffn_hidden_size;  // gpt_oss_bridge.py: intermediate_size
  m.softmax_type = SoftmaxType::learnable;    // GptOssAttention.sinks, one per head
  // gpt_oss_bridge.py: window_size (sliding_window - 1, 0).
  m.window_size = window > 1 ? static_cast<int>(window - 1) : 0;
  if (m.window_size > 0) {
    if (auto error = read_window_layers(r, m)) return error;
    out.notes.push_back("sliding_window " + std::to_string(window) + " is a window of " +
                        std::to_string(m.window_size) +
                        " earlier tokens: HF counts the query itself, Megatron's --window-size " +
                        std::to_string(m.window_size) + ",0 does not (gpt_oss_bridge.py)");
  }
  out.notes.push_back(
      "the clamped GLU (swiglu_limit; Megatron --quick-geglu with --glu-linear-offset 1 and "
      "--activation-func-clamp-value) has SwiGLU's shapes and saved tensors "
      "(fused_bias_geglu.py), so it is estimated as SwiGLU");
  return std::nullopt;
}

// Qwen3-Next as Megatron-Bridge builds it (qwen3_next_bridge.py): GPT layers with
// --experimental-attention-variant gated_delta_net every layer but each
// full_attention_interval-th, gated full attention (attention_output_gate), Qwen MoE with a
// gated shared expert, and the one MTP layer its checkpoints carry (mtp.* weights, mapped as
// mtp.layers.0 by the bridge; config.json does not count it; the bridge's Qwen3-Next recipe
// recipes/qwen/h100/qwen3_next.py sets mtp_num_layers = 1).
// The Gated DeltaNet layers and the gated full attention of Qwen3-Next and Qwen3.5.
std::optional<Error> read_gated_deltanet(const Reader& r, ModelConfig& m) {
  MM_READ(m.linear_attention_freq, r.int_field("full_attention_interval", 1, kMaxSize));
  MM_READ(m.linear_conv_kernel_dim, r.int_field("linear_conv_kernel_dim", 1, kMaxSize));
  MM_READ(m.linear_key_head_dim, r.int_field("linear_key_head_dim", 1, kMaxSize));
  MM_READ(m.linear_value_head_dim, r.int_field("linear_value_head_dim", 1, kMaxSize));
  MM_READ(m.linear_num_key_heads, r.int_field("linear_num_key_heads", 1, kMaxSize));
  MM_READ(m.linear_num_value_heads, r.int_field("linear_num_value_heads", 1, kMaxSize));
  m.attention_output_gate = true;  // Qwen3NextAttention: q_proj doubles for the output gate
  return std::nullopt;
}

std::optional<Error> read_qwen3_next(const Reader& r, Family, HfImport& out) {
  if (auto error = read_qwen_moe(r, Family::qwen3_next, out)) return error;
  ModelConfig& m = out.model;
  if (auto error = read_gated_deltanet(r, m)) return error;
  m.mtp_num_layers = 1;
  out.notes.push_back(
      "mtp_num_layers 1: Qwen3-Next checkpoints carry one MTP layer that config.json does not "
      "list; set it to 0 to train without it");
  return std::nullopt;
}

// Qwen3.5's language model as Megatron-Bridge builds it (qwen_vl/qwen35_vl_bridge.py): the
// Qwen3-Next layers (Gated DeltaNet, gated attention every full_attention_interval-th layer)
// with a dense MLP (qwen3_5_text, Qwen3.5-27B) or Qwen MoE with a gated shared expert
// (qwen3_5_moe_text, Qwen3.5-397B-A17B), and config.json's mtp_num_hidden_layers MTP layers.
std::optional<Error> read_qwen35(const Reader& r, Family family, HfImport& out) {
  if (family == Family::qwen3_next) {
    if (auto error = read_qwen_moe(r, family, out)) return error;
  }
  ModelConfig& m = out.model;
  if (auto error = read_gated_deltanet(r, m)) return error;
  MM_READ(m.mtp_num_layers, r.int_field("mtp_num_hidden_layers", 0, kMaxSize, 0));
  out.notes.push_back(
      "the vision encoder (vision_config, Megatron-Bridge's vision_model) is not estimated: "
      "the language model is");
  return std::nullopt;
}

// EXAONE 4.0 as Megatron-Bridge's exaone/exaone4/exaone4_bridge.py builds it: QK RMSNorm, no
// biases, no dropout, and exaone4_provider.py's pure post-LN layer spec (a TENorm on
// linear_proj's and fc2's outputs, TERowParallelLinearLayerNorm; no input or pre-MLP norm).
std::optional<Error> read_exaone4(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t window = 0;
  MM_READ(window, r.integer("sliding_window", 0, kMaxSize, 0));
  m.qk_layernorm = true;
  m.post_sublayer_norms = true;
  m.hidden_dropout = 0.0;
  m.attention_dropout = 0.0;
  out.notes.push_back(
      "EXAONE 4.0 has no pre-norms (exaone4_provider.py: plain TEColumnParallelLinear for "
      "linear_qkv and fc1), which megamem always prices: 2 x hidden_size weights per layer too "
      "many, and per token and layer one saved hidden_size tensor too many in each sublayer "
      "(the norm's output beside its input)");
  out.notes.push_back(
      "exaone4_provider.py's layer spec runs Megatron-Core's unfused DotProductAttention, which "
      "keeps the s x s attention probabilities: estimate it with --attention-backend local (the "
      "default assumes TE's fused attention)");
  if (window > 0) {
    // exaone4_bridge.py: "32B model introduces hybrid attention (LLLG pattern) - future
    // extension"; neither the bridge nor the provider sets window_size.
    out.notes.push_back("sliding_window " + std::to_string(window) +
                        " is not built by Megatron-Bridge's Exaone4Bridge (full attention on "
                        "every layer); a window would change no memory megamem models");
  }
  return std::nullopt;
}

// GLM-4.7-Flash (glm4_moe_lite) as Megatron-Bridge's glm/glm47_flash_bridge.py builds it:
// DeepSeek-V3's MLA and shared-expert MoE, first_k_dense_replace dense layers, sigmoid routing
// with the expert bias always on, num_nextn_predict_layers MTP layers.
std::optional<Error> read_glm47_flash(const Reader& r, Family family, HfImport& out) {
  if (auto error = read_deepseek(r, family, out)) return error;
  ModelConfig& m = out.model;
  m.moe_router_enable_expert_bias = m.num_experts > 0;  // glm47_flash_bridge.py: always True
  // 20 heads do not divide hidden 2048, so Megatron needs --kv-channels, which MLA does not use;
  // slime's scripts/models/glm4.7-30B-A3B.sh passes the QK head dim (192).
  if (m.hidden_size % m.num_attention_heads != 0) m.kv_channels = m.qk_head_dim;
  return std::nullopt;
}

// Hy3 (hy_v3) as Megatron-Bridge's hy_v3/hy_v3_bridge.py builds it: GQA with QK layernorm,
// first_k_dense_replace dense layers, then MoE of num_experts experts of moe_intermediate_size
// (expert_hidden_dim, its legacy alias), top num_experts_per_tok, with num_shared_experts
// shared experts and sigmoid routing with the expert bias; num_nextn_predict_layers MTP layers
// (model_bridge.py CONFIG_MAPPING).
std::optional<Error> read_hy_v3(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t shared = 0, first_dense = 0;
  MM_READ(m.num_experts, r.int_field("num_experts", 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
  MM_READ(m.moe_ffn_hidden_size,
          r.int_field(r.spelling({"moe_intermediate_size", "expert_hidden_dim"}), 1, kMaxSize));
  MM_READ(shared, r.integer("num_shared_experts", 0, 64));
  MM_READ(first_dense, r.integer("first_k_dense_replace", 0, m.num_layers));
  MM_READ(m.mtp_num_layers, r.int_field("num_nextn_predict_layers", 0, kMaxSize, 0));
  m.moe_shared_expert_intermediate_size = static_cast<int>(shared * m.moe_ffn_hidden_size);
  if (first_dense > 0) {
    m.moe_layer_pattern.assign(static_cast<std::size_t>(m.num_layers), 1);
    for (std::int64_t i = 0; i < first_dense; ++i)
      m.moe_layer_pattern[static_cast<std::size_t>(i)] = 0;
  }
  m.qk_layernorm = true;                   // hy_v3_bridge.py: qk_layernorm = True
  m.moe_router_enable_expert_bias = true;  // hy_v3_bridge.py: sigmoid router with expert_bias
  m.hidden_dropout = 0.0;
  return std::nullopt;
}

// Llama-4 (llama4's text_config, llama4_text) as Megatron-LM's ModelOpt entry point builds it
// (examples/post_training/modelopt/conf/meta-llama/Llama-4-*.sh, post_training/model_builder.py):
// modeling_llama4.py Llama4TextDecoderLayer makes layer i MoE when it is in moe_layers, by
// default every interleave_moe_layer_step-th from step-1; each MoE layer has
// num_local_experts experts of intermediate_size, top num_experts_per_tok with one shared
// expert of intermediate_size (Llama4TextMoe), the routing probabilities applied to the
// tokens before the experts (--export-moe-apply-probs-on-input); dense layers use
// intermediate_size_mlp; use_qk_norm is the weightless L2 norm (--export-qk-l2-norm).
std::optional<Error> read_llama4(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t step = 1;
  if (auto error = read_local_experts(r, m)) return error;
  MM_READ(step, r.integer("interleave_moe_layer_step", 1, kMaxSize, 1));
  MM_READ(m.qk_l2_norm, r.boolean("use_qk_norm", true));
  m.moe_ffn_hidden_size = m.ffn_hidden_size;  // intermediate_size
  m.moe_shared_expert_intermediate_size = m.ffn_hidden_size;
  MM_READ(m.ffn_hidden_size, r.int_field("intermediate_size_mlp", 1, kMaxSize, m.ffn_hidden_size));
  m.moe_apply_probs_on_input = m.moe_router_topk == 1;
  std::vector<std::uint8_t> pattern(static_cast<std::size_t>(m.num_layers), 0);
  if (const json* listed = r.find("moe_layers"); listed && listed->is_array()) {
    for (const json& index : *listed) {
      if (!index.is_number_integer() || index.get<std::int64_t>() < 0 ||
          index.get<std::int64_t>() >= m.num_layers) {
        return Error{"moe_layers", "expects layer indices below num_hidden_layers"};
      }
      pattern[static_cast<std::size_t>(index.get<std::int64_t>())] = 1;
    }
  } else {
    for (std::int64_t i = step - 1; i < m.num_layers; i += step) {
      pattern[static_cast<std::size_t>(i)] = 1;
    }
  }
  if (std::find(pattern.begin(), pattern.end(), 0) != pattern.end()) {
    m.moe_layer_pattern = std::move(pattern);
  }
  out.notes.push_back(
      "chunked attention (attention_chunk_size) is not in Megatron-Core: estimated as causal "
      "attention, which with fused attention saves the same tensors");
  return std::nullopt;
}

// Whether config.json's architectures list names `name`.
bool names_architecture(const Reader& r, std::string_view name) {
  const json* list = r.find("architectures");
  if (!list || !list->is_array()) return false;
  return std::any_of(list->begin(), list->end(),
                     [&](const json& a) { return a.is_string() && a.get<std::string>() == name; });
}

// Ling 2.0 (BailingMoeV2ForCausalLM; the Hub's configs say model_type bailing_moe, the bridge
// registers bailing_moe_v2) as Megatron-Bridge's bailing/bailing_moe2_bridge.py builds it: GQA
// with QK norm, first_k_dense_replace dense layers, then num_experts experts of
// moe_intermediate_size top num_experts_per_tok with one shared expert of moe_intermediate_size,
// sigmoid routing with the expert bias in fp32, untied embeddings, num_nextn_predict_layers MTP
// layers (model_bridge.py CONFIG_MAPPING). Ling 1.x (BailingMoeForCausalLM) has no bridge.
std::optional<Error> read_bailing_moe_v2(const Reader& r, Family, HfImport& out) {
  if (out.model_type == "bailing_moe" && !names_architecture(r, "BailingMoeV2ForCausalLM")) {
    return Error{"architectures",
                 "bailing_moe without BailingMoeV2ForCausalLM (Ling 1.x) is not built by "
                 "Megatron-Bridge, which registers only Ling 2.0's BailingMoeV2ForCausalLM"};
  }
  ModelConfig& m = out.model;
  std::int64_t shared = 1, first_dense = 0;
  MM_READ(m.num_experts, r.int_field("num_experts", 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
  MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize));
  MM_READ(shared, r.integer("num_shared_experts", 0, 64, 1));
  MM_READ(first_dense, r.integer("first_k_dense_replace", 0, m.num_layers, 0));
  MM_READ(m.mtp_num_layers, r.int_field("num_nextn_predict_layers", 0, kMaxSize, 0));
  MM_READ(m.add_qkv_bias, r.boolean("use_qkv_bias", false));
  m.moe_shared_expert_intermediate_size = m.moe_ffn_hidden_size;  // whatever num_shared_experts
  if (shared != 1) {
    out.notes.push_back("num_shared_experts " + std::to_string(shared) +
                        ": the bridge builds one shared expert of moe_intermediate_size");
  }
  m.moe_layer_pattern.assign(static_cast<std::size_t>(m.num_layers), 1);
  for (std::int64_t i = 0; i < first_dense; ++i)
    m.moe_layer_pattern[static_cast<std::size_t>(i)] = 0;
  m.qk_layernorm = true;
  m.moe_router_enable_expert_bias = true;
  m.untie_embeddings_and_output_weights = true;  // share_embeddings_and_output_weights = False
  m.hidden_dropout = 0.0;
  out.notes.push_back(
      "the bridge runs the router in fp32 (moe_router_dtype), a run setting: "
      "--moe-router-dtype fp32");
  return std::nullopt;
}

// Sarvam's MoE layers as Megatron-Bridge's sarvam/common.py get_common_config reads them for
// both Sarvam bridges: num_experts experts of moe_intermediate_size, top num_experts_per_tok,
// num_shared_experts shared experts fused into one of num_shared_experts x
// moe_intermediate_size, the first first_k_dense_replace layers dense. SarvamMoEModelProvider
// and SarvamMLAModelProvider (sarvam_provider.py) fix the rest: sigmoid routing with the expert
// bias, QK layernorm, untied embeddings, no biases, no dropout. The bridges read no MTP layers.
std::optional<Error> read_sarvam_moe_layers(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t shared = 0, first_dense = 0, mtp = 0;
  MM_READ(m.num_experts, r.int_field(r.spelling({"num_experts", "n_routed_experts"}), 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
  MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize));
  MM_READ(shared, r.integer(r.spelling({"num_shared_experts", "n_shared_experts"}), 0, 64));
  MM_READ(first_dense, r.integer("first_k_dense_replace", 0, m.num_layers));
  MM_READ(mtp, r.integer("num_nextn_predict_layers", 0, kMaxSize, 0));
  m.moe_shared_expert_intermediate_size = static_cast<int>(shared * m.moe_ffn_hidden_size);
  m.moe_layer_pattern.assign(static_cast<std::size_t>(m.num_layers), 1);
  for (std::int64_t i = 0; i < first_dense; ++i)
    m.moe_layer_pattern[static_cast<std::size_t>(i)] = 0;
  m.moe_router_enable_expert_bias = true;        // moe_router_enable_expert_bias = True
  m.qk_layernorm = true;                         // qk_layernorm = True
  m.untie_embeddings_and_output_weights = true;  // share_embeddings_and_output_weights = False
  m.add_bias_linear = false;
  m.add_qkv_bias = false;
  m.hidden_dropout = 0.0;
  m.attention_dropout = 0.0;
  if (mtp > 0) {
    out.notes.push_back("num_nextn_predict_layers " + std::to_string(mtp) +
                        ": the Sarvam bridges build no MTP layers, so none are estimated");
  }
  out.notes.push_back(
      "the provider's run settings are not imported: the router in fp32 (--moe-router-dtype "
      "fp32), selective recompute (recompute_modules) and bf16/fp16/params_dtype from "
      "torch_dtype (sarvam-30b's base checkpoint is float32, which the bridge would train in)");
  return std::nullopt;
}

// Sarvam-30B-style GQA models (SarvamMoEForCausalLM, model_type sarvam_moe) as Megatron-
// Bridge's sarvam/sarvam_moe_bridge.py builds them: num_key_value_heads query groups of head_dim
// (kv_channels, which the bridge reads from head_dim whatever hidden / heads is), per-head QK
// RMSNorm, RoPE; then read_sarvam_moe_layers.
std::optional<Error> read_sarvam_moe(const Reader& r, Family, HfImport& out) {
  if (!r.find("head_dim")) {
    return Error{"head_dim", "is missing: sarvam_moe_bridge.py reads it as kv_channels"};
  }
  out.model.position_embedding = PositionEmbedding::rope;  // position_embedding_type "rope"
  return read_sarvam_moe_layers(r, out);
}

// Sarvam-105B-style MLA models (SarvamMLAForCausalLM, model_type sarvam_mla) as Megatron-
// Bridge's sarvam/sarvam_mla_bridge.py builds them: MLA with kv_lora_rank, qk_nope_head_dim,
// qk_rope_head_dim and v_head_dim, and a plain q_proj (SarvamMLAModelProvider keeps q_lora_rank
// None; the bridge does not read it), kv_layernorm (qk_layernorm), kv_channels hidden / heads,
// YaRN RoPE (rope_type "yarn" in the provider); then read_sarvam_moe_layers.
std::optional<Error> read_sarvam_mla(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  m.multi_latent_attention = true;
  m.q_lora_rank = 0;
  MM_READ(m.kv_lora_rank, r.int_field("kv_lora_rank", 1, kMaxSize));
  MM_READ(m.qk_head_dim, r.int_field("qk_nope_head_dim", 1, kMaxSize));
  MM_READ(m.qk_pos_emb_head_dim, r.int_field("qk_rope_head_dim", 1, kMaxSize));
  MM_READ(m.v_head_dim, r.int_field("v_head_dim", 1, kMaxSize));
  m.kv_channels = m.hidden_size / m.num_attention_heads;
  m.position_embedding = PositionEmbedding::yarn;
  if (const json* q_lora = r.find("q_lora_rank"); q_lora && !q_lora->is_null()) {
    out.notes.push_back(
        "q_lora_rank is not read by sarvam_mla_bridge.py, whose provider builds a plain "
        "q_proj (q_lora_rank None): estimated without a query LoRA");
  }
  return read_sarvam_moe_layers(r, out);
}

// Ministral 3's language model (mistral3's text_config, model_type ministral3) as Megatron-
// Bridge's ministral3/ministral3_bridge.py builds it on Ministral3ModelProvider
// (ministral3_provider.py): Mistral's GQA and SwiGLU without biases, position_embedding_type
// "yarn" whatever rope_parameters holds. Its MinistralTEDotProductAttention scales the query in
// place (Llama-4 scaling by position), which adds no weights and no saved tensor.
std::optional<Error> read_ministral3(const Reader&, Family, HfImport& out) {
  out.model.position_embedding = PositionEmbedding::yarn;
  out.model.attention_dropout = 0.0;  // ministral3_provider.py: attention_dropout = 0.0
  out.notes.push_back(
      "a vision encoder (mistral3's vision_config, which Megatron-Bridge's Ministral3Model "
      "builds beside the language model) is not estimated: the language model is");
  return std::nullopt;
}

// A per-layer 0/1 list of config.json (MiMo-V2-Flash's hybrid_layer_pattern, moe_layer_freq).
Expected<std::vector<std::uint8_t>> layer_bits(const Reader& r, const char* key, int layers) {
  const json* list = r.find(key);
  if (!list || !list->is_array() || list->size() != static_cast<std::size_t>(layers)) {
    return Error{key, "expects one 0/1 entry per layer (num_hidden_layers)"};
  }
  std::vector<std::uint8_t> bits;
  for (const json& entry : *list) {
    if (!entry.is_number_integer() || (entry.get<int>() != 0 && entry.get<int>() != 1)) {
      return Error{key, "entries must be 0 or 1"};
    }
    bits.push_back(static_cast<std::uint8_t>(entry.get<int>()));
  }
  return bits;
}

// MiMo-V2-Flash's attention as mimo_v2_flash_bridge.py provider_bridge reads it: the full
// layers' KV heads (num_key_value_heads), the SWA layers' (swa_num_key_value_heads), V's head
// dim v_head_dim beside head_dim, hybrid_layer_pattern (1 = SWA) and the window
// sliding_window_size, which MiMoV2FlashTEDotProductAttention passes TE as (W - 1, 0). The
// bridge builds SWA layers with the full layers' heads and head dims whatever swa_* say.
std::optional<Error> read_mimo_attention(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t v_dim = 0, swa_groups = 0, window = 0;
  MM_READ(v_dim, r.integer("v_head_dim", 1, kMaxSize, m.kv_channels));
  MM_READ(swa_groups, r.integer("swa_num_key_value_heads", 1, kMaxSize));
  MM_READ(window,
          r.integer(r.spelling({"sliding_window_size", "sliding_window", "attention_chunk_size"}),
                    1, kMaxSize));
  MM_READ(m.window_attn_pattern, layer_bits(r, "hybrid_layer_pattern", m.num_layers));
  if (v_dim != m.kv_channels) m.v_channels = static_cast<int>(v_dim);
  const int full_groups = m.num_query_groups > 0 ? m.num_query_groups : m.num_attention_heads;
  if (swa_groups != full_groups) m.window_num_query_groups = static_cast<int>(swa_groups);
  m.window_size = static_cast<int>(window - 1);
  const struct {
    const char* key;
    std::int64_t full;
  } swa_sizes[] = {{"swa_num_attention_heads", m.num_attention_heads},
                   {"swa_head_dim", m.kv_channels},
                   {"swa_v_head_dim", v_dim}};
  for (const auto& [key, full] : swa_sizes) {
    std::int64_t value = 0;
    MM_READ(value, r.integer(key, 1, kMaxSize, full));
    if (value != full) {
      out.notes.push_back(std::string(key) + " " + std::to_string(value) +
                          ": Megatron-Bridge builds the SWA layers with the full layers' value (" +
                          std::to_string(full) + "), and so does the estimate");
    }
  }
  return std::nullopt;
}

// MiMo-V2-Flash's attention sinks: the bridge's MiMoV2FlashTEDotProductAttention gives SWA
// layers a learnable softmax and full layers a vanilla one; megamem's softmax type is one per
// model, so sinks on the SWA layers price them on every layer (heads / TP weights per full
// layer, no saved tensor under cuDNN attention).
std::optional<Error> read_mimo_sinks(const Reader& r, HfImport& out) {
  bool swa_sinks = false, full_sinks = false;
  MM_READ(swa_sinks, r.boolean("add_swa_attention_sink_bias", false));
  MM_READ(full_sinks, r.boolean("add_full_attention_sink_bias", false));
  if (!swa_sinks && !full_sinks) return std::nullopt;
  out.model.softmax_type = SoftmaxType::learnable;
  if (swa_sinks != full_sinks) {
    out.notes.push_back(
        "attention sinks on the " + std::string(swa_sinks ? "SWA" : "full-attention") +
        " layers only are priced on every layer (--softmax-type learnable): num_attention_heads "
        "weights per other layer too many, no saved tensor");
  }
  return std::nullopt;
}

// Gemma 2 (gemma2) as Megatron-Bridge's gemma/gemma2_bridge.py builds it on Gemma2ModelProvider:
// Gemma 3's layers (read_gemma3_common) without QK norm, a (sliding_window - 1, 0) window on
// odd layer numbers (Gemma2DotProductAttention: every 2nd layer full), and both soft-caps
// (transformers configuration_gemma2.py defaults: final 30, attention 50, window 4096,
// vocabulary 256000).
std::optional<Error> read_gemma2(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t window = 0;
  MM_READ(m.vocab_size, r.integer("vocab_size", 1, std::int64_t{1} << 31, 256000));
  MM_READ(window, r.integer("sliding_window", 0, kMaxSize, 4096));
  MM_READ(m.final_logit_softcapping, r.number("final_logit_softcapping", 30.0));
  MM_READ(m.attn_logit_softcapping, r.number("attn_logit_softcapping", 50.0));
  if (m.final_logit_softcapping < 0 || m.attn_logit_softcapping < 0) {
    return Error{"final_logit_softcapping", "a soft-cap cannot be negative"};
  }
  m.qk_layernorm = false;
  m.window_size = window > 1 ? static_cast<int>(window - 1) : 0;
  m.window_attn_skip_freq = m.window_size > 0 ? 2 : 0;
  if (m.window_size > 0 && r.find("layer_types")) {
    if (auto error = read_window_layers(r, m)) return error;
  }
  out.notes.push_back(
      "attention runs in Megatron-Bridge's Gemma2FlexDotProductAttention (PyTorch "
      "FlexAttention with the score soft-cap), whatever the attention backend");
  return std::nullopt;
}

// Gemma 4 E2B/E4B's per-layer embeddings and shared K/V as gemma4_bridge.py
// _build_dense_provider reads them: hidden_size_per_layer_input (null, 0 or absent: none;
// every released config.json writes it), vocab_size_per_layer_input (default vocab_size),
// num_kv_shared_layers and use_double_wide_mlp.
std::optional<Error> read_gemma4_dense_parts(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t per_layer = 0, table_vocab = 0, shared = 0;
  if (const json* ple = r.find("hidden_size_per_layer_input"); ple && !ple->is_null()) {
    MM_READ(per_layer, r.integer("hidden_size_per_layer_input", 0, kMaxSize, 0));
  }
  MM_READ(table_vocab,
          r.integer("vocab_size_per_layer_input", 1, std::int64_t{1} << 31, m.vocab_size));
  MM_READ(shared, r.integer("num_kv_shared_layers", 0, kMaxSize, 0));
  MM_READ(m.double_wide_shared_mlp, r.boolean("use_double_wide_mlp", false));
  if (per_layer > 0 && table_vocab != m.vocab_size) {
    return Error{"vocab_size_per_layer_input",
                 "a per-layer embedding vocabulary (" + std::to_string(table_vocab) +
                     ") other than vocab_size (" + std::to_string(m.vocab_size) +
                     ") is not priced: megamem sizes that table by vocab_size"};
  }
  m.per_layer_input_size = static_cast<int>(per_layer);
  m.kv_shared_layers = static_cast<int>(shared);
  if (shared > 0) {
    out.notes.push_back(
        "num_kv_shared_layers " + std::to_string(shared) +
        ": Megatron's linear_qkv keeps those layers' K and V rows, which the checkpoint "
        "leaves out (gemma4_bridge.py _is_synthesized_kv_projection); they are counted");
  }
  return std::nullopt;
}

// Gemma 4 26B-A4B's MoE layer (enable_moe_block) as gemma4_bridge.py _build_moe_provider reads
// it onto Gemma4ModelProvider: every layer MoE (moe_layer_freq 1) with num_experts experts of
// moe_intermediate_size, top top_k_experts, and one shared expert of intermediate_size without
// a gate; the layers on Transformer Engine's spec (gemma4_block_spec), their own norms and
// router priced by m.gemma4-moe (modules/gemma4_moe.cpp). The provider reads no per-layer
// embeddings, shared K/V or double-wide MLP. Bridge's export writes top_k_experts and drops the
// base mapping's num_experts_per_tok; either spelling is read.
std::optional<Error> read_gemma4_moe(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  MM_READ(m.num_experts, r.int_field("num_experts", 1, kMaxSize, 128));
  MM_READ(m.moe_router_topk,
          r.int_field(r.spelling({"top_k_experts", "num_experts_per_tok"}), 1, m.num_experts, 8));
  MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize, 704));
  m.moe_shared_expert_intermediate_size = m.ffn_hidden_size;
  m.moe_layer_freq = 1;
  m.gemma4_moe_layer = true;
  for (const char* key : {"hidden_size_per_layer_input", "num_kv_shared_layers"}) {
    std::int64_t value = 0;
    if (const json* v = r.find(key); v && !v->is_null()) {
      MM_READ(value, r.integer(key, 0, kMaxSize, 0));
    }
    if (value > 0) {
      out.notes.push_back(std::string(key) + " " + std::to_string(value) +
                          ": Gemma4ModelProvider (the MoE path) does not read it, and neither "
                          "does the estimate");
    }
  }
  out.notes.push_back(
      "Gemma4ModelProvider's run settings are not model fields: the router in fp32 "
      "(--moe-router-dtype fp32), pre-softmax top-k with the auxiliary loss (0.001), the "
      "alltoall dispatcher with grouped GEMM and permute fusion; it refuses the shared "
      "experts' overlap, CUDA graphs, layernorm recompute and MLP norm offloading");
  return std::nullopt;
}

// Gemma 4 (gemma4_text, or a gemma4 wrapper's text_config) as Megatron-Bridge's
// gemma/gemma4_bridge.py builds it: Gemma 3's layers (read_gemma3_common), full-attention
// layers of global_head_dim with num_global_key_value_heads (the sliding ones keep head_dim and
// num_key_value_heads), the output soft-cap, and a (sliding_window - 1, 0) window. Dense
// (_build_dense_provider, Gemma4DenseProvider): the local layer spec with plain-PyTorch
// RMSNorms and V's norm (modeling_gemma4.py); MoE (enable_moe_block): read_gemma4_moe.
std::optional<Error> read_gemma4(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  bool moe = false;
  std::int64_t window = 0, global_head_dim = 0, global_groups = 0;
  const int sliding_groups = m.num_query_groups == 0 ? m.num_attention_heads : m.num_query_groups;
  MM_READ(moe, r.boolean("enable_moe_block", false));
  MM_READ(m.vocab_size, r.integer("vocab_size", 1, std::int64_t{1} << 31, 262144));
  MM_READ(window, r.integer("sliding_window", 0, kMaxSize, moe ? 1024 : 512));
  MM_READ(global_head_dim, r.integer("global_head_dim", 1, kMaxSize, 512));
  MM_READ(global_groups, r.integer("num_global_key_value_heads", 1, kMaxSize, sliding_groups));
  MM_READ(m.final_logit_softcapping, r.number("final_logit_softcapping", 0.0));
  if (m.final_logit_softcapping < 0) {
    return Error{"final_logit_softcapping", "a soft-cap cannot be negative"};
  }
  m.window_kv_channels = m.kv_channels;
  m.window_num_query_groups = sliding_groups;
  m.kv_channels = static_cast<int>(global_head_dim);
  m.num_query_groups = static_cast<int>(global_groups);
  if (moe) {
    if (auto error = read_gemma4_moe(r, out)) return error;
  } else {
    m.torch_rms_norms = true;
    m.local_layer_spec = true;
    if (auto error = read_gemma4_dense_parts(r, out)) return error;
    out.notes.push_back(
        "Megatron-Bridge's Gemma4DenseProvider builds pipeline parallelism 1 only (its "
        "provide() raises otherwise); its layer bypasses selective mlp recompute and fails "
        "under layernorm recompute (Gemma4DenseTransformerLayer's own _forward_mlp)");
  }
  m.window_size = window > 1 ? static_cast<int>(window - 1) : 0;
  m.window_attn_skip_freq = m.window_size > 0 ? 6 : 0;  // both providers' default (5, 1)
  if (m.window_size > 0 && r.find("layer_types")) {
    if (auto error = read_window_layers(r, m)) return error;
  }
  bool k_eq_v = false;  // E2B and E4B write false: their V rows are used
  MM_READ(k_eq_v, r.boolean("attention_k_eq_v", false));
  if (k_eq_v) {
    out.notes.push_back(
        "attention_k_eq_v: the full-attention layers use K as V, but Megatron's linear_qkv "
        "keeps its (unused) V rows, which are counted");
  }
  return std::nullopt;
}

// MiMo-V2-Flash (mimo_v2_flash) as Megatron-Bridge's mimo_v2_flash/mimo_v2_flash_bridge.py
// builds it: GQA with per-layer KV heads and V's own head dim, SWA on the hybrid_layer_pattern
// layers, moe_layer_freq's MoE layers of n_routed_experts top num_experts_per_tok with sigmoid
// routing and the expert bias (always on), no biases, untied embeddings.
std::optional<Error> read_mimo_v2_flash(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  if (auto error = read_mimo_attention(r, out)) return error;
  if (auto error = read_mimo_sinks(r, out)) return error;
  std::int64_t shared = 0, mtp = 0;
  MM_READ(m.num_experts, r.int_field("n_routed_experts", 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
  MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize));
  MM_READ(shared, r.integer("n_shared_experts", 0, kMaxSize, 0));
  MM_READ(m.moe_layer_pattern, layer_bits(r, "moe_layer_freq", m.num_layers));
  MM_READ(mtp, r.integer("num_nextn_predict_layers", 0, kMaxSize, 0));
  m.moe_router_enable_expert_bias = true;  // the bridge: noaux_tc's learned expert bias
  if (shared > 0) {
    out.notes.push_back("n_shared_experts " + std::to_string(shared) +
                        ": Megatron-Bridge's MiMo-V2-Flash bridge maps no shared experts, so "
                        "none are estimated");
  }
  // mimo_v2_flash_bridge.py counts the MTP layers from the checkpoint's model.mtp.layers.*,
  // which num_nextn_predict_layers describes; mimo_v2_flash_provider.py
  // mimov2flash_mtp_block_spec makes each an SWA layer with a dense MLP.
  m.mtp_num_layers = static_cast<int>(mtp);
  if (mtp > 0) m.mtp_layer_kind = MtpLayerKind::window_dense;
  out.notes.push_back(
      "Megatron-Bridge's MiMoV2FlashModelProvider asserts context parallelism 1 and TP at most "
      "the smaller KV head count, and sets grouped GEMM with the alltoall dispatcher");
  return std::nullopt;
}

// Step-3.5's layer_types as the window list (1 = sliding_attention), which Step35DecoderLayer
// reads per layer; Step35Config drops the MTP layers' entries when the list covers them too
// (stepfun/configuration_step35.py _split_mtp_layer_types). Without the list no layer slides.
Expected<std::vector<std::uint8_t>> step35_layer_types(const Reader& r, int layers, int mtp) {
  const json* list = r.find("layer_types");
  if (!list) return std::vector<std::uint8_t>{};
  const std::size_t size = list->is_array() ? list->size() : 0;
  if (size != static_cast<std::size_t>(layers) && size != static_cast<std::size_t>(layers + mtp)) {
    return Error{"layer_types",
                 "expects one entry per layer (num_hidden_layers, or with the "
                 "num_nextn_predict_layers MTP layers)"};
  }
  std::vector<std::uint8_t> sliding;
  for (std::size_t i = 0; i < static_cast<std::size_t>(layers); ++i) {
    const json& entry = (*list)[i];
    const bool known =
        entry.is_string() && (entry == "full_attention" || entry == "sliding_attention");
    if (!known) return Error{"layer_types", "entries must be full_attention or sliding_attention"};
    sliding.push_back(entry == "sliding_attention" ? 1 : 0);
  }
  return sliding;
}

// Step-3.5's MTP layers (read_step3p5): windowed by layer index when layer_types ends with a
// sliding_attention entry for each, else dense with full attention (past the list).
Expected<MtpLayerKind> step35_mtp_layer_kind(const Reader& r, int layers, int mtp) {
  const json* list = r.find("layer_types");
  if (mtp == 0) return MtpLayerKind::last_decoder_layer;
  if (!list || !list->is_array() || list->size() != static_cast<std::size_t>(layers + mtp)) {
    return MtpLayerKind::dense;
  }
  for (std::size_t i = static_cast<std::size_t>(layers); i < list->size(); ++i) {
    if ((*list)[i] != "sliding_attention") return MtpLayerKind::dense;
  }
  return MtpLayerKind::dense_by_layer_index;
}

// Step-3.5's MoE layers, moe_layers_enum (a "3,4,..." string or a list), as Step35Bridge lays
// them out; layers it does not list are dense, indices past the decoder are ignored. Without
// the field, Step35Config's default: layers 3 to 44.
Expected<std::vector<std::uint8_t>> step35_moe_layers(const Reader& r, int layers) {
  std::vector<std::int64_t> indices;
  const json* listed = r.find("moe_layers_enum");
  if (!listed) {
    for (std::int64_t i = 3; i <= 44; ++i) indices.push_back(i);
  } else if (listed->is_string()) {
    const std::string text = listed->get<std::string>();
    for (std::size_t begin = 0; begin <= text.size();) {
      std::size_t end = text.find(',', begin);
      if (end == std::string::npos) end = text.size();
      const std::string item = text.substr(begin, end - begin);
      const std::size_t digits = item.find_first_not_of(' ');
      if (digits != std::string::npos) {
        const std::size_t last = item.find_last_not_of(' ');
        const std::string number = item.substr(digits, last - digits + 1);
        if (number.find_first_not_of("0123456789") != std::string::npos || number.size() > 9) {
          return Error{"moe_layers_enum", "expects layer numbers separated by commas"};
        }
        indices.push_back(std::stoll(number));
      }
      begin = end + 1;
    }
  } else if (listed->is_array()) {
    for (const json& entry : *listed) {
      if (!entry.is_number_integer()) return Error{"moe_layers_enum", "expects layer numbers"};
      indices.push_back(entry.get<std::int64_t>());
    }
  } else {
    return Error{"moe_layers_enum", "expects a list of layer numbers or a comma-separated string"};
  }
  std::vector<std::uint8_t> moe(static_cast<std::size_t>(layers), 0);
  for (const std::int64_t i : indices) {
    if (i >= 0 && i < layers) moe[static_cast<std::size_t>(i)] = 1;
  }
  return moe;
}

// Step-3.5's attention as Step35Bridge.provider_bridge reads it: num_attention_groups KV
// groups (CONFIG_MAPPING), head_dim (Step35Config: 128), and the sliding layers' shape, the
// bridge's Step-3.5-Flash defaults (a [512, 0] window, 96 heads, 8 groups, head dim 128)
// overlaid with sliding_window and attention_other_setting; TE gets (sliding_window, 0).
std::optional<Error> read_step35_attention(const Reader& r, int mtp, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t groups = 0, window = 0, heads = 96, window_groups = 8, window_dim = 128;
  MM_READ(groups, r.integer("num_attention_groups", 1, kMaxSize, 8));
  MM_READ(m.kv_channels, r.int_field("head_dim", 1, kMaxSize, 128));
  m.num_query_groups = groups == m.num_attention_heads ? 0 : static_cast<int>(groups);
  MM_READ(window, r.integer("sliding_window", 1, kMaxSize, 512));
  if (const json* other = r.find("attention_other_setting"); other && other->is_object()) {
    const Reader setting(*other);
    std::string type;
    MM_READ(type, setting.text("attention_type", ""));
    if (type == "sliding_attention") {
      MM_READ(heads, setting.integer("num_attention_heads", 1, kMaxSize, heads));
      MM_READ(window_groups, setting.integer("num_attention_groups", 1, kMaxSize, window_groups));
      MM_READ(window_dim, setting.integer("head_dim", 1, kMaxSize, window_dim));
    }
  }
  std::vector<std::uint8_t> sliding;
  MM_READ(sliding, step35_layer_types(r, m.num_layers, mtp));
  if (std::find(sliding.begin(), sliding.end(), 1) == sliding.end()) return std::nullopt;
  m.window_attn_pattern = sliding;
  m.window_size = static_cast<int>(window);
  const int full_groups = m.num_query_groups > 0 ? m.num_query_groups : m.num_attention_heads;
  if (heads != m.num_attention_heads) m.window_num_attention_heads = static_cast<int>(heads);
  if (window_groups != full_groups) m.window_num_query_groups = static_cast<int>(window_groups);
  if (window_dim != m.kv_channels) m.window_kv_channels = static_cast<int>(window_dim);
  return std::nullopt;
}

// Step-3.5's output gate: use_head_wise_attn_gate (Step35Config default true) is Megatron-LM
// dev's head_wise_attn_gate; on a Megatron-Core without it Step35Bridge falls back to the full
// attention_output_gate, whose gate rows QKVGMapping expands over each head's dimension.
std::optional<Error> read_step35_gate(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  MM_READ(m.head_wise_attn_gate, r.boolean("use_head_wise_attn_gate", true));
  if (!m.head_wise_attn_gate) {
    MM_READ(m.attention_output_gate, r.boolean("attention_output_gate", false));
    return std::nullopt;
  }
  out.notes.push_back(
      "use_head_wise_attn_gate: Megatron-LM dev's head-wise gate (one row per head); on a "
      "Megatron-Core without it the bridge builds the full output gate (heads x head_dim rows, "
      "link m.out-gate=1&m.head-gate=0)");
  return std::nullopt;
}

// What Step35Bridge builds that the estimate does not follow, and the run settings it sets.
std::optional<Error> note_step35(const Reader& r, std::int64_t mtp, HfImport& out) {
  bool fp32_router = false;
  MM_READ(fp32_router, r.boolean("need_fp32_gate", false));
  if (fp32_router) {
    out.notes.push_back(
        "need_fp32_gate: the bridge runs the router in fp32, a run setting: "
        "--moe-router-dtype fp32");
  }
  if (mtp > 0 && out.model.mtp_layer_kind == MtpLayerKind::dense) {
    out.notes.push_back(
        "layer_types gives the MTP layers no sliding_attention entry for each: "
        "Step35DecoderLayer builds them with full attention");
  }
  if (const json* limits = r.find("swiglu_limits"); limits && limits->is_array()) {
    const bool clamped = std::any_of(limits->begin(), limits->end(), [](const json& limit) {
      return limit.is_number() && limit.get<double>() != 0.0;
    });
    // Step35DecoderLayer: activation_func_clamp_value, the clamped SwiGLU gpt-oss has too.
    if (clamped) out.notes.push_back("swiglu_limits: the clamped SwiGLU is estimated as SwiGLU");
  }
  out.notes.push_back(
      "Megatron-Bridge's Step35Bridge sets grouped GEMM, the alltoall dispatcher and permute "
      "fusion");
  return std::nullopt;
}

// Step-3.5 (step3p5, Step3p5ForCausalLM) as Megatron-Bridge's stepfun/step35_bridge.py builds
// it on Step35ModelProvider (step35_provider.py): GQA with per-layer sliding shapes and the
// head-wise gate, QK norm with use_qk_norm, moe_layers_enum's MoE layers of moe_num_experts
// experts of moe_intermediate_size top moe_top_k with a shared expert of share_expert_dim and
// the expert bias with use_moe_router_bias; RMSNorm, no biases, no dropout. Step35Config
// supplies what config.json leaves out.
std::optional<Error> read_step3p5(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t mtp = 0;
  MM_READ(mtp, r.integer("num_nextn_predict_layers", 0, kMaxSize, 3));
  // step35_bridge.py build_step35_layer_spec: num_nextn_predict_layers dense MTP layers, whose
  // attention Step35DecoderLayer looks up in layer_types (MtpLayerKind::dense_by_layer_index):
  // the provider appends the MTP entries Step35Config split off, if every one is sliding.
  if (auto error = read_step35_attention(r, static_cast<int>(mtp), out)) return error;
  if (auto error = read_step35_gate(r, out)) return error;
  m.mtp_num_layers = static_cast<int>(mtp);
  MM_READ(m.mtp_layer_kind, step35_mtp_layer_kind(r, m.num_layers, static_cast<int>(mtp)));
  MM_READ(m.num_experts, r.int_field("moe_num_experts", 1, kMaxSize, 288));
  MM_READ(m.moe_router_topk, r.int_field("moe_top_k", 1, m.num_experts, 8));
  MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize, 1280));
  MM_READ(m.moe_shared_expert_intermediate_size,
          r.int_field(r.spelling({"share_expert_dim", "share_expert_dims"}), 0, kMaxSize, 1280));
  MM_READ(m.moe_layer_pattern, step35_moe_layers(r, m.num_layers));
  MM_READ(m.qk_layernorm, r.boolean("use_qk_norm", false));
  MM_READ(m.moe_router_enable_expert_bias, r.boolean("use_moe_router_bias", false));
  m.attention_dropout = 0.0;
  m.hidden_dropout = 0.0;
  return note_step35(r, mtp, out);
}

// linear_attn_config's kda_layers (1-based layer numbers, KimiK3Attention's
// `layer_number in config.kimi_kda_layers`) as one entry per decoder layer.
Expected<std::vector<std::uint8_t>> kimi_kda_layers(const json& config, int layers) {
  const auto list = config.find("kda_layers");
  if (list == config.end() || !list->is_array()) {
    return Error{"kda_layers", "linear_attn_config.kda_layers expects a list of layer numbers"};
  }
  std::vector<std::uint8_t> pattern(static_cast<std::size_t>(layers), 0);
  for (const json& entry : *list) {
    if (!entry.is_number_integer() || entry.get<std::int64_t>() < 1 ||
        entry.get<std::int64_t>() > layers) {
      return Error{"kda_layers", "expects layer numbers from 1 to num_hidden_layers"};
    }
    pattern[static_cast<std::size_t>(entry.get<std::int64_t>() - 1)] = 1;
  }
  return pattern;
}

// KDA's sizes from linear_attn_config (KimiK3Bridge.provider_bridge: num_heads, head_dim,
// short_conv_kernel_size; gate_lower_bound changes no memory).
std::optional<Error> read_kimi_kda(const Reader& r, ModelConfig& m) {
  const json* config = r.find("linear_attn_config");
  if (!config || !config->is_object()) {
    return Error{"linear_attn_config", "is missing (Kimi K3's KDA layers and sizes)"};
  }
  const Reader kda(*config);
  MM_READ(m.kda_layer_pattern, kimi_kda_layers(*config, m.num_layers));
  if (std::none_of(m.kda_layer_pattern.begin(), m.kda_layer_pattern.end(),
                   [](std::uint8_t bit) { return bit != 0; })) {
    m.kda_layer_pattern.clear();
  }
  MM_READ(m.kda_num_heads, kda.int_field("num_heads", 1, kMaxSize));
  MM_READ(m.kda_head_dim, kda.int_field("head_dim", 1, kMaxSize));
  MM_READ(m.kda_conv_kernel, kda.int_field("short_conv_kernel_size", 1, kMaxSize));
  return std::nullopt;
}

// Kimi K3 (kimi_k3 wrapping a kimi_linear text_config) as KimiK3Bridge builds it on
// KimiK3ModelProvider (an MLAModelProvider): MLA with q/kv LoRA and QK norms, the KDA layers
// of linear_attn_config, Attention Residuals blocks of attn_res_block_size, and latent MoE
// (routed_expert_hidden_size) from first_k_dense_replace every moe_layer_freq-th layer with
// num_experts top num_experts_per_token and num_shared_experts shared experts of
// moe_intermediate_size; the expert bias always (moe_router_enable_expert_bias).
std::optional<Error> read_kimi_k3(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  m.multi_latent_attention = true;
  MM_READ(m.q_lora_rank, r.int_field("q_lora_rank", 0, kMaxSize, 0));
  MM_READ(m.kv_lora_rank, r.int_field("kv_lora_rank", 1, kMaxSize));
  MM_READ(m.qk_head_dim, r.int_field("qk_nope_head_dim", 1, kMaxSize));
  MM_READ(m.qk_pos_emb_head_dim, r.int_field("qk_rope_head_dim", 1, kMaxSize));
  MM_READ(m.v_head_dim, r.int_field("v_head_dim", 1, kMaxSize));
  m.qk_layernorm = true;  // q_a_layernorm, kv_a_layernorm
  // transformer_config.py __post_init__ gives the provider kv_channels = hidden_size //
  // num_attention_heads (7168 // 96 = 74 for K3), which MLA does not read; megamem wants it
  // explicit where the heads do not divide the hidden size (Megatron-LM's arguments.py).
  m.kv_channels = m.hidden_size / m.num_attention_heads;
  if (!r.find("attn_res_block_size")) {
    return Error{"attn_res_block_size",
                 "is missing: Megatron-Bridge builds kimi_linear only as Kimi K3's language "
                 "model (KimiK3Bridge), which reads it"};
  }
  MM_READ(m.attn_res_block_size, r.int_field("attn_res_block_size", 1, kMaxSize));
  if (auto error = read_kimi_kda(r, m)) return error;
  std::int64_t shared = 0, first_dense = 0, freq = 1;
  MM_READ(m.num_experts, r.int_field("num_experts", 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_token", 1, m.num_experts));
  MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize));
  MM_READ(m.moe_latent_size, r.int_field("routed_expert_hidden_size", 1, kMaxSize));
  MM_READ(shared, r.integer("num_shared_experts", 0, 1024, 0));
  MM_READ(first_dense, r.integer("first_k_dense_replace", 0, m.num_layers, 0));
  MM_READ(freq, r.integer("moe_layer_freq", 1, kMaxSize, 1));
  if (shared * m.moe_ffn_hidden_size > kMaxSize) {
    return Error{"num_shared_experts", "times moe_intermediate_size is out of range"};
  }
  m.moe_shared_expert_intermediate_size = static_cast<int>(shared * m.moe_ffn_hidden_size);
  m.moe_layer_pattern.assign(static_cast<std::size_t>(m.num_layers), 0);
  for (int i = static_cast<int>(first_dense); i < m.num_layers; ++i) {
    m.moe_layer_pattern[static_cast<std::size_t>(i)] = i % freq == 0 ? 1 : 0;
  }
  m.moe_router_enable_expert_bias = true;
  std::int64_t mtp = 0;
  MM_READ(mtp, r.integer("num_nextn_predict_layers", 0, kMaxSize, 0));
  if (mtp > 0) {
    out.notes.push_back("num_nextn_predict_layers " + std::to_string(mtp) +
                        ": KimiK3Bridge maps no MTP layers; they are not estimated");
  }
  out.notes.push_back(
      "Megatron-Bridge's KimiK3Bridge sets grouped GEMM, the alltoall dispatcher, permute "
      "fusion, an fp32 router and no bias-activation fusion");
  out.notes.push_back(
      "Kimi K3, not modeled: the Attention Residuals bank a fully recomputed layer stashes, "
      "and the fla kernels' workspaces (docs/presets.md)");
  return std::nullopt;
}

// Falcon-H1's Mamba-2 sizes as Megatron-Bridge's falcon_h1/falconh1_bridge.py CONFIG_MAPPING
// reads them (mamba_n_heads, mamba_d_head, mamba_n_groups, mamba_d_state, mamba_d_conv), with
// transformers' FalconH1Config defaults (configuration_falcon_h1.py: mamba_d_ssm 1024,
// mamba_n_heads 128, mamba_d_head "auto" = mamba_d_ssm / mamba_n_heads, 1 group, state 256,
// conv 4). Megatron's MambaMixer makes d_inner mamba_n_heads x mamba_d_head (mamba_mixer.py),
// which must be mamba_d_ssm where the config gives it (the checkpoint's width).
std::optional<Error> read_falcon_h1_mamba(const Reader& r, ModelConfig& m) {
  std::int64_t d_ssm = 0, conv = 4;
  MM_READ(m.mamba_num_heads, r.int_field("mamba_n_heads", 1, kMaxSize, 128));
  MM_READ(d_ssm, r.integer("mamba_d_ssm", 1, kMaxSize, 1024));
  const json* head = r.find("mamba_d_head");
  if (!head || (head->is_string() && head->get<std::string>() == "auto")) {
    if (d_ssm % m.mamba_num_heads != 0) {
      return Error{"mamba_d_head", "\"auto\" needs mamba_d_ssm divisible by mamba_n_heads"};
    }
    m.mamba_head_dim = static_cast<int>(d_ssm / m.mamba_num_heads);
  } else {
    MM_READ(m.mamba_head_dim, r.int_field("mamba_d_head", 1, kMaxSize));
  }
  // The bridge never reads mamba_d_ssm (Megatron-Bridge's own 0.5B fixture leaves it out).
  if (r.find("mamba_d_ssm") && std::int64_t{m.mamba_num_heads} * m.mamba_head_dim != d_ssm) {
    return Error{"mamba_d_ssm", "must equal mamba_n_heads x mamba_d_head (Megatron's d_inner)"};
  }
  MM_READ(m.mamba_num_groups, r.int_field("mamba_n_groups", 1, kMaxSize, 1));
  MM_READ(m.mamba_state_dim, r.int_field("mamba_d_state", 1, kMaxSize, 256));
  MM_READ(conv, r.integer("mamba_d_conv", 1, kMaxSize, 4));
  if (conv != 4) return Error{"mamba_d_conv", "must be 4: megamem prices a conv1d 4 wide"};
  bool proj_bias = false;
  MM_READ(proj_bias, r.boolean("mamba_proj_bias", false));
  if (proj_bias) return Error{"mamba_proj_bias", "MambaMixer's in_proj and out_proj have no bias"};
  return std::nullopt;
}

// What a Falcon-H1 config sets that the estimate does not price as written.
std::optional<Error> note_falcon_h1(const Reader& r, HfImport& out) {
  bool rms_norm = false, conv_bias = true;
  std::int64_t chunk = 256;
  MM_READ(rms_norm, r.boolean("mamba_rms_norm", false));
  MM_READ(conv_bias, r.boolean("mamba_conv_bias", true));
  MM_READ(chunk, r.integer("mamba_chunk_size", 1, kMaxSize, 256));
  if (!rms_norm) {
    out.notes.push_back(
        "mamba_rms_norm false: the Mamba mixer has no gated RMSNorm, which megamem prices "
        "(its d_inner weight and the saved norm input)");
  }
  if (!conv_bias) out.notes.push_back("mamba_conv_bias false: the conv1d bias is counted");
  if (chunk != 128) {
    out.notes.push_back("mamba_chunk_size " + std::to_string(chunk) +
                        ": the SSD kernel's working set is priced with chunks of 128");
  }
  if (const json* indices = r.find("attn_layer_indices"); indices && !indices->empty()) {
    out.notes.push_back(
        "attn_layer_indices is not read: Megatron-Bridge builds attention in every layer");
  }
  out.notes.push_back(
      "the muP multipliers (embedding, lm_head, key, attention and SSM in/out, MLP, SSM) are "
      "scalars: no weights; the in-multipliers' products are the saved branch inputs");
  out.notes.push_back(
      "Megatron-Bridge's FalconH1ModelProvider defaults to attention_backend unfused (the "
      "s x s probabilities kept per layer); the estimate uses the run's --attention-backend");
  return std::nullopt;
}

// Falcon-H1 (falcon_h1, FalconH1ForCausalLM) as Megatron-Bridge's falcon_h1/falconh1_bridge.py
// builds it on FalconH1ModelProvider: provider_bridge sets falconh1_ratio 1.0, so
// mamba_hybrid_layer_allocation.py makes every layer a parallel 'P' layer; SwiGLU MLP,
// RMSNorm, RoPE (rope_theta 1e11 changes no memory), untied embeddings, add_bias_linear from
// projectors_bias.
std::optional<Error> read_falcon_h1(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  if (auto error = read_falcon_h1_mamba(r, m)) return error;
  bool projectors_bias = false;
  MM_READ(projectors_bias, r.boolean("projectors_bias", false));
  m.add_bias_linear = m.add_bias_linear || projectors_bias;
  if (m.num_layers > 4096) {  // the pattern's limit as a share-link field (field_registry.cpp)
    return Error{"num_hidden_layers", "at most 4096: the layer pattern holds one symbol a layer"};
  }
  m.hybrid_layer_pattern.assign(static_cast<std::size_t>(m.num_layers), 'P');
  m.hidden_dropout = 0.0;
  return note_falcon_h1(r, out);
}

// MiniMax-M3's dense/MoE layout as minimax_m3_bridge.py reads it: the 0/1 moe_layer_freq
// list, else mlp_layer_types ("sparse" = MoE), else every layer MoE (the provider's default).
std::optional<Error> read_minimax_m3_layers(const Reader& r, ModelConfig& m) {
  if (r.find("moe_layer_freq")) {
    MM_READ(m.moe_layer_pattern, layer_bits(r, "moe_layer_freq", m.num_layers));
    return std::nullopt;
  }
  const json* types = r.find("mlp_layer_types");
  if (!types) return std::nullopt;
  if (!types->is_array() || types->size() != static_cast<std::size_t>(m.num_layers)) {
    return Error{"mlp_layer_types", "expects one entry per layer (num_hidden_layers)"};
  }
  for (const json& type : *types) {
    m.moe_layer_pattern.push_back(type.is_string() && type.get<std::string>() == "sparse");
  }
  return std::nullopt;
}

// The lightning-indexer layers MiniMax-M3's config lists (layer_types "minimax_m3_sparse",
// else sparse_attention_config.sparse_attention_freq), as minimax_m3_bridge.py counts them.
std::int64_t minimax_m3_indexer_layers(const Reader& r) {
  std::int64_t layers = 0;
  const json* list = r.find("layer_types");
  if (list && list->is_array()) {
    for (const json& type : *list) layers += type == "minimax_m3_sparse" ? 1 : 0;
    return layers;
  }
  const json* sparse = r.find("sparse_attention_config");
  if (!sparse || !sparse->is_object()) return 0;
  const auto freq = sparse->find("sparse_attention_freq");
  if (freq == sparse->end() || !freq->is_array()) return 0;
  for (const json& on : *freq) layers += on.is_number() && on.get<double>() != 0 ? 1 : 0;
  return layers;
}

// MiniMax-M3's text backbone (text_config of MiniMaxM3SparseForConditionalGeneration) as
// Megatron-Bridge's minimax_m3/minimax_m3_bridge.py provider_bridge builds it and its H100
// recipes run it (to_text_provider: no vision tower, projectors or lightning indexers):
// dense_intermediate_size dense MLPs, num_local_experts experts of intermediate_size top
// num_experts_per_tok with n_shared_experts x shared_intermediate_size shared, sigmoid routing
// with the expert bias (always on), per-head QK norm (use_qk_norm), fp32 router weights. No
// memory megamem models: partial RoPE (rotary_dim), the zero-centred RMSNorm gamma
// (use_gemma_norm) and the SwiGLU-OAI clamp and +1 offset (SwiGLU's shapes, as gpt-oss).
std::optional<Error> read_minimax_m3(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t shared = 0, n_shared = 0, dense = 0, mtp = 0;
  if (auto error = read_local_experts(r, m)) return error;
  MM_READ(shared, r.integer("shared_intermediate_size", 0, kMaxSize, 0));
  MM_READ(n_shared, r.integer("n_shared_experts", 0, 64, shared > 0 ? 1 : 0));
  MM_READ(dense, r.integer("dense_intermediate_size", 1, kMaxSize, m.ffn_hidden_size));
  MM_READ(m.qk_layernorm, r.boolean("use_qk_norm", true));
  MM_READ(mtp, r.integer("num_nextn_predict_layers", 0, kMaxSize, 0));
  if (n_shared * shared > kMaxSize) return Error{"shared_intermediate_size", "is too large"};
  m.moe_ffn_hidden_size = m.ffn_hidden_size;  // intermediate_size is the expert's
  m.ffn_hidden_size = static_cast<int>(dense);
  m.moe_shared_expert_intermediate_size = static_cast<int>(n_shared * shared);
  m.moe_router_enable_expert_bias = true;
  m.moe_router_fp32_params = true;  // _promote_router_weights_to_float32
  if (auto error = read_minimax_m3_layers(r, m)) return error;
  out.notes.push_back(
      "swigluoai (the clamped quick-GELU GLU with a +1 offset, Megatron "
      "--activation-func-clamp-value with --glu-linear-offset 1) has SwiGLU's shapes and saved "
      "tensors, so it is estimated as SwiGLU");
  if (const std::int64_t indexers = minimax_m3_indexer_layers(r); indexers > 0) {
    out.notes.push_back(
        std::to_string(indexers) +
        " lightning-indexer layers are not estimated: Bridge does not run them, its text "
        "recipes do not build them, and its full VLM holds them as frozen parameters "
        "(requires_grad False: 16-bit weights, whole on every TP rank, no grads or optimizer "
        "state)");
  }
  note_unbuilt_mtp(out, "num_nextn_predict_layers", mtp,
                   "the checkpoint ships no MTP weights and Megatron-Bridge sets mtp_num_layers "
                   "None");
  out.notes.push_back(
      "the bridge's run settings are not imported: the router in fp32 (moe_router_dtype), the "
      "flex dispatcher with HybridEP, bias-activation fusion off");
  return std::nullopt;
}

// DeepSeek-V4's per-layer compression ratios as deepseek_v4_bridge.py _dsv4_compress_ratios
// reads them: compress_ratios, else native Transformers' layer_types with compress_rates
// (sliding_attention 0, compressed_sparse_attention 4, heavily_compressed_attention 128);
// a list of the decoder layers only gets 0 for each MTP layer; cut to layers + MTP.
Expected<std::vector<std::uint8_t>> dsv4_compress_ratios(const Reader& r, std::size_t layers,
                                                         std::size_t mtp) {
  std::vector<std::uint8_t> ratios;
  const json* list = r.find("compress_ratios");
  const json* types = list ? nullptr : r.find("layer_types");
  const json* rates = r.find("compress_rates");
  if (!list && !types) {
    return Error{"compress_ratios",
                 "is missing (nor layer_types): DeepSeek-V4 needs a "
                 "compression ratio per layer"};
  }
  for (const json& item : list ? *list : *types) {
    int ratio = -1;
    if (list && item.is_number_integer()) ratio = item.get<int>();
    if (types && item == "sliding_attention") ratio = 0;
    if (types && item.is_string() && rates && rates->is_object() && rates->contains(item)) {
      ratio = (*rates)[item.get<std::string>()].is_number_integer()
                  ? (*rates)[item.get<std::string>()].get<int>()
                  : -1;
    } else if (types && item == "compressed_sparse_attention") {
      ratio = 4;
    } else if (types && item == "heavily_compressed_attention") {
      ratio = 128;
    }
    if (ratio != 0 && ratio != 4 && ratio != 128) {
      return Error{list ? "compress_ratios" : "layer_types",
                   "expects ratios of 0, 4 or 128 (sliding, compressed sparse or heavily "
                   "compressed attention)"};
    }
    ratios.push_back(static_cast<std::uint8_t>(ratio));
  }
  if (ratios.size() == layers && mtp > 0) ratios.resize(layers + mtp, 0);
  if (ratios.size() < layers + mtp) {
    return Error{list ? "compress_ratios" : "layer_types",
                 "has fewer entries than num_hidden_layers + num_nextn_predict_layers"};
  }
  ratios.resize(layers + mtp);
  return ratios;
}

// DeepSeek-V4's hash-routed layers (deepseek_v4_bridge.py _dsv4_num_hash_layers):
// num_hash_layers, else the leading "hash_moe" entries of mlp_layer_types, a contiguous prefix.
Expected<int> dsv4_hash_layers(const Reader& r, int layers) {
  if (r.find("num_hash_layers")) return r.int_field("num_hash_layers", 0, layers);
  const json* types = r.find("mlp_layer_types");
  if (!types || !types->is_array()) return 0;
  int hashed = 0;
  while (hashed < static_cast<int>(types->size()) &&
         (*types)[static_cast<std::size_t>(hashed)] == "hash_moe")
    ++hashed;
  for (std::size_t i = static_cast<std::size_t>(hashed); i < types->size(); ++i) {
    if ((*types)[i] == "hash_moe") {
      return Error{"mlp_layer_types", "DeepSeek-V4 hash MoE layers must be a contiguous prefix"};
    }
  }
  return std::min(hashed, layers);
}

// DeepSeek-V4's attention as deepseek_v4_bridge.py provider_bridge sets it: MLA with the
// dsv4_hybrid variant, q_lora_rank, v_head_dim = head_dim (query and key heads too; the single
// KV projection is head_dim wide, kept as kv_lora_rank), the RoPE slice qk_rope_head_dim,
// o_groups x o_lora_rank, sliding_window as csa_window_size, the indexer's index_* sizes
// (DeepseekV4Config's defaults where absent), QK norms, no biases.
std::optional<Error> read_dsv4_attention(const Reader& r, HfImport& out) {
  ModelConfig& m = out.model;
  m.multi_latent_attention = true;
  m.qk_layernorm = true;
  MM_READ(m.q_lora_rank, r.int_field("q_lora_rank", 1, kMaxSize, 1024));
  MM_READ(m.v_head_dim, r.int_field("head_dim", 2, kMaxSize, 512));
  MM_READ(m.qk_pos_emb_head_dim, r.int_field("qk_rope_head_dim", 1, m.v_head_dim - 1, 64));
  m.qk_head_dim = m.v_head_dim - m.qk_pos_emb_head_dim;
  m.kv_lora_rank = m.v_head_dim;
  MM_READ(m.o_groups, r.int_field("o_groups", 1, kMaxSize, 8));
  MM_READ(m.o_lora_rank, r.int_field("o_lora_rank", 1, kMaxSize, 1024));
  MM_READ(m.csa_window_size, r.int_field("sliding_window", 1, kMaxSize, 128));
  MM_READ(m.dsa_indexer_n_heads, r.int_field("index_n_heads", 1, kMaxSize, 64));
  MM_READ(m.dsa_indexer_head_dim, r.int_field("index_head_dim", 1, kMaxSize, 128));
  MM_READ(m.dsa_indexer_topk, r.int_field("index_topk", 1, kMaxSize, 512));
  MM_READ(m.csa_compress_ratios, dsv4_compress_ratios(r, static_cast<std::size_t>(m.num_layers),
                                                      static_cast<std::size_t>(m.mtp_num_layers)));
  return std::nullopt;
}

// DeepSeek-V4 (DeepSeek-V4-Flash, -Pro and their -Base) as Megatron-Bridge's DeepSeekV4Bridge
// reads config.json (models/deepseek/deepseek_v4_bridge.py provider_bridge): every layer MoE
// (n_routed_experts top num_experts_per_tok of moe_intermediate_size, n_shared_experts shared)
// with an expert bias (noaux_tc), the first hash layers routed by token id, hc_mult
// hyper-connection streams, num_nextn_predict_layers MTP layers, no dropout.
std::optional<Error> read_deepseek_v4(const Reader& r, Family, HfImport& out) {
  ModelConfig& m = out.model;
  std::int64_t shared = 0;
  MM_READ(m.mtp_num_layers, r.int_field("num_nextn_predict_layers", 0, kMaxSize, 0));
  MM_READ(m.num_experts, r.int_field("n_routed_experts", 1, kMaxSize));
  MM_READ(m.moe_router_topk, r.int_field("num_experts_per_tok", 1, m.num_experts));
  MM_READ(m.moe_ffn_hidden_size, r.int_field("moe_intermediate_size", 1, kMaxSize));
  MM_READ(shared, r.integer("n_shared_experts", 0, 64, 1));
  m.moe_shared_expert_intermediate_size = static_cast<int>(shared * m.moe_ffn_hidden_size);
  m.moe_router_enable_expert_bias = true;
  MM_READ(m.moe_n_hash_layers, dsv4_hash_layers(r, m.num_layers));
  m.enable_mhc_connections = true;
  MM_READ(m.mhc_num_residual_streams, r.int_field("hc_mult", 1, 64, 4));
  m.hidden_dropout = 0.0;
  m.make_vocab_size_divisible_by = 1280;  // provider_bridge sets it (129,280 = 101 x 1280)
  if (auto error = read_dsv4_attention(r, out)) return error;
  out.notes.push_back(
      "DeepSeek-V4 needs a Megatron-Core development build (Megatron-LM dev: dsv4_hybrid "
      "attention, hash routing, hyper-connections with MTP); the bridge picks the fused "
      "Blackwell kernels (use_fused_mhc, apply_dsa_kernel_fusion) and the flex/hybridep "
      "dispatcher, run settings megamem leaves as given");
  out.notes.push_back(
      "not estimated: the SwiGLU clamp (swiglu_limit), sqrtsoftplus routing scores and "
      "Sinkhorn iterations (hc_sinkhorn_iters) change no saved tensor megamem counts");
  return std::nullopt;
}

// The families megamem imports: config.json's model_type and the reader of the fields the
// family adds to the common ones (experts, MLA, Mamba, linear attention); none for dense models.
using FamilyReader = std::optional<Error> (*)(const Reader&, Family, HfImport&);
struct FamilyRow {
  const char* model_type;
  Family family;
  FamilyReader read_family = nullptr;
};
constexpr FamilyRow kFamilies[] = {
    {"llama", Family::llama},
    {"mistral", Family::llama},
    {"ministral3", Family::llama, read_ministral3},
    {"qwen2", Family::qwen2},
    {"qwen3", Family::qwen3},
    {"qwen2_moe", Family::qwen2_moe, read_qwen_moe},
    {"qwen3_moe", Family::qwen3_moe, read_qwen_moe},
    {"mixtral", Family::mixtral, read_mixtral},
    {"deepseek_v2", Family::deepseek, read_deepseek},
    {"deepseek_v3", Family::deepseek, read_deepseek},
    {"deepseek_v32", Family::deepseek, read_deepseek},
    {"glm_moe_dsa", Family::deepseek, read_deepseek},
    {"kimi_k2", Family::deepseek, read_deepseek},
    {"glm4_moe", Family::glm4_moe, read_glm4_moe},
    {"gpt_oss", Family::gpt_oss, read_gpt_oss},
    {"nemotron_h", Family::nemotron_h, read_nemotron_h},
    {"qwen3_next", Family::qwen3_next, read_qwen3_next},
    {"qwen3_5_text", Family::qwen3, read_qwen35},
    {"qwen3_5_moe_text", Family::qwen3_next, read_qwen35},
    {"minimax_m2", Family::minimax_m2, read_minimax_m2},
    {"gemma3_text", Family::gemma3},
    {"gemma2", Family::gemma3, read_gemma2},
    {"gemma4_text", Family::gemma3, read_gemma4},
    {"olmoe", Family::olmoe, read_olmoe},
    {"ernie4_5_moe", Family::ernie45, read_ernie45},
    {"exaone4", Family::exaone4, read_exaone4},
    {"glm4_moe_lite", Family::deepseek, read_glm47_flash},
    {"hy_v3", Family::llama, read_hy_v3},
    {"bailing_moe_v2", Family::llama, read_bailing_moe_v2},
    {"bailing_moe", Family::llama, read_bailing_moe_v2},
    {"mimo_v2_flash", Family::llama, read_mimo_v2_flash},
    {"step3p5", Family::llama, read_step3p5},
    {"kimi_linear", Family::kimi_k3, read_kimi_k3},
    {"falcon_h1", Family::llama, read_falcon_h1},
    {"minimax_m3", Family::llama, read_minimax_m3},
    {"minimax_m3_vl_text", Family::llama, read_minimax_m3},
    {"deepseek_v4", Family::deepseek_v4, read_deepseek_v4},
    {"sarvam_moe", Family::llama, read_sarvam_moe},
    {"sarvam_mla", Family::deepseek, read_sarvam_mla},
    {"llama4_text", Family::llama, read_llama4},
};

// Multimodal wrappers whose text_config may carry no model_type of its own, with the family
// of their language model: MiniMax-M3's public config.json (Megatron-Bridge's
// minimax_m3_bridge.py reads its text_config whatever it names itself), and Qwen3.5's, whose
// text_config transformers reads as Qwen3_5TextConfig / Qwen3_5MoeTextConfig (Bridge's GB200
// recipes take AutoConfig(...).text_config, recipes/qwen/gb200/qwen35.py).
struct WrapperRow {
  const char* model_type;
  const char* text_model_type;
};
constexpr WrapperRow kWrappers[] = {
    {"minimax_m3_vl", "minimax_m3"}, {"gemma4", "gemma4_text"},           {"llama4", "llama4_text"},
    {"qwen3_5", "qwen3_5_text"},     {"qwen3_5_moe", "qwen3_5_moe_text"},
};

const FamilyRow* family_of(const std::string& model_type) {
  for (const FamilyRow& row : kFamilies) {
    if (model_type == row.model_type) return &row;
  }
  return nullptr;
}

// The model's name from _name_or_path, and a note when the checkpoint is quantized.
void read_provenance(const Reader& reader, HfImport& out) {
  if (const json* name = reader.find("_name_or_path"); name && name->is_string()) {
    std::string path = name->get<std::string>();
    if (const std::size_t slash = path.find_last_of('/'); slash != std::string::npos) {
      path = path.substr(slash + 1);
    }
    out.model.name = path;
  }
  if (reader.find("quantization_config")) {
    out.notes.push_back(
        "the checkpoint is quantized (quantization_config); training precision "
        "is a separate setting");
  }
}

#undef MM_READ

}  // namespace

const std::vector<std::string>& supported_hf_model_types() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> names;
    for (const FamilyRow& row : kFamilies) names.emplace_back(row.model_type);
    return names;
  }();
  return types;
}

namespace {

// The object holding the language model and its model_type.
struct LanguageModelJson {
  const json* root = nullptr;
  std::string model_type;
};

// A multimodal wrapper's vision tower is not estimated; say so unless the family's reader
// already did (Qwen3.5, Ministral 3 name their encoders).
void note_vision_encoder(const json& document, const LanguageModelJson& language_model,
                         HfImport& out) {
  if (language_model.root == &document || !document.contains("vision_config")) return;
  for (const std::string& note : out.notes) {
    if (note.find("vision") != std::string::npos) return;
  }
  out.notes.push_back(
      "the vision encoder (vision_config) is not estimated: the language model "
      "(text_config) is");
}

Expected<LanguageModelJson> find_language_model(const json& document) {
  LanguageModelJson found{.root = &document, .model_type = ""};
  {
    const auto it = document.find("model_type");
    if (it == document.end() || !it->is_string()) {
      return Error{"model_type", "is missing from config.json (it names the model family)"};
    }
    found.model_type = it->get<std::string>();
  }
  // Multimodal wrappers (Kimi-K2.5, ...) keep the language model in text_config.
  if (!family_of(found.model_type)) {
    const auto text = document.find("text_config");
    if (text != document.end() && text->is_object()) {
      const auto inner = text->find("model_type");
      if (inner != text->end() && inner->is_string() && family_of(inner->get<std::string>())) {
        found.root = &*text;
        found.model_type = inner->get<std::string>();
      } else if (inner == text->end() || !inner->is_string()) {
        for (const WrapperRow& wrapper : kWrappers) {
          if (found.model_type != wrapper.model_type) continue;
          found.root = &*text;
          found.model_type = wrapper.text_model_type;
        }
      }
    }
  }
  return found;
}

Error unsupported_family(const std::string& model_type) {
  std::string known;
  for (const std::string& name : supported_hf_model_types()) {
    known += (known.empty() ? "" : ", ") + name;
  }
  return Error{"model_type",
               "'" + model_type + "' is not a supported family (supported: " + known + ")"};
}

// Python's json module writes float("inf") and NaN as bare Infinity, -Infinity and NaN
// (Nemotron-H's "time_step_limit": [0.0, Infinity]); JSON has no such literals. Outside
// strings they become null, which no field megamem reads can hold.
std::string python_literals_to_null(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (const std::string_view literal : {"-Infinity", "Infinity", "NaN"}) {
      if (text.substr(i, literal.size()) == literal) {
        out += "null";
        i += literal.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

}  // namespace

Expected<HfImport> import_hf_config(std::string_view config_json) {
  const std::string text = python_literals_to_null(config_json);
  const json document = json::parse(text.begin(), text.end(), nullptr, false);
  if (document.is_discarded()) return Error{"config.json", "is not valid JSON"};
  if (!document.is_object()) return Error{"config.json", "is not a JSON object"};

  const Expected<LanguageModelJson> language_model = find_language_model(document);
  if (!language_model) return language_model.error();
  const FamilyRow* family = family_of(language_model->model_type);
  if (!family) return unsupported_family(language_model->model_type);

  HfImport out;
  out.model_type = language_model->model_type;
  const Reader reader(*language_model->root);  // read_common() looks at out.model_type
  if (auto error = read_common(reader, family->family, out)) return *error;
  if (family->read_family) {
    if (auto error = family->read_family(reader, family->family, out)) return *error;
  }
  note_vision_encoder(document, *language_model, out);
  read_provenance(reader, out);
  return out;
}

}  // namespace megamem
