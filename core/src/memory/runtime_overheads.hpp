// Device memory beyond torch.cuda.memory_allocated() (memory-model.md 7.2 and 7.3).
//
// Inside the allocator: PyTorch's CUDA caching allocator reserves whole segments and keeps
// freed blocks cached, so torch.cuda.max_memory_reserved() exceeds the allocator peak
// (c10/cuda/CUDACachingAllocator.cpp). Outside it, nvidia-smi also counts the CUDA context,
// the NCCL buffers of every communicator a rank uses and library buffers such as DeepEP's.
// The CUDA context and NCCL sizes are RuntimeOverheadConfig settings; NCCL's NVLS buffers, TE's
// userbuffers and the flex dispatcher's buffers are sized by their libraries' rules. The CI
// measurements contain none of them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "megamem/estimate_types.hpp"

namespace megamem {

// A NCCL communicator a rank uses: its name ("nccl_tp", "nccl_dp", ...), the span of
// consecutive global ranks its groups cover (within one node when it fits gpus_per_node), its
// members, spread evenly over the span, and whether its collectives include large reductions
// or gathers (all-reduce, reduce-scatter, all-gather of gradients, parameters or activations)
// and whether those are all-reduces, which decides where NCCL's NVLS algorithm runs.
struct Communicator {
  std::string_view name;
  std::int64_t span_ranks = 1;
  std::int64_t members = 1;
  bool reduces = false;
  bool all_reduces = false;
};

// The communicators with more than one member that a rank uses, in
// megatron/core/parallel_state.py's order, then the step-wide ones.
std::vector<Communicator> active_communicators(const NormalizedConfig& normalized);

// Transformer Engine's userbuffers for --tp-comm-overlap (TP > 1), per GPU: twelve buffers of
// the [s x b / CP, h] shape in the default overlap configuration, bf16, or uint8 for the
// all-gather ones under FP8. A --tp-comm-overlap-cfg file is not read; the parser bounds what
// its methods could add (megatron_args.cpp note_userbuffer_cfg).
// NVLS multicast binds these same buffers (no extra memory beyond its 2 MiB granularity).
double userbuffer_bytes(const NormalizedConfig& normalized);

// Elements of one userbuffer: the [s x b / CP, h] shape megatron/training/initialize.py
// _initialize_tp_communicators passes for every buffer name.
double userbuffer_elements(const Config& config);

// The most a --tp-comm-overlap-cfg file can add to the default userbuffers. Of its settings
// only method and fp8_buf size a buffer (transformer_engine/pytorch/module/base.py
// initialize_ub; common/comm_gemm_overlap/comm_gemm_overlap.cpp): a ring_exchange
// reduce-scatter buffer holds (2 TP - 1) / TP of one, and six can be reduce-scatter (proj/fc2
// fprop, qkv/fc1 wgrad, qkv/fc1 dgrad when not bulk), bf16.
double userbuffer_cfg_bound_bytes(const Config& config);

// torch.cuda.max_memory_reserved() for an allocator peak (memory_allocated at its highest).
std::uint64_t peak_reserved_bytes(const NormalizedConfig& normalized,
                                  std::uint64_t peak_allocated_bytes);

// The itemized memory outside the allocator, per GPU (the same on every pipeline rank).
std::vector<DeviceOverhead> device_overheads(const NormalizedConfig& normalized);

// The bytes of device_overheads(), summed.
std::uint64_t device_overhead_bytes(const std::vector<DeviceOverhead>& overheads);

// What nvidia-smi shows for an allocator peak: its reserved bytes (peak_reserved_bytes(),
// which both callers have at hand) plus every device overhead (overhead_bytes:
// device_overhead_bytes(), the same on every rank, so callers sum it once). estimate() and
// the planner's fast path both use it, so they agree to the byte.
std::uint64_t device_total_bytes(std::uint64_t peak_reserved_bytes, std::uint64_t overhead_bytes);

// Fills a rank's peak_reserved_bytes, device_overheads, runtime_overhead_bytes and
// peak_total_bytes from its peak_allocated_bytes (overheads: device_overheads(normalized),
// the same on every rank, computed once).
void set_device_memory(const NormalizedConfig& normalized,
                       const std::vector<DeviceOverhead>& overheads, RankMemory& rank);

}  // namespace megamem
