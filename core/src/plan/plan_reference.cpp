// The configuration being planned as the planner's reference, and each candidate's change from
// it; see planner.hpp (PlanReference).
#include "megamem/estimate.hpp"
#include "megamem/layout_label.hpp"
#include "megamem/planner.hpp"

namespace megamem {

PlanReference plan_reference(const Config& current, const Estimate& estimate,
                             const StepTimeConfig& model) {
  PlanReference reference;
  reference.layout = layout_label(current.parallel);
  const PlanRequest request = plan_request_for(current);
  // Without a global batch the rows are priced at the proposed one, which keeps more
  // micro-batches in flight than the front end's (one per data-parallel rank): the reference
  // is estimated at it too, or the row of the same layout would read several GiB more.
  Expected<Estimate> at_proposed_batch = Error{};
  if (request.global_batch_proposed) at_proposed_batch = megamem::estimate(request.base);
  const Estimate& priced = at_proposed_batch ? *at_proposed_batch : estimate;
  const RankMemory& limiting = priced.ranks.at(static_cast<std::size_t>(priced.limiting_pp_rank));
  reference.peak_total_bytes = limiting.peak_total_bytes;
  reference.limiting_pp_rank = priced.limiting_pp_rank;
  reference.status = priced.verdict.status;
  // Priced as the search prices its candidates (plan_request_for): a row of the same layout
  // and settings then differs from the reference by nothing, not by an assumption.
  if (const Expected<StepTime> time = estimate_step_time(request.base, model)) {
    reference.step_time_s = time->step_time_s;
  }
  return reference;
}

PlanReference plan_reference(const Config& current, const Error& error) {
  PlanReference reference;
  reference.layout = layout_label(current.parallel);
  reference.error = error;
  return reference;
}

PlanChange plan_change(const PlanCandidate& candidate, const PlanReference& reference) {
  PlanChange change;
  if (reference.error) return change;
  change.peak_known = true;
  change.peak_bytes = static_cast<std::int64_t>(candidate.peak_total_bytes) -
                      static_cast<std::int64_t>(reference.peak_total_bytes);
  if (reference.step_time_s > 0 && candidate.time.step_time_s > 0) {
    change.time_known = true;
    change.step_time = candidate.time.step_time_s / reference.step_time_s - 1.0;
  }
  return change;
}

}  // namespace megamem
