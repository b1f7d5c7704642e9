// FSDP static memory and working set; see fsdp_memory.hpp.
#include "memory/fsdp_memory.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "megamem/units.hpp"
#include "memory/fp8_memory.hpp"

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

// An FP8 parameter of Megatron-FSDP: with --fp8-param-gather TE creates the GEMM weights of
// FP8 layers as quantized tensors (quantized_model_init, param_and_grad_buffer.py
// reset_context_args init_param_with_fp8), and their parameter group has dtype "float8".
// arguments.py turns --fp8-param-gather off for torch FSDP2 (TE >= 2.0: "will fallback to
// bf16 all_gather").
bool fsdp_fp8_param(const NormalizedConfig& n, const ParamTensor& tensor) {
  return tensor.fp8 && n.config.training.fp8_param_gather &&
         n.config.parallel.fsdp.impl == FsdpImpl::megatron;
}

// Bytes per element of a parameter in Megatron-FSDP's model weight buffers: uint8 for an FP8
// parameter, plus a uint8 transpose_weight_buffer for MXFP8 (param_and_grad_buffer.py
// _init_each_parameter_group_buffers; mixed_precision.py fp8_need_transpose_data).
double weight_buffer_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (!fsdp_fp8_param(n, tensor)) return dtype_bytes(n.config.training.params_dtype);
  return n.config.training.fp8_recipe == Fp8Recipe::mxfp8 ? 2.0 : 1.0;
}

// Which all-gather a pass makes: a parameter group with a transpose_weight_buffer (MXFP8) is
// gathered rowwise for forward and columnwise for backward, each its own bucket
// (param_and_grad_buffer.py AllGatherPipeline.get_bucket_key: (bucket_id, has_transpose and
// bwd)); every other group has one bucket for both passes.
enum class GatherPass : std::uint8_t { forward, backward };

bool mxfp8_fsdp_param(const NormalizedConfig& n, const ParamTensor& tensor) {
  return fsdp_fp8_param(n, tensor) && n.config.training.fp8_recipe == Fp8Recipe::mxfp8;
}

// Bytes per element of the bucket a pass all-gathers: the parameter dtype, one uint8 layout
// of an FP8 parameter (MXFP8: the rowwise data in forward, the columnwise data in backward).
double gathered_bucket_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (!fsdp_fp8_param(n, tensor)) return dtype_bytes(n.config.training.params_dtype);
  return mxfp8_fsdp_param(n, tensor)
             ? 1.0
             : fp8_param_buffer_bytes_per_param(n.config.training.fp8_recipe);
}

// What TE makes from a gathered FP8 parameter and keeps until the unit is released
// (megatron_fsdp.py fp8_create_transpose_cache -> TE tensor/utils.py
// post_all_gather_processing): a Float8Tensor's _transpose before Blackwell, a blockwise
// tensor's columnwise data; nothing for MXFP8 ("no need to do anything": both layouts are
// gathered, and the scales never leave the parameter, see unsharded_scale_bytes). Dropped
// with the unit unless --keep-fp8-transpose-cache (release_params_fp8_transpose_cache).
double post_gather_copy_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (!fsdp_fp8_param(n, tensor) || mxfp8_fsdp_param(n, tensor)) return 0.0;
  return fp8_weight_copy_bytes_per_param(n.config.training.fp8_recipe, true,
                                         n.config.device.fp8_gemm_any_layout);
}

// Bytes per element of a parameter once all-gathered for one pass.
double gathered_weight_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  return gathered_bucket_bytes(n, tensor) + post_gather_copy_bytes(n, tensor);
}

// Bytes per element of a parameter as its module creates it, before the FSDP wrapper: an FP8
// parameter with every layout and scale TE gives it.
double unwrapped_weight_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (!fsdp_fp8_param(n, tensor)) return dtype_bytes(n.config.training.params_dtype);
  const TrainingConfig& t = n.config.training;
  return fp8_param_buffer_bytes_per_param(t.fp8_recipe) +
         fp8_weight_copy_bytes_per_param(t.fp8_recipe, true, n.config.device.fp8_gemm_any_layout);
}

// The scale-inverse tensors of an MXFP8 parameter: Megatron-FSDP points only the rowwise and
// columnwise data at its buffers (mixed_precision.py fp8_set_raw_data), so the E8M0 scales TE
// created with the parameter stay allocated at full size on every rank.
double unsharded_scale_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  return mxfp8_fsdp_param(n, tensor) ? fp8_weight_scale_bytes_per_param(Fp8Recipe::mxfp8) : 0.0;
}

// Whether backward runs this tensor's module again (full recompute, or a selective module
// that holds its GEMM): recompute gathers the forward bucket once more, in the backward pass
// (the recomputed forward's pre-forward hook in PRE_BACKWARD state).
bool rerun_in_backward(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (n.config.training.recompute.granularity == RecomputeGranularity::full) return true;
  const RecomputeModules active = active_recompute_modules(n);
  switch (tensor.module) {
    case ModuleKind::self_attention:
      return active.has(RecomputeModule::mla_up_proj);
    case ModuleKind::mlp:
      return active.has(RecomputeModule::mlp);
    case ModuleKind::shared_experts:
      return active.has(RecomputeModule::shared_experts) || active.has(RecomputeModule::moe);
    case ModuleKind::routed_experts:
    case ModuleKind::router:
    case ModuleKind::moe_latent_projection:
      return active.has(RecomputeModule::moe);
    default:
      return false;
  }
}

// The main-gradient dtype of a parameter's group (_resolve_group_grad_dtype): an FP8 group's
// gradients are bf16 when the main-grads dtype follows the parameters ("auto"; Megatron-Core
// <= 0.15 the same unless grads were reduced in fp32), else the main-grads dtype.
double main_grad_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  const FsdpConfig& fsdp = n.config.parallel.fsdp;
  if (fsdp_fp8_param(n, tensor) && fsdp.main_grads_dtype == n.config.training.params_dtype) {
    return 2.0;
  }
  return dtype_bytes(fsdp.main_grads_dtype);
}

// Root-group parameters stay all-gathered between steps: Megatron-Core >= 0.18 (commit
// 378d81fbd3, "Preserve non-FSDP-unit buckets across AllGatherPipeline reset") keeps the
// buckets of parameters outside FSDP units when synchronize_param_gather resets the pipeline
// (megatron_fsdp.py; param_and_grad_buffer.py AllGatherPipeline.reset,
// BucketStatus.PRESERVED). Only ZeRO-3 shards (and so gathers) the compute weights.
bool root_gathered_between_steps(const NormalizedConfig& n, const ParamTensor& tensor) {
  const FsdpConfig& fsdp = n.config.parallel.fsdp;
  return fsdp.impl == FsdpImpl::megatron && fsdp.sharding == FsdpSharding::optim_grads_params &&
         !in_unit(n, tensor) && shard_group(n, tensor.expert) > 1;
}

// What all-gathering a Megatron-FSDP tensor adds beside its persistent buffer. A buffer whose
// group has one rank is not distributed (param_and_grad_buffer.py
// _init_each_parameter_group_buffers: is_data_distributed needs dp_group.size() > 1), and
// fetch_bucket hands out a view of it: only what TE makes after the gather is new. torch
// FSDP2 unshards into new storage.
double gather_added_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (n.config.parallel.fsdp.impl != FsdpImpl::megatron || shard_group(n, tensor.expert) > 1) {
    return gathered_weight_bytes(n, tensor);
  }
  return post_gather_copy_bytes(n, tensor);
}

// A full-size gradient bucket is made only for a distributed gradient buffer; otherwise
// _grad_acc adds into the persistent buffer (megatron_fsdp.py, _bucket_group_gradient_reduce
// allocates only when gbuf.is_data_distributed).
double grad_bucket_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (n.config.parallel.fsdp.impl == FsdpImpl::megatron && shard_group(n, tensor.expert) <= 1) {
    return 0.0;
  }
  return main_grad_bytes(n, tensor);
}

// Transformer Engine's cached FP8 copy of a 16-bit weight of an FP8 layer: TE quantizes the
// all-gathered weight into the module's _fp8_workspaces and keeps it across micro-batches and
// steps (module/linear.py, grouped_linear.py; Megatron passes is_first_microbatch), so the
// copy is of the whole weight, not of a shard. FP8 parameters need none.
double te_weight_copy_bytes(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (!tensor.fp8 || fsdp_fp8_param(n, tensor)) return 0.0;
  return fp8_weight_copy_bytes_per_param(n.config.training.fp8_recipe, false,
                                         n.config.device.fp8_gemm_any_layout);
}

// Bytes per element a distributed bucket of this tensor takes from Megatron-FSDP's bucket
// allocator: its gathered layout (and for MXFP8 the columnwise one from the transpose
// allocator), and its gradient bucket.
double pooled_weight_bytes_per_element(const NormalizedConfig& n, const ParamTensor& tensor) {
  if (n.config.parallel.fsdp.impl != FsdpImpl::megatron || shard_group(n, tensor.expert) <= 1) {
    return 0.0;
  }
  return gathered_bucket_bytes(n, tensor) * (mxfp8_fsdp_param(n, tensor) ? 2.0 : 1.0);
}

// A unit's buckets by parameter group: dense or expert, 16-bit or FP8
// (param_and_grad_buffer.py _get_parameter_groups groups by dtype and is_expert_param).
constexpr std::size_t kBucketKinds = 4;
std::size_t bucket_kind(const NormalizedConfig& n, const ParamTensor& tensor) {
  return (tensor.expert ? 2u : 0u) + (fsdp_fp8_param(n, tensor) ? 1u : 0u);
}

// Sizes of one FSDP unit or of the root group: elements (the prefetch bound counts them),
// bytes once all-gathered, and bytes of its full-size main-gradient bucket.
struct GroupSize {
  double elements = 0;
  double weight_bytes = 0;  // added by its all-gather, in either pass
  double copy_bytes = 0;    // of which TE's copies made after the gather
  // Forward buckets gathered again in backward for recompute (MXFP8 only: other groups' one
  // bucket serves both passes), without prefetch, for the unit being recomputed.
  double recompute_weight_bytes = 0;
  double grad_bytes = 0;
  double initial_bytes = 0;  // the module's own parameters before the FSDP wrapper
  // Per bucket kind: elements (a double-buffer pool's units have equal ones), and the bytes
  // its distributed buckets take from the weight and gradient allocators.
  std::array<double, kBucketKinds> bucket_elements{};
  std::array<double, kBucketKinds> pooled_weight_bytes{};
  std::array<double, kBucketKinds> pooled_grad_bytes{};

  void add(const NormalizedConfig& n, const ParamTensor& tensor, double repeat) {
    const double count = static_cast<double>(tensor.elements()) * repeat;
    const double gathered = gather_added_bytes(n, tensor) * count;
    elements += count;  // the prefetch bound counts every bucket (all_gather_params)
    weight_bytes += gathered;
    copy_bytes += post_gather_copy_bytes(n, tensor) * count;
    if (mxfp8_fsdp_param(n, tensor) && rerun_in_backward(n, tensor)) {
      recompute_weight_bytes += gathered;
    }
    grad_bytes += grad_bucket_bytes(n, tensor) * count;
    initial_bytes += unwrapped_weight_bytes(n, tensor) * count;
    const std::size_t kind = bucket_kind(n, tensor);
    bucket_elements[kind] += count;
    pooled_weight_bytes[kind] += pooled_weight_bytes_per_element(n, tensor) * count;
    pooled_grad_bytes[kind] += grad_bucket_bytes(n, tensor) * count;
  }

  void add(const GroupSize& other) {
    elements += other.elements;
    weight_bytes += other.weight_bytes;
    copy_bytes += other.copy_bytes;
    recompute_weight_bytes += other.recompute_weight_bytes;
    grad_bytes += other.grad_bytes;
    initial_bytes += other.initial_bytes;
  }

  // The unit's buckets come from persistent buffers: only TE's copies stay temporary.
  void move_buckets_to_persistent_buffers() {
    weight_bytes = copy_bytes;
    recompute_weight_bytes = 0;
    grad_bytes = 0;
  }
};

struct UnitSizes {
  GroupSize root;  // outside FSDP units
  // The untied input embedding when it is a gradient bucket of its own: the root group is
  // split into buckets of ddp_bucket_elements in parameter order, the embedding first
  // (param_and_grad_buffer.py _get_parameter_groups), and its bucket is allocated by its
  // gradient, the last of the backward (a tied one is its own bucket from the output layer's
  // gradient on: _does_param_require_new_bucket).
  GroupSize input_embedding;
  std::vector<GroupSize> units;  // each unit, in forward order
  GroupSize total_units;
  GroupSize largest_unit;            // the unit with the most elements
  double largest_grad_bytes = 0;     // the largest unit gradient bucket
  double persistent_pool_bytes = 0;  // --fsdp-double-buffer's persistent buffers
};

bool own_late_bucket(const NormalizedConfig& n, const ParamTensor& tensor, bool bucketing) {
  const std::int64_t bucket = ddp_bucket_elements(n, bucketing);
  return tensor.module == ModuleKind::word_embedding && !tensor.shared_embedding && bucket > 0 &&
         tensor.elements() >= bucket;
}

// The units --fsdp-double-buffer pools: the largest set of units with the same buckets
// (FixedPoolAllocator: equal dtype and size per bucket, the first such set on a tie), or every
// unit with --megatron-fsdp-max-pool-double-buffer (MaxPoolAllocator).
std::vector<bool> pooled_units(const FsdpConfig& fsdp, const std::vector<GroupSize>& units) {
  std::vector<bool> pooled(units.size(), fsdp.max_pool_double_buffer);
  if (fsdp.max_pool_double_buffer) return pooled;
  std::size_t best = 0, best_count = 0;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const auto same = [&](const GroupSize& other) {
      return other.bucket_elements == units[u].bucket_elements;
    };
    const auto count = static_cast<std::size_t>(std::count_if(units.begin(), units.end(), same));
    if (count > best_count) best = u, best_count = count;
  }
  for (std::size_t u = 0; u < units.size(); ++u) {
    pooled[u] = units[u].bucket_elements == units[best].bucket_elements;
  }
  return pooled;
}

// --fsdp-double-buffer (forced by --use-nccl-ub): the pooled units' all-gather and gradient
// buckets come from two buffer groups per allocator (param_and_grad_buffer.py UB_BUFFER_NUM =
// 2; weights, MXFP8 transposes, gradients), each sized for the pooled unit (MaxPoolAllocator:
// for the largest unit per bucket kind), taken from Megatron-FSDP's GlobalMemoryBuffer and
// never freed. Other units allocate dynamically, or with --fsdp-db-use-persist-buf-on-alloc-fail
// each bucket keeps a persistent buffer of its own.
void add_double_buffer_pools(const FsdpConfig& fsdp, UnitSizes& sizes) {
  const std::vector<bool> pooled = pooled_units(fsdp, sizes.units);
  std::array<double, kBucketKinds> weight{}, grad{};
  for (std::size_t u = 0; u < sizes.units.size(); ++u) {
    GroupSize& unit = sizes.units[u];
    for (std::size_t k = 0; pooled[u] && k < kBucketKinds; ++k) {
      weight[k] = std::max(weight[k], unit.pooled_weight_bytes[k]);
      grad[k] = std::max(grad[k], unit.pooled_grad_bytes[k]);
    }
    if (!pooled[u] && fsdp.persist_unpooled_buffers) {
      for (std::size_t k = 0; k < kBucketKinds; ++k) {
        sizes.persistent_pool_bytes += unit.pooled_weight_bytes[k] + unit.pooled_grad_bytes[k];
      }
    }
    if (pooled[u] || fsdp.persist_unpooled_buffers) unit.move_buckets_to_persistent_buffers();
  }
  for (std::size_t k = 0; k < kBucketKinds; ++k) {
    sizes.persistent_pool_bytes += 2 * (weight[k] + grad[k]);
  }
}

UnitSizes unit_sizes(const NormalizedConfig& n, const std::vector<TensorBlock>& blocks,
                     bool bucketing) {
  UnitSizes sizes;
  for (const TensorBlock& block : blocks) {
    GroupSize layer_unit;
    for (std::size_t t = 0; t < block.count; ++t) {
      const ParamTensor& tensor = block.tensors[t];
      if (!in_unit(n, tensor)) {
        sizes.root.add(n, tensor, static_cast<double>(block.repeat));
        if (own_late_bucket(n, tensor, bucketing)) {
          sizes.input_embedding.add(n, tensor, static_cast<double>(block.repeat));
        }
      } else if (tensor.layer < 0) {
        sizes.units.emplace_back().add(n, tensor, 1.0);  // FSDP2's embedding or output layer
      } else {
        layer_unit.add(n, tensor, 1.0);
      }
    }
    if (layer_unit.elements > 0) {
      sizes.units.insert(sizes.units.end(), static_cast<std::size_t>(block.repeat), layer_unit);
    }
  }
  if (n.config.parallel.fsdp.double_buffer) add_double_buffer_pools(n.config.parallel.fsdp, sizes);
  for (const GroupSize& unit : sizes.units) {
    sizes.total_units.add(unit);
    if (unit.elements > sizes.largest_unit.elements) sizes.largest_unit = unit;
    sizes.largest_grad_bytes = std::max(sizes.largest_grad_bytes, unit.grad_bytes);
  }
  return sizes;
}

// Elements of Megatron-FSDP's communication unit: --suggested-communication-unit-size, or
// twice the average FSDP unit, at least 1e9 (megatron_fsdp.py). The all-gather prefetches half
// of it; the reduce-scatter queue holds up to all of it.
double communication_unit_elements(const FsdpConfig& fsdp, const UnitSizes& sizes) {
  if (fsdp.communication_unit_elements > 0) {
    return static_cast<double>(fsdp.communication_unit_elements);
  }
  const double average = sizes.total_units.elements / static_cast<double>(sizes.units.size());
  return std::max(kDefaultCommunicationUnitElements, 2 * average);
}

// Gathered bytes of the units all-gathered at once by Megatron-FSDP in one pass: the current
// unit (with its recomputed forward buckets in backward) and the following ones until the
// prefetched elements reach the bound (AllGatherPipeline.all_gather_params); two units with
// --fsdp-double-buffer (need_skip_prefetch).
double gathered_units_bytes(const FsdpConfig& fsdp, const UnitSizes& sizes, GatherPass pass) {
  const std::vector<GroupSize>& units = sizes.units;
  if (units.empty()) return 0;
  const auto bytes = [](const GroupSize& unit) { return unit.weight_bytes; };
  const auto rerun = [&](std::size_t i) {
    return pass == GatherPass::backward ? units[i].recompute_weight_bytes : 0.0;
  };
  const double bound = communication_unit_elements(fsdp, sizes) / 2;
  double largest = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    double prefetched = 0, prefetched_bytes = 0;
    std::size_t next = i + 1;
    for (; next < units.size(); ++next) {
      if (fsdp.double_buffer ? next > i + 1 : prefetched >= bound) break;
      prefetched += units[next].elements;
      prefetched_bytes += bytes(units[next]);
    }
    largest = std::max(largest, bytes(units[i]) + rerun(i) + prefetched_bytes);
    if (next == units.size()) {
      // Later starts gather a suffix of this window, with their own recomputed buckets.
      double suffix = 0;
      for (std::size_t j = units.size() - 1; j > i; --j) {
        suffix += bytes(units[j]);
        largest = std::max(largest, suffix + rerun(j));
      }
      break;
    }
  }
  return largest;
}

// Megatron-FSDP's reduce-scatter queue through a backward: a reduce-scattered bucket is freed
// only while the queue holds more than a communication unit of elements, oldest first, checked
// before the next bucket is queued (GradReducePipeline.wait_for_previous_grad_reduce; every
// bucket's elements count), and the queue is emptied at the end of each backward
// (_root_post_backward -> reset).
class ReduceScatterQueue {
 public:
  explicit ReduceScatterQueue(double capacity_elements) : capacity_(capacity_elements) {}
  void push(double elements, double bytes) {
    while (elements_ > capacity_ && first_ < queued_.size()) {
      elements_ -= queued_[first_].first;
      bytes_ -= queued_[first_].second;
      ++first_;
    }
    queued_.emplace_back(elements, bytes);
    elements_ += elements;
    bytes_ += bytes;
  }
  double bytes() const { return bytes_; }

 private:
  double capacity_;
  std::vector<std::pair<double, double>> queued_;  // elements, bytes
  std::size_t first_ = 0;
  double elements_ = 0, bytes_ = 0;
};

// Gathered bytes while unit `u` runs its backward: it (with its recomputed forward buckets)
// and the units before it that the backward prefetches up to the bound (two units with
// --fsdp-double-buffer).
double backward_window_bytes(const FsdpConfig& fsdp, const UnitSizes& sizes, std::size_t u) {
  const double bound = communication_unit_elements(fsdp, sizes) / 2;
  double bytes = sizes.units[u].weight_bytes + sizes.units[u].recompute_weight_bytes;
  double prefetched = 0;
  for (std::size_t next = u; next-- > 0;) {
    if (fsdp.double_buffer ? next + 1 < u : prefetched >= bound) break;
    prefetched += sizes.units[next].elements;
    bytes += sizes.units[next].weight_bytes;
  }
  return bytes;
}

// The working set at each unit's backward, last unit first, and at the embedding's: the root
// group's other buckets are queued after the output layer's gradient, each unit's once its
// gradients are done.
void add_backward_phases(const FsdpConfig& fsdp, const UnitSizes& sizes, bool gathers,
                         FsdpWorkingSet& working) {
  ReduceScatterQueue queue(communication_unit_elements(fsdp, sizes));
  queue.push(sizes.root.elements - sizes.input_embedding.elements,
             sizes.root.grad_bytes - sizes.input_embedding.grad_bytes);
  working.layer_backward_bytes.assign(sizes.units.size(), 0.0);
  for (std::size_t u = sizes.units.size(); u-- > 0;) {
    const GroupSize& unit = sizes.units[u];
    working.layer_backward_bytes[u] =
        (gathers ? backward_window_bytes(fsdp, sizes, u) : 0.0) + unit.grad_bytes + queue.bytes();
    queue.push(unit.elements, unit.grad_bytes);
  }
  working.embedding_backward_bytes = queue.bytes() + sizes.input_embedding.grad_bytes;
}

FsdpWorkingSet megatron_fsdp_working_set(const NormalizedConfig& n, const UnitSizes& sizes) {
  const FsdpConfig& fsdp = n.config.parallel.fsdp;
  FsdpWorkingSet working;
  const bool gathers = fsdp.sharding == FsdpSharding::optim_grads_params;
  if (gathers) {
    // The root group is gathered from the first step on and stays so (static memory,
    // root_gathered_between_steps); FSDP units are resharded after their forward
    // (_post_forward) and gathered again, with prefetch, in backward.
    working.forward_start_bytes = gathered_units_bytes(fsdp, sizes, GatherPass::forward);
    working.backward_bytes = gathered_units_bytes(fsdp, sizes, GatherPass::backward);
  }
  if (fsdp.sharding == FsdpSharding::optim_grads || gathers) {
    // Gradients are reduced from full-size temporary buckets: the root group's from its
    // output layer's gradient on, one unit's at a time, kept in the reduce-scatter queue.
    working.backward_bytes +=
        sizes.root.grad_bytes - sizes.input_embedding.grad_bytes + sizes.largest_grad_bytes;
    add_backward_phases(fsdp, sizes, gathers, working);
  }
  // None of it is there in the cross entropy's backward (loss_backward_bytes stays 0): the
  // gradient buckets come with the first gradient hook (megatron_fsdp.py _grad_acc,
  // param.get_main_grad), the output layer's wgrad, and the units are gathered again by their
  // pre-backward hooks.
  return working;
}

// PyTorch FSDP2: the current and the prefetched next unit unsharded, the current unit's
// gradient before its reduce-scatter (param dtype); without reshard_after_forward every unit
// stays unsharded from its forward to its backward.
FsdpWorkingSet torch_fsdp2_working_set(const NormalizedConfig& n, const UnitSizes& sizes) {
  const double largest = sizes.largest_unit.weight_bytes;
  const double unsharded =
      n.config.parallel.fsdp.reshard_after_forward ? 2 * largest : sizes.total_units.weight_bytes;
  FsdpWorkingSet working;
  working.forward_bytes = unsharded;
  working.forward_start_bytes = 2 * largest;
  working.backward_bytes = unsharded + largest;
  working.loss_backward_bytes = working.backward_bytes;
  return working;
}

}  // namespace

// mcore_fsdp_adapter.py: until adfe9e11d9 (2026-07-01) grad_reduce_in_fp32 made the main
// gradients fp32 whatever megatron_fsdp_main_grads_dtype said; since then they follow that
// field, and without it the parameters' dtype (_resolve_group_grad_dtype), as in the
// Megatron-Core that Megatron-Bridge 067f987 pins. Flags without the field are read the
// first way (the CI's FSDP runs before July 2026 measured it), so the estimate says so.
std::string fsdp_main_grads_assumption(const NormalizedConfig& n) {
  const FsdpConfig& fsdp = n.config.parallel.fsdp;
  if (fsdp.impl != FsdpImpl::megatron || fsdp.main_grads_dtype != DType::fp32 ||
      n.config.training.params_dtype == DType::fp32) {
    return {};
  }
  return "Megatron-FSDP's main gradients are taken in fp32, as Megatron-Core kept them before "
         "adfe9e11d9 (2026-07-01) when gradients are reduced in fp32; later releases, and the "
         "Megatron-Core Megatron-Bridge 067f987 pins, keep them in the parameters' dtype unless "
         "megatron_fsdp_main_grads_dtype is set: estimate such runs with "
         "--megatron-fsdp-main-grads-dtype bf16 (link key fsdp-main-grads)";
}

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
    bytes.weight = param / shard + te_weight_copy_bytes(normalized, tensor);
    bytes.gradient = 4.0 / shard;
    bytes.optimizer = (master + moments) / shard;
    bytes.lazy_optimizer = moments / shard;
    return bytes;
  }
  // param_and_grad_buffer.py: no_shard keeps everything; optim shards the main weights
  // (and the states on them); optim_grads also the main gradients; optim_grads_params also
  // the compute weights.
  const FsdpSharding s = fsdp.sharding;
  const bool grads_sharded =
      s == FsdpSharding::optim_grads || s == FsdpSharding::optim_grads_params;
  bytes.weight = weight_buffer_bytes(normalized, tensor) /
                     (s == FsdpSharding::optim_grads_params ? shard : 1.0) +
                 te_weight_copy_bytes(normalized, tensor) +
                 unsharded_scale_bytes(normalized, tensor);
  if (root_gathered_between_steps(normalized, tensor)) {
    bytes.weight += gathered_weight_bytes(normalized, tensor);
  }
  bytes.gradient = main_grad_bytes(normalized, tensor) / (grads_sharded ? shard : 1.0);
  // HFSDP (--outer-dp-sharding-strategy optim) shards the main weights over all instances'
  // ranks, and Adam's states follow them (param_and_grad_buffer.py main_weight_buffer;
  // optimizer/__init__.py); the helper buffers it adds hold the in-instance weight and grad
  // shards instead of the model buffers, no more.
  const double outer = fsdp.outer_sharding == FsdpSharding::optim
                           ? static_cast<double>(c.parallel.num_distributed_optimizer_instances)
                           : 1.0;
  const double optimizer_shard = (s == FsdpSharding::no_shard ? 1.0 : shard) * outer;
  bytes.optimizer = (dtype_bytes(fsdp.main_params_dtype) + moments) / optimizer_shard;
  bytes.lazy_optimizer = moments / optimizer_shard;  // Adam's state, made at its first step
  // The step casts the main-weight shards of FP8 parameters back through TE's
  // cast_master_weights_to_fp8, dense then expert groups (param_and_grad_buffer.py
  // copy_main_weights_to_model_weights, mixed_precision.py fp8_quantize).
  if (fsdp_fp8_param(normalized, tensor)) bytes.fp8_master_cast = param / optimizer_shard;
  return bytes;
}

ChunkStaticBytes fsdp_chunk_static_bytes(const NormalizedConfig& normalized,
                                         const std::vector<TensorBlock>& blocks) {
  ChunkStaticBytes out;
  double weight = 0, gradient = 0, optimizer = 0, lazy = 0, cast[2] = {0, 0};
  visit_chunk_tensors(blocks, out, [&](const ParamTensor& tensor, std::int64_t elements) {
    const ShardedTensorBytes bytes = fsdp_tensor_bytes(normalized, tensor);
    weight += bytes.weight * static_cast<double>(elements);
    gradient += bytes.gradient * static_cast<double>(elements);
    optimizer += bytes.optimizer * static_cast<double>(elements);
    lazy += bytes.lazy_optimizer * static_cast<double>(elements);
    cast[tensor.expert ? 1 : 0] += bytes.fp8_master_cast * static_cast<double>(elements);
  });
  out.fp8_master_cast_bytes = static_cast<std::uint64_t>(round_to_int64(cast[0] + cast[1]));
  out.fp8_master_cast_expert_bytes = static_cast<std::uint64_t>(round_to_int64(cast[1]));
  out.weight_bytes = static_cast<std::uint64_t>(round_to_int64(weight));
  out.gradient_bytes = static_cast<std::uint64_t>(round_to_int64(gradient));
  out.optimizer_bytes = static_cast<std::uint64_t>(round_to_int64(optimizer));
  out.lazy_optimizer_bytes = static_cast<std::uint64_t>(round_to_int64(lazy));
  return out;
}

FsdpWorkingSet fsdp_working_set(const NormalizedConfig& normalized,
                                const std::vector<TensorBlock>& blocks, bool bucketing) {
  const UnitSizes sizes = unit_sizes(normalized, blocks, bucketing);
  FsdpWorkingSet working = normalized.config.parallel.fsdp.impl == FsdpImpl::torch_fsdp2
                               ? torch_fsdp2_working_set(normalized, sizes)
                               : megatron_fsdp_working_set(normalized, sizes);
  working.persistent_pool_bytes = sizes.persistent_pool_bytes;
  if (!normalized.config.parallel.fsdp.init_model_with_meta_device) {
    // training.py get_model: model_module.cuda() before the FSDP wrapper; the wrapper then
    // copies group by group into its buffers through a full-size bucket and frees the
    // originals (param_and_grad_buffer.py _init_each_parameter_group_buffers).
    working.initial_params_bytes = sizes.root.initial_bytes + sizes.total_units.initial_bytes;
    working.initial_bucket_bytes =
        std::max(sizes.root.initial_bytes, sizes.largest_unit.initial_bytes);
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
  double layers = 0;
  const std::size_t count =
      std::min(chunk.layer_backward_extra_bytes.size(), own.layer_backward_bytes.size());
  for (std::size_t i = 0; i < count; ++i) {
    layers = std::max(layers, chunk.layer_backward_extra_bytes[i] + own.layer_backward_bytes[i]);
  }
  const double embedding = own.embedding_backward_bytes > 0
                               ? chunk.embedding_backward_extra_bytes + own.embedding_backward_bytes
                               : 0.0;
  chunk.backward_peak_extra_bytes =
      other_roots + std::max({chunk.loss_backward_peak_extra_bytes + own.loss_backward_bytes,
                              chunk.weight_grad_backward_peak_extra_bytes + own.backward_bytes,
                              layers, embedding});
}

void add_fsdp_persistent_pools(const std::vector<FsdpWorkingSet>& working,
                               const std::vector<StagePlacement>& stages,
                               std::vector<RankMemory>& ranks) {
  std::vector<double> pools(ranks.size(), 0.0);
  for (std::size_t s = 0; s < working.size() && s < stages.size(); ++s) {
    const auto rank = static_cast<std::size_t>(stages[s].pp_rank);
    if (rank < pools.size()) pools[rank] = std::max(pools[rank], working[s].persistent_pool_bytes);
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    ranks[r].persistent_buffer_bytes += static_cast<std::uint64_t>(round_to_int64(pools[r]));
  }
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
