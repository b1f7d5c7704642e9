// The page's calls into the core: the estimate of the current inputs, the what-if table
// (deferred while the user drags, it prices a dozen alternatives), and, for an invalid
// layout, the nearest values of the offending knobs that the core accepts.
#pragma once

#include <string>
#include <vector>

#include "app_state.hpp"

namespace megamem::web {

// Re-estimates state.shared.config (no what-if yet: state.what_if_pending turns true).
// An error keeps the previous estimate and fills state.error and state.suggestions.
void recompute(AppState& state, double now_s);

// Prices the what-if rows of the current estimate (no-op when nothing is pending).
void finish_what_if(AppState& state);

// Values of the knobs related to the error (the edited one first) nearest to the current
// ones that resolve it: normalize() accepts the layout or objects to another field. At most
// one below and one above the current value each.
std::vector<Suggestion> nearest_valid_values(const Config& config, const Error& error,
                                             const std::string& edited_key);

}  // namespace megamem::web
