// Right column: per pipeline rank, the weight, gradient and optimizer memory of one GPU.
#pragma once

#include "app_state.hpp"

namespace megamem::web {

// Draws the last valid estimate (dimmed under the error when the inputs are invalid).
void draw_results_panel(const AppState& state);

}  // namespace megamem::web
