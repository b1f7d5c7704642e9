// Labelled input rows for the settings column: the label on the left, the widget filling the
// rest, a tooltip naming the Megatron flag and what the knob does to memory, and the row's
// rectangle recorded for tests. An invalid layout is explained under the row it concerns.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app_state.hpp"
#include "imgui.h"

namespace megamem::web {

// What a row edits and how to explain it.
struct InputSpec {
  const char* label;   // shown, and the test handle (inputRects)
  const char* key;     // share-link key of the field ("tp"); "" when it has none
  const char* flag;    // the Megatron flag ("--tensor-model-parallel-size")
  const char* effect;  // what it does to memory, one sentence
};

// Per-frame context of the settings column.
struct InputContext {
  AppState& state;
  std::string error_key;     // the row under which the current error is explained
  bool error_shown = false;  // the error found its row this frame
  bool changed = false;      // some input changed this frame
  float label_width_px = 0;
  // The next row's field differs from the chosen model preset: its value there, as text
  // ("" = not edited). The row is marked and offers a reset; reset_clicked says it was used.
  std::string preset_value;
  bool reset_clicked = false;
  // The next row is an architecture field of a chosen model preset: the reset button's room
  // stays reserved, so the widget does not move under the pointer when an edit marks it.
  bool preset_field = false;
};

bool row_int(InputContext& ctx, const InputSpec& spec, int* value, int min, int step = 1);
bool row_int64(InputContext& ctx, const InputSpec& spec, std::int64_t* value, std::int64_t min,
               std::int64_t step = 1);
// An integer whose -/+ buttons step to the value `next(direction)` gives (TP 8 -> 16 where
// TP 9 would not divide); nullopt: no such value, the button says so and does nothing.
bool row_int_steps(InputContext& ctx, const InputSpec& spec, int* value, int min,
                   const std::function<std::optional<std::int64_t>(int direction)>& next);
// A field that does not apply to this configuration: "—", and why in its tooltip.
void row_not_applicable(InputContext& ctx, const InputSpec& spec, const char* why_not);
bool row_slider(InputContext& ctx, const InputSpec& spec, int* value, int min, int max);
bool row_double(InputContext& ctx, const InputSpec& spec, double* value, double min, double max,
                double step, const char* format);
bool row_checkbox(InputContext& ctx, const InputSpec& spec, bool* value);
bool row_text(InputContext& ctx, const InputSpec& spec, std::string* value, const char* hint);
// A combo over an enum whose values are 0..names.size()-1 in order.
bool row_choice(InputContext& ctx, const InputSpec& spec, int* index,
                const std::vector<const char*>& names);
template <class Enum>
bool row_enum(InputContext& ctx, const InputSpec& spec, Enum* value,
              const std::vector<const char*>& names) {
  int index = static_cast<int>(*value);
  if (!row_choice(ctx, spec, &index, names)) return false;
  *value = static_cast<Enum>(index);
  return true;
}
// A set of module names as checkboxes (--recompute-modules, --offload-modules).
bool row_modules(InputContext& ctx, const InputSpec& spec, std::vector<std::string>* modules,
                 const std::vector<const char*>& known);

// A muted line under a row ("-> DP 32, expert-DP 1").
void row_note(InputContext& ctx, const char* text);

// A section heading in capitals; returns whether it is open.
bool section(const char* title, bool default_open = true);

// The error box (message and nearest valid configurations as buttons); returns true when a
// suggestion was applied (state.shared.config changed). Each button's rectangle is recorded
// as "<rect_prefix> <label>".
bool error_box(AppState& state, const char* rect_prefix = "suggestion");

// The core's suggestions for the current error, one button each, cheapest first; true when
// one was applied.
bool suggestion_buttons(AppState& state, const char* rect_prefix);

// One legend entry: a colour square (striped: white diagonals, as the timeline draws the
// activations a backward frees) and its translated name, on a new line when the row has no
// room; `tooltip` (translated; may be nullptr) shows over either. Leaves the line open for
// the next entry; the caller ends the legend with ImGui::NewLine().
void legend_entry(ImU32 color, bool striped, const char* name, const char* tooltip);

// `text`, shortened with "..." to fit `width_px`.
std::string fit_text(const std::string& text, float width_px);

// `text` with line breaks where it passes `width_px`: at spaces, and beside a Chinese
// character (Chinese breaks between any two, never before its closing punctuation). Dear
// ImGui breaks at spaces only, so a Chinese phrase with no space is one word to it, split
// where the line ends ("core_" / "attn").
std::string wrap_text(const std::string& text, float width_px);

// Whether Dear ImGui, wrapping `text` at `width_px`, breaks it inside an English word.
bool wrap_splits_word(const std::string& text, float width_px);

// A paragraph in one colour, wrapped at the window's edge.
// The same, shown as it is in every language: commands, flags, overrides, file names.
void verbatim_text(ImU32 color, const std::string& text);
void wrapped_text(ImU32 color, const std::string& text);

// A verdict in the page's words: "fits: 58.32 / 79.65 GiB, 21.33 GiB free" (the top bar's and
// each suggested fix's).
std::string verdict_words(const Verdict& verdict);

// A bullet and its text, wrapped at the window's edge (ImGui's BulletText does not wrap).
void bullet_wrapped(const std::string& text);

// Before a tooltip opened by a tap: it goes to the screen's left edge, under the tapped item
// (and never over the top bar's buttons) or, low on the screen, above it; as wide as the
// screen allows. Nothing with a mouse (ImGui puts it by the pointer).
void place_tooltip_for_touch(ImVec2 item_min, ImVec2 item_max);

// Where the top bar ends (canvas pixels), for place_tooltip_for_touch().
void note_top_bar_bottom(float bottom_px);

// The width a tooltip's text wraps at: 28 em, or the screen's width on a phone.
float tooltip_wrap_px();

// Records the last item's rectangle under `label` (for tests).
void record_item(AppState& state, const char* label, const char* kind);

// Records the last item's rectangle under `label` and shows the tooltip when hovered.
void describe_item(AppState& state, const char* label, const char* kind, const char* flag,
                   const char* effect);

}  // namespace megamem::web
