// "Paste HuggingFace config.json" and "paste Megatron flags": text boxes that replace the
// model (config.json) or the whole configuration (flags), with inline errors and notes.
#pragma once

#include <string>

#include "app_state.hpp"

namespace megamem::web {

inline constexpr int kHfConfigBox = 0;
inline constexpr int kMegatronFlagsBox = 1;

// Draws both boxes; returns true when an import changed the configuration.
bool draw_import_boxes(AppState& state);

// Imports text into the configuration, as the boxes' buttons do (also for tests).
bool import_hf_config_text(AppState& state, const std::string& text);
bool import_megatron_flags_text(AppState& state, const std::string& text);

}  // namespace megamem::web
