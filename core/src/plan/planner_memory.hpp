// The planner's memory fast path: estimate()'s peak_total_bytes, split so that what one
// layout shares is computed once.
//
// estimate() (estimate.cpp) prices each rank as
//   static  = weights + gradients + optimizer + expert-bias buffers + fixed buffers
//   peak    = simulate_rank(static) = static + the schedule's worst (saved + transient), or
//             the optimizer step's static + fp32 grad copy when that is more
//   total   = device_total_bytes(reserved): reserved + overheads outside the allocator
// Static memory depends on the layout and the optimizer settings only; the fixed buffers on
// the micro-batch size; the schedule part on micro-batch size, recompute and activation
// offload. The planner memoizes each at its level. Every planned candidate it reports is
// re-estimated with estimate() itself, and tests/unit/test_planner.cpp checks this path
// against estimate() cell by cell.
#pragma once

#include <cstdint>
#include <vector>

#include "megamem/estimate_types.hpp"
#include "memory/activations.hpp"
#include "schedule/layer_placement.hpp"
#include "schedule/pipeline_schedule.hpp"

namespace megamem {

// One rank's parameter memory: weights + gradients + optimizer + expert-bias buffers (no
// fixed buffers), and what the optimizer step holds on top at most: its fp32 grad copy and
// FP8 master casts (optimizer_step_peak_bytes, RankMemory).
struct RankParameterBytes {
  std::uint64_t static_bytes = 0;
  std::uint64_t step_peak_bytes = 0;
};
std::vector<RankParameterBytes> rank_parameter_bytes(const NormalizedConfig& normalized,
                                                     const std::vector<StagePlacement>& stages);

// cuBLAS workspaces, calibrated remainder and Megatron's global memory buffer, as estimate()
// rounds them.
std::uint64_t rank_fixed_bytes(const NormalizedConfig& normalized);

// The device overheads outside the allocator (runtime_overheads.hpp), summed: the same on
// every rank.
std::uint64_t rank_overhead_bytes(const NormalizedConfig& normalized);

// One rank's schedule reduced to what its peak depends on: each distinct (micro-batches in
// flight per chunk, chunk, forward/backward) step of pipeline_schedule(). simulate_rank()
// walks the same steps; its peak above static memory is the largest
//   sum over chunks j of inflight_j x saved_j  +  that step's forward/backward extra.
// The steps of one chunk and direction (or combined pair) are consecutive.
struct ScheduleProfile {
  ScheduleShape shape;  // the schedule it profiles
  int chunks = 1;
  // Live counts per step: per chunk, then (with offloading margins) per chunk again for the
  // micro-batches that keep theirs (mark_offload_margins).
  int dims = 1;
  std::vector<double> inflight;       // steps x dims (counts, as doubles for the peak's sums)
  std::vector<std::int32_t> step;     // per step: chunk + 1, negated for a backward
  std::vector<std::int32_t> partner;  // per step: a combined step's backward chunk + 1, or 0
  std::vector<std::uint8_t> margins;  // per step: 1 its micro-batch keeps its margin, 2 its partner
};

// The profile of a shape (cached by the caller: many layouts share a shape). grouped: per
// chunk, whether it has offloading groups whose margin it keeps (empty: no offloading margins).
ScheduleProfile schedule_profile(const ScheduleShape& shape, const std::vector<char>& grouped = {});

// Per rank: the schedule's worst saved + transient bytes above static memory. chunks: each
// stage's chunk_activations(), indexed pp_rank * VPP + vpp_chunk (stages alike share one).
// profiles: each rank's, with its chunks' offloading margins where they keep any.
void rank_activation_peaks(const std::vector<const ChunkActivations*>& chunks, int virtual_stages,
                           const std::vector<const ScheduleProfile*>& profiles,
                           std::vector<double>& out);

// What a rank's peak holds above its static memory, as estimate() takes it: the schedule's
// worst (activation_peak) or the optimizer step's fp32 grad copy, whichever is larger, and on
// the rank that computes the loss the deferred output-layer wgrad buffers
// (deferred_embedding_wgrad.hpp: held through the schedule, or all of them at the flush).
double rank_above_static(const NormalizedConfig& normalized, double activation_peak,
                         const RankParameterBytes& parameters, bool loss_rank);

// peak_reserved_bytes and peak_total_bytes of one rank from its static bytes and the bytes
// above them (the verdict's band moves the reserved part: verdict.hpp total_range).
// overhead_bytes: rank_overhead_bytes(normalized), the same for every rank and row of a
// column, so the caller computes it once.
struct RankTotals {
  std::uint64_t reserved_bytes = 0;
  std::uint64_t total_bytes = 0;
};
RankTotals rank_peak_totals(const NormalizedConfig& normalized, std::uint64_t static_bytes,
                            double above_static, std::uint64_t overhead_bytes);

}  // namespace megamem
