// Left column: the model and parallel layout being edited.
#pragma once

#include "app_state.hpp"

namespace megamem::web {

// Draws the inputs; returns true when any of them changed this frame.
bool draw_inputs_panel(AppState& state);

}  // namespace megamem::web
