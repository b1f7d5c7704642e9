// Rule book, hybrid-model topic: the layer pattern of Megatron-Core's MambaModel / HybridModel
// (--hybrid-override-pattern, --hybrid-layer-pattern in later releases), the Mamba-2 mixer's
// shape rules, the pipeline flags a hybrid stack ignores, its '/' MTP parts and '|' pipeline
// segments, and every model's per-layer kinds (and the layers of an MTP depth).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "modules/kimi_k3.hpp"
#include "modules/sliding_window.hpp"
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
    case '+':  // MLA: attention_mla.cpp, selected by multi_latent_attention
    case 'D':  // DSA: attention_dsa.cpp (absorbed MLA with the indexer), by dsa_indexer_topk
      return LayerKind::attention;
    case '-':
      return LayerKind::mlp;
    case 'E':
      return LayerKind::moe_only;
    case 'G':
      return LayerKind::gdn_mixer;
    case 'P':  // Megatron-Bridge's Falcon-H1 (falcon_h1_layer.cpp)
      return LayerKind::parallel_hybrid;
    default:
      return std::nullopt;
  }
}

// hybrid_layer_allocation.py parse_hybrid_pattern: "<main>/<mtp>/<mtp>...". The main part may
// hold '|' pipeline segments; every later part is one MTP depth and all must be identical.
struct PatternParts {
  std::string main;  // with its '|' separators
  std::string mtp;   // one depth's layers
  int mtp_depths = 0;
};

Expected<PatternParts> split_pattern(const std::string& pattern) {
  PatternParts parts;
  std::vector<std::string> pieces(1);
  for (const char symbol : pattern) {
    if (symbol == '/') {
      pieces.emplace_back();
    } else {
      pieces.back() += symbol;
    }
  }
  parts.main = pieces.front();
  const bool all_empty = std::all_of(pieces.begin() + 1, pieces.end(),
                                     [](const std::string& piece) { return piece.empty(); });
  if (pieces.size() == 1 || all_empty) return parts;  // "main/" has no MTP depth
  parts.mtp = pieces[1];
  for (std::size_t i = 2; i < pieces.size(); ++i) {
    if (pieces[i] == parts.mtp) continue;
    return rule_error(kPatternField,
                      "All MTP patterns must be identical. Pattern 1 is '" + parts.mtp +
                          "', but pattern " + str(static_cast<std::int64_t>(i)) + " is '" +
                          pieces[i] + "'",
                      kAllocation);
  }
  parts.mtp_depths = static_cast<int>(pieces.size() - 1);
  return parts;
}

// The main pattern's layer symbols, without the '|' segment separators.
std::string main_layers(const std::string& pattern) {
  std::string out;
  for (const char symbol : pattern) {
    if (symbol == '/') break;
    if (symbol != '|') out += symbol;
  }
  return out;
}

// hybrid_layer_specs.py: a 'D' layer is DSAttention in AbsorbedMLASelfAttention, sized by the
// dsa_indexer_* fields (transformer_config.py; the indexer cannot be built without its top-k).
// megamem's MLA/DSA choice is model-wide, so '+' and 'D' together are not modeled.
std::optional<Error> sparse_attention_symbols(NormalizedConfig& n) {
  ModelConfig& m = n.config.model;
  if (m.hybrid_layer_pattern.find('D') == std::string::npos) return std::nullopt;
  if (m.hybrid_layer_pattern.find('+') != std::string::npos) {
    return Error{kPatternField,
                 "'+' (MLA) and 'D' (DeepSeek sparse attention) layers in one hybrid pattern are "
                 "not modeled by megamem (its attention choice is model-wide); use one of them"};
  }
  if (m.dsa_indexer_topk == 0) {
    return rule_error("dsa_indexer_topk",
                      "'D' (DeepSeek sparse attention) layers need the indexer's sizes "
                      "(--dsa-indexer-topk, --dsa-indexer-n-heads, --dsa-indexer-head-dim)",
                      "megatron/core/models/hybrid/hybrid_layer_specs.py");
  }
  m.multi_latent_attention = true;
  return std::nullopt;
}

// hybrid_layer_allocation.py _validate_pattern: the layer symbols (and '|' in the main part
// only), and never attention ('*') together with MLA ('+') or DSA ('D'). megamem checks the
// mix over the whole pattern: its MLA switch is model-wide.
std::optional<Error> symbols_are_valid(const std::string& pattern) {
  bool in_mtp = false;
  for (const char symbol : pattern) {
    if (symbol == '/') in_mtp = true;
    if (symbol == '/' || (symbol == '|' && !in_mtp) || kind_of_symbol(symbol)) continue;
    return rule_error(kPatternField,
                      std::string("In ") + (in_mtp ? "MTP" : "main") + " pattern, '" + symbol +
                          "' is not a valid layer symbol; valid symbols are M (Mamba), G (Gated "
                          "DeltaNet), * (attention), + (MLA), D (DSA), - (MLP), E (MoE), P "
                          "(Megatron-Bridge Falcon-H1: Mamba and attention in parallel)" +
                          (in_mtp ? "" : ", | (pipeline segment), / (MTP depth)"),
                      kAllocation);
  }
  const bool attention = pattern.find('*') != std::string::npos;
  if (attention && pattern.find_first_of("+D") != std::string::npos) {
    return rule_error(kPatternField,
                      "Not supported to have both Attention and MLA/DSA in one model", kAllocation);
  }
  return std::nullopt;
}

// arguments.py validate_args: a '+' (or 'D') layer turns on multi_latent_attention.
void mla_follows_pattern(NormalizedConfig& n) {
  if (n.config.model.hybrid_layer_pattern.find('+') != std::string::npos) {
    n.config.model.multi_latent_attention = true;
  }
}

// arguments.py validate_args: the pattern's '/' depth count overrides --mtp-num-layers (a
// warning when they conflict). Without '/' parts a hybrid model has no MTP layers to build
// (hybrid_model.py builds its MTP block from the MTP pattern).
std::optional<Error> mtp_follows_pattern(NormalizedConfig& n, const PatternParts& parts) {
  ModelConfig& m = n.config.model;
  if (parts.mtp_depths == 0) {
    return error_when(m.mtp_num_layers > 0, "mtp_num_layers",
                      "multi-token prediction in a hybrid model needs '/' parts in the hybrid "
                      "layer pattern (e.g. \"<main>/*E/*E\" for 2 depths of an attention and "
                      "an MoE layer)",
                      "megatron/core/models/hybrid/hybrid_model.py");
  }
  if (m.mtp_num_layers > 0 && m.mtp_num_layers != parts.mtp_depths) {
    arguments_policy(n, "--mtp-num-layers (" + str(m.mtp_num_layers) +
                            ") conflicts with the MTP depth count (" + str(parts.mtp_depths) +
                            ") of the hybrid layer pattern; Megatron uses the pattern's");
  }
  // arguments.py: MTP wants rope or no position embedding (model.cpp warns for the flag).
  if (m.mtp_num_layers == 0 && m.position_embedding == PositionEmbedding::learned_absolute) {
    arguments_policy(n,
                     "Megatron-LM refuses MTP ('/' parts) with learned absolute position "
                     "embeddings (it wants --position-embedding-type rope or none)");
  }
  m.mtp_num_layers = parts.mtp_depths;
  return std::nullopt;
}

// Later releases derive --num-layers from the pattern (arguments.py, with a warning); earlier
// ones assert that they match (mamba_hybrid_layer_allocation.py): the pattern wins.
// get_hybrid_total_layer_count counts the main part's layers: MTP layers are not in
// --num-layers.
void layers_follow_pattern(NormalizedConfig& n) {
  ModelConfig& m = n.config.model;
  const auto length = static_cast<int>(main_layers(m.hybrid_layer_pattern).size());
  if (m.num_layers == length) return;
  arguments_policy(n, "hybrid layer pattern has " + str(length) + " layers but num_layers is " +
                          str(m.num_layers) + "; Megatron builds the pattern's " + str(length) +
                          " (earlier releases assert that they match)");
  m.num_layers = length;
}

// 'E' layers are MoE layers: the MoE pattern follows the hybrid pattern's main part (an MTP
// part's 'E' needs the experts too).
std::optional<Error> moe_layers_follow_pattern(NormalizedConfig& n) {
  ModelConfig& m = n.config.model;
  const bool has_moe = m.hybrid_layer_pattern.find('E') != std::string::npos;
  if (has_moe && m.num_experts == 0) {
    return rule_error(kPatternField, "'E' (MoE) layers need --num-experts",
                      "megatron/core/transformer/moe/moe_layer.py");
  }
  m.moe_layer_pattern.clear();
  if (m.num_experts == 0) return std::nullopt;
  for (const char symbol : main_layers(m.hybrid_layer_pattern))
    m.moe_layer_pattern.push_back(symbol == 'E');
  return std::nullopt;
}

// mamba_mixer.py __init__: head and group counts must split over TP and over each other.
std::optional<Error> mamba_shapes_divide(NormalizedConfig& n) {
  ModelConfig& m = n.config.model;
  if (m.hybrid_layer_pattern.find_first_of("MP") == std::string::npos) return std::nullopt;
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
  if (m.hybrid_layer_pattern.find_first_of("MP") == std::string::npos) return std::nullopt;
  const std::int64_t in_proj_out = 2 * std::int64_t{m.mamba_num_heads} * m.mamba_head_dim +
                                   2 * std::int64_t{m.mamba_num_groups} * m.mamba_state_dim +
                                   m.mamba_num_heads;
  return must_divide("mamba_num_heads", "the Mamba in_proj width under FP8", in_proj_out,
                     "the FP8 alignment", 16, kMixer);
}

// A hybrid stack places its layers itself (hybrid_layer_allocation.py select_pipeline_segment):
// '|' segments, else an even split or --decoder-first/last-pipeline-num-layers; virtual
// stages come only from segments. The layout and account-for flags are asserted against in
// later releases' arguments.py and never read by the hybrid stack.
std::optional<Error> hybrid_pipeline_flags(NormalizedConfig& n, const PatternParts& parts) {
  ParallelConfig& par = n.config.parallel;
  const auto segments = std::count(parts.main.begin(), parts.main.end(), '|') + 1;
  const bool derived_vpp = segments > par.pipeline_parallel &&
                           par.virtual_stages_per_pipeline_rank * par.pipeline_parallel == segments;
  if (par.virtual_stages_per_pipeline_rank > 1 && !derived_vpp) {
    return rule_error("virtual_stages_per_pipeline_rank",
                      "virtual pipeline stages of a hybrid model come from the '|' segments of "
                      "the hybrid layer pattern (segments / pipeline_model_parallel_size); use "
                      "virtual_stages_per_pipeline_rank 1",
                      "megatron/training/arguments.py");
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
  return std::nullopt;
}

// hybrid_layer_allocation.py select_pipeline_segment: segment i runs on pipeline rank
// i mod PP, virtual stage i div PP (segments may be empty); arguments.py: the segment count is
// a multiple of PP, VPP = segments / PP, and --decoder-first/last-pipeline-num-layers are
// refused. The embedding is on segment 0, the loss and the MTP depths on the last
// (training.py get_model, hybrid_model.py mtp_on_this_rank). megamem hands the segments to

// DeepSeek-V4 hybrid attention: the layer's entry of csa_compress_ratios picks the kind
// (ratio 4: compressor and indexer, 128: compressor, 0 or past the list: window only).
LayerKind compressed_kind(const ModelConfig& m, std::size_t index, bool moe) {
  const int ratio = index < m.csa_compress_ratios.size() ? m.csa_compress_ratios[index] : 0;
  if (ratio == 4) return moe ? LayerKind::csa_moe : LayerKind::csa_dense;
  if (ratio == 128) return moe ? LayerKind::hca_moe : LayerKind::hca_dense;
  return moe ? LayerKind::moe : LayerKind::dense;
}
// the layer placement as the equivalent --pipeline-model-parallel-layout (layer_placement.cpp).
std::optional<Error> segments_place_layers(NormalizedConfig& n, const PatternParts& parts) {
  ParallelConfig& par = n.config.parallel;
  const auto segments = std::count(parts.main.begin(), parts.main.end(), '|') + 1;
  if (segments == 1) return std::nullopt;
  if (par.decoder_first_pipeline_num_layers > 0 || par.decoder_last_pipeline_num_layers > 0) {
    return rule_error("decoder_first_pipeline_num_layers",
                      "If --hybrid-layer-pattern contains pipe separators, "
                      "--decoder-first/last-pipeline-num-layers should not be specified as the "
                      "pipeline layout is explicitly defined",
                      "megatron/training/arguments.py");
  }
  if (segments % par.pipeline_parallel != 0) {
    return rule_error(kPatternField,
                      "The number of pipe-delimited segments (" + str(segments) +
                          ") in hybrid_layer_pattern must be evenly divisible by "
                          "pipeline_model_parallel_size (" +
                          str(par.pipeline_parallel) + ")",
                      kAllocation);
  }
  std::string layout = "E";
  for (const char symbol : parts.main) layout += symbol == '|' ? '|' : 't';
  layout.append(static_cast<std::size_t>(parts.mtp_depths), 'm');
  par.pipeline_layout = layout + "L";
  return std::nullopt;
}

// Megatron-Bridge's Falcon-H1 stack (src/megatron/bridge/models/falcon_h1/modeling_falconh1/):
// a pattern with 'P' layers is FalconH1Stack's, not Megatron-LM's HybridStack.
//   mamba_hybrid_layer_allocation.py Symbols.VALID: M, *, - and P only (no MoE, MLA, DSA,
//     Gated DeltaNet, '|' segments or '/' MTP parts: _allocate_override raises);
//   falconh1_layer_specs.py: the attention is SelfAttention (GQA), never MLA;
//   falconh1_provider.py provide(): virtual pipeline stages are asserted against;
//   falconh1_block.py _select_layers_for_pipeline_parallel: every rank takes
//     num_layers // PP layers (the first/last-stage counts are never read);
//   falconh1_block.py forward: the layers run without transformer_block.py's full-recompute
//     checkpointing or its CPU-offload context, so those settings change nothing.
constexpr const char* kFalconH1Source =
    "Megatron-Bridge falcon_h1/modeling_falconh1/falconh1_block.py";

std::optional<Error> falcon_h1_structure(const NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  const ParallelConfig& par = n.config.parallel;
  const std::size_t other = m.hybrid_layer_pattern.find_first_not_of("M*-P");
  if (other != std::string::npos) {
    return rule_error(
        kPatternField,
        std::string("'") + m.hybrid_layer_pattern[other] +
            "' cannot be combined with Falcon-H1's 'P' layers (valid: M, *, -, P)",
        "Megatron-Bridge falcon_h1/modeling_falconh1/mamba_hybrid_layer_allocation.py");
  }
  if (m.multi_latent_attention) {
    return rule_error("multi_latent_attention",
                      "Falcon-H1's parallel layers build SelfAttention (GQA), not MLA",
                      "Megatron-Bridge falcon_h1/modeling_falconh1/falconh1_layer_specs.py");
  }
  if (par.virtual_stages_per_pipeline_rank > 1) {
    return rule_error("virtual_stages_per_pipeline_rank",
                      "Virtual pipeline model parallelism is temporarily unsupported in "
                      "FalconH1 models",
                      "Megatron-Bridge falcon_h1/falconh1_provider.py");
  }
  if (par.decoder_first_pipeline_num_layers > 0 || par.decoder_last_pipeline_num_layers > 0) {
    return rule_error("decoder_first_pipeline_num_layers",
                      "FalconH1Stack gives every pipeline rank num_layers // PP layers; it "
                      "does not read the first/last-stage layer counts",
                      kFalconH1Source);
  }
  return must_divide("num_layers", "num_layers", m.num_layers, "pipeline_model_parallel_size",
                     par.pipeline_parallel, kFalconH1Source);
}

std::optional<Error> falcon_h1_stack(NormalizedConfig& n) {
  if (n.config.model.hybrid_layer_pattern.find('P') == std::string::npos) return std::nullopt;
  if (std::optional<Error> error = falcon_h1_structure(n)) return error;
  policy_warning(n,
                 "'P' layers are Megatron-Bridge's Falcon-H1 (FalconH1Stack): Megatron-LM's "
                 "--hybrid-override-pattern has no 'P', only a Megatron-Bridge run builds them",
                 kFalconH1Source);
  TrainingConfig& t = n.config.training;
  if (t.recompute.granularity == RecomputeGranularity::full) {
    policy_warning(n,
                   "full recompute is ignored: FalconH1Stack runs its layers without "
                   "checkpointing (estimated without recompute)",
                   kFalconH1Source);
    t.recompute.granularity = RecomputeGranularity::none;
  }
  if (t.offload.cpu_offloading) {
    policy_warning(n,
                   "--cpu-offloading is ignored: FalconH1Stack has no activation-offload "
                   "context (estimated without it)",
                   kFalconH1Source);
    t.offload.cpu_offloading = false;
  }
  return std::nullopt;
}

std::optional<Error> check_hybrid_pattern(NormalizedConfig& n) {
  const std::string& pattern = n.config.model.hybrid_layer_pattern;
  if (pattern.empty()) return std::nullopt;
  if (std::optional<Error> error = symbols_are_valid(pattern)) return error;
  Expected<PatternParts> parts = split_pattern(pattern);
  if (!parts) return parts.error();
  layers_follow_pattern(n);
  mla_follows_pattern(n);
  if (std::optional<Error> error = falcon_h1_stack(n)) return error;
  if (std::optional<Error> error = sparse_attention_symbols(n)) return error;
  if (std::optional<Error> error = mtp_follows_pattern(n, *parts)) return error;
  if (std::optional<Error> error = hybrid_pipeline_flags(n, *parts)) return error;
  if (std::optional<Error> error = segments_place_layers(n, *parts)) return error;
  static constexpr Check kChecks[] = {moe_layers_follow_pattern, mamba_shapes_divide,
                                      mamba_fp8_alignment};
  return run_checks(kChecks, n);
}

// The kind of a GPT model's MTP layer (resolve_layer_kinds says where each comes from).
LayerKind gpt_mtp_layer_kind(const ModelConfig& m, LayerKind last) {
  switch (m.mtp_layer_kind) {
    case MtpLayerKind::dense:
      return LayerKind::dense;
    case MtpLayerKind::window_dense:
    case MtpLayerKind::dense_by_layer_index:
      return LayerKind::window_dense;
    case MtpLayerKind::last_decoder_layer:
      break;
  }
  if (m.csa_compress_ratios.empty()) return last;
  return compressed_kind(m, static_cast<std::size_t>(m.num_layers), layer_kind_is_moe(last));
}

std::optional<Error> resolve_layer_kinds(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  n.layer_kinds.clear();
  n.mtp_layer_kinds.clear();
  if (!m.hybrid_layer_pattern.empty()) {
    for (const char symbol : main_layers(m.hybrid_layer_pattern))
      n.layer_kinds.push_back(*kind_of_symbol(symbol));
    // multi_token_prediction.py MultiTokenPredictionLayer: a nested HybridStack of the MTP
    // part's layers (hybrid_layer_specs.py _hybrid_mtp_block_spec).
    const std::size_t slash = m.hybrid_layer_pattern.find('/');
    const std::string rest =
        slash == std::string::npos ? std::string() : m.hybrid_layer_pattern.substr(slash + 1);
    for (const char symbol : rest.substr(0, rest.find('/')))
      n.mtp_layer_kinds.push_back(*kind_of_symbol(symbol));
    n.mtp_layers_graphable = false;
    return std::nullopt;
  }
  // experimental_attention_variant_module_specs.py get_linear_attention_pattern: with
  // --linear-attention-freq N, layer i (0-based) is linear attention unless (i + 1) % N == 0.
  // Kimi K3's KDA layers (kimi_k3_layers.py KimiK3Attention) are linear-attention layers too:
  // the kinds gdn / gdn_moe stand for either mixer, the module specs tell them apart.
  // A windowed layer with its own attention shape (Step35DecoderLayer) is a kind of its own.
  const int freq = m.linear_attention_freq;
  const bool window_shape = window_attention_differs(m);
  n.layer_kinds.reserve(n.moe_layer_pattern.size());
  for (std::size_t i = 0; i < n.moe_layer_pattern.size(); ++i) {
    const bool moe = n.moe_layer_pattern[i] != 0;
    const bool gdn = (freq > 0 && (static_cast<int>(i) + 1) % freq != 0) || layer_is_kda(m, i);
    const bool window = window_shape && layer_is_windowed(m, static_cast<int>(i));
    n.layer_kinds.push_back(gdn      ? (moe ? LayerKind::gdn_moe : LayerKind::gdn)
                            : window ? (moe ? LayerKind::window_moe : LayerKind::window_dense)
                                     : compressed_kind(m, i, moe));
  }
  // Megatron-Bridge's Gemma4DenseSelfAttention: the last num_kv_shared_layers layers share
  // K/V (model.cpp refuses them with MoE, linear or compressed attention, so these are dense).
  const std::size_t first_shared =
      n.layer_kinds.size() -
      std::min<std::size_t>(n.layer_kinds.size(), static_cast<std::size_t>(m.kv_shared_layers));
  for (std::size_t i = first_shared; i < n.layer_kinds.size(); ++i) {
    n.layer_kinds[i] = n.layer_kinds[i] == LayerKind::window_dense
                           ? LayerKind::kv_shared_window_dense
                           : LayerKind::kv_shared_dense;
  }
  // multi_token_prediction.py: a GPT model's MTP layer uses the last decoder layer's spec;
  // DeepSeek-V4's its own entry of csa_compress_ratios after the decoder layers'
  // (deepseek_v4_hybrid_attention.py resolves compress_ratios[layer_number - 1], and the MTP
  // layer's attention is built with is_mtp_layer from the entries after num_layers);
  // Megatron-Bridge's own MTP specs (MtpLayerKind) a dense layer. Step-3.5's layers look their
  // attention up by global index: windowed here, full where mtp_attention_by_layer_index
  // (pipeline_layout.cpp) finds their stage after layer 0.
  if (m.mtp_num_layers > 0 && !n.layer_kinds.empty()) {
    n.mtp_layer_kinds.push_back(gpt_mtp_layer_kind(m, n.layer_kinds.back()));
  }
  n.mtp_layers_graphable = true;
  return std::nullopt;
}

// transformer_config.py __post_init__ (gated delta net): head counts split over TP x CP and
// value heads over key heads; common.py _GDNBase: under FP8 the in_proj width is a multiple
// of 16. The same GatedDeltaNet builds a hybrid pattern's 'G' layers (hybrid_layer_specs.py);
// a GPT model's --linear-attention-freq is not combined with a hybrid layer pattern.
std::optional<Error> gated_deltanet_shapes(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  const bool hybrid_gdn = m.hybrid_layer_pattern.find('G') != std::string::npos;
  if (m.linear_attention_freq == 0 && !hybrid_gdn) return std::nullopt;
  constexpr const char* kConfig = "megatron/core/transformer/transformer_config.py";
  if (m.linear_attention_freq < 0) {
    return Error{"linear_attention_freq", "linear_attention_freq must not be negative"};
  }
  if (m.linear_attention_freq > 0 && !m.hybrid_layer_pattern.empty()) {
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
// Megatron-Bridge kimi/kimi_k3_layers.py and kimi_k3_spec.py: the KDA list has one entry per
// decoder layer and is not combined with another linear-attention form; KDA heads split over
// TP (_init_kda) and refuse context parallelism; the K3 layer (AttnRes) needs
// hidden_dropout 0 (KimiK3TransformerLayer) and no virtual pipeline (build_kimi_k3_spec).
std::optional<Error> kimi_k3_layer_rules(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  const ParallelConfig& par = n.config.parallel;
  constexpr const char* kLayers =
      "Megatron-Bridge src/megatron/bridge/models/kimi/kimi_k3_layers.py";
  if (m.attn_res_block_size < 0) {
    return Error{"attn_res_block_size", "attn_res_block_size must not be negative"};
  }
  if (m.attn_res_block_size > 0) {
    if (auto e =
            error_when(m.hidden_dropout != 0, "hidden_dropout",
                       "Kimi K3's attention-residual layer requires hidden_dropout 0", kLayers)) {
      return e;
    }
    if (auto e =
            error_when(par.virtual_stages_per_pipeline_rank > 1, "virtual_stages_per_pipeline_rank",
                       "Kimi K3 does not support virtual pipeline parallelism yet",
                       "Megatron-Bridge src/megatron/bridge/models/kimi/kimi_k3_spec.py")) {
      return e;
    }
  }
  if (m.kda_layer_pattern.empty()) return std::nullopt;
  const auto entries = static_cast<std::int64_t>(m.kda_layer_pattern.size());
  if (auto e = error_when(entries != m.num_layers, "kda_layer_pattern",
                          "kda_layer_pattern has " + str(entries) +
                              " entries, expected num_layers " + str(m.num_layers),
                          kLayers)) {
    return e;
  }
  if (auto e = error_when(m.linear_attention_freq > 0 || !m.hybrid_layer_pattern.empty(),
                          "kda_layer_pattern",
                          "KDA layers cannot be combined with --linear-attention-freq or a "
                          "hybrid layer pattern",
                          kLayers)) {
    return e;
  }
  for (const auto& [field, value] : {std::pair{"kda_num_heads", m.kda_num_heads},
                                     {"kda_head_dim", m.kda_head_dim},
                                     {"kda_conv_kernel", m.kda_conv_kernel}}) {
    if (value < 1) return Error{field, std::string(field) + " must be at least 1"};
  }
  if (auto e = error_when(par.context_parallel > 1, "context_parallel",
                          "Kimi K3 KDA context parallelism is not supported yet", kLayers)) {
    return e;
  }
  return must_divide("kda_num_heads", "kda_num_heads", m.kda_num_heads, "TP", par.tensor_parallel,
                     kLayers);
}

constexpr Check kLayerKindChecks[] = {gated_deltanet_shapes, kimi_k3_layer_rules,
                                      resolve_layer_kinds};

}  // namespace

const std::span<const Check> hybrid_pattern_checks{kHybridPatternChecks};
const std::span<const Check> layer_kind_checks{kLayerKindChecks};

}  // namespace megamem::rules
