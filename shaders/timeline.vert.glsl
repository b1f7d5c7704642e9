#version 300 es
// The step timeline of one pipeline rank as an area chart: one quad per operation of the
// schedule (forward, backward, optimizer step), from the floor to the operation's peak.
// Positions are in chart units: x in operations, y in bytes scaled to [0, 1] of the chart.

layout(location = 0) in vec2 a_position;  // (operation index or index + 1, level in [0, 1])
layout(location = 1) in vec4 a_levels;    // (held before, allocated after, peak during, kind)

uniform vec2 u_x_range;  // visible operations [first, last)

out float v_level;         // this fragment's level, [0, 1] of the chart height
flat out vec4 v_levels;    // the operation's levels and kind (0 forward, 1 backward, 2 step)

void main() {
  float x = (a_position.x - u_x_range.x) / (u_x_range.y - u_x_range.x);
  gl_Position = vec4(x * 2.0 - 1.0, a_position.y * 2.0 - 1.0, 0.0, 1.0);
  v_level = a_position.y;
  v_levels = a_levels;
}
