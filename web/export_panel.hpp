// EXPORT, under the timeline: the shown pipeline rank's estimated training step as a PyTorch
// memory snapshot (a download that pytorch.org/memory_viz opens beside a real run's snapshot;
// the bytes `megamem estimate --snapshot FILE --rank P` writes), and the configuration as
// Megatron-LM flags and Megatron-Bridge overrides for copying (`--print-megatron-args`,
// `--print-bridge-overrides`).
#pragma once

#include "app_state.hpp"

namespace megamem::web {

void draw_export_panel(AppState& state, const Estimate& estimate);

}  // namespace megamem::web
