#version 300 es
// Colours each operation's column by what the memory at that height is (ui.md palette):
// the static bands (runtime overheads, weights, gradients, optimizer, buffers) are the same
// for every operation; above them the saved activations, and on top the operation's working
// set (transients: what it allocates and frees inside). A backward frees its micro-batch's
// activations: they are striped (held as it starts, gone at its end), and its working set
// starts above them, not at what is left after it. Backward operations are drawn slightly
// darker, and the top edge of each column gets a one-pixel highlight.
precision highp float;

in float v_level;
flat in vec4 v_levels;

// Upper edges of the static bands, in chart units: runtime, weights, gradients, optimizer,
// buffers (cumulative, so each is above the previous one).
uniform float u_bands[5];
uniform vec4 u_colors[7];  // runtime, weights, gradients, optimizer, buffers, activations,
                           // transients (sRGB, straight alpha)
uniform float u_dim;       // 1.0 normally, lower when the result is stale

out vec4 frag_color;

void main() {
  float held = v_levels.x;
  float allocated = v_levels.y;
  float peak = v_levels.z;
  int kind = int(v_levels.w + 0.5);

  vec4 color = u_colors[6];  // working set, above the saved activations
  if (v_level < max(held, allocated)) color = u_colors[5];
  // Freed by this backward: stripes of the activations' colour.
  bool freed = v_level >= allocated && v_level < held;
  if (freed && mod(gl_FragCoord.x + gl_FragCoord.y, 8.0) < 4.0) {
    color.rgb = mix(color.rgb, vec3(1.0), 0.45);
  }
  for (int i = 4; i >= 0; --i) {
    if (v_level < u_bands[i]) color = u_colors[i];
  }

  if (kind == 1) color.rgb *= 0.82;  // backward
  if (kind == 2) color.rgb = mix(color.rgb, vec3(1.0), 0.25);  // optimizer step

  // Highlight the top pixel of the column (fwidth: chart units per pixel).
  float pixel = fwidth(v_level);
  if (peak - v_level < 1.5 * pixel) color.rgb = mix(color.rgb, vec3(1.0), 0.55);

  frag_color = vec4(color.rgb, color.a * u_dim);
}
