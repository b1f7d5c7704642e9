// Rank timeline simulation; see timeline.hpp.
#include "schedule/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

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

}  // namespace

// post_warmup_callback's margin and should_bulk_offload's "about to be used immediately"
// (timeline.hpp): one pass from the end, carrying the first grouped backward at or after the
// next op and the one after it, then the first grouped backward of the step for the margin.
void mark_offload_margins(std::vector<ScheduleOp>& ops, const std::function<bool(int)>& grouped) {
  const std::size_t count = ops.size();
  auto grouped_backward = [&](std::size_t k) { return !ops[k].forward && grouped(ops[k].chunk); };
  auto same = [&](std::size_t k, const ScheduleOp& op) {
    return k < count && ops[k].microbatch == op.microbatch && ops[k].chunk == op.chunk;
  };
  std::size_t after_next = count;  // first grouped backward at or after i + 2
  std::size_t next = count;        // ... at or after i + 1
  for (std::size_t i = count; i-- > 0;) {
    ScheduleOp& op = ops[i];
    op.keeps_offload_margin = false;
    // A combined step's backward has begun (and left the queue) when its forward commits.
    const std::size_t front = op.with_next_backward ? after_next : next;
    if (op.forward && grouped(op.chunk) && same(front, op)) {
      op.keeps_offload_margin = true;
      ops[front].keeps_offload_margin = true;
    }
    after_next = next;
    if (grouped_backward(i)) next = i;
  }
  if (next == count) return;  // no grouped chunk
  for (std::size_t i = 0; i < next; ++i) {
    if (ops[i].forward && same(next, ops[i])) {
      ops[i].keeps_offload_margin = true;
      ops[next].keeps_offload_margin = true;
      break;
    }
  }
}

namespace {

// One step of the walk: its peak above the live bytes before it, what it leaves on the GPU
// and on the host, and its share of the live bytes at that peak.
struct StepChange {
  double extra = 0;
  double live = 0;
  double host = 0;
  double saved_at_peak = 0;  // added to the live bytes before the step
};

// Step `i` of `ops` (with its paired backward when combined). Inlined into the walk, whose
// sums then stay in registers (GCC otherwise calls it: +0.5 us on the estimate benchmark).
[[gnu::always_inline]] inline StepChange step_change(const std::vector<ScheduleOp>& ops,
                                                     std::size_t i,
                                                     std::span<const ChunkActivations> chunks) {
  // A micro-batch that keeps its offloading margin (mark_offload_margins), 0 for the others.
  auto margin = [&](const ScheduleOp& op, const ChunkActivations& c) {
    return op.keeps_offload_margin ? c.offload_margin_bytes : 0.0;
  };
  const ScheduleOp& op = ops[i];
  const ChunkActivations& chunk = chunks[static_cast<std::size_t>(op.chunk)];
  const double kept_bytes = margin(op, chunk);
  StepChange step;
  if (op.with_next_backward && i + 1 < ops.size()) {
    // One combined step: the pair's peak, then both micro-batches' net change.
    const ChunkActivations& old = chunks[static_cast<std::size_t>(ops[i + 1].chunk)];
    const double old_kept = margin(ops[i + 1], old);
    step.live = chunk.saved_bytes + kept_bytes - old.saved_bytes - old_kept;
    step.extra = step_extra_bytes(chunk, true, false, &old, old_kept > 0);
    step.host = chunk.offloaded_bytes - kept_bytes - old.offloaded_bytes + old_kept;
    step.saved_at_peak = std::max(0.0, step.live);
  } else if (op.forward) {
    step.extra = step_extra_bytes(chunk, true, kept_bytes > 0);
    step.live = chunk.saved_bytes + kept_bytes;
    step.host = chunk.offloaded_bytes - kept_bytes;
    step.saved_at_peak = step.live;
  } else {
    step.extra = step_extra_bytes(chunk, false, kept_bytes > 0);
    step.live = -(chunk.saved_bytes + kept_bytes);
    step.host = -(chunk.offloaded_bytes - kept_bytes);
  }
  return step;
}

// The walk of simulate_rank(). Without a timeline (kTimeline false) nothing in the loop calls
// out, so its sums and the peak so far stay in registers (the peak is written to the result
// once, at the end): the estimate's and the what-if's hot path.
template <bool kTimeline>
RankPeak walk_schedule(const std::vector<ScheduleOp>& ops, std::span<const ChunkActivations> chunks,
                       double static_bytes, std::vector<TimelineEvent>* timeline) {
  double peak_bytes = static_bytes;
  double peak_saved = 0;  // the live activations at the peak
  double peak_host = 0;
  double live = 0;
  double host = 0;
  int inflight = 0;
  int max_inflight = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const StepChange step = step_change(ops, i, chunks);
    const bool combined = ops[i].with_next_backward && i + 1 < ops.size();
    const double during = static_bytes + live + step.extra;
    const double saved_at_peak = live + step.saved_at_peak;
    live += step.live;
    host += step.host;
    if (combined || ops[i].forward) max_inflight = std::max(max_inflight, inflight + 1);
    if (combined) ++i;  // the backward is part of this step
    if (!combined) inflight += ops[i].forward ? 1 : -1;
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
                       std::vector<TimelineEvent>* timeline, std::vector<ScheduleOp>& schedule,
                       bool offload_margins) {
  // Without a timeline to show, a shorter schedule with the same peak is enough.
  const ScheduleShape shape = rank_schedule_shape(n, pp_rank, /*shortened=*/timeline == nullptr);
  pipeline_schedule(shape, schedule);
  auto grouped = [&](int chunk) {
    return has_offload_margin(chunks[static_cast<std::size_t>(chunk)]);
  };
  if (offload_margins && std::any_of(chunks.begin(), chunks.end(), has_offload_margin)) {
    mark_offload_margins(schedule, grouped);
  }
  if (timeline == nullptr) return walk_schedule<false>(schedule, chunks, static_bytes, nullptr);
  timeline->reserve(schedule.size() + 1);
  return walk_schedule<true>(schedule, chunks, static_bytes, timeline);
}

// The optimizer step runs on static memory plus the fp32 grad copy of a 16-bit grad buffer,
// which stays until the next zero_grad, and within it the FP8 master casts, which do not
// (step_peak_bytes holds both); the distributed optimizer's reduce-scatter and all-gather are
// in place (memory-model.md 7.1).
void add_optimizer_step(double static_bytes, double optimizer_step_bytes, double step_peak_bytes,
                        RankPeak& peak, std::vector<TimelineEvent>* timeline) {
  const double during_bytes = static_bytes + step_peak_bytes;
  if (during_bytes > peak.peak_allocated_bytes) {
    peak.peak_allocated_bytes = during_bytes;
    peak.activation_bytes = 0;
    peak.transient_bytes = step_peak_bytes;
    peak.host_activation_bytes = 0;
  }
  if (timeline != nullptr) {
    TimelineEvent step;
    step.kind = TimelineEvent::Kind::optimizer_step;
    step.allocated_after_bytes = whole_bytes(static_bytes + optimizer_step_bytes);
    step.peak_during_bytes = whole_bytes(during_bytes);
    timeline->push_back(step);
  }
}

}  // namespace megamem
