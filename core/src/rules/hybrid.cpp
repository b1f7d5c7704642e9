// Rule book, hybrid-model topic: the layer pattern of Megatron-Core's MambaModel / HybridModel
// (--hybrid-override-pattern, --hybrid-layer-pattern in later releases), the Mamba-2 mixer's
// shape rules, the pipeline flags a hybrid stack ignores, and every model's per-layer kinds.
#include <string>
#include <string_view>

#include "rule_book.hpp"

namespace megamem::rules {
namespace {

constexpr const char* kPatternField = "hybrid_layer_pattern";
constexpr const char* kAllocation = "megatron/core/models/hybrid/hybrid_layer_allocation.py";
constexpr const char* kMixer = "megatron/core/ssm/mamba_mixer.py";

std::optional<LayerKind> kind_of_symbol(char symbol) {
  switch (symbol) {
    case 'M':
      return LayerKind::mamba;
    case '*':
      return LayerKind::attention;
    case '-':
      return LayerKind::mlp;
    case 'E':
      return LayerKind::moe_only;
    default:
      return std::nullopt;
  }
}

// Symbols Megatron-Core knows that megamem does not model yet: named, not called invalid.
std::optional<Error> unmodeled_symbol(char symbol) {
  std::string what;
  switch (symbol) {
    case 'G':
      what = "'G' (Gated DeltaNet) layers";
      break;
    case 'D':
      what = "'D' (DeepSeek sparse attention) layers";
      break;
    case '+':
      what = "'+' (multi-latent attention) layers";
      break;
    case '|':
      what = "'|' pipeline segment separators";
      break;
    case '/':
      what = "'/' multi-token-prediction patterns";
      break;
    default:
      return std::nullopt;
  }
  return Error{kPatternField, what +
                                  " in a hybrid layer pattern are not modeled by megamem; use "
                                  "'M', '*', '-' and 'E' (and --pipeline-model-parallel-size "
                                  "for the even pipeline split)"};
}

std::optional<Error> symbols_are_valid(const std::string& pattern) {
  for (const char symbol : pattern) {
    if (kind_of_symbol(symbol)) continue;
    if (std::optional<Error> error = unmodeled_symbol(symbol)) return error;
    return rule_error(kPatternField,
                      std::string("'") + symbol +
                          "' is not a valid layer symbol; valid symbols are M (Mamba), "
                          "* (attention), - (MLP), E (MoE)",
                      kAllocation);
  }
  return std::nullopt;
}

// Later releases derive --num-layers from the pattern (arguments.py, with a warning); earlier
// ones assert that they match (mamba_hybrid_layer_allocation.py): the pattern wins.
void layers_follow_pattern(NormalizedConfig& n) {
  ModelConfig& m = n.config.model;
  const auto length = static_cast<int>(m.hybrid_layer_pattern.size());
  if (m.num_layers == length) return;
  arguments_policy(n, "hybrid layer pattern has " + str(length) + " layers but num_layers is " +
                          str(m.num_layers) + "; Megatron builds the pattern's " + str(length) +
                          " (earlier releases assert that they match)");
  m.num_layers = length;
}

// 'E' layers are MoE layers: the MoE pattern follows the hybrid pattern.
std::optional<Error> moe_layers_follow_pattern(NormalizedConfig& n) {
  ModelConfig& m = n.config.model;
  const bool has_moe = m.hybrid_layer_pattern.find('E') != std::string::npos;
  if (has_moe && m.num_experts == 0) {
    return rule_error(kPatternField, "'E' (MoE) layers need --num-experts",
                      "megatron/core/transformer/moe/moe_layer.py");
  }
  m.moe_layer_pattern.clear();
  if (m.num_experts == 0) return std::nullopt;
  for (const char symbol : m.hybrid_layer_pattern) m.moe_layer_pattern.push_back(symbol == 'E');
  return std::nullopt;
}

// mamba_mixer.py __init__: head and group counts must split over TP and over each other.
std::optional<Error> mamba_shapes_divide(NormalizedConfig& n) {
  ModelConfig& m = n.config.model;
  if (m.hybrid_layer_pattern.find('M') == std::string::npos) return std::nullopt;
  for (const auto& [field, value] : {std::pair{"mamba_state_dim", m.mamba_state_dim},
                                     {"mamba_head_dim", m.mamba_head_dim},
                                     {"mamba_num_groups", m.mamba_num_groups}}) {
    if (value < 1) return Error{field, std::string(field) + " must be at least 1"};
  }
  if (m.mamba_num_heads < 0) {
    return Error{"mamba_num_heads", "mamba_num_heads must not be negative"};
  }
  if (m.mamba_num_heads == 0) {
    // d_inner = expand (2) x hidden_size, split into heads of mamba_head_dim.
    if (std::optional<Error> error = must_divide("mamba_head_dim", "d_inner (2 x hidden_size)",
                                                 2 * std::int64_t{m.hidden_size}, "mamba_head_dim",
                                                 m.mamba_head_dim, kMixer)) {
      return error;
    }
    m.mamba_num_heads = 2 * m.hidden_size / m.mamba_head_dim;
  }
  const int tp = n.config.parallel.tensor_parallel;
  if (auto e = must_divide("mamba_num_heads", "mamba_num_heads", m.mamba_num_heads,
                           "tensor_model_parallel_size", tp, kMixer)) {
    return e;
  }
  if (auto e = must_divide("mamba_num_groups", "mamba_num_groups", m.mamba_num_groups,
                           "tensor_model_parallel_size", tp, kMixer)) {
    return e;
  }
  return must_divide("mamba_num_groups", "mamba_num_heads", m.mamba_num_heads, "mamba_num_groups",
                     m.mamba_num_groups, kMixer);
}

// mamba_mixer.py: under FP8, in_proj's output width (z, x, B, C, dt) is a multiple of 16.
std::optional<Error> mamba_fp8_alignment(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (n.config.training.fp8_recipe == Fp8Recipe::none) return std::nullopt;
  if (m.hybrid_layer_pattern.find('M') == std::string::npos) return std::nullopt;
  const std::int64_t in_proj_out = 2 * std::int64_t{m.mamba_num_heads} * m.mamba_head_dim +
                                   2 * std::int64_t{m.mamba_num_groups} * m.mamba_state_dim +
                                   m.mamba_num_heads;
  return must_divide("mamba_num_heads", "the Mamba in_proj width under FP8", in_proj_out,
                     "the FP8 alignment", 16, kMixer);
}

// A hybrid stack places its layers itself (hybrid_layer_allocation.py select_pipeline_segment):
// an even split, or --decoder-first/last-pipeline-num-layers; no virtual stages without '|'
// segments. The layout and account-for flags are asserted against in later releases'
// arguments.py and never read by the hybrid stack.
std::optional<Error> hybrid_pipeline_flags(NormalizedConfig& n) {
  ParallelConfig& par = n.config.parallel;
  if (par.virtual_stages_per_pipeline_rank > 1) {
    return rule_error("virtual_stages_per_pipeline_rank",
                      "virtual pipeline stages of a hybrid model need '|' segments in the "
                      "hybrid layer pattern, which megamem does not model; use "
                      "virtual_stages_per_pipeline_rank 1",
                      kAllocation);
  }
  if (!par.pipeline_layout.empty()) {
    arguments_policy(n,
                     "--pipeline-model-parallel-layout is ignored by a hybrid model's layer "
                     "placement (the hybrid layer pattern places the layers)");
    par.pipeline_layout.clear();
  }
  if (par.account_for_embedding_in_pipeline_split || par.account_for_loss_in_pipeline_split) {
    arguments_policy(n,
                     "--account-for-embedding/loss-in-pipeline-split are ignored by a hybrid "
                     "model's layer placement");
    par.account_for_embedding_in_pipeline_split = false;
    par.account_for_loss_in_pipeline_split = false;
  }
  if (n.config.model.mtp_num_layers > 0) {
    return Error{"mtp_num_layers",
                 "multi-token prediction in a hybrid model is described by '/' patterns, which "
                 "megamem does not model; use mtp_num_layers 0"};
  }
  return std::nullopt;
}

std::optional<Error> check_hybrid_pattern(NormalizedConfig& n) {
  const std::string& pattern = n.config.model.hybrid_layer_pattern;
  if (pattern.empty()) return std::nullopt;
  if (std::optional<Error> error = symbols_are_valid(pattern)) return error;
  layers_follow_pattern(n);
  static constexpr Check kChecks[] = {moe_layers_follow_pattern, mamba_shapes_divide,
                                      mamba_fp8_alignment, hybrid_pipeline_flags};
  return run_checks(kChecks, n);
}

std::optional<Error> resolve_layer_kinds(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  n.layer_kinds.clear();
  if (!m.hybrid_layer_pattern.empty()) {
    for (const char symbol : m.hybrid_layer_pattern)
      n.layer_kinds.push_back(*kind_of_symbol(symbol));
    return std::nullopt;
  }
  // experimental_attention_variant_module_specs.py get_linear_attention_pattern: with
  // --linear-attention-freq N, layer i (0-based) is linear attention unless (i + 1) % N == 0.
  const int freq = m.linear_attention_freq;
  for (std::size_t i = 0; i < n.moe_layer_pattern.size(); ++i) {
    const bool moe = n.moe_layer_pattern[i] != 0;
    const bool gdn = freq > 0 && (static_cast<int>(i) + 1) % freq != 0;
    n.layer_kinds.push_back(gdn ? (moe ? LayerKind::gdn_moe : LayerKind::gdn)
                                : (moe ? LayerKind::moe : LayerKind::dense));
  }
  return std::nullopt;
}

// transformer_config.py __post_init__ (gated delta net): head counts split over TP x CP and
// value heads over key heads; common.py _GDNBase: under FP8 the in_proj width is a multiple
// of 16. A GDN layer is a GPT layer: not combined with a hybrid layer pattern here.
std::optional<Error> gated_deltanet_shapes(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.linear_attention_freq == 0) return std::nullopt;
  constexpr const char* kConfig = "megatron/core/transformer/transformer_config.py";
  if (m.linear_attention_freq < 0) {
    return Error{"linear_attention_freq", "linear_attention_freq must not be negative"};
  }
  if (!m.hybrid_layer_pattern.empty()) {
    return Error{"linear_attention_freq",
                 "Gated DeltaNet layers of a GPT model (--linear-attention-freq) cannot be "
                 "combined with a hybrid layer pattern; use one of the two"};
  }
  for (const auto& [field, value] : {std::pair{"linear_conv_kernel_dim", m.linear_conv_kernel_dim},
                                     {"linear_key_head_dim", m.linear_key_head_dim},
                                     {"linear_value_head_dim", m.linear_value_head_dim},
                                     {"linear_num_key_heads", m.linear_num_key_heads},
                                     {"linear_num_value_heads", m.linear_num_value_heads}}) {
    if (value < 1) return Error{field, std::string(field) + " must be at least 1"};
  }
  const int tp_cp = n.config.parallel.tensor_parallel * n.config.parallel.context_parallel;
  if (auto e =
          must_divide("linear_num_value_heads", "linear_num_value_heads", m.linear_num_value_heads,
                      "linear_num_key_heads", m.linear_num_key_heads, kConfig)) {
    return e;
  }
  if (auto e = must_divide("linear_num_key_heads", "linear_num_key_heads", m.linear_num_key_heads,
                           "TP x CP", tp_cp, kConfig)) {
    return e;
  }
  if (n.config.training.fp8_recipe == Fp8Recipe::none) return std::nullopt;
  const std::int64_t in_proj_out =
      2 * std::int64_t{m.linear_num_key_heads} * m.linear_key_head_dim +
      2 * std::int64_t{m.linear_num_value_heads} * m.linear_value_head_dim +
      2 * std::int64_t{m.linear_num_value_heads};
  return must_divide("linear_num_value_heads", "the Gated DeltaNet in_proj width under FP8",
                     in_proj_out, "the FP8 alignment", 16,
                     "megatron/core/ssm/gated_delta_net/common.py");
}

constexpr Check kHybridPatternChecks[] = {check_hybrid_pattern};
constexpr Check kLayerKindChecks[] = {gated_deltanet_shapes, resolve_layer_kinds};

}  // namespace

const std::span<const Check> hybrid_pattern_checks{kHybridPatternChecks};
const std::span<const Check> layer_kind_checks{kLayerKindChecks};

}  // namespace megamem::rules
