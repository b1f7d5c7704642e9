// Right column: per-rank bars, the what-if table, the layout planner, the step timeline, the
// module tree, and what the estimate does not model. Every number is the core's.
#pragma once

#include <string>

#include "app_state.hpp"

namespace megamem::web {

// Draws the last valid estimate (dimmed under the error when the inputs are invalid);
// returns true when the user applied a what-if row or a planner layout (state.shared
// changed).
bool draw_results_panel(AppState& state);

// The sections, each in its own file.
void draw_rank_bars(AppState& state, const Estimate& estimate);            // rank_bars.cpp
bool draw_what_if_table(AppState& state, const Estimate& estimate);        // what_if_table.cpp
void draw_timeline(AppState& state, const Estimate& estimate, float dim);  // timeline_view.cpp
void draw_module_tree(AppState& state, const Estimate& estimate);          // module_tree.cpp
bool draw_planner_panel(AppState& state);                                  // planner_panel.cpp

// "PP rank [3 v]": picks the rank the timeline and module tree show.
void rank_selector(AppState& state, const Estimate& estimate, const char* id);

// A muted capitals heading with an optional right-aligned note.
void results_heading(const char* title, const char* note = nullptr);

// The name of the published recipe whose configuration is exactly this link query ("" for
// none); remembered for the last query asked.
const std::string& recipe_of_query(const std::string& query);

}  // namespace megamem::web
