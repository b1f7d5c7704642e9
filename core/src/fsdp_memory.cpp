// FSDP static memory and working set; see fsdp_memory.hpp.
#include "fsdp_memory.hpp"

#include <algorithm>
#include <cmath>

namespace megamem {
namespace {

// Megatron-FSDP's default prefetch bound when --suggested-communication-unit-size is unset
// (megatron_fsdp.py: max(1e9, 2 x the average FSDP unit), halved for the all-gather side).
constexpr double kDefaultCommunicationUnitElements = 1e9;

// The FSDP shard group: DP x CP for dense parameters, expert-DP for routed experts; Megatron-
// FSDP's hybrid mode keeps --num-distributed-optimizer-instances outer replicas
// (outer-dp-sharding-strategy no_shard) and shards inside each.
double shard_group(const NormalizedConfig& n, bool expert) {
  const ParallelConfig& p = n.config.parallel;
  const auto group =
      static_cast<double>(expert ? n.expert_data_parallel : n.data_parallel * p.context_parallel);
  if (p.fsdp.impl == FsdpImpl::megatron) return group / p.num_distributed_optimizer_instances;
  return group;
}

// Optimizer moments per element: Adam's exp_avg and exp_avg_sq, one momentum otherwise.
double moment_bytes(const OptimizerConfig& opt) {
  if (opt.kind != OptimizerKind::adam) return 4.0;
  return dtype_bytes(opt.exp_avg_dtype) + dtype_bytes(opt.exp_avg_sq_dtype);
}

// A tensor of an FSDP unit: Megatron-FSDP wraps each TransformerLayer (mcore_fsdp_adapter.py,
// fsdp_unit_modules); PyTorch FSDP2 also the embedding and the output layer
// (torch_fully_sharded_data_parallel.py, sub_modules_to_wrap). The rest is the root group.
bool in_unit(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (tensor.module == ModuleKind::mtp_projection ||
      tensor.module == ModuleKind::mtp_final_layernorm) {
    return false;
  }
  if (tensor.layer >= 0) return true;
  return n.config.parallel.fsdp.impl == FsdpImpl::torch_fsdp2 && tensor.embedding_or_output;
}

struct UnitSizes {
  double root = 0;            // elements outside FSDP units
  std::vector<double> units;  // elements of each unit, in forward order
  double total_units = 0;
  double largest_unit = 0;
};

UnitSizes unit_sizes(const NormalizedConfig& n, const std::vector<TensorBlock>& blocks) {
  UnitSizes sizes;
  for (const TensorBlock& block : blocks) {
    double layer_unit = 0;
    for (std::size_t t = 0; t < block.count; ++t) {
      const ParamTensor& tensor = block.tensors[t];
      const auto elements = static_cast<double>(tensor.elements());
      if (!in_unit(n, tensor)) {
        sizes.root += elements * static_cast<double>(block.repeat);
      } else if (tensor.layer < 0) {
        sizes.units.push_back(elements);  // FSDP2's embedding or output layer
      } else {
        layer_unit += elements;
      }
    }
    if (layer_unit > 0) {
      sizes.units.insert(sizes.units.end(), static_cast<std::size_t>(block.repeat), layer_unit);
    }
  }
  for (const double unit : sizes.units) {
    sizes.total_units += unit;
    sizes.largest_unit = std::max(sizes.largest_unit, unit);
  }
  return sizes;
}

// Elements of the units all-gathered at once by Megatron-FSDP: the current unit and the
// following ones until the prefetched size reaches the bound (AllGatherPipeline.
// all_gather_params); two units with --fsdp-double-buffer (need_skip_prefetch).
double gathered_units(const FsdpConfig& fsdp, const UnitSizes& sizes) {
  const std::vector<double>& units = sizes.units;
  if (units.empty()) return 0;
  const double average = sizes.total_units / static_cast<double>(units.size());
  const double unit_size = fsdp.communication_unit_elements > 0
                               ? static_cast<double>(fsdp.communication_unit_elements)
                               : std::max(kDefaultCommunicationUnitElements, 2 * average);
  const double bound = unit_size / 2;
  double largest = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    double prefetched = 0;
    std::size_t next = i + 1;
    for (; next < units.size(); ++next) {
      if (fsdp.double_buffer ? next > i + 1 : prefetched >= bound) break;
      prefetched += units[next];
    }
    largest = std::max(largest, units[i] + prefetched);
    if (next == units.size()) break;  // later starts gather a suffix of this window
  }
  return largest;
}

FsdpWorkingSet megatron_fsdp_working_set(const NormalizedConfig& n, const UnitSizes& sizes) {
  const FsdpConfig& fsdp = n.config.parallel.fsdp;
  const double weight = dtype_bytes(n.config.training.params_dtype);
  const double grad = dtype_bytes(fsdp.main_grads_dtype);
  FsdpWorkingSet working;
  if (fsdp.sharding == FsdpSharding::optim_grads_params) {
    // Root-group parameters stay unsharded through forward and backward; FSDP units are
    // resharded after their forward (_post_forward) and gathered again, with prefetch, in
    // backward.
    const double gathered = gathered_units(fsdp, sizes);
    working.forward_bytes = weight * sizes.root;
    working.forward_start_bytes = weight * (sizes.root + gathered);
    working.backward_bytes = weight * (sizes.root + gathered);
  }
  if (fsdp.sharding == FsdpSharding::optim_grads ||
      fsdp.sharding == FsdpSharding::optim_grads_params) {
    // Gradients are reduced from a full-size temporary bucket: the root group's through the
    // whole backward (its embedding gradient comes last), one unit's at a time.
    working.backward_bytes += grad * (sizes.root + sizes.largest_unit);
  }
  return working;
}

// PyTorch FSDP2: the current and the prefetched next unit unsharded, the current unit's
// gradient before its reduce-scatter (param dtype); without reshard_after_forward every unit
// stays unsharded from its forward to its backward.
FsdpWorkingSet torch_fsdp2_working_set(const NormalizedConfig& n, const UnitSizes& sizes) {
  const double weight = dtype_bytes(n.config.training.params_dtype);
  const double largest = sizes.largest_unit;
  const double unsharded =
      n.config.parallel.fsdp.reshard_after_forward ? 2 * largest : sizes.total_units;
  FsdpWorkingSet working;
  working.forward_bytes = weight * unsharded;
  working.forward_start_bytes = weight * 2 * largest;
  working.backward_bytes = weight * (unsharded + largest);
  return working;
}

}  // namespace

bool uses_fsdp(const NormalizedConfig& normalized) {
  return normalized.config.parallel.fsdp.impl != FsdpImpl::none;
}

ShardedTensorBytes fsdp_tensor_bytes(const NormalizedConfig& normalized,
                                     const ParamTensor& tensor) {
  const Config& c = normalized.config;
  const FsdpConfig& fsdp = c.parallel.fsdp;
  const double shard = shard_group(normalized, tensor.expert);
  const double param = dtype_bytes(c.training.params_dtype);
  const double moments = moment_bytes(c.optimizer);
  ShardedTensorBytes bytes;
  if (fsdp.impl == FsdpImpl::torch_fsdp2) {
    // DTensor shards; Float16OptimizerWithFloat16Params keeps fp32 masters of the shards and
    // copies the gradients to fp32 before the step (optimizer.py,
    // _copy_model_grads_to_main_grads), alive until the next zero_grad.
    const double master = c.training.params_dtype == DType::fp32 ? 0.0 : 4.0;
    bytes.weight = param / shard;
    bytes.gradient = 4.0 / shard;
    bytes.optimizer = (master + moments) / shard;
    return bytes;
  }
  // param_and_grad_buffer.py: no_shard keeps everything; optim shards the main weights
  // (and the states on them); optim_grads also the main gradients; optim_grads_params also
  // the compute weights.
  const FsdpSharding s = fsdp.sharding;
  const bool grads_sharded =
      s == FsdpSharding::optim_grads || s == FsdpSharding::optim_grads_params;
  bytes.weight = param / (s == FsdpSharding::optim_grads_params ? shard : 1.0);
  bytes.gradient = dtype_bytes(fsdp.main_grads_dtype) / (grads_sharded ? shard : 1.0);
  bytes.optimizer =
      (dtype_bytes(fsdp.main_params_dtype) + moments) / (s == FsdpSharding::no_shard ? 1.0 : shard);
  return bytes;
}

ChunkStaticBytes fsdp_chunk_static_bytes(const NormalizedConfig& normalized,
                                         const std::vector<TensorBlock>& blocks) {
  ChunkStaticBytes out;
  double weight = 0, gradient = 0, optimizer = 0;
  visit_chunk_tensors(blocks, out, [&](const ParamTensor& tensor, std::int64_t elements) {
    const ShardedTensorBytes bytes = fsdp_tensor_bytes(normalized, tensor);
    weight += bytes.weight * static_cast<double>(elements);
    gradient += bytes.gradient * static_cast<double>(elements);
    optimizer += bytes.optimizer * static_cast<double>(elements);
  });
  out.weight_bytes = static_cast<std::uint64_t>(std::llround(weight));
  out.gradient_bytes = static_cast<std::uint64_t>(std::llround(gradient));
  out.optimizer_bytes = static_cast<std::uint64_t>(std::llround(optimizer));
  return out;
}

FsdpWorkingSet fsdp_working_set(const NormalizedConfig& normalized,
                                const std::vector<TensorBlock>& blocks) {
  const UnitSizes sizes = unit_sizes(normalized, blocks);
  FsdpWorkingSet working = normalized.config.parallel.fsdp.impl == FsdpImpl::torch_fsdp2
                               ? torch_fsdp2_working_set(normalized, sizes)
                               : megatron_fsdp_working_set(normalized, sizes);
  if (!normalized.config.parallel.fsdp.init_model_with_meta_device) {
    // training.py get_model: model_module.cuda() before the FSDP wrapper; the wrapper then
    // copies group by group into its buffers through a full-size bucket and frees the
    // originals (param_and_grad_buffer.py _init_each_parameter_group_buffers).
    const double weight = dtype_bytes(normalized.config.training.params_dtype);
    working.initial_params_bytes = weight * (sizes.root + sizes.total_units);
    working.initial_bucket_bytes = weight * std::max(sizes.root, sizes.largest_unit);
  }
  return working;
}

void add_fsdp_working_set(const std::vector<FsdpWorkingSet>& working,
                          const std::vector<StagePlacement>& stages, std::size_t stage,
                          ChunkActivations& chunk) {
  if (stage >= working.size() || stage >= stages.size()) return;
  double other_roots = 0;
  for (std::size_t s = 0; s < working.size() && s < stages.size(); ++s) {
    if (s != stage && stages[s].pp_rank == stages[stage].pp_rank) {
      other_roots += working[s].forward_bytes;
    }
  }
  const FsdpWorkingSet& own = working[stage];
  chunk.forward_peak_extra_bytes =
      other_roots +
      std::max(chunk.forward_peak_extra_bytes + own.forward_bytes, own.forward_start_bytes);
  chunk.backward_peak_extra_bytes += other_roots + own.backward_bytes;
}

void add_fsdp_initialization(const std::vector<FsdpWorkingSet>& working,
                             const std::vector<StagePlacement>& stages, int pp_rank,
                             RankPeak& peak) {
  double params = 0;
  double bucket = 0;
  for (std::size_t s = 0; s < working.size() && s < stages.size(); ++s) {
    if (stages[s].pp_rank != pp_rank) continue;
    params += working[s].initial_params_bytes;
    bucket = std::max(bucket, working[s].initial_bucket_bytes);
  }
  const double initial = params + bucket;
  if (initial <= peak.peak_allocated_bytes) return;
  peak.peak_allocated_bytes = initial;  // before any activation exists
  peak.activation_bytes = 0;
}

}  // namespace megamem
