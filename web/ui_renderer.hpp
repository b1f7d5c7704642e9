// Dear ImGui's draw data on WebGL2 with megamem's own program (shaders/ui.*.glsl), in place
// of ImGui's OpenGL3 backend. The difference is the start-up: ImGui's backend compiles its
// program and waits for the result in one call, so the page stood still while the GPU process
// (software WebGL: ANGLE and SwiftShader) compiled. Here compiling is asked for as soon as the
// GL context exists and the result is read once, just before the first frame is drawn; the
// presets, the first estimate and the font atlas are built meanwhile. The font atlas is a
// one-byte coverage texture (a quarter of ImGui's RGBA copy). docs/performance.md.
#pragma once

#include "imgui.h"

namespace megamem::web {

// Issues the program's compile and link (no result asked) and makes its buffers.
void start_ui_renderer();

// Reads the link result (waits for the GPU process the first time); false, with the GL log
// on the console, when the program did not link.
bool finish_ui_renderer();

// Makes the font atlas's texture again from ImGui's atlas (building the atlas if needed).
void upload_ui_font_texture();

// Draws one frame's draw data over a framebuffer of this size in pixels. ImGui's
// ImDrawCallback_ResetRenderState and other draw-list callbacks (the timeline) are honoured.
void render_ui(const ImDrawData& data, int framebuffer_width_px, int framebuffer_height_px);

}  // namespace megamem::web
