// GPU drawing of the step timeline with our own GLSL ES 3.0 program (shaders/timeline.*.glsl,
// embedded at build time): an ImGui draw-list callback renders the area chart into a
// rectangle of the window, between ImGui's own draw commands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "imgui.h"

namespace megamem::web {

// One operation of the timeline, in chart units (levels in [0, 1] of the chart height).
struct TimelineColumn {
  float held_level;       // memory as the operation starts (static + saved activations)
  float allocated_level;  // memory after it (a forward saves more, a backward frees its own)
  float peak_level;       // highest point inside it (its working set on top of the higher one)
  float kind;             // 0 forward, 1 backward, 2 optimizer step
};

struct TimelineChart {
  std::vector<TimelineColumn> columns;
  float bands[5] = {};        // upper edges of runtime, weights, grads, optimizer, buffers
  float colors[7][4] = {};    // runtime..buffers, activations, transients (sRGB, 0..1)
  float dim = 1.0f;           // alpha multiplier (stale results)
  std::uint64_t version = 0;  // bump when columns change (re-upload)
};

// Adds the chart to `draw_list` over the screen rectangle [min, max]. The chart must stay
// alive until the frame is rendered (the callback reads it then).
void add_timeline_chart(ImDrawList* draw_list, const TimelineChart* chart, ImVec2 min, ImVec2 max);

// The program compiles while the page starts, as the UI's does (ui_renderer.hpp): start when
// the GL context exists (compile and link issued, nothing asked), finish before the first
// frame's draws (the link result read). Drawing a chart finishes it if nobody did.
void start_timeline_program();
void finish_timeline_program();

// Empty when the program compiled and linked; the GL log otherwise.
const std::string& timeline_renderer_error();

}  // namespace megamem::web
