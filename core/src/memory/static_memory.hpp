// Static memory of one model chunk: 16-bit weights, the DDP main-gradient buffer with its
// padding, and optimizer states sharded by the distributed optimizer.
//
// Sources: megatron/core/distributed/distributed_data_parallel.py (buckets),
// megatron/core/optimizer/param_layout.py and distrib_optimizer.py (64-element parameter
// alignment, bucket ends padded to lcm(DP, 128)), megatron/core/optimizer/optimizer.py and
// docs/user-guide/features/dist_optimizer.md (bytes per parameter),
// megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py (CPU offload).
#pragma once

#include <cstdint>
#include <vector>

#include "megamem/units.hpp"
#include "memory/parameter_count.hpp"
#include "memory/persistent_buffers.hpp"

namespace megamem {

// Bytes of one element of a dtype.

// Bytes one parameter of a kind costs: weight and gradient on every GPU that holds it,
// optimizer state divided among the shard group (GPU and host parts).
struct ParamBytes {
  double weight = 0;
  double gradient = 0;
  double optimizer_state = 0;  // before sharding; on the GPU
  // Before sharding: the fp32 grad copy the optimizer step makes of a 16-bit grad buffer,
  // alive from the step to the next zero_grad (never beside the activations).
  double optimizer_step = 0;
  // Before sharding: the 16-bit copy of an FP8 primary weight's fp32 master shard that
  // Transformer Engine's cast_master_weights_to_fp8 makes at the step (>= 2.2,
  // transformer_engine/pytorch/tensor/utils.py: master_weight.to(model_weight.dtype) for every
  // parameter first, the casts after), freed when the casts end.
  double fp8_master_cast = 0;
  double host_optimizer_state = 0;  // before sharding; offloaded to the CPU
  double fp8_weight_copies = 0;     // TE's FP8 copies of the weight, beside the buffer
  // Before sharding: the part of optimizer_state the optimizer creates at its first step
  // (Adam's moments, TE FusedAdam's own masters), absent through the first iteration.
  double lazy_optimizer_state = 0;
};

ParamBytes param_bytes(const NormalizedConfig& normalized, const ParamTensor& tensor);

// Optimizer shard group size: DP x CP / instances for dense parameters, expert-DP /
// instances for routed experts; 1 without the distributed optimizer.
std::int64_t optimizer_shard_group(const NormalizedConfig& normalized, bool expert);

struct ChunkStaticBytes {
  std::int64_t dense_params = 0;
  std::int64_t expert_params = 0;
  std::uint64_t weight_bytes = 0;
  std::uint64_t gradient_bytes = 0;
  std::uint64_t optimizer_bytes = 0;
  std::uint64_t host_optimizer_bytes = 0;
  std::uint64_t optimizer_step_bytes = 0;          // ParamBytes::optimizer_step, sharded
  std::uint64_t fp8_master_cast_bytes = 0;         // ParamBytes::fp8_master_cast, sharded
  std::uint64_t fp8_master_cast_expert_bytes = 0;  // of which the routed experts'
  std::uint64_t lazy_optimizer_bytes = 0;          // ParamBytes::lazy_optimizer_state, sharded
  std::uint64_t lazy_expert_optimizer_bytes = 0;   // of which the routed experts'
  std::uint64_t fp8_weight_copy_bytes = 0;         // of weight_bytes: TE's cached FP8 weights
  std::int64_t padding_elements = 0;               // DDP alignment and bucket padding
};

// Calls visit(tensor, elements) for every tensor of the blocks, counting the chunk's dense
// and expert parameters into out (DDP and FSDP price the same walk differently).
template <class Visit>
void visit_chunk_tensors(const std::vector<TensorBlock>& blocks, ChunkStaticBytes& out,
                         Visit visit) {
  for (const TensorBlock& block : blocks) {
    for (std::size_t t = 0; t < block.count; ++t) {
      const ParamTensor& tensor = block.tensors[t];
      const std::int64_t elements = tensor.elements() * block.repeat;
      (tensor.expert ? out.expert_params : out.dense_params) += elements;
      visit(tensor, elements);
    }
  }
}

// The chunk's buffers priced exactly, padding included. bucketing: whether DDP splits this
// chunk's buffers into buckets (overlap_grad_reduce, first pipeline rank, first chunk).
ChunkStaticBytes chunk_static_bytes(const NormalizedConfig& normalized,
                                    const std::vector<TensorBlock>& blocks, bool bucketing);

// What one stage adds to its rank's static memory: its chunk's buffers, the MoE expert-bias
// buffers and the shape keys of its weights' TE dummy wgrads (persistent_buffers.hpp).
struct StageStaticBytes {
  ChunkStaticBytes chunk;
  double expert_bias_bytes = 0;
  std::vector<std::int64_t> te_keys;  // repeats allowed: RankTeKeys counts each once
};

// Stage static bytes remembered per block list: stages built only of layer templates (a
// rank's virtual chunks, the middle pipeline ranks) repeat one list, whose bytes are then
// computed once per estimate. Lists with other tensors (embedding, output layer, MTP) are
// computed each time (their tensor buffers are reused between stages).
struct StageStaticCache {
  struct Entry {
    std::vector<TensorBlock> blocks;
    bool bucketing = false;
    bool has_loss = false;
    StageStaticBytes bytes;
  };
  std::vector<Entry> entries;
  StageStaticBytes fresh;                        // the last stage with other tensors
  std::vector<TemplateShapeKeys> template_keys;  // TE dummy-wgrad keys per layer template
};
// bucketing: as chunk_static_bytes; has_loss: the stage computes the loss. The reference
// holds until the next call.
const StageStaticBytes& cached_stage_static_bytes(const NormalizedConfig& normalized,
                                                  const std::vector<TensorBlock>& blocks,
                                                  bool bucketing, bool has_loss,
                                                  StageStaticCache& cache);

// Elements per gradient bucket (megatron/training/training.py resolve_ddp_bucket_size):
// --ddp-bucket-size, or max(4e7, 1e6 x DP); 0 (one bucket) without --overlap-grad-reduce, on
// a chunk that does not bucket, or with --overlap-param-gather-with-optimizer-step, which
// disables bucketing on every chunk (megatron/training/models/dist_utils.py _ddp_wrap:
// disable_bucketing, read by DDP and Megatron-FSDP alike).
std::int64_t ddp_bucket_elements(const NormalizedConfig& normalized, bool bucketing);

}  // namespace megamem
