#version 300 es
// Dear ImGui's draw lists: 2-D vertices in canvas pixels with a texture coordinate into the
// font atlas and a packed colour (ImDrawVert), mapped to clip space by an orthographic
// projection of the display rectangle.

layout(location = 0) in vec2 a_position;  // canvas pixels
layout(location = 1) in vec2 a_uv;        // font atlas coordinates
layout(location = 2) in vec4 a_color;     // RGBA, normalised from 4 bytes

uniform vec4 u_display;  // the display rectangle: x, y, width, height (pixels)

out vec2 v_uv;
out vec4 v_color;

void main() {
  vec2 unit = (a_position - u_display.xy) / u_display.zw;
  gl_Position = vec4(unit.x * 2.0 - 1.0, 1.0 - unit.y * 2.0, 0.0, 1.0);
  v_uv = a_uv;
  v_color = a_color;
}
