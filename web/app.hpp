// The platform-free part of the web app: init() and frame() build the UI with Dear ImGui and
// call the core; the platform file (platform_web.cpp) owns the window, GL and the main loop.
#pragma once

#include <string>

namespace megamem::web {

// Sets the default model and layout and computes the first estimate.
void app_init(float content_scale);

// Builds one frame's UI for a display of the given size in pixels.
void app_frame(float display_width_px, float display_height_px);

// {config, megatron_args, world_size, result} as JSON, for window.megamem.state().
std::string app_state_json();

// Rectangles of the labelled inputs as JSON, for window.megamem.inputRects().
std::string app_input_rects_json();

}  // namespace megamem::web
