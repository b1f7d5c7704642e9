// Static memory of a model chunk; see static_memory.hpp.
#include "memory/static_memory.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <utility>

#include "megamem/units.hpp"
#include "memory/fp8_memory.hpp"
#include "memory/fsdp_memory.hpp"
#include "memory/persistent_buffers.hpp"

namespace megamem {
namespace {

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

bool uses_fp8_param_buffer(const NormalizedConfig& normalized, const ParamTensor& tensor) {
  // TE fp8 weights are only the GEMMs of FP8 layers; embedding, output layer, router and
  // --first-last-layers-bf16 layers stay 16-bit (fp8_utils.py, get_fp8_context is_init).
  return normalized.config.training.fp8_param_gather && tensor.fp8;
}

// Megatron's Muon handles 2-D weights that are not the embedding or output layer
// (megatron/core/optimizer/emerging_optimizers.py, _is_nonlinear_or_embedding).
OptimizerKind optimizer_for(const OptimizerConfig& optimizer, const ParamTensor& tensor) {
  if (optimizer.kind != OptimizerKind::muon) return optimizer.kind;
  if (tensor.gemm_weight && !tensor.embedding_or_output) return OptimizerKind::muon;
  return optimizer.muon_scalar_optimizer;
}

// An fp32 parameter of a 16-bit model (ParamTensor::fp32; in an fp32 model every parameter is).
bool fp32_in_half_model(const NormalizedConfig& normalized, const ParamTensor& tensor) {
  return tensor.fp32 && normalized.config.training.params_dtype != DType::fp32;
}

// Which DDP buffer a tensor lives in: [expert][storage: params dtype, fp8 param buffer, fp32]
// (param_layout.py BufferKey: param dtype, grad dtype, expert; param_and_grad_buffer.py
// group_params_for_buffers keys an fp32 parameter of a bf16 model by its own dtype).
struct BufferKey {
  int expert;
  int storage;
};

BufferKey buffer_of(const NormalizedConfig& normalized, const ParamTensor& tensor) {
  const int storage = uses_fp8_param_buffer(normalized, tensor) ? 1
                      : fp32_in_half_model(normalized, tensor)  ? 2
                                                                : 0;
  return {tensor.expert ? 1 : 0, storage};
}

// One DDP buffer's element count after Megatron's padding (distributed optimizer only):
// each parameter starts at a multiple of 64 elements, each bucket ends at a multiple of
// lcm(DP, 128); parameters are laid out in reverse (backprop) order, and a shared
// embedding gets a bucket of its own (distrib_optimizer.py,
// _compute_per_buffer_param_layout). Without bucketing, a block of identical layers
// advances by its 64-aligned size times its repeat count: bucket ends are multiples of
// 128, so rounding inside the block changes nothing.
std::int64_t padded_buffer_elements(const NormalizedConfig& normalized,
                                    const std::vector<TensorBlock>& blocks, BufferKey key,
                                    std::int64_t shard_group, std::int64_t bucket_size) {
  const std::int64_t bucket_divisor = std::lcm(shard_group, std::int64_t{128});
  std::int64_t param_start = 0;
  std::int64_t param_end = 0;
  std::int64_t bucket_start = 0;
  bool bucket_open = false;
  auto finalize = [&](std::int64_t end) {
    bucket_start = round_up(end, bucket_divisor);
    bucket_open = false;
    return bucket_start;
  };
  auto in_buffer = [&](const ParamTensor& tensor) {
    const BufferKey k = buffer_of(normalized, tensor);
    return k.expert == key.expert && k.storage == key.storage;
  };
  auto place = [&](const ParamTensor& param) {
    param_start = round_up(param_start, 64);
    if (param.shared_embedding && bucket_open) param_start = finalize(param_start);
    param_end = param_start + param.numel;
    bucket_open = true;
    if ((bucket_size > 0 && param_end - bucket_start >= bucket_size) || param.shared_embedding) {
      param_start = finalize(param_end);
    } else {
      param_start = param_end;
    }
  };
  for (auto block = blocks.rbegin(); block != blocks.rend(); ++block) {
    bool simple = bucket_size == 0;
    std::int64_t aligned = 0;
    for (std::size_t t = 0; t < block->count; ++t) {
      const ParamTensor& tensor = block->tensors[t];
      if (!in_buffer(tensor)) continue;
      simple = simple && !tensor.shared_embedding;
      aligned += round_up(tensor.numel, 64) * tensor.copies;
    }
    if (aligned == 0) continue;
    if (simple) {
      param_start = round_up(param_start, 64) + aligned * block->repeat;
      param_end = param_start;
      bucket_open = true;
      continue;
    }
    for (std::int64_t r = 0; r < block->repeat; ++r) {
      for (std::size_t t = block->count; t-- > 0;) {
        const ParamTensor& tensor = block->tensors[t];
        if (!in_buffer(tensor)) continue;
        for (std::int64_t copy = 0; copy < tensor.copies; ++copy) place(tensor);
      }
    }
  }
  if (bucket_open) finalize(param_end);
  return bucket_start;
}

// Transformer Engine's FP8 copies of the chunk's weights, beside the DDP buffers
// (ParamBytes::fp8_weight_copies).
double fp8_weight_copies(const NormalizedConfig& normalized,
                         const std::vector<TensorBlock>& blocks) {
  double bytes = 0;
  for (const TensorBlock& block : blocks) {
    for (std::size_t t = 0; t < block.count; ++t) {
      const ParamTensor& tensor = block.tensors[t];
      if (!tensor.fp8) continue;
      bytes += param_bytes(normalized, tensor).fp8_weight_copies *
               static_cast<double>(tensor.elements() * block.repeat);
    }
  }
  return bytes;
}

}  // namespace

std::int64_t optimizer_shard_group(const NormalizedConfig& normalized, bool expert) {
  if (!normalized.config.optimizer.use_distributed_optimizer) return 1;
  const std::int64_t instances = normalized.config.parallel.num_distributed_optimizer_instances;
  const std::int64_t group =
      expert ? normalized.expert_data_parallel
             : normalized.data_parallel * normalized.config.parallel.context_parallel;
  return group / instances;
}

namespace {

// The grad buffer under --use-precision-aware-optimizer: fp32 only when grads accumulate in
// fp32 (param_and_grad_buffer.py: grad_reduce_in_fp32 = accumulate_allreduce_grads_in_fp32,
// which arguments.py turns on for bf16 with fp32 main grads unless --grad-reduce-in-bf16);
// distrib_optimizer.py hands the buffer's shard to the optimizer as decoupled_grad.
double precision_aware_grad_bytes(DType params_dtype, const OptimizerConfig& opt) {
  const bool fp32_grads =
      params_dtype == DType::fp32 || (params_dtype == DType::bf16 && !opt.grad_reduce_in_bf16 &&
                                      opt.main_grads_dtype == DType::fp32);
  return fp32_grads ? 4.0 : 2.0;
}

}  // namespace

namespace {

// Whether TE FusedAdam keeps the master weights under --use-precision-aware-optimizer:
// optimizer_config.py use_precision_aware_optimizer_no_fp8_or_ds_fp8, on the recipe the
// OptimizerConfig carries: the model's under FP8, else OptimizerConfig::fp8_recipe (a
// Megatron-Bridge bf16 run's is tensorwise, so MCore keeps fp32 masters there).
bool te_owns_master_weights(const NormalizedConfig& normalized) {
  const OptimizerConfig& opt = normalized.config.optimizer;
  const Fp8Recipe model_recipe = normalized.config.training.fp8_recipe;
  const Fp8Recipe recipe = model_recipe != Fp8Recipe::none ? model_recipe : opt.fp8_recipe;
  return recipe == Fp8Recipe::none || recipe == Fp8Recipe::delayed ||
         opt.main_params_dtype != DType::fp32 || opt.optimizer_cpu_offload;
}

// The precision-aware optimizer's states (TE FusedAdam in the chosen dtypes), its grad buffer
// and the step's grad copy, into bytes (weights already set).
void precision_aware_bytes(const NormalizedConfig& normalized, ParamBytes& bytes) {
  const OptimizerConfig& opt = normalized.config.optimizer;
  const DType params_dtype = normalized.config.training.params_dtype;
  // megatron/core/optimizer/optimizer_config.py: TE FusedAdam keeps states in the chosen
  // dtypes. A bf16 parameter's fp32 master is a 2-byte remainder when TE owns the master
  // weights (no fp8 beyond delayed scaling) and no CPU offload (HybridDeviceOptimizer keeps
  // full fp32 masters).
  bytes.gradient = precision_aware_grad_bytes(params_dtype, opt);
  const bool te_owns_master = te_owns_master_weights(normalized);
  // Otherwise the step reads .grad = the 16-bit buffer shard .float() (distrib_optimizer.py
  // _copy_model_grads_to_main_grads), freed by the next zero_grad as without this optimizer.
  if (!te_owns_master && bytes.gradient < 4.0) bytes.optimizer_step = 4.0;
  const bool remainder = opt.store_param_remainders && params_dtype == DType::bf16 &&
                         opt.main_params_dtype == DType::fp32 && te_owns_master &&
                         !opt.optimizer_cpu_offload;
  double master = remainder ? 2.0 : dtype_bytes(opt.main_params_dtype);
  if (opt.optimizer_cpu_offload) master = 4.0;
  const double moments = dtype_bytes(opt.exp_avg_dtype) + dtype_bytes(opt.exp_avg_sq_dtype);
  const double state = master + moments;
  if (opt.optimizer_cpu_offload) {
    // hybrid_optimizer.py: the offloaded share keeps master, m, v and an fp32 grad copy
    // on the host; weights and grads stay on the GPU. Its fp32 masters are cloned when it
    // is built; the GPU optimizer's moments at its first step.
    const double fraction = opt.optimizer_offload_fraction;
    bytes.optimizer_state = (1.0 - fraction) * state;
    bytes.host_optimizer_state = fraction * (state + 4.0);
    bytes.lazy_optimizer_state = (1.0 - fraction) * moments;
  } else {
    bytes.optimizer_state = state;
    // TE FusedAdam creates its states, and its masters where it owns them, at its first
    // step (transformer_engine/pytorch/optimizers/fused_adam.py initialize_state); fp32
    // masters Megatron-Core keeps are made with the optimizer (distrib_optimizer.py).
    bytes.lazy_optimizer_state = te_owns_master ? state : moments;
  }
}

// Optimizer CPU offload without the precision-aware optimizer (Megatron-Core runs it; only
// Megatron-LM's arguments.py asks for --use-precision-aware-optimizer). The distributed
// optimizer (or Float16OptimizerWithFloat16Params) still makes its fp32 main params on the GPU
// and hands them to HybridDeviceOptimizer, which moves the offloaded share's moments to the
// host beside pinned copies of those fp32 params and their grads; the GPU copies stay, since the
// wrapping optimizer keeps them (megatron/core/optimizer/distrib_optimizer.py
// _build_model_and_main_param_groups; cpu_offloading/hybrid_optimizer.py
// _get_sub_optimizer_param_groups, _set_sub_optimizer_grads).
void offload_fp32_master_state(const OptimizerConfig& opt, double master, double moments,
                               ParamBytes& bytes) {
  const double fraction = opt.optimizer_offload_fraction;
  bytes.optimizer_state = master + (1.0 - fraction) * moments;
  bytes.host_optimizer_state = fraction * (4.0 + moments + 4.0);
  bytes.lazy_optimizer_state = (1.0 - fraction) * moments;
}

// An fp32 parameter of a 16-bit model: a 4-byte weight and an fp32 grad (group_params_for_buffers:
// float with grad_reduce_in_fp32, else the param's own dtype). The optimizer steps the parameter
// itself, with no main copy and no fp32 grad copy at the step (distrib_optimizer.py
// _build_model_and_main_param_groups, its 'torch.cuda.FloatTensor' branch; optimizer.py
// Float16OptimizerWithFloat16Params, fp32_from_fp32_groups). Where TE FusedAdam owns the master
// weights it still makes a master_param state for it, whole (no remainder: the parameter is not
// bf16), at its first step (fused_adam.py step, initialize_state).
ParamBytes fp32_param_bytes(const NormalizedConfig& normalized, const ParamTensor& tensor) {
  const OptimizerConfig& opt = normalized.config.optimizer;
  ParamBytes bytes;
  bytes.weight = 4.0;
  bytes.gradient = 4.0;
  double master = 0.0;
  double moments = optimizer_for(opt, tensor) == OptimizerKind::adam ? 8.0 : 4.0;
  if (opt.use_precision_aware_optimizer) {
    moments = dtype_bytes(opt.exp_avg_dtype) + dtype_bytes(opt.exp_avg_sq_dtype);
    if (te_owns_master_weights(normalized)) master = dtype_bytes(opt.main_params_dtype);
  }
  bytes.optimizer_state = master + moments;
  bytes.lazy_optimizer_state = master + moments;
  if (opt.optimizer_cpu_offload) offload_fp32_master_state(opt, master, moments, bytes);
  return bytes;
}

}  // namespace

ParamBytes param_bytes(const NormalizedConfig& normalized, const ParamTensor& tensor) {
  if (fp32_in_half_model(normalized, tensor)) return fp32_param_bytes(normalized, tensor);
  const OptimizerConfig& opt = normalized.config.optimizer;
  const DType params_dtype = normalized.config.training.params_dtype;
  const bool half_params = params_dtype != DType::fp32;
  const Fp8Recipe fp8_recipe = normalized.config.training.fp8_recipe;
  const bool fp8_param = uses_fp8_param_buffer(normalized, tensor);
  ParamBytes bytes;
  bytes.weight =
      fp8_param ? fp8_param_buffer_bytes_per_param(fp8_recipe) : dtype_bytes(params_dtype);
  // The distributed optimizer hands every FP8 primary weight's master shard to TE at once
  // (distrib_optimizer.py _copy_main_params_to_model_params -> fp8_utils.py
  // quantize_param_shard -> cast_master_weights_to_fp8), whatever the optimizer's precision.
  if (fp8_param && opt.use_distributed_optimizer) bytes.fp8_master_cast = dtype_bytes(params_dtype);
  if (tensor.fp8) {
    bytes.fp8_weight_copies = fp8_weight_copy_bytes_per_param(
        fp8_recipe, fp8_param, normalized.config.device.fp8_gemm_any_layout);
  }

  if (opt.use_precision_aware_optimizer) {
    precision_aware_bytes(normalized, bytes);
    return bytes;
  }

  // megatron/training/arguments.py: bf16 training accumulates grads in fp32 unless
  // --grad-reduce-in-bf16; fp16 keeps an fp16 grad buffer; fp32 params use fp32 grads.
  const bool half_grads =
      params_dtype == DType::fp16 || (params_dtype == DType::bf16 && opt.grad_reduce_in_bf16);
  bytes.gradient = half_grads ? 2.0 : 4.0;
  // A 16-bit grad buffer makes the optimizer step copy it to fp32 (optimizer.py and
  // distrib_optimizer.py _copy_model_grads_to_main_grads: main_grad.float()). The copy is
  // the main param's .grad, which optimizer.zero_grad() frees at the start of the next
  // train_step (megatron/training/training.py train_step; Bridge training/train.py), so it
  // never coexists with the activations.
  bytes.optimizer_step = half_grads ? 4.0 : 0.0;
  const double master = half_params ? 4.0 : 0.0;
  const OptimizerKind kind = optimizer_for(opt, tensor);
  const double moments = kind == OptimizerKind::adam ? 8.0 : 4.0;  // SGD/Muon: one momentum
  bytes.optimizer_state = master + moments;
  // PyTorch's, Apex's and TE's Adam (and SGD's momentum) create their state at the first
  // step(); the fp32 masters are made with Megatron's optimizer wrapper.
  bytes.lazy_optimizer_state = moments;
  if (opt.optimizer_cpu_offload) offload_fp32_master_state(opt, master, moments, bytes);
  return bytes;
}

namespace {

// Per DDP buffer (expert or dense, fp8 or not): elements, optimizer bytes (Muon/SGD mix
// optimizers inside one buffer, so each tensor is priced), and the bytes of the buffer's
// first tensor for its padding.
struct BufferSums {
  std::int64_t elements = 0;
  double optimizer = 0;
  double optimizer_step = 0;
  double fp8_master_cast = 0;
  double host = 0;
  double lazy = 0;
  bool used = false;
  ParamBytes first;
};
struct BufferGrid {
  BufferSums sums[2][3];  // [expert][BufferKey::storage]
};

// Sums the chunk's tensors into their buffers and counts its dense and expert parameters.
BufferGrid sum_buffers(const NormalizedConfig& normalized, const std::vector<TensorBlock>& blocks,
                       ChunkStaticBytes& out) {
  BufferGrid grid;
  // Bytes depend only on the buffer, whether the tensor is a GEMM weight (of an FP8 layer),
  // and whether it is the embedding/output layer, the router or an fp32 parameter
  // (param_bytes' only inputs). Empty optionals: a few flags to clear per chunk, not 24 zeroed
  // ParamBytes.
  std::optional<ParamBytes> by_kind[2][3][4];
  visit_chunk_tensors(blocks, out, [&](const ParamTensor& tensor, std::int64_t elements) {
    const BufferKey key = buffer_of(normalized, tensor);
    const int gemm = tensor.gemm_weight ? (tensor.fp8 ? 2 : 1) : 0;
    const int edge = tensor.fp32                           ? 3
                     : tensor.embedding_or_output          ? 1
                     : tensor.module == ModuleKind::router ? 2
                                                           : 0;
    std::optional<ParamBytes>& slot = by_kind[key.expert][gemm][edge];
    if (!slot) slot = param_bytes(normalized, tensor);
    const ParamBytes& bytes = *slot;
    BufferSums& sum = grid.sums[key.expert][key.storage];
    if (!sum.used) sum.first = bytes;
    sum.used = true;
    sum.elements += elements;
    sum.optimizer += bytes.optimizer_state * static_cast<double>(elements);
    sum.optimizer_step += bytes.optimizer_step * static_cast<double>(elements);
    sum.fp8_master_cast += bytes.fp8_master_cast * static_cast<double>(elements);
    sum.host += bytes.host_optimizer_state * static_cast<double>(elements);
    sum.lazy += bytes.lazy_optimizer_state * static_cast<double>(elements);
  });
  return grid;
}

}  // namespace

ChunkStaticBytes chunk_static_bytes(const NormalizedConfig& normalized,
                                    const std::vector<TensorBlock>& blocks, bool bucketing) {
  if (uses_fsdp(normalized)) return fsdp_chunk_static_bytes(normalized, blocks);
  const OptimizerConfig& opt = normalized.config.optimizer;
  ChunkStaticBytes out;
  const std::int64_t bucket_size = ddp_bucket_elements(normalized, bucketing);
  const BufferGrid grid = sum_buffers(normalized, blocks, out);
  const double fp8_copies = fp8_weight_copies(normalized, blocks);
  double weight = fp8_copies, gradient = 0, optimizer = 0, host = 0, step = 0, lazy = 0,
         lazy_expert = 0, cast[2] = {0, 0};
  for (int expert = 0; expert < 2; ++expert) {
    for (int storage = 0; storage < 3; ++storage) {
      const BufferSums& sum = grid.sums[expert][storage];
      if (!sum.used) continue;
      const std::int64_t shard_group = optimizer_shard_group(normalized, expert == 1);
      const std::int64_t elements =
          opt.use_distributed_optimizer
              ? padded_buffer_elements(normalized, blocks, {expert, storage}, shard_group,
                                       bucket_size)
              : sum.elements;
      out.padding_elements += elements - sum.elements;
      const auto padding = static_cast<double>(elements - sum.elements);
      weight += sum.first.weight * static_cast<double>(elements);
      gradient += sum.first.gradient * static_cast<double>(elements);
      optimizer +=
          (sum.optimizer + sum.first.optimizer_state * padding) / static_cast<double>(shard_group);
      host +=
          (sum.host + sum.first.host_optimizer_state * padding) / static_cast<double>(shard_group);
      step += (sum.optimizer_step + sum.first.optimizer_step * padding) /
              static_cast<double>(shard_group);
      const double group_lazy =
          (sum.lazy + sum.first.lazy_optimizer_state * padding) / static_cast<double>(shard_group);
      lazy += group_lazy;
      if (expert == 1) lazy_expert += group_lazy;
      cast[expert] += sum.fp8_master_cast / static_cast<double>(shard_group);  // no padding
    }
  }
  out.weight_bytes = static_cast<std::uint64_t>(round_to_int64(weight));
  out.gradient_bytes = static_cast<std::uint64_t>(round_to_int64(gradient));
  out.optimizer_bytes = static_cast<std::uint64_t>(round_to_int64(optimizer));
  out.host_optimizer_bytes = static_cast<std::uint64_t>(round_to_int64(host));
  out.optimizer_step_bytes = static_cast<std::uint64_t>(round_to_int64(step));
  out.lazy_optimizer_bytes = static_cast<std::uint64_t>(round_to_int64(lazy));
  out.lazy_expert_optimizer_bytes = static_cast<std::uint64_t>(round_to_int64(lazy_expert));
  out.fp8_master_cast_bytes = static_cast<std::uint64_t>(round_to_int64(cast[0] + cast[1]));
  out.fp8_master_cast_expert_bytes = static_cast<std::uint64_t>(round_to_int64(cast[1]));
  out.fp8_weight_copy_bytes = static_cast<std::uint64_t>(round_to_int64(fp8_copies));
  return out;
}

std::int64_t ddp_bucket_elements(const NormalizedConfig& normalized, bool bucketing) {
  const OptimizerConfig& opt = normalized.config.optimizer;
  if (!bucketing || !opt.overlap_grad_reduce || opt.overlap_param_gather_with_optimizer_step) {
    return 0;
  }
  return opt.ddp_bucket_size_elements > 0
             ? opt.ddp_bucket_size_elements
             : std::max<std::int64_t>(40000000, 1000000 * normalized.data_parallel);
}

namespace {

bool same_blocks(const std::vector<TensorBlock>& a, const std::vector<TensorBlock>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const TensorBlock& x, const TensorBlock& y) {
           return x.tensors == y.tensors && x.count == y.count && x.repeat == y.repeat &&
                  x.layer_template && y.layer_template;
         });
}

}  // namespace

namespace {

// A stage's bytes priced afresh into `out` (its key vector reused).
void price_stage(const NormalizedConfig& normalized, const std::vector<TensorBlock>& blocks,
                 bool bucketing, bool has_loss, std::vector<TemplateShapeKeys>& template_keys,
                 StageStaticBytes& out) {
  out.chunk = chunk_static_bytes(normalized, blocks, bucketing);
  out.expert_bias_bytes = expert_bias_buffer_bytes(normalized, blocks);
  TeDummyWgradShapes shapes;
  shapes.keys = std::move(out.te_keys);
  shapes.keys.clear();
  // At most a key per tensor and the output layer's: one allocation, not a doubling series.
  std::size_t tensors = 1;
  for (const TensorBlock& block : blocks) tensors += block.count;
  shapes.keys.reserve(tensors);
  shapes.blocks_seen.reserve(blocks.size());
  collect_te_dummy_wgrad_shapes(normalized, blocks, has_loss, shapes, template_keys);
  out.te_keys = std::move(shapes.keys);
}

}  // namespace

const StageStaticBytes& cached_stage_static_bytes(const NormalizedConfig& normalized,
                                                  const std::vector<TensorBlock>& blocks,
                                                  bool bucketing, bool has_loss,
                                                  StageStaticCache& cache) {
  const bool templates_only = std::all_of(blocks.begin(), blocks.end(),
                                          [](const TensorBlock& b) { return b.layer_template; });
  if (!templates_only) {
    price_stage(normalized, blocks, bucketing, has_loss, cache.template_keys, cache.fresh);
    return cache.fresh;
  }
  for (const StageStaticCache::Entry& entry : cache.entries) {
    if (entry.bucketing == bucketing && entry.has_loss == has_loss &&
        same_blocks(entry.blocks, blocks)) {
      return entry.bytes;
    }
  }
  StageStaticCache::Entry& entry = cache.entries.emplace_back();
  entry.blocks = blocks;
  entry.bucketing = bucketing;
  entry.has_loss = has_loss;
  price_stage(normalized, blocks, bucketing, has_loss, cache.template_keys, entry.bytes);
  return entry.bytes;
}

}  // namespace megamem
