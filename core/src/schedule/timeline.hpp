// One pipeline rank's training step as a memory timeline: walk the schedule's forward and
// backward passes, adding and freeing each chunk's saved activations, and record the
// allocated bytes after each operation and the peak inside it (memory-model.md 6.4, 7.1).
#pragma once

#include <algorithm>
#include <functional>
#include <span>
#include <vector>

#include "megamem/estimate_types.hpp"
#include "memory/activations.hpp"
#include "schedule/pipeline_schedule.hpp"

namespace megamem {

struct RankPeak {
  double peak_allocated_bytes = 0;
  double activation_bytes = 0;  // saved activations at the peak operation
  double transient_bytes = 0;   // the rest of the peak above static memory
  double host_activation_bytes = 0;
  int max_inflight = 0;
};

// The schedule simulate_rank() walks for one rank: Megatron's for the configuration, or,
// shortened, with equivalent_microbatches() (the same peak in fewer steps).
ScheduleShape rank_schedule_shape(const NormalizedConfig& normalized, int pp_rank, bool shortened);

// The peak above the live activations of a combined step (ScheduleOp::with_next_backward):
// `forward`'s micro-batch runs layer by layer beside `backward`'s. Inline, so that the walk
// of simulate_rank() keeps its sums in registers.
inline double combined_step_extra_bytes(const ChunkActivations& forward,
                                        const ChunkActivations& backward) {
  // Each chunk's walk pairs it with an equal chunk; two different chunks (interleaved
  // schedules pair chunk c's forward with another chunk's backward) take the larger of the
  // two plus what the forward keeps beyond what the backward frees.
  return std::max(forward.combined_step_extra_bytes, backward.combined_step_extra_bytes) +
         std::max(0.0, forward.saved_bytes - backward.saved_bytes);
}

// Whether a chunk has fine-grained offloading groups whose margin it can keep.
inline bool has_offload_margin(const ChunkActivations& chunk) {
  return chunk.offload_margin_bytes > 0;
}

// A step's peak above the live activations before it, for simulate_rank() and the planner's
// profiles alike: `chunk`'s forward or backward, or with `backward` a combined step; `kept`
// and `backward_kept`: the micro-batches keep their offloading margin (mark_offload_margins).
// A combined step's backward margin is the reload its walk already counts in the pair's extra.
inline double step_extra_bytes(const ChunkActivations& chunk, bool forward, bool kept,
                               const ChunkActivations* backward = nullptr,
                               bool backward_kept = false) {
  if (backward != nullptr) {
    return combined_step_extra_bytes(chunk, *backward) -
           (backward_kept ? backward->offload_margin_bytes : 0.0);
  }
  if (forward) return kept ? chunk.margin_forward_peak_extra_bytes : chunk.forward_peak_extra_bytes;
  return kept ? chunk.margin_backward_peak_extra_bytes : chunk.backward_peak_extra_bytes;
}

// The forward and backward passes of one step. chunks: the rank's ChunkActivations indexed
// by VPP chunk. timeline: filled when non-null. schedule: the buffer the rank's schedule is
// written to, reused between calls. offload_margins: false for the first iteration, in which
// fine-grained offloading moves every group (its warm-up; ChunkActivations::offload_margin_bytes).
RankPeak simulate_rank(const NormalizedConfig& normalized, int pp_rank,
                       std::span<const ChunkActivations> chunks, double static_bytes,
                       std::vector<TimelineEvent>* timeline, std::vector<ScheduleOp>& schedule,
                       bool offload_margins = true);

// Fine-grained offloading's margin (pipeline_parallel/fine_grained_activation_offload.py):
// from the second iteration on, a micro-batch's chunk keeps its last layer's offload groups on
// the GPU when it is the first chunk to run backward (post_warmup_callback's offload margin)
// or, as its forward commits them, the next one (ChunkOffloadHandler.should_bulk_offload:
// "about to be used immediately"). Chunks without groups (grouped false) are skipped in both
// searches. Sets ScheduleOp::keeps_offload_margin on those micro-batches' forward and backward.
void mark_offload_margins(std::vector<ScheduleOp>& schedule,
                          const std::function<bool(int)>& grouped);

// The optimizer step after the passes: static memory plus step_peak_bytes
// (optimizer_step_peak_bytes) when that is higher; appended to a non-null timeline, which is
// left holding static memory plus optimizer_step_bytes (RankMemory::optimizer_step_bytes).
void add_optimizer_step(double static_bytes, double optimizer_step_bytes, double step_peak_bytes,
                        RankPeak& peak, std::vector<TimelineEvent>* timeline);

}  // namespace megamem
