// The platform-free part of the web app: init() and frame() build the UI with Dear ImGui and
// call the core; the platform file (platform_web.cpp) owns the window, GL, the main loop and
// the browser glue, and calls these.
#pragma once

#include <string>

namespace megamem::web {

// Applies the theme, opens the page's link (or the default configuration) and estimates it.
void app_init(float pixel_ratio);

// Before ImGui::NewFrame(): the theme for the pixel ratio and the font atlas (rebuilt when
// glyphs arrived). Done here, not inside a frame: a frame begun again after a rebuild drops
// the active text box, so a paste box lost its focus whenever a CJK font arrived.
void app_prepare_frame(float pixel_ratio);

// Builds one frame's UI for a display of the given size in pixels. Returns true while the
// app has work or animation for the next frames (a pending what-if table, an input being
// edited, a message that times out); the platform may skip idle frames otherwise.
bool app_frame(float display_width_px, float display_height_px, float pixel_ratio);

// Opens a share link: at start, or on back/forward. Either way no new history entry is made
// (back/forward moves along existing ones); a non-canonical address is replaced in place.
void app_open_link(const std::string& url);

// Text read from the clipboard for an import box (import_boxes.hpp targets).
void app_clipboard_text(int target, const std::string& text);

// The browser kept a paste over kMaxPasteBytes (platform.hpp) from the page: for an import
// box's Paste button (target), or a Ctrl+V (target -1).
void app_paste_refused(int target, double bytes);

// {config, url, result, error, ...} as JSON, for window.megamem.state(); finishes pending
// work first, so result is what `megamem estimate --json` prints for the configuration.
std::string app_state_json();

// Milliseconds per full estimate (estimate, module tree, timelines, what-if) of the page's
// configuration, averaged over `repeats` runs (the browser benchmark).
double app_full_estimate_ms(int repeats);

// Rectangles of the labelled inputs as JSON, for window.megamem.inputRects().
std::string app_input_rects_json();

// What has the keyboard as JSON, for window.megamem.keyboardFocus() (tab_order.hpp).
std::string app_keyboard_focus_json();

}  // namespace megamem::web
