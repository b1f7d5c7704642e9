// normalize(): resolves Megatron's derived defaults and rejects layouts Megatron-Core would
// refuse (or that would change what is allocated), naming the offending argument.
#include <algorithm>
#include <iterator>
#include <optional>
#include <string>

#include "layer_placement.hpp"
#include "megamem/estimate.hpp"

namespace megamem {
namespace {

// Beyond this many GPUs a job is a typo, not a plan; integer math stays far from overflow.
constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << 20;
constexpr int kMaxDimension = 1 << 22;  // hidden sizes, heads, layers: sanity, not a rule

std::string str(std::int64_t value) { return std::to_string(value); }

Error positive_error(const char* field, std::int64_t value) {
  return Error{field, std::string(field) + " must be at least 1, got " + str(value)};
}

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Integer fields that must be >= 1 (and below a sanity bound), with their Megatron names.
std::optional<Error> check_dimensions(const Config& c) {
  const struct {
    const char* field;
    std::int64_t value;
  } required[] = {
      {"num_layers", c.model.num_layers},
      {"hidden_size", c.model.hidden_size},
      {"num_attention_heads", c.model.num_attention_heads},
      {"vocab_size", c.model.vocab_size},
      {"make_vocab_size_divisible_by", c.model.make_vocab_size_divisible_by},
      {"seq_length", c.training.seq_length},
      {"micro_batch_size", c.training.micro_batch_size},
      {"world_size", c.parallel.world_size},
      {"tensor_model_parallel_size", c.parallel.tensor_parallel},
      {"pipeline_model_parallel_size", c.parallel.pipeline_parallel},
      {"virtual_stages_per_pipeline_rank", c.parallel.virtual_stages_per_pipeline_rank},
      {"context_parallel_size", c.parallel.context_parallel},
      {"expert_model_parallel_size", c.parallel.expert_parallel},
      {"num_distributed_optimizer_instances", c.parallel.num_distributed_optimizer_instances},
  };
  for (const auto& item : required) {
    if (item.value < 1) return positive_error(item.field, item.value);
    if (item.value > kMaxDimension && std::string(item.field) != "vocab_size") {
      return Error{item.field, std::string(item.field) + " = " + str(item.value) +
                                   " is beyond any real model or job (limit " + str(kMaxDimension) +
                                   ")"};
    }
  }
  const struct {
    const char* field;
    std::int64_t value;
  } optional_sizes[] = {
      {"num_query_groups", c.model.num_query_groups},
      {"kv_channels", c.model.kv_channels},
      {"ffn_hidden_size", c.model.ffn_hidden_size},
      {"num_experts", c.model.num_experts},
      {"moe_ffn_hidden_size", c.model.moe_ffn_hidden_size},
      {"moe_shared_expert_intermediate_size", c.model.moe_shared_expert_intermediate_size},
      {"moe_latent_size", c.model.moe_latent_size},
      {"q_lora_rank", c.model.q_lora_rank},
      {"mtp_num_layers", c.model.mtp_num_layers},
      {"max_position_embeddings", c.model.max_position_embeddings},
      {"expert_tensor_parallel_size", c.parallel.expert_tensor_parallel},
      {"global_batch_size", c.training.global_batch_size},
      {"decoder_first_pipeline_num_layers", c.parallel.decoder_first_pipeline_num_layers},
      {"decoder_last_pipeline_num_layers", c.parallel.decoder_last_pipeline_num_layers},
  };
  for (const auto& item : optional_sizes) {
    if (item.value < 0) {
      return Error{item.field, std::string(item.field) + " must not be negative, got " +
                                   str(item.value) + " (0 means Megatron's default)"};
    }
  }
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

std::optional<Error> check_fraction(const char* field, double value) {
  if (!(value >= 0.0 && value <= 1.0)) {
    return Error{field, std::string(field) + " must be between 0 and 1"};
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

}  // namespace

Expected<NormalizedConfig> normalize(const Config& input) {
  if (auto error = check_dimensions(input)) return *error;
  if (auto error = check_fraction("hidden_dropout", input.model.hidden_dropout)) return *error;
  if (auto error = check_fraction("attention_dropout", input.model.attention_dropout)) {
    return *error;
  }
  if (auto error = check_fraction("optimizer_offload_fraction",
                                  input.optimizer.optimizer_offload_fraction)) {
    return *error;
  }

  NormalizedConfig out;
  out.config = input;
  ModelConfig& m = out.config.model;
  ParallelConfig& par = out.config.parallel;
  const TrainingConfig& train = out.config.training;
  const std::int64_t tp = par.tensor_parallel;

  // Defaults Megatron derives (megatron/training/arguments.py, transformer_config.py).
  if (m.num_query_groups == 0) m.num_query_groups = m.num_attention_heads;
  if (m.kv_channels == 0) {
    if (m.hidden_size % m.num_attention_heads != 0) {
      return Error{"num_attention_heads", "hidden_size " + str(m.hidden_size) +
                                              " is not divisible by num_attention_heads " +
                                              str(m.num_attention_heads) +
                                              " (set kv_channels explicitly)"};
    }
    m.kv_channels = m.hidden_size / m.num_attention_heads;
  }
  if (m.ffn_hidden_size == 0) m.ffn_hidden_size = default_ffn_hidden_size(m);
  if (m.moe_ffn_hidden_size == 0) m.moe_ffn_hidden_size = m.ffn_hidden_size;
  if (m.max_position_embeddings == 0) m.max_position_embeddings = train.seq_length;
  if (par.expert_tensor_parallel == 0) par.expert_tensor_parallel = par.tensor_parallel;
  if (par.microbatch_group_size_per_vp_stage == 0) {
    par.microbatch_group_size_per_vp_stage = par.pipeline_parallel;
  }

  // megatron/training/arguments.py: sequence parallelism is switched off at TP = 1.
  out.sequence_parallel = par.sequence_parallel && tp > 1;

  // Tensor-parallel divisibility (megatron/core/transformer/transformer_config.py).
  if (m.num_attention_heads % tp != 0) {
    return Error{"num_attention_heads", "num_attention_heads " + str(m.num_attention_heads) +
                                            " is not divisible by tensor_model_parallel_size " +
                                            str(tp)};
  }
  if (m.num_attention_heads % m.num_query_groups != 0) {
    return Error{"num_query_groups", "num_attention_heads " + str(m.num_attention_heads) +
                                         " is not divisible by num_query_groups " +
                                         str(m.num_query_groups)};
  }
  // transformer_config.py __post_init__: groups must be a multiple or a divisor of TP.
  if (!m.multi_latent_attention && m.num_query_groups % tp != 0 && tp % m.num_query_groups != 0) {
    return Error{"num_query_groups", "num_query_groups " + str(m.num_query_groups) +
                                         " must be a multiple or a divisor of "
                                         "tensor_model_parallel_size " +
                                         str(tp)};
  }
  if (m.ffn_hidden_size % tp != 0) {
    return Error{"ffn_hidden_size", "ffn_hidden_size " + str(m.ffn_hidden_size) +
                                        " is not divisible by tensor_model_parallel_size " +
                                        str(tp)};
  }

  // Parallel group sizes: W = TP*CP*DP*PP = ETP*EP*EDP*PP (parallel folding).
  const std::int64_t attention_group = tp * par.context_parallel * par.pipeline_parallel;
  if (par.world_size % attention_group != 0) {
    return Error{"world_size", "world_size " + str(par.world_size) +
                                   " is not divisible by TP x CP x PP = " + str(attention_group)};
  }
  out.data_parallel = par.world_size / attention_group;
  const std::int64_t expert_group =
      std::int64_t{par.expert_tensor_parallel} * par.expert_parallel * par.pipeline_parallel;
  if (par.world_size % expert_group != 0) {
    return Error{"expert_model_parallel_size",
                 "world_size " + str(par.world_size) +
                     " is not divisible by ETP x EP x PP = " + str(expert_group)};
  }
  out.expert_data_parallel = par.world_size / expert_group;
  const std::int64_t dp_cp = out.data_parallel * par.context_parallel;
  if (dp_cp % par.num_distributed_optimizer_instances != 0 ||
      out.expert_data_parallel % par.num_distributed_optimizer_instances != 0) {
    return Error{"num_distributed_optimizer_instances",
                 "num_distributed_optimizer_instances " +
                     str(par.num_distributed_optimizer_instances) + " must divide DP x CP = " +
                     str(dp_cp) + " and expert-DP = " + str(out.expert_data_parallel)};
  }

  // Mixture of experts.
  if (m.num_experts > 0) {
    if (m.num_experts % par.expert_parallel != 0) {
      return Error{"num_experts", "num_experts " + str(m.num_experts) +
                                      " is not divisible by expert_model_parallel_size " +
                                      str(par.expert_parallel)};
    }
    if (m.moe_router_topk < 1 || m.moe_router_topk > m.num_experts) {
      return Error{"moe_router_topk", "moe_router_topk " + str(m.moe_router_topk) +
                                          " must be between 1 and num_experts " +
                                          str(m.num_experts)};
    }
    if (m.moe_ffn_hidden_size % par.expert_tensor_parallel != 0) {
      return Error{"moe_ffn_hidden_size", "moe_ffn_hidden_size " + str(m.moe_ffn_hidden_size) +
                                              " is not divisible by expert_tensor_parallel_size " +
                                              str(par.expert_tensor_parallel)};
    }
    if (m.moe_shared_expert_intermediate_size % tp != 0) {
      return Error{"moe_shared_expert_intermediate_size",
                   "moe_shared_expert_intermediate_size " +
                       str(m.moe_shared_expert_intermediate_size) +
                       " is not divisible by tensor_model_parallel_size " + str(tp)};
    }
    // megatron/core/transformer/moe/moe_layer.py: MoE training with TP needs SP.
    if (tp > 1 && !out.sequence_parallel) {
      return Error{"sequence_parallel",
                   "MoE layers with tensor_model_parallel_size > 1 require --sequence-parallel"};
    }
    if (!m.moe_layer_pattern.empty()) {
      if (m.moe_layer_pattern.size() != static_cast<std::size_t>(m.num_layers)) {
        return Error{"moe_layer_freq",
                     "moe_layer_freq pattern has " +
                         str(static_cast<std::int64_t>(m.moe_layer_pattern.size())) +
                         " entries but num_layers is " + str(m.num_layers)};
      }
      out.moe_layer_pattern = m.moe_layer_pattern;
    } else {
      if (m.moe_layer_freq < 1) return positive_error("moe_layer_freq", m.moe_layer_freq);
      out.moe_layer_pattern.resize(static_cast<std::size_t>(m.num_layers));
      for (int i = 0; i < m.num_layers; ++i) {
        out.moe_layer_pattern[static_cast<std::size_t>(i)] = (i % m.moe_layer_freq == 0) ? 1 : 0;
      }
    }
  } else {
    out.moe_layer_pattern.assign(static_cast<std::size_t>(m.num_layers), 0);
    if (par.expert_parallel > 1) {
      return Error{"expert_model_parallel_size",
                   "expert_model_parallel_size > 1 needs a MoE model (num_experts > 0)"};
    }
  }

  // Multi-latent attention.
  if (m.multi_latent_attention &&
      (m.kv_lora_rank < 1 || m.qk_head_dim < 1 || m.qk_pos_emb_head_dim < 0 || m.v_head_dim < 1)) {
    return Error{"kv_lora_rank",
                 "multi-latent attention needs kv_lora_rank, qk_head_dim and v_head_dim >= 1"};
  }

  // Vocabulary padding (megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding).
  out.padded_vocab_size = round_up(m.vocab_size, std::int64_t{m.make_vocab_size_divisible_by} * tp);

  // Sequence splitting.
  if (out.sequence_parallel && train.seq_length % tp != 0) {
    return Error{"seq_length", "seq_length " + str(train.seq_length) +
                                   " is not divisible by tensor_model_parallel_size " + str(tp) +
                                   " (sequence parallel splits the sequence)"};
  }
  if (par.context_parallel > 1 && train.seq_length % (2 * par.context_parallel) != 0) {
    return Error{"seq_length", "seq_length " + str(train.seq_length) +
                                   " is not divisible by 2 x context_parallel_size = " +
                                   str(2 * par.context_parallel) +
                                   " (load-balanced context parallel chunks)"};
  }

  // Micro-batches (megatron/core/num_microbatches_calculator.py).
  const std::int64_t batch_per_step = std::int64_t{train.micro_batch_size} * out.data_parallel;
  const std::int64_t global_batch =
      train.global_batch_size > 0 ? train.global_batch_size : batch_per_step;
  if (global_batch % batch_per_step != 0) {
    return Error{"global_batch_size",
                 "global_batch_size " + str(global_batch) +
                     " is not divisible by micro_batch_size x DP = " + str(batch_per_step)};
  }
  out.num_microbatches = global_batch / batch_per_step;
  out.config.training.global_batch_size = global_batch;

  // Layer placement rules (and VPP degree from a layout string).
  auto stages = place_layers(out);
  if (!stages) return stages.error();
  if (!par.pipeline_layout.empty()) {
    par.virtual_stages_per_pipeline_rank =
        static_cast<int>(stages->size() / static_cast<std::size_t>(par.pipeline_parallel));
  }
  if (par.virtual_stages_per_pipeline_rank > 1 && par.pipeline_parallel == 1) {
    return Error{"virtual_stages_per_pipeline_rank",
                 "interleaved (virtual) pipeline stages need pipeline_model_parallel_size > 1"};
  }
  if (par.virtual_stages_per_pipeline_rank > 1) {
    // schedules.py (forward_backward_pipelining_with_interleaving): the micro-batch group
    // must lie in [PP, M], and the last group must be empty or at least PP long.
    const std::int64_t group = par.microbatch_group_size_per_vp_stage;
    const std::int64_t micro = out.num_microbatches;
    if (group < par.pipeline_parallel || group > micro) {
      return Error{"global_batch_size",
                   "the interleaved schedule needs micro-batch groups of PP to M micro-batches: "
                   "group " +
                       str(group) + ", PP " + str(par.pipeline_parallel) + ", M " + str(micro) +
                       " (raise global_batch_size or set "
                       "microbatch_group_size_per_vp_stage)"};
    }
    const std::int64_t remainder = micro % group;
    if (remainder > 0 && remainder < par.pipeline_parallel) {
      return Error{"microbatch_group_size_per_vp_stage",
                   "M " + str(micro) + " mod the micro-batch group " + str(group) + " is " +
                       str(remainder) + ", which must be 0 or at least PP " +
                       str(par.pipeline_parallel)};
    }
  }

  // Recompute and offload rules (megatron/core/transformer/transformer_config.py).
  const RecomputeConfig& recompute = train.recompute;
  if (recompute.granularity == RecomputeGranularity::full && recompute.num_layers < 1) {
    return positive_error("recompute_num_layers", recompute.num_layers);
  }
  if (recompute.distribute_saved_activations && out.sequence_parallel) {
    return Error{"distribute_saved_activations",
                 "distribute_saved_activations cannot be used with sequence parallel"};
  }
  if (recompute.granularity == RecomputeGranularity::selective) {
    // transformer_config.py: the features some modules need (modules.hpp names them all).
    if (recompute.modules.has(RecomputeModule::moe_act) && !train.moe_grouped_gemm) {
      return Error{"recompute_modules", "moe_act recompute needs --moe-grouped-gemm"};
    }
    if (recompute.modules.has(RecomputeModule::mla_up_proj) && !m.multi_latent_attention) {
      return Error{"recompute_modules", "mla_up_proj recompute needs --multi-latent-attention"};
    }
  }
  const OffloadConfig& offload = train.offload;
  if (offload.fine_grained_activation_offloading) {
    if (offload.cpu_offloading) {
      return Error{"fine_grained_activation_offloading",
                   "fine-grained activation offloading cannot be combined with --cpu-offloading"};
    }
  }
  if (offload.cpu_offloading && recompute.granularity != RecomputeGranularity::none) {
    return Error{"cpu_offloading", "legacy --cpu-offloading is not allowed with recompute"};
  }
  if (offload.cpu_offloading && (offload.cpu_offloading_num_layers < 0 ||
                                 offload.cpu_offloading_num_layers >= m.num_layers)) {
    return Error{"cpu_offloading_num_layers",
                 "cpu_offloading_num_layers must be between 0 and num_layers - 1"};
  }
  if (train.offload.cpu_offloading && par.pipeline_parallel > 1) {
    return Error{"cpu_offloading", "legacy --cpu-offloading is not allowed with pipeline parallel"};
  }
  if (out.config.optimizer.optimizer_cpu_offload &&
      !out.config.optimizer.use_precision_aware_optimizer) {
    return Error{"optimizer_cpu_offload",
                 "--optimizer-cpu-offload requires --use-precision-aware-optimizer"};
  }
  return out;
}

}  // namespace megamem
