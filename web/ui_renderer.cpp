// ImGui's draw data on WebGL2; see ui_renderer.hpp.
#include "ui_renderer.hpp"

#include <GLES3/gl3.h>

#include <cstdint>

#include "gl_program.hpp"
#include "shaders.hpp"  // generated from shaders/*.glsl

namespace megamem::web {
namespace {

struct UiRenderer {
  GlProgram gl{
      .name = "UI", .vertex_source = shaders::kUiVert, .fragment_source = shaders::kUiFrag};
  GLint u_display = -1;
  GLint u_atlas = -1;
  GLuint vao = 0;
  GLuint vertices = 0;
  GLuint indices = 0;
  GLuint atlas = 0;
};
UiRenderer renderer;

// ImDrawVert: position and atlas coordinate as floats, the colour as 4 normalised bytes.
void describe_vertices() {
  constexpr GLsizei kStride = sizeof(ImDrawVert);
  glBindVertexArray(renderer.vao);
  glBindBuffer(GL_ARRAY_BUFFER, renderer.vertices);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, renderer.indices);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, kStride,
                        reinterpret_cast<const void*>(IM_OFFSETOF(ImDrawVert, pos)));
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, kStride,
                        reinterpret_cast<const void*>(IM_OFFSETOF(ImDrawVert, uv)));
  glEnableVertexAttribArray(2);
  glVertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, kStride,
                        reinterpret_cast<const void*>(IM_OFFSETOF(ImDrawVert, col)));
  glBindVertexArray(0);
}

// Blending as ImGui draws (straight alpha; the canvas has no alpha channel), no depth or
// culling, scissored to each command's clip rectangle.
void set_render_state(const ImDrawData& data, int width_px, int height_px) {
  glEnable(GL_BLEND);
  glBlendEquation(GL_FUNC_ADD);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_STENCIL_TEST);
  glEnable(GL_SCISSOR_TEST);
  glViewport(0, 0, width_px, height_px);
  glUseProgram(renderer.gl.program);
  glUniform4f(renderer.u_display, data.DisplayPos.x, data.DisplayPos.y, data.DisplaySize.x,
              data.DisplaySize.y);
  glUniform1i(renderer.u_atlas, 0);
  glActiveTexture(GL_TEXTURE0);
  glBindVertexArray(renderer.vao);
  glBindBuffer(GL_ARRAY_BUFFER, renderer.vertices);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, renderer.indices);
}

// One command's clip rectangle as a GL scissor (origin bottom left); false when empty.
bool scissor(const ImDrawData& data, const ImDrawCmd& command, int height_px) {
  const ImVec2 scale = data.FramebufferScale;
  const float x0 = (command.ClipRect.x - data.DisplayPos.x) * scale.x;
  const float y0 = (command.ClipRect.y - data.DisplayPos.y) * scale.y;
  const float x1 = (command.ClipRect.z - data.DisplayPos.x) * scale.x;
  const float y1 = (command.ClipRect.w - data.DisplayPos.y) * scale.y;
  if (x1 <= x0 || y1 <= y0) return false;
  glScissor(static_cast<GLint>(x0), static_cast<GLint>(static_cast<float>(height_px) - y1),
            static_cast<GLsizei>(x1 - x0), static_cast<GLsizei>(y1 - y0));
  return true;
}

void draw_list(const ImDrawData& data, const ImDrawList& list, int width_px, int height_px) {
  glBufferData(
      GL_ARRAY_BUFFER,
      static_cast<GLsizeiptr>(list.VtxBuffer.Size) * static_cast<GLsizeiptr>(sizeof(ImDrawVert)),
      list.VtxBuffer.Data, GL_STREAM_DRAW);
  glBufferData(
      GL_ELEMENT_ARRAY_BUFFER,
      static_cast<GLsizeiptr>(list.IdxBuffer.Size) * static_cast<GLsizeiptr>(sizeof(ImDrawIdx)),
      list.IdxBuffer.Data, GL_STREAM_DRAW);
  for (const ImDrawCmd& command : list.CmdBuffer) {
    if (command.UserCallback == ImDrawCallback_ResetRenderState) {
      set_render_state(data, width_px, height_px);
      continue;
    }
    if (command.UserCallback != nullptr) {
      command.UserCallback(&list, &command);
      continue;
    }
    if (!scissor(data, command, height_px)) continue;
    glBindTexture(GL_TEXTURE_2D,
                  static_cast<GLuint>(reinterpret_cast<std::intptr_t>(command.GetTexID())));
    glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(command.ElemCount),
                   sizeof(ImDrawIdx) == 2 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_INT,
                   reinterpret_cast<const void*>(command.IdxOffset * sizeof(ImDrawIdx)));
  }
}

}  // namespace

void start_ui_renderer() {
  if (renderer.gl.started) return;
  ImGui::GetIO().BackendRendererName = "megamem_webgl2";
  start_gl_program(renderer.gl);
  glGenVertexArrays(1, &renderer.vao);
  glGenBuffers(1, &renderer.vertices);
  glGenBuffers(1, &renderer.indices);
  describe_vertices();
}

bool finish_ui_renderer() {
  start_ui_renderer();
  if (renderer.gl.finished) return renderer.gl.error.empty();
  const bool linked = finish_gl_program(renderer.gl);
  renderer.u_display = glGetUniformLocation(renderer.gl.program, "u_display");
  renderer.u_atlas = glGetUniformLocation(renderer.gl.program, "u_atlas");
  return linked;
}

void upload_ui_font_texture() {
  ImFontAtlas& atlas = *ImGui::GetIO().Fonts;
  unsigned char* coverage = nullptr;
  int width = 0, height = 0;
  atlas.GetTexDataAsAlpha8(&coverage, &width, &height);
  if (renderer.atlas == 0) glGenTextures(1, &renderer.atlas);
  glBindTexture(GL_TEXTURE_2D, renderer.atlas);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, width, height, 0, GL_RED, GL_UNSIGNED_BYTE, coverage);
  atlas.SetTexID(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(renderer.atlas)));
}

void render_ui(const ImDrawData& data, int framebuffer_width_px, int framebuffer_height_px) {
  if (!finish_ui_renderer() || framebuffer_width_px <= 0 || framebuffer_height_px <= 0) return;
  set_render_state(data, framebuffer_width_px, framebuffer_height_px);
  for (int i = 0; i < data.CmdListsCount; ++i) {
    draw_list(data, *data.CmdLists[i], framebuffer_width_px, framebuffer_height_px);
  }
  glDisable(GL_SCISSOR_TEST);
  glBindVertexArray(0);
}

}  // namespace megamem::web
