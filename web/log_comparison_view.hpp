// Under the "paste a training log" box: each printed rank's measured memory beside the
// estimate of the run's configuration (allocated vs static, max allocated vs peak allocated,
// max reserved vs peak reserved; the difference in GiB and %), the parameter count checked
// against the log's, the lines read and what was left out - `megamem compare LOG` on the page.
#pragma once

#include "app_state.hpp"

namespace megamem::web {

// Draws state.log_import's comparison (nothing before a log was read).
void draw_log_comparison(AppState& state);

}  // namespace megamem::web
