// The timeline's GL program; see timeline_renderer.hpp.
#include "timeline_renderer.hpp"

#include <GLES3/gl3.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gl_program.hpp"
#include "shaders.hpp"  // generated from shaders/*.glsl

namespace megamem::web {
namespace {

struct Renderer {
  GlProgram gl{.name = "timeline",
               .vertex_source = shaders::kTimelineVert,
               .fragment_source = shaders::kTimelineFrag};
  GLuint vao = 0;
  GLuint vbo = 0;
  GLint u_x_range = -1;
  GLint u_bands = -1;
  GLint u_colors = -1;
  GLint u_dim = -1;
  const TimelineChart* uploaded_chart = nullptr;
  std::uint64_t uploaded_version = ~std::uint64_t{0};
  GLsizei vertex_count = 0;
  // The rectangle of the current draw, in canvas pixels (set when the callback is added).
  ImVec2 min, max;
};
Renderer renderer;

void describe_vertices() {
  glGenVertexArrays(1, &renderer.vao);
  glGenBuffers(1, &renderer.vbo);
  glBindVertexArray(renderer.vao);
  glBindBuffer(GL_ARRAY_BUFFER, renderer.vbo);
  constexpr GLsizei kStride = 6 * sizeof(float);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, kStride, nullptr);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, kStride,
                        reinterpret_cast<const void*>(2 * sizeof(float)));
  glBindVertexArray(0);
}

// The link result, read once (platform_web.cpp calls it before the first frame's draws).
void finish_program() {
  if (renderer.gl.finished) return;
  if (!finish_gl_program(renderer.gl)) return;
  const GLuint program = renderer.gl.program;
  renderer.u_x_range = glGetUniformLocation(program, "u_x_range");
  renderer.u_bands = glGetUniformLocation(program, "u_bands");
  renderer.u_colors = glGetUniformLocation(program, "u_colors");
  renderer.u_dim = glGetUniformLocation(program, "u_dim");
  describe_vertices();
}

// Two triangles per operation: x from i to i + 1, y from the floor to the operation's peak.
void upload(const TimelineChart& chart) {
  std::vector<float> vertices;
  vertices.reserve(chart.columns.size() * 6 * 6);
  for (std::size_t i = 0; i < chart.columns.size(); ++i) {
    const TimelineColumn& c = chart.columns[i];
    const float x0 = static_cast<float>(i);
    const float x1 = x0 + 1.0f;
    const float corners[6][2] = {{x0, 0.0f}, {x1, 0.0f},         {x1, c.peak_level},
                                 {x0, 0.0f}, {x1, c.peak_level}, {x0, c.peak_level}};
    for (const auto& corner : corners) {
      vertices.insert(vertices.end(), {corner[0], corner[1], c.held_level, c.allocated_level,
                                       c.peak_level, c.kind});
    }
  }
  glBindBuffer(GL_ARRAY_BUFFER, renderer.vbo);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(vertices.size() * sizeof(float)),
               vertices.data(), GL_STATIC_DRAW);
  renderer.vertex_count = static_cast<GLsizei>(vertices.size() / 6);
  renderer.uploaded_chart = &chart;
  renderer.uploaded_version = chart.version;
}

void draw(const ImDrawList*, const ImDrawCmd* command) {
  const auto* chart = static_cast<const TimelineChart*>(command->UserCallbackData);
  if (!renderer.gl.finished) finish_program();
  if (!renderer.gl.error.empty() || chart->columns.empty()) return;
  if (renderer.uploaded_chart != chart || renderer.uploaded_version != chart->version) {
    upload(*chart);
  }
  const float framebuffer_height = ImGui::GetIO().DisplaySize.y;
  const ImVec2 min = renderer.min;
  const ImVec2 max = renderer.max;
  // Viewport = the chart; scissor = the chart within the window's clip rectangle.
  glViewport(static_cast<GLint>(min.x), static_cast<GLint>(framebuffer_height - max.y),
             static_cast<GLsizei>(max.x - min.x), static_cast<GLsizei>(max.y - min.y));
  const ImVec4 clip = command->ClipRect;
  const float x0 = std::max(clip.x, min.x), y0 = std::max(clip.y, min.y);
  const float x1 = std::min(clip.z, max.x), y1 = std::min(clip.w, max.y);
  if (x1 <= x0 || y1 <= y0) return;
  glEnable(GL_SCISSOR_TEST);
  glScissor(static_cast<GLint>(x0), static_cast<GLint>(framebuffer_height - y1),
            static_cast<GLsizei>(x1 - x0), static_cast<GLsizei>(y1 - y0));
  glUseProgram(renderer.gl.program);
  glUniform2f(renderer.u_x_range, 0.0f, static_cast<float>(chart->columns.size()));
  glUniform1fv(renderer.u_bands, 5, chart->bands);
  glUniform4fv(renderer.u_colors, 7, &chart->colors[0][0]);
  glUniform1f(renderer.u_dim, chart->dim);
  glBindVertexArray(renderer.vao);
  glDrawArrays(GL_TRIANGLES, 0, renderer.vertex_count);
  glBindVertexArray(0);
}

}  // namespace

void add_timeline_chart(ImDrawList* draw_list, const TimelineChart* chart, ImVec2 min, ImVec2 max) {
  renderer.min = min;
  renderer.max = max;
  draw_list->AddCallback(draw, const_cast<TimelineChart*>(chart));
  draw_list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

void start_timeline_program() { start_gl_program(renderer.gl); }

void finish_timeline_program() { finish_program(); }

const std::string& timeline_renderer_error() { return renderer.gl.error; }

}  // namespace megamem::web
