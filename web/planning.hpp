// The page's planner search: a PlanSearch over the configuration being edited, with the
// panel's options, advanced a time slice each frame, and whether a search shown still belongs
// to that configuration.
#pragma once

#include "app_state.hpp"

namespace megamem::web {

// Starts a search (dropping one under way).
void request_plan(AppState& state);

// Drops the search under way; the list of the search before it stays, marked as such.
void cancel_plan(AppState& state);

// Called as a frame starts: advances the search under way for about 8 ms (the page has one
// thread; 30 fps leaves 33 ms a frame, most of it for drawing), restarting it first if what
// it searches changed, and takes its result when it ends. While a field is being edited
// (`editing`) a search whose inputs changed waits: typing "64" must not search 6 GPUs first,
// an invalid request that would end the search. While the mouse is held or an item is active
// (`holding`) an ended search keeps its progress row until the mouse is up: its list replaces
// that row and its Cancel, so a press on Cancel as the search ended found the button gone
// before its release (issue 24: the release went to nothing and nothing was cancelled).
void advance_plan(AppState& state, bool editing, bool holding);

// The search request for the current configuration and the panel's options, as
// `megamem plan --url <link> [--margin-gib G] [--no-recompute-search] [--no-offload-search]`
// builds it.
PlanRequest planner_request(const AppState& state);

// Updates state.planner.stale for the current configuration (cached by its query).
void update_plan_staleness(AppState& state);

// Updates state.planner.reference for the current configuration from the estimate the top bar
// shows (or its error), cached by its query and result; none before a search has ended.
void update_plan_reference(AppState& state);

}  // namespace megamem::web
