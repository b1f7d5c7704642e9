#version 300 es
// The font atlas holds coverage only (one byte per texel, ImFontAtlas::GetTexDataAsAlpha8):
// it scales the vertex colour's alpha. Solid shapes sample the atlas's white texel.
precision mediump float;

uniform sampler2D u_atlas;

in vec2 v_uv;
in vec4 v_color;

layout(location = 0) out vec4 out_color;

void main() { out_color = vec4(v_color.rgb, v_color.a * texture(u_atlas, v_uv).r); }
