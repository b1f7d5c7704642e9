// Rule book, tensor-parallel and parallel-group topics: what TP splits must divide, and how
// the world factors into TP x CP x DP x PP and ETP x EP x expert-DP x PP.
#include "modules/sliding_window.hpp"
#include "rule_book.hpp"

namespace megamem::rules {
namespace {

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// model_parallel_config.py __post_init__ raises on --sequence-parallel at TP = 1; Megatron-LM's
// arguments.py switches it off instead, which is what every launcher script relies on.
std::optional<Error> resolve_sequence_parallel(NormalizedConfig& n) {
  n.sequence_parallel =
      n.config.parallel.sequence_parallel && n.config.parallel.tensor_parallel > 1;
  return std::nullopt;
}

// --tp-comm-overlap without (effective) sequence parallelism: Megatron-LM's arguments.py
// asserts "Tensor parallel communication/GEMM overlap can happen only when sequence
// parallelism is enabled" (core_v0.13 to core_v0.19). Megatron-Core itself does not fail:
// Transformer Engine turns every GEMM's userbuffer overlap off without sequence parallelism
// (transformer_engine/pytorch/module/linear.py and layernorm_linear.py: each ub_overlap_* /
// ub_bulk_* is and-ed with sequence_parallel). A policy, so a warning; the userbuffers stay
// counted as initialize_ub allocates them.
std::optional<Error> tp_comm_overlap_needs_sequence_parallel(NormalizedConfig& n) {
  if (!n.config.training.tp_comm_overlap || n.sequence_parallel) return std::nullopt;
  arguments_policy(n,
                   "--tp-comm-overlap needs --sequence-parallel (and TP > 1): Megatron-LM "
                   "refuses it; Transformer Engine alone would overlap nothing");
  return std::nullopt;
}

// transformer_config.py __post_init__: attention heads are split over TP ranks.
std::optional<Error> heads_divide_by_tp(NormalizedConfig& n) {
  return must_divide("num_attention_heads", "num_attention_heads",
                     n.config.model.num_attention_heads, "tensor_model_parallel_size",
                     n.config.parallel.tensor_parallel,
                     "megatron/core/transformer/transformer_config.py");
}

std::optional<Error> heads_divide_by_query_groups(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  return must_divide("num_query_groups", "num_attention_heads", m.num_attention_heads,
                     "num_query_groups", m.num_query_groups,
                     "megatron/core/transformer/attention.py");
}

// transformer_config.py __post_init__ (core_r0.13 and later; r0.12 needed a multiple): query
// groups are a multiple of TP, or a divisor (KV heads replicated).
std::optional<Error> query_groups_fit_tp(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  const int tp = n.config.parallel.tensor_parallel;
  if (m.multi_latent_attention || m.num_query_groups % tp == 0 || tp % m.num_query_groups == 0) {
    return std::nullopt;
  }
  return rule_error("num_query_groups",
                    "num_query_groups " + str(m.num_query_groups) +
                        " must be a multiple or a divisor of tensor_model_parallel_size " + str(tp),
                    "megatron/core/transformer/transformer_config.py");
}

// The same splits for windowed layers with their own shape: Step35DecoderLayer builds them
// as TransformerLayers of a config copy with those heads and groups (Megatron-Bridge
// stepfun/step35_provider.py), so attention.py and transformer_config.py's rules hold there.
std::optional<Error> window_shape_splits(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (!window_attention_differs(m)) return std::nullopt;
  const AttentionShape w = attention_shape(m, LayerKind::window_dense);
  const int tp = n.config.parallel.tensor_parallel;
  if (auto e = must_divide("window_num_attention_heads", "window_num_attention_heads", w.heads,
                           "tensor_model_parallel_size", tp,
                           "megatron/core/transformer/transformer_config.py")) {
    return e;
  }
  if (auto e = must_divide("window_num_query_groups", "window_num_attention_heads", w.heads,
                           "window_num_query_groups", w.query_groups,
                           "megatron/core/transformer/attention.py")) {
    return e;
  }
  if (w.query_groups % tp == 0 || tp % w.query_groups == 0) return std::nullopt;
  return rule_error("window_num_query_groups",
                    "window_num_query_groups " + str(w.query_groups) +
                        " must be a multiple or a divisor of tensor_model_parallel_size " + str(tp),
                    "megatron/core/transformer/transformer_config.py");
}

// The head-wise attention gate (Megatron-LM dev transformer_config.py __post_init__, and
// attention.py SelfAttention for each layer's config, the windowed layers' too): the gate rows
// are peeled off linear_qkv's output before the all-gather that replicates fewer query groups
// than TP ranks, so there must be at least as many groups as ranks; under FP8 each rank's
// linear_qkv width must be a multiple of 16 for Transformer Engine's GEMM.
std::optional<Error> head_wise_gate_fits_tp(const AttentionShape& shape, const NormalizedConfig& n,
                                            const char* heads_field) {
  const int tp = n.config.parallel.tensor_parallel;
  constexpr const char* kSource = "megatron/core/transformer/transformer_config.py (dev)";
  if (shape.query_groups < tp) {
    return rule_error("head_wise_attn_gate",
                      "the head-wise attention gate needs at least tensor_model_parallel_size " +
                          str(tp) + " query groups; the layers with " + heads_field + " " +
                          str(shape.heads) + " have " + str(shape.query_groups),
                      kSource);
  }
  const std::int64_t width =
      std::int64_t{shape.heads} * shape.kv_channels + shape.gate_rows +
      std::int64_t{shape.query_groups} * (shape.kv_channels + shape.v_channels);
  if (n.config.training.fp8_recipe == Fp8Recipe::none || (width / tp) % 16 == 0)
    return std::nullopt;
  return rule_error("head_wise_attn_gate",
                    "under FP8 the head-wise attention gate needs each rank's linear_qkv width to "
                    "be a multiple of 16; the layers with " +
                        std::string(heads_field) + " " + str(shape.heads) + " have " + str(width) +
                        " / TP " + str(tp) + " = " + str(width / tp),
                    kSource);
}

std::optional<Error> head_wise_gate_splits(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (!m.head_wise_attn_gate || m.multi_latent_attention) return std::nullopt;
  if (auto e =
          head_wise_gate_fits_tp(attention_shape(m, LayerKind::dense), n, "num_attention_heads")) {
    return e;
  }
  if (!window_attention_differs(m)) return std::nullopt;
  return head_wise_gate_fits_tp(attention_shape(m, LayerKind::window_dense), n,
                                "window_num_attention_heads");
}

// megatron/core/tensor_parallel/layers.py (ColumnParallelLinear: divide()).
std::optional<Error> ffn_divides_by_tp(NormalizedConfig& n) {
  return must_divide("ffn_hidden_size", "ffn_hidden_size", n.config.model.ffn_hidden_size,
                     "tensor_model_parallel_size", n.config.parallel.tensor_parallel,
                     "megatron/core/tensor_parallel/layers.py");
}

// megatron/training/tokenizer/tokenizer.py _vocab_size_with_padding.
std::optional<Error> pad_vocabulary(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  n.padded_vocab_size = round_up(m.vocab_size, std::int64_t{m.make_vocab_size_divisible_by} *
                                                   n.config.parallel.tensor_parallel);
  return std::nullopt;
}

// megatron/core/parallel_state.py initialize_model_parallel: the world factors into a group
// (named by `group_name`) times the data-parallel size it leaves, written to `data_parallel`.
// The message names the factors in the user's numbers ("= 512 (ETP 1 x EP 32 x PP 16)", issue
// #28 item 1: "ETP x EP x PP = 512" alone left the reader to find which size to change).
std::optional<Error> world_divides_by(const ParallelConfig& par, const char* field,
                                      const char* group_name, const std::string& factors,
                                      std::int64_t group, std::int64_t& data_parallel) {
  if (par.world_size % group != 0) {
    return rule_error(field,
                      "world_size " + str(par.world_size) + " is not divisible by " + group_name +
                          " = " + str(group) + " (" + factors + ")",
                      "megatron/core/parallel_state.py");
  }
  data_parallel = par.world_size / group;
  return std::nullopt;
}

// W = TP x CP x DP x PP.
std::optional<Error> world_divides_by_model_parallel(NormalizedConfig& n) {
  const ParallelConfig& par = n.config.parallel;
  return world_divides_by(
      par, "world_size", "TP x CP x PP",
      "TP " + str(par.tensor_parallel) + " x CP " + str(par.context_parallel) + " x PP " +
          str(par.pipeline_parallel),
      std::int64_t{par.tensor_parallel} * par.context_parallel * par.pipeline_parallel,
      n.data_parallel);
}

// parallel_state.py (expert groups, "parallel folding"): W = ETP x EP x expert-DP x PP.
std::optional<Error> world_divides_by_expert_parallel(NormalizedConfig& n) {
  ParallelConfig& par = n.config.parallel;
  if (par.expert_tensor_parallel == 0) par.expert_tensor_parallel = par.tensor_parallel;
  return world_divides_by(
      par, "expert_model_parallel_size", "ETP x EP x PP",
      "ETP " + str(par.expert_tensor_parallel) + " x EP " + str(par.expert_parallel) + " x PP " +
          str(par.pipeline_parallel),
      std::int64_t{par.expert_tensor_parallel} * par.expert_parallel * par.pipeline_parallel,
      n.expert_data_parallel);
}

// parallel_state.py: the distributed-optimizer instances split DP x CP and expert-DP.
std::optional<Error> optimizer_instances_divide_data_parallel(NormalizedConfig& n) {
  const ParallelConfig& par = n.config.parallel;
  const std::int64_t dp_cp = n.data_parallel * par.context_parallel;
  const int instances = par.num_distributed_optimizer_instances;
  if (dp_cp % instances == 0 && n.expert_data_parallel % instances == 0) return std::nullopt;
  return rule_error("num_distributed_optimizer_instances",
                    "num_distributed_optimizer_instances " + str(instances) +
                        " must divide DP x CP = " + str(dp_cp) +
                        " and expert-DP = " + str(n.expert_data_parallel),
                    "megatron/core/parallel_state.py");
}

// Megatron-FSDP's HFSDP (--outer-dp-sharding-strategy optim): param_and_grad_buffer.py raises
// NotImplementedError unless the in-instance sharding is optim_grads_params, and with a single
// optimizer instance hybrid FSDP is off while the buffers still expect the outer helpers
// (Megatron-Bridge perf_recipes/nemotronh/common.py sets no_shard there for that reason).
// Outside Megatron-FSDP the field is not read.
std::optional<Error> outer_sharding_needs_hybrid_fsdp(NormalizedConfig& n) {
  const ParallelConfig& par = n.config.parallel;
  if (par.fsdp.outer_sharding != FsdpSharding::optim) return std::nullopt;
  if (par.fsdp.impl != FsdpImpl::megatron) {
    policy_warning(n,
                   "--outer-dp-sharding-strategy optim has no effect without Megatron-FSDP "
                   "(--use-megatron-fsdp)",
                   "megatron/core/distributed/fsdp/mcore_fsdp_adapter.py");
    return std::nullopt;
  }
  const char* source = "megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py";
  if (par.fsdp.sharding != FsdpSharding::optim_grads_params) {
    return rule_error("outer_dp_sharding_strategy",
                      "--outer-dp-sharding-strategy optim needs --data-parallel-sharding-strategy "
                      "optim_grads_params (or use --outer-dp-sharding-strategy no_shard)",
                      source);
  }
  return error_when(
      par.num_distributed_optimizer_instances < 2, "outer_dp_sharding_strategy",
      "--outer-dp-sharding-strategy optim needs --num-distributed-optimizer-instances "
      "of 2 or more, the outer groups it shards over (or use no_shard)",
      source);
}

constexpr Check kTensorParallelChecks[] = {resolve_sequence_parallel,
                                           tp_comm_overlap_needs_sequence_parallel,
                                           heads_divide_by_tp,
                                           heads_divide_by_query_groups,
                                           query_groups_fit_tp,
                                           window_shape_splits,
                                           head_wise_gate_splits,
                                           ffn_divides_by_tp,
                                           pad_vocabulary};

constexpr Check kParallelGroupsChecks[] = {
    world_divides_by_model_parallel, world_divides_by_expert_parallel,
    optimizer_instances_divide_data_parallel, outer_sharding_needs_hybrid_fsdp};

}  // namespace

const std::span<const Check> tensor_parallel_checks{kTensorParallelChecks};
const std::span<const Check> parallel_groups_checks{kParallelGroupsChecks};

}  // namespace megamem::rules
