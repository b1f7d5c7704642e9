// The planner's memory fast path; see planner_memory.hpp. Each function follows the matching
// lines of estimate() (estimate.cpp) so the two give the same bytes.
#include "plan/planner_memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "megamem/units.hpp"
#include "memory/activations.hpp"
#include "memory/deferred_embedding_wgrad.hpp"
#include "memory/parameter_count.hpp"
#include "memory/persistent_buffers.hpp"
#include "memory/runtime_overheads.hpp"
#include "memory/static_memory.hpp"
#include "schedule/pipeline_schedule.hpp"
#include "schedule/timeline.hpp"

namespace megamem {

std::vector<RankParameterBytes> rank_parameter_bytes(const NormalizedConfig& n,
                                                     const std::vector<StagePlacement>& stages) {
  std::vector<RankParameterBytes> out(
      static_cast<std::size_t>(n.config.parallel.pipeline_parallel));
  const LayerTemplates templates = layer_templates(n);
  StageParams params;
  RankTeKeys te_keys(static_cast<int>(out.size()), stages.size());  // TE dummy wgrads per rank
  StageStaticCache cache;
  for (const StagePlacement& stage : stages) {
    stage_params(n, stage, templates, params);
    // distributed_data_parallel.py: only the first pipeline rank's first chunk buckets.
    const bool bucketing = stage.pp_rank == 0 && stage.vpp_chunk == 0;
    const StageStaticBytes& bytes =
        cached_stage_static_bytes(n, params.blocks, bucketing, stage.has_loss, cache);
    RankParameterBytes& rank = out[static_cast<std::size_t>(stage.pp_rank)];
    rank.static_bytes += bytes.chunk.weight_bytes + bytes.chunk.gradient_bytes +
                         bytes.chunk.optimizer_bytes +
                         static_cast<std::uint64_t>(round_to_int64(bytes.expert_bias_bytes));
    rank.optimizer_step_bytes += bytes.chunk.optimizer_step_bytes;
    te_keys.add_stage(stage.pp_rank, bytes.te_keys);
  }
  const std::vector<std::uint64_t> te_bytes = te_keys.rank_bytes(n);
  for (std::size_t rank = 0; rank < out.size(); ++rank) out[rank].static_bytes += te_bytes[rank];
  return out;
}

std::uint64_t rank_fixed_bytes(const NormalizedConfig& n) {
  return static_cast<std::uint64_t>(round_to_int64(workspace_bytes(n) + global_buffer_bytes(n)));
}

std::uint64_t rank_overhead_bytes(const NormalizedConfig& n) {
  return device_overhead_bytes(device_overheads(n));
}

ScheduleProfile schedule_profile(const ScheduleShape& shape) {
  const std::vector<ScheduleOp> ops = pipeline_schedule(shape);
  // Each step's in-flight micro-batches per chunk before it runs (a forward adds its own
  // saved bytes after its peak, a backward frees them after), with its chunk and direction.
  // A step that another step of the same chunk and direction matches or exceeds in every
  // chunk can never be the peak (saved bytes are never negative): only the maximal ones stay.
  const auto v = static_cast<std::size_t>(std::max(1, shape.virtual_stages));
  std::vector<std::uint16_t> inflight(v, 0);
  // Per (chunk, direction), then per (forward chunk, backward chunk) of combined steps.
  std::vector<std::vector<std::vector<std::uint16_t>>> maximal(2 * v + v * v);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const ScheduleOp& op = ops[i];
    const auto chunk = static_cast<std::size_t>(op.chunk);
    const bool combined = op.with_next_backward && i + 1 < ops.size();
    const auto partner = combined ? static_cast<std::size_t>(ops[i + 1].chunk) : 0;
    auto& kept = maximal[combined ? 2 * v + chunk * v + partner : 2 * chunk + (op.forward ? 0 : 1)];
    bool dominated = false;
    for (const auto& other : kept) {
      dominated = true;
      for (std::size_t j = 0; j < v && dominated; ++j) dominated = other[j] >= inflight[j];
      if (dominated) break;
    }
    if (!dominated) {
      kept.erase(std::remove_if(kept.begin(), kept.end(),
                                [&](const std::vector<std::uint16_t>& other) {
                                  for (std::size_t j = 0; j < v; ++j) {
                                    if (other[j] > inflight[j]) return false;
                                  }
                                  return true;
                                }),
                 kept.end());
      kept.push_back(inflight);
    }
    if (op.forward) ++inflight[chunk];
    if (combined) ++i;  // its backward is part of the step
    const std::size_t freed = combined ? partner : chunk;
    if ((combined || !op.forward) && inflight[freed] > 0) --inflight[freed];
  }
  ScheduleProfile profile;
  profile.chunks = static_cast<int>(v);
  profile.ops = ops;
  for (std::size_t k = 0; k < maximal.size(); ++k) {
    const bool combined = k >= 2 * v;
    const auto chunk = static_cast<std::int32_t>(combined ? (k - 2 * v) / v : k / 2);
    for (const auto& counts : maximal[k]) {
      profile.inflight.insert(profile.inflight.end(), counts.begin(), counts.end());
      profile.step.push_back(combined || k % 2 == 0 ? chunk + 1 : -(chunk + 1));
      profile.partner.push_back(combined ? static_cast<std::int32_t>((k - 2 * v) % v) + 1 : 0);
    }
  }
  return profile;
}

namespace {

// The most live bytes over steps [first, last) of a profile: sum over chunks j of
// inflight_j x saved_j, in that order. Two steps at a time: their sums are independent chains,
// so the additions of one overlap the other's.
double most_live_bytes(const ScheduleProfile& profile, const std::vector<double>& saved,
                       std::size_t first, std::size_t last) {
  const std::size_t v = saved.size();
  double most = -std::numeric_limits<double>::infinity();
  std::size_t s = first;
  for (; s + 1 < last; s += 2) {
    const double* a = &profile.inflight[s * v];
    const double* b = a + v;
    double live_a = 0, live_b = 0;
    for (std::size_t j = 0; j < v; ++j) {
      live_a += a[j] * saved[j];
      live_b += b[j] * saved[j];
    }
    most = std::max(std::max(most, live_a), live_b);
  }
  if (s < last) {
    const double* a = &profile.inflight[s * v];
    double live = 0;
    for (std::size_t j = 0; j < v; ++j) live += a[j] * saved[j];
    most = std::max(most, live);
  }
  return most;
}

// A rank whose chunks keep offloading margins: simulate_rank()'s walk of the profile's
// schedule, copied into `scratch` to mark which micro-batches keep them.
double margin_rank_peak(const ScheduleProfile& profile, const ChunkActivations* const* rank_chunks,
                        std::vector<ScheduleOp>& scratch) {
  scratch.assign(profile.ops.begin(), profile.ops.end());
  return schedule_peak_above_static(scratch, rank_chunks);
}

}  // namespace

void rank_activation_peaks(const std::vector<const ChunkActivations*>& chunks, int virtual_stages,
                           const std::vector<const ScheduleProfile*>& profiles,
                           std::vector<double>& out, std::vector<ScheduleOp>& scratch) {
  const auto v = static_cast<std::size_t>(std::max(1, virtual_stages));
  out.assign(profiles.size(), 0.0);
  std::vector<double> saved(v);  // the rank's chunks' saved bytes, side by side
  for (std::size_t r = 0; r < profiles.size(); ++r) {
    const ScheduleProfile& profile = *profiles[r];
    const ChunkActivations* const* rank_chunks = &chunks[r * v];
    if (std::any_of(rank_chunks, rank_chunks + v,
                    [](const ChunkActivations* c) { return c->offload_margin_bytes > 0; })) {
      out[r] = margin_rank_peak(profile, rank_chunks, scratch);
      continue;
    }
    for (std::size_t j = 0; j < v; ++j) saved[j] = rank_chunks[j]->saved_bytes;
    double worst = 0;  // simulate_rank starts its peak at static memory
    for (std::size_t s = 0; s < profile.step.size();) {
      // A chunk and direction's steps are side by side and add the same extra bytes, so the
      // one with the most live bytes decides (rounding never reorders sums with one addend).
      const std::int32_t tag = profile.step[s];
      const std::int32_t partner = profile.partner[s];
      std::size_t last = s + 1;
      while (last < profile.step.size() && profile.step[last] == tag &&
             profile.partner[last] == partner) {
        ++last;
      }
      const double most_live = most_live_bytes(profile, saved, s, last);
      s = last;
      const ChunkActivations& chunk = *rank_chunks[static_cast<std::size_t>(std::abs(tag) - 1)];
      double extra = tag > 0 ? chunk.forward_peak_extra_bytes : chunk.backward_peak_extra_bytes;
      if (partner > 0) {
        extra =
            combined_step_extra_bytes(chunk, *rank_chunks[static_cast<std::size_t>(partner - 1)]);
      }
      worst = std::max(worst, most_live + extra);
    }
    out[r] = worst;
  }
}

double rank_above_static(const NormalizedConfig& n, double activation_peak,
                         const RankParameterBytes& parameters, bool loss_rank) {
  // estimate.cpp rank_run_peak: the deferred output-layer wgrad buffers add to the passes
  // and are drained before the optimizer step, whose grad copy replaces the activations.
  double passes = activation_peak;
  if (loss_rank) {
    const DeferredWgradBytes held = deferred_embedding_wgrad_bytes(n);
    if (held.at_flush > 0) passes = std::max(passes + held.during_schedule, held.at_flush);
  }
  return std::max(passes, static_cast<double>(parameters.optimizer_step_bytes));
}

RankTotals rank_peak_totals(const NormalizedConfig& n, std::uint64_t static_bytes,
                            double above_static, std::uint64_t overhead_bytes) {
  const auto allocated =
      static_cast<std::uint64_t>(round_to_int64(static_cast<double>(static_bytes) + above_static));
  RankTotals totals;
  totals.reserved_bytes = peak_reserved_bytes(n, allocated);
  totals.total_bytes = device_total_bytes(totals.reserved_bytes, overhead_bytes);
  return totals;
}

}  // namespace megamem
