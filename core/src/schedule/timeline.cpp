// Rank timeline simulation; see timeline.hpp.
#include "schedule/timeline.hpp"

#include <algorithm>
#include <cmath>

#include "megamem/units.hpp"
#include "schedule/pipeline_schedule.hpp"

namespace megamem {

ScheduleShape rank_schedule_shape(const NormalizedConfig& n, int pp_rank, bool shortened) {
  ScheduleShape shape;
  shape.pipeline_parallel = n.config.parallel.pipeline_parallel;
  shape.virtual_stages = n.config.parallel.virtual_stages_per_pipeline_rank;
  shape.pp_rank = pp_rank;
  shape.num_microbatches = n.num_microbatches;
  shape.microbatch_group_size = n.config.parallel.microbatch_group_size_per_vp_stage;
  shape.overlap_moe_expert_parallel_comm = n.config.training.overlap_moe_expert_parallel_comm;
  if (shortened) shape.num_microbatches = equivalent_microbatches(shape);
  return shape;
}

namespace {

TimelineEvent schedule_event(const ScheduleOp& op, double allocated_after_bytes,
                             double peak_during_bytes) {
  TimelineEvent event;
  event.kind = op.forward ? TimelineEvent::Kind::forward : TimelineEvent::Kind::backward;
  event.microbatch = op.microbatch;
  event.vpp_chunk = op.chunk;
  event.allocated_after_bytes = whole_bytes(allocated_after_bytes);
  event.peak_during_bytes = whole_bytes(peak_during_bytes);
  return event;
}

// The walk of simulate_rank(). Without a timeline (kTimeline false) nothing in the loop calls
// out, so its sums and the peak so far stay in registers (the peak is written to the result
// once, at the end): the estimate's and the what-if's hot path.
template <bool kTimeline>
RankPeak walk_schedule(const std::vector<ScheduleOp>& ops, std::span<const ChunkActivations> chunks,
                       double static_bytes, std::vector<TimelineEvent>* timeline) {
  double peak_bytes = static_bytes;
  double peak_saved = 0;  // the live activations at the peak (saved_at_peak below)
  double peak_host = 0;
  double live = 0;
  double host = 0;
  int inflight = 0;
  int max_inflight = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const ScheduleOp& op = ops[i];
    const ChunkActivations& chunk = chunks[static_cast<std::size_t>(op.chunk)];
    double during = 0;
    double saved_at_peak = 0;
    const bool combined = op.with_next_backward && i + 1 < ops.size();
    if (combined) {
      // One combined step: the pair's peak, then both micro-batches' net change.
      const ChunkActivations& old = chunks[static_cast<std::size_t>(ops[i + 1].chunk)];
      during = static_bytes + live + combined_step_extra_bytes(chunk, old);
      saved_at_peak = live + std::max(0.0, chunk.saved_bytes - old.saved_bytes);
      live += chunk.saved_bytes - old.saved_bytes;
      host += chunk.offloaded_bytes - old.offloaded_bytes;
      max_inflight = std::max(max_inflight, inflight + 1);
      ++i;  // the backward is part of this step
    } else if (op.forward) {
      during = static_bytes + live + chunk.forward_peak_extra_bytes;
      live += chunk.saved_bytes;
      host += chunk.offloaded_bytes;
      saved_at_peak = live;
      max_inflight = std::max(max_inflight, ++inflight);
    } else {
      during = static_bytes + live + chunk.backward_peak_extra_bytes;
      saved_at_peak = live;
      live -= chunk.saved_bytes;
      host -= chunk.offloaded_bytes;
      --inflight;
    }
    if (during > peak_bytes) {
      peak_bytes = during;
      peak_saved = saved_at_peak;
      peak_host = host;
    }
    if constexpr (kTimeline) {
      // A combined step is its forward and its backward, each with the step's peak.
      for (std::size_t k = combined ? i - 1 : i; k <= i; ++k) {
        timeline->push_back(schedule_event(ops[k], static_bytes + live, during));
      }
    }
  }
  RankPeak peak;
  peak.peak_allocated_bytes = peak_bytes;
  if (peak_bytes > static_bytes) {  // some operation rose above static memory
    peak.activation_bytes = std::min(peak_saved, peak_bytes - static_bytes);
    peak.transient_bytes = peak_bytes - static_bytes - peak.activation_bytes;
    peak.host_activation_bytes = peak_host;
  }
  peak.max_inflight = max_inflight;
  return peak;
}

}  // namespace

RankPeak simulate_rank(const NormalizedConfig& n, int pp_rank,
                       std::span<const ChunkActivations> chunks, double static_bytes,
                       std::vector<TimelineEvent>* timeline, std::vector<ScheduleOp>& schedule) {
  // Without a timeline to show, a shorter schedule with the same peak is enough.
  const ScheduleShape shape = rank_schedule_shape(n, pp_rank, /*shortened=*/timeline == nullptr);
  pipeline_schedule(shape, schedule);
  if (timeline == nullptr) return walk_schedule<false>(schedule, chunks, static_bytes, nullptr);
  timeline->reserve(schedule.size() + 1);
  return walk_schedule<true>(schedule, chunks, static_bytes, timeline);
}

// The optimizer step runs on static memory plus the fp32 grad copy of a 16-bit grad buffer,
// which stays until the next zero_grad; the distributed optimizer's reduce-scatter and
// all-gather are in place (memory-model.md 7.1).
void add_optimizer_step(double static_bytes, double optimizer_step_bytes, RankPeak& peak,
                        std::vector<TimelineEvent>* timeline) {
  const double step_bytes = static_bytes + optimizer_step_bytes;
  if (step_bytes > peak.peak_allocated_bytes) {
    peak.peak_allocated_bytes = step_bytes;
    peak.activation_bytes = 0;
    peak.transient_bytes = optimizer_step_bytes;
    peak.host_activation_bytes = 0;
  }
  if (timeline != nullptr) {
    TimelineEvent step;
    step.kind = TimelineEvent::Kind::optimizer_step;
    step.allocated_after_bytes = whole_bytes(step_bytes);
    step.peak_during_bytes = whole_bytes(step_bytes);
    timeline->push_back(step);
  }
}

}  // namespace megamem
