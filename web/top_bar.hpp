// The top bar (ui.md): the model and GPU pickers, the fits / does-not-fit verdict with the
// headroom and the limiting rank, "Copy link", and the theme switch. The pickers are also
// used by the settings column.
#pragma once

#include <string>

#include "app_state.hpp"

namespace megamem::web {

struct TopBarActions {
  bool changed = false;          // the configuration changed
  bool copy_link = false;        // "Copy link" pressed
  bool toggle_theme = false;     // light/dark pressed
  bool toggle_language = false;  // English / 简体中文 pressed
  bool toggle_settings = false;  // phone layout: show/hide the settings
};

// `narrow`: the phone layout (two rows, a Settings button).
TopBarActions draw_top_bar(AppState& state, bool narrow);

// Combos with type-to-filter; each returns true when it changed the configuration.
bool model_picker(AppState& state, const char* label);
bool gpu_picker(AppState& state, const char* label);
bool recipe_picker(AppState& state, const char* label);

// The model picker's title: the model's name, "(edited)" when its architecture differs from
// its preset's.
std::string model_title(const AppState& state);

// What the top bar says of the current inputs: "fits: 58.32 / 79.65 GiB, ...", or
// "invalid - <rule>" (never the numbers of another configuration).
std::string verdict_text(const AppState& state);

}  // namespace megamem::web
