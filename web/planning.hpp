// The page's planner search: plan() over the configuration being edited, with the panel's
// options, and whether a search shown still belongs to that configuration.
#pragma once

#include "app_state.hpp"

namespace megamem::web {

// Asks for a search; it runs (run_pending_plan) after the "searching" line has been drawn.
void request_plan(AppState& state);

// Runs the search asked for, if any, once a frame has shown that it is under way: the page
// is single-threaded, so the search holds this frame.
void run_pending_plan(AppState& state);

// The search request for the current configuration and the panel's options, as
// `megamem plan --url <link> [--margin-gib G] [--no-recompute-search] [--no-offload-search]`
// builds it.
PlanRequest planner_request(const AppState& state);

// Updates state.planner.stale for the current configuration (cached by its query).
void update_plan_staleness(AppState& state);

}  // namespace megamem::web
