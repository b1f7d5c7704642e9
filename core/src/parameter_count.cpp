// Parameter tensors per stage and per GPU; see parameter_count.hpp.
#include "parameter_count.hpp"

#include <algorithm>

namespace megamem {
namespace {

// Megatron's norms: LayerNorm has a weight and a bias, RMSNorm a weight.
std::int64_t norm_params(const ModelConfig& model, std::int64_t width) {
  return model.normalization == Normalization::layernorm ? 2 * width : width;
}

int glu_factor(const ModelConfig& model) { return model.activation == Activation::swiglu ? 2 : 1; }

class StageBuilder {
 public:
  StageBuilder(const NormalizedConfig& normalized, std::vector<ParamTensor>& out)
      : n_(normalized),
        m_(normalized.config.model),
        tp_(normalized.config.parallel.tensor_parallel),
        out_(out) {}

  void embedding(bool shared) {
    push(n_.padded_vocab_size * m_.hidden_size / tp_, ModuleKind::word_embedding, true, shared,
         true);
    if (m_.position_embedding == PositionEmbedding::learned_absolute) {
      push(std::int64_t{m_.max_position_embeddings} * m_.hidden_size,
           ModuleKind::position_embedding, false, false, true);
    }
  }

  void decoder_layer(int layer, bool moe) {
    layer_ = layer;
    mtp_ = false;
    moe_ = moe;
    transformer_layer();
  }

  void final_layernorm() {
    layer_ = -1;
    mtp_ = false;
    push(norm_params(m_, m_.hidden_size), ModuleKind::final_layernorm);
  }

  void output_layer(bool shared) {
    layer_ = -1;
    mtp_ = false;
    push(n_.padded_vocab_size * m_.hidden_size / tp_, ModuleKind::output_layer, true, shared, true);
  }

  // megatron/core/transformer/multi_token_prediction.py: MultiTokenPredictionLayer.
  void mtp_layer(int depth, bool moe) {
    layer_ = depth;
    mtp_ = true;
    moe_ = moe;
    const std::int64_t h = m_.hidden_size;
    push(norm_params(m_, h), ModuleKind::mtp_projection);     // enorm
    push(norm_params(m_, h), ModuleKind::mtp_projection);     // hnorm
    push(2 * h * h / tp_, ModuleKind::mtp_projection, true);  // eh_proj, no bias
    transformer_layer();
    push(norm_params(m_, h), ModuleKind::mtp_final_layernorm);
  }

 private:
  void push(std::int64_t numel, ModuleKind module, bool gemm = false, bool shared = false,
            bool embedding_or_output = false, bool expert = false, std::int64_t copies = 1) {
    if (numel <= 0 || copies <= 0) return;
    ParamTensor tensor;
    tensor.numel = numel;
    tensor.copies = copies;
    tensor.module = module;
    tensor.layer = layer_;
    tensor.mtp = mtp_;
    tensor.moe_layer = moe_;
    tensor.expert = expert;
    tensor.shared_embedding = shared;
    tensor.gemm_weight = gemm;
    tensor.embedding_or_output = embedding_or_output;
    out_.push_back(tensor);
  }

  // A linear layer: weight rows x cols (already divided as the layer shards it) + bias.
  void linear(ModuleKind module, std::int64_t weight, std::int64_t bias, bool expert = false,
              std::int64_t copies = 1) {
    push(weight, module, true, false, false, expert, copies);
    push(bias, module, false, false, false, expert, copies);
  }

  void transformer_layer() {
    const std::int64_t h = m_.hidden_size;
    push(norm_params(m_, h), ModuleKind::input_layernorm);
    if (m_.multi_latent_attention) {
      mla_attention();
    } else {
      gqa_attention();
    }
    push(norm_params(m_, h), ModuleKind::pre_mlp_layernorm);
    if (moe_) {
      moe_mlp();
    } else {
      dense_mlp(ModuleKind::mlp, m_.ffn_hidden_size);
    }
  }

  // megatron/core/transformer/attention.py (SelfAttention): fused QKV, output projection,
  // optional per-head Q/K norms.
  void gqa_attention() {
    const std::int64_t h = m_.hidden_size;
    const std::int64_t q = std::int64_t{m_.num_attention_heads} * m_.kv_channels;
    const std::int64_t kv = std::int64_t{m_.num_query_groups} * m_.kv_channels;
    const std::int64_t qkv_out = q * (m_.attention_output_gate ? 2 : 1) + 2 * kv;
    const bool qkv_bias = m_.add_bias_linear || m_.add_qkv_bias;
    linear(ModuleKind::self_attention, qkv_out * h / tp_, qkv_bias ? qkv_out / tp_ : 0);
    if (m_.qk_layernorm) {
      push(norm_params(m_, m_.kv_channels), ModuleKind::self_attention);  // q_layernorm
      push(norm_params(m_, m_.kv_channels), ModuleKind::self_attention);  // k_layernorm
    }
    linear(ModuleKind::self_attention, q * h / tp_, m_.add_bias_linear ? h : 0);
  }

  // megatron/core/transformer/multi_latent_attention.py (MLASelfAttention): the
  // down-projections are duplicated on every TP rank; q/kv norms exist only with
  // --qk-layernorm (mla_qk_norm_config.py).
  void mla_attention() {
    const std::int64_t h = m_.hidden_size;
    const std::int64_t heads = m_.num_attention_heads;
    const std::int64_t q_head = std::int64_t{m_.qk_head_dim} + m_.qk_pos_emb_head_dim;
    const std::int64_t kv_down = std::int64_t{m_.kv_lora_rank} + m_.qk_pos_emb_head_dim;
    const std::int64_t bias = m_.add_bias_linear ? 1 : 0;
    const ModuleKind kind = ModuleKind::self_attention;
    if (m_.q_lora_rank > 0) {
      linear(kind, h * m_.q_lora_rank, bias * m_.q_lora_rank);
      if (m_.qk_layernorm) push(norm_params(m_, m_.q_lora_rank), kind);
      linear(kind, m_.q_lora_rank * heads * q_head / tp_, bias * heads * q_head / tp_);
    } else {
      linear(kind, h * heads * q_head / tp_, bias * heads * q_head / tp_);
    }
    linear(kind, h * kv_down, bias * kv_down);
    if (m_.qk_layernorm) push(norm_params(m_, m_.kv_lora_rank), kind);
    const std::int64_t kv_up = heads * (std::int64_t{m_.qk_head_dim} + m_.v_head_dim);
    linear(kind, m_.kv_lora_rank * kv_up / tp_, bias * kv_up / tp_);
    linear(kind, heads * m_.v_head_dim * h / tp_, bias * h);
  }

  // megatron/core/transformer/mlp.py: fc1 (column parallel, x2 for GLU), fc2 (row parallel).
  void dense_mlp(ModuleKind kind, std::int64_t ffn) {
    const std::int64_t h = m_.hidden_size;
    const std::int64_t fc1_out = glu_factor(m_) * ffn;
    const std::int64_t bias = m_.add_bias_linear ? 1 : 0;
    linear(kind, fc1_out * h / tp_, bias * fc1_out / tp_);
    linear(kind, ffn * h / tp_, bias * h);
  }

  // megatron/core/transformer/moe/: router (replicated, E x h), E/EP local experts split
  // over ETP, shared experts as an ordinary TP MLP, optional latent projections.
  void moe_mlp() {
    const std::int64_t h = m_.hidden_size;
    const std::int64_t experts = m_.num_experts;
    const std::int64_t bias = m_.add_bias_linear ? 1 : 0;
    linear(ModuleKind::router, experts * h, bias * experts);
    if (m_.moe_latent_size > 0) {
      linear(ModuleKind::moe_latent_projection, h * m_.moe_latent_size, bias * m_.moe_latent_size);
      linear(ModuleKind::moe_latent_projection, m_.moe_latent_size * h, bias * h);
    }
    const std::int64_t width = m_.moe_latent_size > 0 ? m_.moe_latent_size : h;
    const std::int64_t etp = n_.config.parallel.expert_tensor_parallel;
    const std::int64_t local_experts = experts / n_.config.parallel.expert_parallel;
    const std::int64_t fc1_out = glu_factor(m_) * std::int64_t{m_.moe_ffn_hidden_size};
    // TEGroupedMLP: one fc1 and one fc2 weight (and bias) per local expert.
    linear(ModuleKind::routed_experts, fc1_out * width / etp, bias * fc1_out / etp, true,
           local_experts);
    linear(ModuleKind::routed_experts, m_.moe_ffn_hidden_size * width / etp, bias * width, true,
           local_experts);
    if (m_.moe_shared_expert_intermediate_size > 0) {
      dense_mlp(ModuleKind::shared_experts, m_.moe_shared_expert_intermediate_size);
      if (m_.moe_shared_expert_gate) push(h, ModuleKind::shared_experts, true);
    }
  }

  const NormalizedConfig& n_;
  const ModelConfig& m_;
  const std::int64_t tp_;
  std::vector<ParamTensor>& out_;
  int layer_ = -1;
  bool mtp_ = false;
  bool moe_ = false;
};

bool layer_is_moe(const NormalizedConfig& normalized, int layer) {
  return normalized.moe_layer_pattern[static_cast<std::size_t>(layer)] != 0;
}

}  // namespace

const char* module_kind_name(ModuleKind kind) {
  switch (kind) {
    case ModuleKind::word_embedding:
      return "word_embeddings";
    case ModuleKind::position_embedding:
      return "position_embeddings";
    case ModuleKind::input_layernorm:
      return "input_layernorm";
    case ModuleKind::self_attention:
      return "self_attention";
    case ModuleKind::pre_mlp_layernorm:
      return "pre_mlp_layernorm";
    case ModuleKind::mlp:
      return "mlp";
    case ModuleKind::router:
      return "router";
    case ModuleKind::routed_experts:
      return "experts";
    case ModuleKind::shared_experts:
      return "shared_experts";
    case ModuleKind::moe_latent_projection:
      return "latent_projections";
    case ModuleKind::final_layernorm:
      return "final_layernorm";
    case ModuleKind::output_layer:
      return "output_layer";
    case ModuleKind::mtp_projection:
      return "mtp_projection";
    case ModuleKind::mtp_final_layernorm:
      return "mtp_final_layernorm";
  }
  return "unknown";
}

void append_stage_tensors(const NormalizedConfig& normalized, const StagePlacement& stage,
                          std::vector<ParamTensor>& out) {
  const ModelConfig& model = normalized.config.model;
  const bool pipelined = normalized.config.parallel.pipeline_parallel > 1;
  const bool tied = !model.untie_embeddings_and_output_weights;
  // gpt_model.py: the embedding exists where pre_process or mtp_process; copies on other
  // stages are kept in sync through the embedding group, in their own bucket.
  const bool embedding_copy = stage.num_mtp_layers > 0 && !stage.has_embedding;
  const bool shared = pipelined && (tied || model.mtp_num_layers > 0);
  StageBuilder builder(normalized, out);
  if (stage.has_embedding || embedding_copy) builder.embedding(shared);
  for (int i = 0; i < stage.num_layers; ++i) {
    const int layer = stage.first_layer + i;
    builder.decoder_layer(layer, layer_is_moe(normalized, layer));
  }
  if (stage.has_loss) builder.final_layernorm();
  // megatron/core/transformer/multi_token_prediction.py: MTP layers use the spec of the last
  // decoder layer. With --mtp-use-repeated-layer one layer's weights serve every depth.
  const int mtp_built =
      model.mtp_use_repeated_layer ? std::min(stage.num_mtp_layers, 1) : stage.num_mtp_layers;
  const bool mtp_moe = layer_is_moe(normalized, model.num_layers - 1);
  for (int depth = 0; depth < mtp_built; ++depth) builder.mtp_layer(depth, mtp_moe);
  // gpt_model.py: the output layer skips its weight only where it is tied to a local
  // embedding (pre_process); every other loss stage allocates a full copy.
  if (stage.has_loss && !(tied && stage.has_embedding)) builder.output_layer(shared && tied);
}

LayerTemplates layer_templates(const NormalizedConfig& normalized) {
  LayerTemplates templates;
  StageBuilder dense(normalized, templates.dense);
  dense.decoder_layer(0, false);
  if (normalized.config.model.num_experts > 0) {
    StageBuilder moe(normalized, templates.moe);
    moe.decoder_layer(0, true);
  }
  return templates;
}

void stage_params(const NormalizedConfig& normalized, const StagePlacement& stage,
                  const LayerTemplates& templates, StageParams& out) {
  out.head.clear();
  out.tail.clear();
  out.blocks.clear();
  // The same stage as append_stage_tensors, with layers kept as runs of a template.
  StagePlacement ends = stage;
  ends.num_layers = 0;
  std::vector<ParamTensor> all;
  append_stage_tensors(normalized, ends, all);
  for (const ParamTensor& tensor : all) {
    const bool head = tensor.module == ModuleKind::word_embedding ||
                      tensor.module == ModuleKind::position_embedding;
    (head ? out.head : out.tail).push_back(tensor);
  }
  auto add = [&](const std::vector<ParamTensor>& tensors, std::int64_t repeat) {
    if (!tensors.empty() && repeat > 0)
      out.blocks.push_back({tensors.data(), tensors.size(), repeat});
  };
  add(out.head, 1);
  int i = 0;
  while (i < stage.num_layers) {
    const bool moe = layer_is_moe(normalized, stage.first_layer + i);
    int run = 1;
    while (i + run < stage.num_layers &&
           layer_is_moe(normalized, stage.first_layer + i + run) == moe) {
      ++run;
    }
    add(moe ? templates.moe : templates.dense, run);
    i += run;
  }
  add(out.tail, 1);
}

ModelTotals count_model_totals(const NormalizedConfig& normalized) {
  // The whole model on one GPU, unpadded vocabulary: unique parameters. Layers of one kind
  // are identical, so each kind is listed once and counted as often as it occurs.
  NormalizedConfig whole = normalized;
  whole.config.parallel.tensor_parallel = 1;
  whole.config.parallel.pipeline_parallel = 1;
  whole.config.parallel.expert_parallel = 1;
  whole.config.parallel.expert_tensor_parallel = 1;
  whole.padded_vocab_size = normalized.config.model.vocab_size;
  const ModelConfig& model = normalized.config.model;
  std::int64_t moe_layers = 0;
  for (std::uint8_t is_moe : normalized.moe_layer_pattern) moe_layers += is_moe;
  const std::int64_t dense_layers = model.num_layers - moe_layers;
  const int mtp_built =
      model.mtp_use_repeated_layer ? std::min(model.mtp_num_layers, 1) : model.mtp_num_layers;

  const double active_expert_share =
      model.num_experts > 0 ? static_cast<double>(model.moe_router_topk) / model.num_experts : 1.0;
  ModelTotals totals;
  double active = 0;
  std::vector<ParamTensor> tensors;
  StageBuilder builder(whole, tensors);
  auto count = [&](std::int64_t times) {
    for (const ParamTensor& tensor : tensors) {
      const std::int64_t elements = tensor.elements() * times;
      if (tensor.mtp) {
        totals.mtp_params += elements;
        continue;
      }
      totals.params += elements;
      active += static_cast<double>(elements) * (tensor.expert ? active_expert_share : 1.0);
    }
    tensors.clear();
  };
  builder.embedding(false);
  builder.final_layernorm();
  if (model.untie_embeddings_and_output_weights) builder.output_layer(false);
  count(1);
  builder.decoder_layer(0, false);
  count(dense_layers);
  if (moe_layers > 0) {
    builder.decoder_layer(0, true);
    count(moe_layers);
  }
  builder.mtp_layer(0, layer_is_moe(normalized, model.num_layers - 1));
  count(mtp_built);
  totals.active_params = static_cast<std::int64_t>(active + 0.5);
  const std::int64_t padding_rows = normalized.padded_vocab_size - model.vocab_size;
  const int vocab_matrices = model.untie_embeddings_and_output_weights ? 2 : 1;
  totals.padded_params =
      totals.params + totals.mtp_params + padding_rows * model.hidden_size * vocab_matrices;
  return totals;
}

}  // namespace megamem
