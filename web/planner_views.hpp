// Pieces of the planner panel shared by its table (planner_panel.cpp) and its chart
// (planner_chart.cpp).
#pragma once

#include <string>
#include <vector>

#include "app_state.hpp"

namespace megamem::web {

// A candidate's Megatron flags, memory, time and where the time goes, as a tooltip.
void plan_candidate_tooltip(const PlanCandidate& candidate, bool stale);

// Applies a candidate's configuration to the calculator (rows of a stale search are not
// applied: their configurations carry the earlier settings); returns whether it did.
bool apply_plan_candidate(AppState& state, const PlanCandidate& candidate);

// The Pareto front as memory against step time, the fastest layouts marked, the limit
// (capacity minus margin) drawn; a click on a point applies it. Returns whether one was.
bool draw_plan_chart(AppState& state, const PlanResult& result);

}  // namespace megamem::web
