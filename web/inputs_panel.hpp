// Left column: every setting of the configuration (model, cluster, parallelism, training,
// recompute and offload, optimizer, runtime overheads), and the import boxes.
#pragma once

#include "app_state.hpp"

namespace megamem::web {

// Draws the settings; returns true when any of them changed this frame.
bool draw_inputs_panel(AppState& state);

// The share-link key of the row that explains an error naming `field` (core field names).
const char* error_row_key(const AppState& state);

}  // namespace megamem::web
