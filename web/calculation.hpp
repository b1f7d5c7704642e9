// The page's calls into the core: the estimate of the current inputs, the what-if table
// (deferred while the user drags, it prices a dozen alternatives), and, for an invalid
// layout, the nearest valid configurations the core suggests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app_state.hpp"

namespace megamem::web {

// Re-estimates state.shared.config (no what-if yet: state.what_if_pending turns true).
// An error keeps the previous estimate and fills state.error and state.suggestions.
void recompute(AppState& state, double now_s);

// Anchors state.last_estimate on state.anchor (anchor_estimate), or says why it cannot;
// clears the anchored numbers when no anchor is set. recompute() calls it.
void reanchor(AppState& state);

// Sets the anchor to the pasted log's run (anchor_from_log, as `megamem estimate --anchor`),
// read back through its link parameters so that the page and `estimate --url` anchor on the
// same numbers; an error says why the log cannot anchor.
std::optional<Error> anchor_on_log(AppState& state, const std::string& log_text);

// Prices the what-if rows of the current estimate (no-op when nothing is pending).
void finish_what_if(AppState& state);

// After a model, GPU or GPU count was picked, or a PP or VPP edit that moved a placement the
// page chose: a valid layout for it on those GPUs (valid_layout_for: what still applies stays;
// a PP edit keeps its PP), and state.layout_note saying what changed;
// a pipeline layout it writes is remembered in state.generated_layout. True when the
// configuration changed.
bool keep_layout_valid(AppState& state);

// The core's nearest valid configurations for an invalid one (suggest_valid_configs: each
// normalizes and keeps the model), cheapest first, at most eight, with their links.
std::vector<Suggestion> nearest_valid_values(const SharedConfig& shared);

// Milliseconds per full estimate of the configuration as the page makes it (estimate with
// module tree and every timeline, then the what-if rows), averaged over `repeats` runs: the
// browser benchmark's figure against the native one (tests/benchmark).
double full_estimate_ms(const Config& config, int repeats);

}  // namespace megamem::web
