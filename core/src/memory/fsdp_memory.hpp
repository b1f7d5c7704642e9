// Fully sharded data parallelism: what each GPU holds with Megatron-FSDP
// (--use-megatron-fsdp, --data-parallel-sharding-strategy no_shard / optim / optim_grads /
// optim_grads_params = ZeRO-0..3) or PyTorch FSDP2 (--use-torch-fsdp2) instead of DDP buffers
// and the distributed optimizer, and the unsharded parameters and gradients alive during
// forward and backward.
//
// Sources: megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py
// (ParamAndGradBuffer._init_each_parameter_group_buffers: which buffer is sharded per
// strategy; AllGatherPipeline.all_gather_params: prefetch; GradReducePipeline:
// reduce-scatter queue), megatron_fsdp.py (suggested_communication_unit_size),
// megatron/core/distributed/fsdp/mcore_fsdp_adapter.py (FSDP units = transformer layers),
// megatron/core/distributed/torch_fully_sharded_data_parallel.py and
// megatron/core/optimizer/optimizer.py (FSDP2 with Float16OptimizerWithFloat16Params).
#pragma once

#include <string>
#include <vector>

#include "memory/activations.hpp"
#include "memory/parameter_count.hpp"
#include "memory/static_memory.hpp"
#include "schedule/timeline.hpp"

namespace megamem {

bool uses_fsdp(const NormalizedConfig& normalized);

// What the estimate assumes of Megatron-FSDP's main-gradient dtype when it takes fp32 for
// 16-bit parameters (the "assumes:" of an estimate), or empty.
std::string fsdp_main_grads_assumption(const NormalizedConfig& normalized);

// Bytes per element of one tensor on this GPU, already divided by its shard group: the
// compute weight, the main gradient, and the optimizer (main weight + moments).
struct ShardedTensorBytes {
  double weight = 0;
  double gradient = 0;
  double optimizer = 0;
  double lazy_optimizer = 0;   // of optimizer: the moments the first step creates
  double fp8_master_cast = 0;  // within the step only (ParamBytes::fp8_master_cast)
};

ShardedTensorBytes fsdp_tensor_bytes(const NormalizedConfig& normalized, const ParamTensor& tensor);

// A chunk's weights, gradients and optimizer states under FSDP (no DDP padding modeled:
// Megatron-FSDP pads each parameter group to a multiple of the DP size, under DP elements).
ChunkStaticBytes fsdp_chunk_static_bytes(const NormalizedConfig& normalized,
                                         const std::vector<TensorBlock>& blocks);

// Unsharded parameters and gradients of one chunk, on top of its activations: through its
// forward, at the start of its forward (prefetch) and through its backward.
struct FsdpWorkingSet {
  double forward_bytes = 0;
  double forward_start_bytes = 0;
  double backward_bytes = 0;
  // The part alive already in the cross entropy's backward, before the output layer's wgrad.
  double loss_backward_bytes = 0;
  // Megatron-FSDP at each decoder layer's backward (chunk order): its unit and the prefetched
  // ones gathered, its gradient bucket and the reduce-scatter queue; and at the embedding's
  // backward, the last: the queue and the input embedding's own bucket.
  std::vector<double> layer_backward_bytes = {};
  double embedding_backward_bytes = 0;
  // Before the first step, without --init-model-with-meta-device: the chunk's parameters
  // unsharded, and its largest parameter group's temporary bucket while it is sharded.
  double initial_params_bytes = 0;
  double initial_bucket_bytes = 0;
  // --fsdp-double-buffer's buffers, allocated at the first step and kept for the run; named
  // by allocator, buffer group and bucket in one process-wide GlobalMemoryBuffer
  // (megatron_fsdp/utils.py), so a rank's chunks share them: its largest chunk's count.
  double persistent_pool_bytes = 0;
};

// bucketing: the chunk splits its root group into gradient buckets (the first chunk of its
// rank, megatron/training/training.py per_chunk_disable_bucketing).
FsdpWorkingSet fsdp_working_set(const NormalizedConfig& normalized,
                                const std::vector<TensorBlock>& blocks, bool bucketing);

// Adds the working set of stage `stage` to its chunk's forward and backward peaks, with the
// root groups of the rank's other chunks (unsharded from their forward to their backward,
// so through this chunk's ops too). working: one entry per stage, in `stages` order.
void add_fsdp_working_set(const std::vector<FsdpWorkingSet>& working,
                          const std::vector<StagePlacement>& stages, std::size_t stage,
                          ChunkActivations& chunk);

// Adds each rank's --fsdp-double-buffer buffers to its persistent buffers: the largest of its
// chunks' (working: one entry per stage, in `stages` order; ranks indexed by PP rank).
void add_fsdp_persistent_pools(const std::vector<FsdpWorkingSet>& working,
                               const std::vector<StagePlacement>& stages,
                               std::vector<RankMemory>& ranks);

// Raises the rank's peak to its initialization peak: all its chunks' parameters unsharded
// plus one parameter group's bucket (working: one entry per stage, in `stages` order).
void add_fsdp_initialization(const std::vector<FsdpWorkingSet>& working,
                             const std::vector<StagePlacement>& stages, int pp_rank,
                             RankPeak& peak);

}  // namespace megamem
