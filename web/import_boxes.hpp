// The import boxes of the settings column: "paste HuggingFace config.json" (replaces the
// model), "paste Megatron flags" and "paste a Megatron-Bridge config" (replace the whole
// configuration), and "paste a training log" (loads the run's configuration and shows its
// measured memory beside the estimate). Inline errors and notes under each.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "app_state.hpp"

namespace megamem::web {

inline constexpr int kHfConfigBox = 0;
inline constexpr int kMegatronFlagsBox = 1;
inline constexpr int kTrainingLogBox = 2;
inline constexpr int kBridgeConfigBox = 3;

// Draws the boxes; returns true when an import changed the configuration.
bool draw_import_boxes(AppState& state);

// Imports text into the configuration, as the boxes' buttons do (also for tests).
bool import_hf_config_text(AppState& state, const std::string& text);
bool import_megatron_flags_text(AppState& state, const std::string& text);
bool import_training_log_text(AppState& state, const std::string& text);
bool import_bridge_config_text(AppState& state, const std::string& text);

// The text box of an import target (nullptr for an unknown target).
ImportBox* import_box(AppState& state, int target);

// The browser refused a paste of `bytes` (over kMaxPasteBytes) for `target` (-1: a Ctrl+V
// into whichever box is being typed into): that box says so.
void refuse_paste(AppState& state, int target, double bytes);

// For window.megamem.state(): log_import (the comparison as `megamem compare --json` prints
// it), bridge_import, bridge_overrides and the last snapshot download.
nlohmann::json import_boxes_json(const AppState& state);

}  // namespace megamem::web
