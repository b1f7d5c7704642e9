// Rule book, model topic: sizes Megatron needs, the defaults it derives, multi-latent
// attention, position embeddings and multi-token prediction.
#include <algorithm>
#include <string>

#include "modules/sliding_window.hpp"
#include "rule_book.hpp"

namespace megamem::rules {
namespace {

// Beyond this many GPUs a job is a typo, not a plan; integer math stays far from overflow.
constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << 20;
constexpr int kMaxDimension = 1 << 22;  // hidden sizes, heads, layers: sanity, not a rule

struct SizeField {
  const char* field;
  std::int64_t value;
  bool zero_means_default;  // 0 is "Megatron's default"; otherwise at least 1 is required
};

// Integer fields with their Megatron names: the required ones must be >= 1 (and below a sanity
// bound), the optional ones where 0 means "Megatron's default" must not be negative.
std::optional<Error> sizes_are_in_range(NormalizedConfig& n) {
  const Config& c = n.config;
  const SizeField sizes[] = {
      {"num_layers", c.model.num_layers, false},
      {"hidden_size", c.model.hidden_size, false},
      {"num_attention_heads", c.model.num_attention_heads, false},
      {"vocab_size", c.model.vocab_size, false},
      {"make_vocab_size_divisible_by", c.model.make_vocab_size_divisible_by, false},
      {"seq_length", c.training.seq_length, false},
      {"micro_batch_size", c.training.micro_batch_size, false},
      {"world_size", c.parallel.world_size, false},
      {"tensor_model_parallel_size", c.parallel.tensor_parallel, false},
      {"pipeline_model_parallel_size", c.parallel.pipeline_parallel, false},
      {"virtual_stages_per_pipeline_rank", c.parallel.virtual_stages_per_pipeline_rank, false},
      {"context_parallel_size", c.parallel.context_parallel, false},
      {"expert_model_parallel_size", c.parallel.expert_parallel, false},
      {"num_distributed_optimizer_instances", c.parallel.num_distributed_optimizer_instances,
       false},
      {"num_query_groups", c.model.num_query_groups, true},
      {"kv_channels", c.model.kv_channels, true},
      {"v_channels", c.model.v_channels, true},
      {"ffn_hidden_size", c.model.ffn_hidden_size, true},
      {"num_experts", c.model.num_experts, true},
      {"moe_ffn_hidden_size", c.model.moe_ffn_hidden_size, true},
      {"moe_shared_expert_intermediate_size", c.model.moe_shared_expert_intermediate_size, true},
      {"moe_latent_size", c.model.moe_latent_size, true},
      {"q_lora_rank", c.model.q_lora_rank, true},
      {"mtp_num_layers", c.model.mtp_num_layers, true},
      {"per_layer_input_size", c.model.per_layer_input_size, true},
      {"kv_shared_layers", c.model.kv_shared_layers, true},
      {"max_position_embeddings", c.model.max_position_embeddings, true},
      {"expert_tensor_parallel_size", c.parallel.expert_tensor_parallel, true},
      {"global_batch_size", c.training.global_batch_size, true},
      {"decoder_first_pipeline_num_layers", c.parallel.decoder_first_pipeline_num_layers, true},
      {"decoder_last_pipeline_num_layers", c.parallel.decoder_last_pipeline_num_layers, true},
  };
  for (const SizeField& item : sizes) {
    if (item.zero_means_default && item.value < 0) {
      return Error{item.field, std::string(item.field) + " must not be negative, got " +
                                   str(item.value) + " (0 means Megatron's default)"};
    }
    if (item.zero_means_default) continue;
    if (item.value < 1) {
      return Error{item.field,
                   std::string(item.field) + " must be at least 1, got " + str(item.value)};
    }
    if (item.value > kMaxDimension && std::string(item.field) != "vocab_size") {
      return Error{item.field, std::string(item.field) + " = " + str(item.value) +
                                   " is beyond any real model or job (limit " + str(kMaxDimension) +
                                   ")"};
    }
  }
  return std::nullopt;
}

std::optional<Error> job_is_within_bounds(NormalizedConfig& n) {
  const Config& c = n.config;
  if (c.parallel.world_size > kMaxWorldSize) {
    return Error{"world_size", "world_size " + str(c.parallel.world_size) +
                                   " exceeds the largest supported job (" + str(kMaxWorldSize) +
                                   " GPUs)"};
  }
  if (c.model.vocab_size > (std::int64_t{1} << 31)) {
    return Error{"vocab_size", "vocab_size " + str(c.model.vocab_size) + " is beyond 2^31"};
  }
  return std::nullopt;
}

std::optional<Error> fractions_are_fractions(NormalizedConfig& n) {
  const struct {
    const char* field;
    double value;
  } fractions[] = {
      {"hidden_dropout", n.config.model.hidden_dropout},
      {"attention_dropout", n.config.model.attention_dropout},
      {"optimizer_offload_fraction", n.config.optimizer.optimizer_offload_fraction},
  };
  for (const auto& item : fractions) {
    if (!(item.value >= 0.0 && item.value <= 1.0)) {
      return Error{item.field, std::string(item.field) + " must be between 0 and 1"};
    }
  }
  return std::nullopt;
}

// megatron/training/arguments.py: default ffn_hidden_size (SwiGLU keeps the 4h parameter
// budget by using 2/3 of it, rounded down to a multiple of 64).
int default_ffn_hidden_size(const ModelConfig& model) {
  if (model.activation == Activation::swiglu) {
    return static_cast<int>(std::int64_t{8} * model.hidden_size / 3 / 64 * 64);
  }
  return 4 * model.hidden_size;
}

// Megatron-Bridge's Gemma 4 dense layer is built from Megatron-Core's local spec whatever the
// run's transformer_impl (gemma/modeling_gemma4.py get_gemma4_layer_spec: LocalSpecProvider's
// linears and its unfused DotProductAttention), so it is estimated as --transformer-impl local.
void local_layer_spec_runs_local(NormalizedConfig& n) {
  TrainingConfig& t = n.config.training;
  if (!n.config.model.local_layer_spec || t.transformer_impl == TransformerImpl::local) {
    return;
  }
  t.transformer_impl = TransformerImpl::local;
  policy_warning(n,
                 "the model's layers use Megatron-Core's local spec (Megatron-Bridge's Gemma 4 "
                 "dense layer): estimated as --transformer-impl local, with the unfused "
                 "attention that keeps the attention probabilities",
                 "megatron/bridge/models/gemma/modeling_gemma4.py get_gemma4_layer_spec");
}

// transformer_config.py __post_init__ refuses bias_activation_fusion unless the activation is
// F.gelu, F.silu or quick_gelu; Megatron-Bridge's Gemma providers set fast_gelu
// (gemma/gemma_provider.py, gemma2_provider.py, gemma3_provider.py, gemma4_provider.py) and
// leave the fusion at its False default, so mlp.py runs the unfused glu().
void fast_gelu_runs_unfused(NormalizedConfig& n) {
  TrainingConfig& t = n.config.training;
  if (!n.config.model.fast_gelu || !t.bias_activation_fusion) return;
  t.bias_activation_fusion = false;
  policy_warning(n,
                 "the activation is Megatron-Core's fast_gelu, which Megatron does not fuse: "
                 "estimated without bias-activation fusion (mlp.py's unfused glu())",
                 "megatron/core/transformer/transformer_config.py");
}

// Defaults Megatron derives (megatron/training/arguments.py, transformer_config.py).
std::optional<Error> resolve_model_defaults(NormalizedConfig& n) {
  // First: the checks after this one read the resolved transformer_impl and fusion.
  local_layer_spec_runs_local(n);
  fast_gelu_runs_unfused(n);
  ModelConfig& m = n.config.model;
  if (m.num_query_groups == 0) m.num_query_groups = m.num_attention_heads;
  if (m.kv_channels == 0) {
    // transformer_config.py __post_init__: kv_channels = hidden_size // num_attention_heads;
    // the attention projections are then shaped heads x kv_channels != hidden.
    if (m.hidden_size % m.num_attention_heads != 0) {
      return rule_error("num_attention_heads",
                        "hidden_size " + str(m.hidden_size) +
                            " is not divisible by num_attention_heads " +
                            str(m.num_attention_heads) + "; set kv_channels explicitly",
                        "megatron/training/arguments.py, transformer_config.py");
    }
    m.kv_channels = m.hidden_size / m.num_attention_heads;
  }
  if (m.ffn_hidden_size == 0) m.ffn_hidden_size = default_ffn_hidden_size(m);
  if (m.moe_ffn_hidden_size == 0) m.moe_ffn_hidden_size = m.ffn_hidden_size;
  if (m.max_position_embeddings == 0) m.max_position_embeddings = n.config.training.seq_length;
  return std::nullopt;
}

// The MLA projections need their ranks and head sizes (multi_latent_attention.py).
std::optional<Error> multi_latent_attention_has_ranks(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  return error_when(m.multi_latent_attention && (m.kv_lora_rank < 1 || m.qk_head_dim < 1 ||
                                                 m.qk_pos_emb_head_dim < 0 || m.v_head_dim < 1),
                    "kv_lora_rank",
                    "multi-latent attention needs kv_lora_rank, qk_head_dim and v_head_dim >= 1",
                    "megatron/core/transformer/multi_latent_attention.py");
}

// A value head dimension of its own: Megatron-Bridge's MiMoV2FlashSelfAttention builds it
// without the output gate, which attention.py multiplies onto the heads x kv_channels core
// output (the gate and V would disagree in width).
std::optional<Error> value_head_dim_has_no_gate(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  return error_when(!m.multi_latent_attention && m.v_channels > 0 &&
                        m.v_channels != m.kv_channels && m.attention_output_gate,
                    "v_channels",
                    "a value head dimension of its own (v_channels) cannot be combined with the "
                    "attention output gate",
                    "megatron/core/transformer/attention.py, "
                    "Megatron-Bridge mimo_v2_flash/modeling_mimo_v2_flash.py");
}

// Megatron-Bridge's Gemma 2 core attention (the score soft-cap) raises for context
// parallelism: "Context parallelism is only supported by TEDotProductAttention!"
// (gemma/gemma2_provider.py Gemma2DotProductAttention.__init__).
std::optional<Error> softcapped_attention_without_cp(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  return error_when(!m.multi_latent_attention && m.attn_logit_softcapping > 0 &&
                        n.config.parallel.context_parallel > 1,
                    "attn_logit_softcapping",
                    "the attention score soft-cap (Gemma 2's FlexAttention core attention) "
                    "cannot run with context_parallel_size " +
                        str(n.config.parallel.context_parallel) + "; use context_parallel_size 1",
                    "Megatron-Bridge gemma/gemma2_provider.py Gemma2DotProductAttention");
}

// The two output gates lay out linear_qkv's rows differently (Megatron-LM dev
// transformer_config.py __post_init__: "head_wise_attn_gate and attention_output_gate cannot
// both be enabled"); Megatron-Bridge's Step35Bridge sets one or the other.
std::optional<Error> one_attention_output_gate(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  return error_when(m.head_wise_attn_gate && m.attention_output_gate, "head_wise_attn_gate",
                    "the head-wise attention gate and the attention output gate cannot both be "
                    "enabled",
                    "megatron/core/transformer/transformer_config.py (dev)");
}

// Whether a model has layers other than a GPT model's standard (GQA) attention: MLA, a hybrid
// pattern, linear (Gated DeltaNet, KDA) or DeepSeek-V4's compressed attention. Megatron-Bridge's
// Gemma 4 dense parts and its own MTP specs are built only on standard attention layers.
bool has_nonstandard_attention_layers(const ModelConfig& m) {
  return m.multi_latent_attention || !m.hybrid_layer_pattern.empty() ||
         m.linear_attention_freq > 0 || !m.kda_layer_pattern.empty() ||
         !m.csa_compress_ratios.empty();
}

// Megatron-Bridge's own MTP specs (MtpLayerKind) build a GPT model's dense standard-attention
// layer; a hybrid pattern's '/' part and DeepSeek-V4's compress ratios say the MTP layer
// themselves, and MLA has no windowed dense layer among Bridge's specs.
std::optional<Error> mtp_layer_kind_is_buildable(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.mtp_layer_kind == MtpLayerKind::last_decoder_layer) return std::nullopt;
  return error_when(has_nonstandard_attention_layers(m), "mtp_layer_kind",
                    "a dense MTP layer spec (Megatron-Bridge's MiMo-V2-Flash and Step-3.5) "
                    "applies to a GPT model of standard attention layers; use "
                    "mtp_layer_kind last_decoder_layer",
                    "Megatron-Bridge mimo_v2_flash_provider.py, stepfun/step35_bridge.py");
}

// gpt_layer_specs.py asserts "qk_l2_norm is not supported with MLA" (and mla_qk_norm_config.py
// raises for MLA and DSA): the L2 norm exists only on the standard attention's Q and K.
std::optional<Error> qk_l2_norm_needs_standard_attention(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  return error_when(m.qk_l2_norm && m.multi_latent_attention, "qk_l2_norm",
                    "the QK L2 norm is not supported with multi-latent attention; clear "
                    "qk_l2_norm or multi_latent_attention",
                    "megatron/core/models/gpt/gpt_layer_specs.py");
}

// --window-attn-skip-freq as a list: transformer/utils.py is_layer_window_attention indexes it
// by layer number, so it needs one entry per decoder layer.
std::optional<Error> window_pattern_covers_layers(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  const auto entries = static_cast<std::int64_t>(m.window_attn_pattern.size());
  return error_when(entries > 0 && entries != m.num_layers, "window_attn_pattern",
                    "window_attn_pattern has " + str(entries) + " entries, expected num_layers " +
                        str(m.num_layers),
                    "megatron/core/transformer/utils.py");
}

// DeepSeek sparse attention: experimental_attention_variant_module_specs.py
// get_dsa_module_spec_for_backend asserts MLA; transformer_config.py refuses linear biases
// (AbsorbedMLASelfAttention); absorbed_mla.py needs sequence parallelism under TP.
std::optional<Error> sparse_attention_is_buildable(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  // DeepSeek-V4's attention reads the indexer sizes but is not DSA (its own check below).
  if (m.dsa_indexer_topk == 0 || !m.csa_compress_ratios.empty()) return std::nullopt;
  constexpr const char* kDsa = "megatron/core/transformer/experimental_attention_variant/dsa.py";
  // A hybrid pattern's 'D' layers are MLA whatever the flag (rules/hybrid.cpp).
  if (!m.multi_latent_attention && m.hybrid_layer_pattern.find('D') == std::string::npos) {
    return rule_error("multi_latent_attention",
                      "DeepSeek sparse attention needs multi-latent attention "
                      "(--multi-latent-attention): only MLA supports sparse attention",
                      "megatron/core/models/gpt/experimental_attention_variant_module_specs.py");
  }
  if (m.add_bias_linear) {
    return rule_error("add_bias_linear",
                      "DeepSeek sparse attention (AbsorbedMLASelfAttention) needs "
                      "--disable-bias-linear",
                      "megatron/core/transformer/transformer_config.py");
  }
  if (n.config.parallel.tensor_parallel > 1 && !n.config.parallel.sequence_parallel) {
    return rule_error("sequence_parallel",
                      "DeepSeek sparse attention (AbsorbedMLA) needs --sequence-parallel when "
                      "tensor_model_parallel_size > 1",
                      "megatron/core/transformer/experimental_attention_variant/absorbed_mla.py");
  }
  if (n.config.training.dsa_kernel_backend == DsaKernelBackend::none) {
    policy_warning(n,
                   "--dsa-kernel-backend none (Megatron-Core's default) runs the PyTorch "
                   "reference, which keeps every head's dense fp32 scores (13 bytes per score); "
                   "runs use cudnn or tilelang, and the fused kernels fall back to it silently "
                   "for shapes they refuse",
                   kDsa);
  }
  return std::nullopt;
}

// deepseek_v4_hybrid_attention.py asserts: no core attention checkpoint, no qkv_linear
// offload; the PyTorch fallback (--dsa-kernel-backend none) gathers every attended key.
std::optional<Error> compressed_attention_recompute(NormalizedConfig& n, const char* source) {
  const TrainingConfig& t = n.config.training;
  // transformer_config.py: selective recompute without modules recomputes core_attn.
  const bool core_attn =
      t.recompute.granularity == RecomputeGranularity::selective &&
      (t.recompute.modules.empty() || t.recompute.modules.has(RecomputeModule::core_attn));
  if (core_attn) {
    return rule_error("recompute_modules",
                      "checkpoint core attention is not supported in DSv4 Hybrid Attention",
                      source);
  }
  if (t.offload.offload_modules.has(OffloadModule::qkv_linear)) {
    return rule_error("offload_modules",
                      "offload qkv linear is not supported in DSv4 Hybrid Attention", source);
  }
  return warn_when(n, t.dsa_kernel_backend == DsaKernelBackend::none,
                   "--dsa-kernel-backend none runs DeepSeek-V4's PyTorch fallback "
                   "(csa.py unfused_compressed_sparse_attn), which gathers every attended key "
                   "per query in fp32; runs use cudnn",
                   "megatron/core/transformer/experimental_attention_variant/csa.py (dev)");
}

// Megatron-LM dev transformer_config.py __post_init__ (experimental_attention_variant
// dsv4_hybrid): MLA, one ratio of 0, 4 or 128 per decoder and MTP layer, TP 1, no TileLang;
// deepseek_v4_hybrid_attention.py: no core_attn checkpoint, no qkv_linear offload, and
// num_attention_heads x v_head_dim split evenly into o_groups.
std::optional<Error> compressed_attention_is_buildable(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.csa_compress_ratios.empty()) return std::nullopt;
  constexpr const char* kConfig = "megatron/core/transformer/transformer_config.py (dev)";
  constexpr const char* kAttention =
      "megatron/core/transformer/experimental_attention_variant/"
      "deepseek_v4_hybrid_attention.py (dev)";
  const auto expected = static_cast<std::size_t>(m.num_layers + m.mtp_num_layers);
  const bool ratios_known = std::all_of(m.csa_compress_ratios.begin(), m.csa_compress_ratios.end(),
                                        [](int r) { return r == 0 || r == 4 || r == 128; });
  const TrainingConfig& t = n.config.training;
  if (!m.multi_latent_attention || m.q_lora_rank <= 0) {
    return rule_error("multi_latent_attention",
                      "DeepSeek-V4 hybrid attention needs multi-latent attention with a query "
                      "LoRA rank",
                      kConfig);
  }
  if (m.csa_compress_ratios.size() < expected || !ratios_known) {
    return rule_error("csa_compress_ratios",
                      "csa_compress_ratios needs one ratio of 0, 4 or 128 per decoder and MTP "
                      "layer (" +
                          std::to_string(expected) + ")",
                      kConfig);
  }
  if (m.o_groups <= 0 || m.o_lora_rank <= 0 ||
      (std::int64_t{m.num_attention_heads} * m.v_head_dim) % m.o_groups != 0) {
    return rule_error("o_groups",
                      "num_attention_heads x v_head_dim must split into o_groups groups of an "
                      "o_lora_rank output each",
                      kAttention);
  }
  if (n.config.parallel.tensor_parallel != 1) {
    return rule_error("tensor_parallel", "DSv4 Hybrid Attention only supports TP size 1", kConfig);
  }
  if (t.dsa_kernel_backend == DsaKernelBackend::tilelang) {
    return rule_error("dsa_kernel_backend",
                      "dsv4_hybrid does not support dsa_kernel_backend tilelang; use cudnn or "
                      "none",
                      kConfig);
  }
  return compressed_attention_recompute(n, kAttention);
}

// Learned absolute positions are a table of max_position_embeddings rows: a longer sequence
// indexes past it (megatron/core/models/common/embeddings/language_model_embedding.py). With
// rope or no position embedding only Megatron-LM's arguments.py asserts it.
std::optional<Error> position_table_covers_sequence(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  const int seq = n.config.training.seq_length;
  if (m.max_position_embeddings >= seq) return std::nullopt;
  const std::string message = "max_position_embeddings " + str(m.max_position_embeddings) +
                              " is below seq_length " + str(seq);
  if (m.position_embedding == PositionEmbedding::learned_absolute) {
    return rule_error("max_position_embeddings", message,
                      "megatron/core/models/common/embeddings/language_model_embedding.py");
  }
  arguments_policy(n, message + ": Megatron-LM refuses it (--max-position-embeddings)");
  return std::nullopt;
}

// Megatron-LM's arguments.py refuses MTP with learned absolute positions; Megatron-Core's
// MTP block itself builds with any position embedding.
std::optional<Error> mtp_position_embedding(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  // (yarn is the rope of MLA models: DeepSeek scripts pass rope and set the rope type.)
  if (m.mtp_num_layers > 0 && m.position_embedding == PositionEmbedding::learned_absolute) {
    arguments_policy(n,
                     "Megatron-LM refuses --mtp-num-layers with learned absolute position "
                     "embeddings (it wants --position-embedding-type rope or none)");
  }
  return std::nullopt;
}

// arguments.py refuses --moe-latent-size on a dense model; nothing is built for it there.
std::optional<Error> moe_latent_needs_experts(NormalizedConfig& n) {
  if (n.config.model.moe_latent_size > 0 && n.config.model.num_experts == 0) {
    arguments_policy(n,
                     "--moe-latent-size applies only to MoE models; Megatron-LM refuses it on a "
                     "dense model (megamem ignores it)");
  }
  return std::nullopt;
}

// Attention sinks (--softmax-type off-by-one or learnable) run in FusedAttention or
// UnfusedDotProductAttention only (transformer_engine/pytorch/attention/dot_product_attention/
// utils.py get_attention_backend, "Filter: Softmax type"); under context parallelism only in
// FusedAttention with --cp-comm-type a2a.
std::optional<Error> attention_sinks_have_a_backend(NormalizedConfig& n) {
  const Config& c = n.config;
  if (c.model.softmax_type == SoftmaxType::vanilla) return std::nullopt;
  if (c.training.transformer_impl == TransformerImpl::transformer_engine &&
      c.training.attention_backend == AttentionBackend::flash) {
    return rule_error("attention_backend",
                      "FlashAttention has no attention sinks (--softmax-type); use "
                      "--attention-backend fused or auto",
                      "transformer_engine/pytorch/attention/dot_product_attention/utils.py");
  }
  if (c.parallel.context_parallel > 1) {
    policy_warning(n,
                   "attention sinks under context parallelism run only with --cp-comm-type "
                   "a2a (Transformer Engine disables FusedAttention for the other CP "
                   "communication types); megamem assumes a2a",
                   "transformer_engine/pytorch/attention/dot_product_attention/utils.py");
  }
  return std::nullopt;
}

// Gemma 4's per-layer embeddings and shared K/V exist only in Megatron-Bridge's dense
// Gemma4DenseProvider (gemma/gemma4_provider.py), whose layers are GPT attention + MLP layers:
// its MoE provider (Gemma4ModelProvider) reads neither, and no other layer builds them.
std::optional<Error> gemma4_dense_parts_on_dense_layers(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  const bool parts = m.per_layer_input_size > 0 || m.kv_shared_layers > 0;
  const bool other_layers = m.num_experts > 0 || has_nonstandard_attention_layers(m);
  return error_when(parts && other_layers,
                    m.per_layer_input_size > 0 ? "per_layer_input_size" : "kv_shared_layers",
                    "per-layer embeddings and K/V shared across layers are built only on dense "
                    "attention + MLP layers (Gemma4DenseProvider): no experts, MLA, hybrid, "
                    "linear or compressed attention",
                    "Megatron-Bridge gemma/gemma4_provider.py");
}

// modeling_gemma4.py Gemma4DenseSelfAttention: a shared layer takes K/V from the last layer
// before the first shared one whose attention type (sliding or full) is its own; without
// one it would compute its own K/V, which the shared kinds do not price.
std::optional<Error> shared_kv_has_sources(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.kv_shared_layers <= 0) return std::nullopt;
  const int first = m.num_layers - m.kv_shared_layers;
  if (first <= 0) {
    return rule_error("kv_shared_layers",
                      "kv_shared_layers (" + str(m.kv_shared_layers) +
                          ") leaves no earlier layer to share K/V from: it must be below "
                          "num_layers (" +
                          str(m.num_layers) + ")",
                      "Megatron-Bridge gemma/modeling_gemma4.py");
  }
  bool seen[2] = {false, false};  // a full, a windowed layer before the first shared one
  for (int i = 0; i < first; ++i) seen[layer_is_windowed(m, i) ? 1 : 0] = true;
  for (int i = first; i < m.num_layers; ++i) {
    if (!seen[layer_is_windowed(m, i) ? 1 : 0]) {
      return rule_error("kv_shared_layers",
                        "shared layer " + str(i + 1) + " has no earlier " +
                            (layer_is_windowed(m, i) ? "sliding-window" : "full-attention") +
                            " layer to take K/V from",
                        "Megatron-Bridge gemma/modeling_gemma4.py Gemma4DenseSelfAttention");
    }
  }
  return std::nullopt;
}

// The per-layer embedding table is a VocabParallelEmbedding over the unpadded vocabulary and
// the projection a ColumnParallelLinear to num_layers x P (modeling_gemma4.py
// _attach_ple_modules): tensor_parallel/layers.py divides both by the TP size.
std::optional<Error> per_layer_inputs_split_over_tp(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  const std::int64_t tp = n.config.parallel.tensor_parallel;
  if (m.per_layer_input_size <= 0) return std::nullopt;
  const std::int64_t width = std::int64_t{m.num_layers} * m.per_layer_input_size;
  if (m.vocab_size % tp != 0) {
    return rule_error("vocab_size",
                      "the per-layer embedding table's vocabulary (" + str(m.vocab_size) +
                          ", not padded) must divide by tensor_model_parallel_size " + str(tp),
                      "megatron/core/tensor_parallel/layers.py VocabParallelEmbedding");
  }
  return error_when(width % tp != 0, "per_layer_input_size",
                    "num_layers x per_layer_input_size (" + str(width) +
                        ") must divide by tensor_model_parallel_size " + str(tp),
                    "megatron/core/tensor_parallel/layers.py ColumnParallelLinear");
}

constexpr Check kModelChecks[] = {
    sizes_are_in_range,
    job_is_within_bounds,
    fractions_are_fractions,
    resolve_model_defaults,
    multi_latent_attention_has_ranks,
    value_head_dim_has_no_gate,
    softcapped_attention_without_cp,
    one_attention_output_gate,
    qk_l2_norm_needs_standard_attention,
    window_pattern_covers_layers,
    sparse_attention_is_buildable,
    compressed_attention_is_buildable,
    position_table_covers_sequence,
    mtp_position_embedding,
    moe_latent_needs_experts,
    attention_sinks_have_a_backend,
    gemma4_dense_parts_on_dense_layers,
    shared_kv_has_sources,
    per_layer_inputs_split_over_tp,
    mtp_layer_kind_is_buildable,
};

}  // namespace

const std::span<const Check> model_checks{kModelChecks};

}  // namespace megamem::rules
