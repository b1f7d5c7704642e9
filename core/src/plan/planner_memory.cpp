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
  struct StepBytes {
    std::uint64_t grad_copy = 0;
    Fp8MasterCasts casts;
  };
  std::vector<StepBytes> steps(out.size());  // each rank's, summed as estimate() sums them
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
    StepBytes& step = steps[static_cast<std::size_t>(stage.pp_rank)];
    step.grad_copy += bytes.chunk.optimizer_step_bytes;
    step.casts.add_chunk(bytes.chunk.fp8_master_cast_bytes,
                         bytes.chunk.fp8_master_cast_expert_bytes, stage.vpp_chunk == 0);
    te_keys.add_stage(stage.pp_rank, bytes.te_keys);
  }
  const std::vector<std::uint64_t> te_bytes = te_keys.rank_bytes(n);
  for (std::size_t rank = 0; rank < out.size(); ++rank) {
    out[rank].static_bytes += te_bytes[rank];
    out[rank].step_peak_bytes =
        optimizer_step_peak_bytes(steps[rank].grad_copy, steps[rank].casts,
                                  n.config.optimizer.overlap_param_gather_with_optimizer_step);
  }
  return out;
}

std::uint64_t rank_fixed_bytes(const NormalizedConfig& n) {
  return static_cast<std::uint64_t>(round_to_int64(workspace_bytes(n) + global_buffer_bytes(n)));
}

std::uint64_t rank_overhead_bytes(const NormalizedConfig& n) {
  return device_overhead_bytes(device_overheads(n));
}

namespace {

// Where schedule_profile() counts a live micro-batch: its chunk, or past the chunks when it
// keeps its offloading margin.
std::size_t live_index(const ScheduleOp& op, std::size_t chunks) {
  return static_cast<std::size_t>(op.chunk) + (op.keeps_offload_margin ? chunks : 0);
}

// Keeps `counts` among the maximal count vectors of one kind of step (none dominates another).
void keep_maximal(std::vector<std::vector<std::uint16_t>>& maximal,
                  const std::vector<std::uint16_t>& counts) {
  for (const auto& other : maximal) {
    if (std::equal(counts.begin(), counts.end(), other.begin(),
                   [](std::uint16_t a, std::uint16_t b) { return b >= a; })) {
      return;
    }
  }
  std::erase_if(maximal, [&](const std::vector<std::uint16_t>& other) {
    return std::equal(other.begin(), other.end(), counts.begin(),
                      [](std::uint16_t a, std::uint16_t b) { return a <= b; });
  });
  maximal.push_back(counts);
}

}  // namespace

ScheduleProfile schedule_profile(const ScheduleShape& shape, const std::vector<char>& grouped) {
  std::vector<ScheduleOp> ops = pipeline_schedule(shape);
  if (!grouped.empty()) {
    mark_offload_margins(ops,
                         [&](int chunk) { return grouped[static_cast<std::size_t>(chunk)] != 0; });
  }
  // Each step's in-flight micro-batches per chunk (and apart, per chunk, those keeping their
  // offloading margin) before it runs, with its chunk, direction and the margins it moves. A
  // step that another step of the same kind matches or exceeds in every count can never be
  // the peak (saved bytes are never negative): only the maximal ones stay.
  const auto v = static_cast<std::size_t>(std::max(1, shape.virtual_stages));
  const std::size_t dims = grouped.empty() ? v : 2 * v;
  const std::size_t kinds = grouped.empty() ? 1 : 4;  // the step's two margin bits
  std::vector<std::uint16_t> inflight(dims, 0);
  // Per (chunk, direction), then per (forward chunk, backward chunk) of combined steps; each
  // per margin bits.
  std::vector<std::vector<std::vector<std::uint16_t>>> maximal((2 * v + v * v) * kinds);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const ScheduleOp& op = ops[i];
    const auto chunk = static_cast<std::size_t>(op.chunk);
    const bool combined = op.with_next_backward && i + 1 < ops.size();
    const auto partner = combined ? static_cast<std::size_t>(ops[i + 1].chunk) : 0;
    const std::size_t bits = kinds == 1
                                 ? 0
                                 : (op.keeps_offload_margin ? 1u : 0u) |
                                       (combined && ops[i + 1].keeps_offload_margin ? 2u : 0u);
    const std::size_t kind =
        combined ? 2 * v + chunk * v + partner : 2 * chunk + (op.forward ? 0 : 1);
    keep_maximal(maximal[kind * kinds + bits], inflight);
    if (op.forward) ++inflight[live_index(op, v)];
    if (combined) ++i;  // its backward is part of the step
    if (combined || !op.forward) {
      std::uint16_t& freed = inflight[live_index(ops[i], v)];
      if (freed > 0) --freed;
    }
  }
  ScheduleProfile profile;
  profile.shape = shape;
  profile.chunks = static_cast<int>(v);
  profile.dims = static_cast<int>(dims);
  for (std::size_t k = 0; k < maximal.size(); ++k) {
    const std::size_t kind = k / kinds;
    const bool combined = kind >= 2 * v;
    const auto chunk = static_cast<std::int32_t>(combined ? (kind - 2 * v) / v : kind / 2);
    for (const auto& counts : maximal[k]) {
      profile.inflight.insert(profile.inflight.end(), counts.begin(), counts.end());
      profile.step.push_back(combined || kind % 2 == 0 ? chunk + 1 : -(chunk + 1));
      profile.partner.push_back(combined ? static_cast<std::int32_t>((kind - 2 * v) % v) + 1 : 0);
      profile.margins.push_back(static_cast<std::uint8_t>(k % kinds));
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

// The extra bytes of a profile's step above its live bytes (timeline.hpp step_extra_bytes).
double profile_step_extra_bytes(const ScheduleProfile& profile, std::size_t s,
                                const ChunkActivations* const* rank_chunks) {
  const std::int32_t tag = profile.step[s];
  const std::int32_t partner = profile.partner[s];
  const std::uint8_t margins = profile.margins[s];
  const ChunkActivations& chunk = *rank_chunks[static_cast<std::size_t>(std::abs(tag) - 1)];
  const ChunkActivations* backward =
      partner > 0 ? rank_chunks[static_cast<std::size_t>(partner - 1)] : nullptr;
  return step_extra_bytes(chunk, tag > 0, (margins & 1) != 0, backward, (margins & 2) != 0);
}

}  // namespace

void rank_activation_peaks(const std::vector<const ChunkActivations*>& chunks, int virtual_stages,
                           const std::vector<const ScheduleProfile*>& profiles,
                           std::vector<double>& out) {
  const auto v = static_cast<std::size_t>(std::max(1, virtual_stages));
  out.assign(profiles.size(), 0.0);
  std::vector<double> saved;  // per live count: the rank's chunks' saved bytes, side by side
  for (std::size_t r = 0; r < profiles.size(); ++r) {
    const ScheduleProfile& profile = *profiles[r];
    const ChunkActivations* const* rank_chunks = &chunks[r * v];
    saved.resize(static_cast<std::size_t>(profile.dims));
    for (std::size_t j = 0; j < saved.size(); ++j) {
      const ChunkActivations& chunk = *rank_chunks[j % v];
      saved[j] = chunk.saved_bytes + (j >= v ? chunk.offload_margin_bytes : 0.0);
    }
    double worst = 0;  // simulate_rank starts its peak at static memory
    for (std::size_t s = 0; s < profile.step.size();) {
      // The steps of one kind are side by side and add the same extra bytes, so the one with
      // the most live bytes decides (rounding never reorders sums with one addend).
      std::size_t last = s + 1;
      while (last < profile.step.size() && profile.step[last] == profile.step[s] &&
             profile.partner[last] == profile.partner[s] &&
             profile.margins[last] == profile.margins[s]) {
        ++last;
      }
      worst = std::max(worst, most_live_bytes(profile, saved, s, last) +
                                  profile_step_extra_bytes(profile, s, rank_chunks));
      s = last;
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
  return std::max(passes, static_cast<double>(parameters.step_peak_bytes));
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
