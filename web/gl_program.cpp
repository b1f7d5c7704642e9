// A GL program compiled in two steps; see gl_program.hpp.
#include "gl_program.hpp"

#include <cstdio>
#include <utility>

namespace megamem::web {
namespace {

// The GL log of a shader that did not compile ("" when it did).
std::string shader_log(GLuint shader) {
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (ok) return "";
  char log[1024] = {};
  glGetShaderInfoLog(shader, sizeof log, nullptr, log);
  return log;
}

}  // namespace

void start_gl_program(GlProgram& p) {
  if (p.started) return;
  p.started = true;
  p.program = glCreateProgram();
  for (const auto& [type, source] : {std::pair{GLenum{GL_VERTEX_SHADER}, p.vertex_source},
                                     std::pair{GLenum{GL_FRAGMENT_SHADER}, p.fragment_source}}) {
    const GLuint shader = glCreateShader(type);
    glShaderSource(shader, 1, &source, nullptr);
    glCompileShader(shader);
    glAttachShader(p.program, shader);
    p.shaders.push_back(shader);
  }
  glLinkProgram(p.program);
}

bool finish_gl_program(GlProgram& p) {
  start_gl_program(p);
  if (p.finished) return p.error.empty();
  p.finished = true;
  GLint linked = 0;
  glGetProgramiv(p.program, GL_LINK_STATUS, &linked);
  if (!linked) {
    char log[1024] = {};
    glGetProgramInfoLog(p.program, sizeof log, nullptr, log);
    p.error = std::string("link: ") + log;
    for (GLuint shader : p.shaders) p.error += " " + shader_log(shader);
    std::fprintf(stderr, "megamem: %s program: %s\n", p.name, p.error.c_str());
  }
  for (GLuint shader : p.shaders) glDeleteShader(shader);
  p.shaders.clear();
  return p.error.empty();
}

}  // namespace megamem::web
