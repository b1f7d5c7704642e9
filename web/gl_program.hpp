// A GL program compiled in two steps, so that the page never waits for the GPU process while it
// could work: start() asks for the compile and link and returns at once; finish() reads the
// link result (the one wait) and keeps the GL log when it failed. The UI renderer and the
// timeline use it from main() and before the first frame's draws (ui_renderer.hpp).
#pragma once

#include <GLES3/gl3.h>

#include <string>
#include <vector>

namespace megamem::web {

struct GlProgram {
  const char* name = "";  // for the log: "UI", "timeline"
  const char* vertex_source = nullptr;
  const char* fragment_source = nullptr;
  bool started = false;   // compile and link asked for
  bool finished = false;  // link result read
  GLuint program = 0;
  std::vector<GLuint> shaders;  // until finished
  std::string error;            // empty when it linked; the GL log otherwise
};

// Asks for both shaders' compile and the link (nothing waited for); once.
void start_gl_program(GlProgram& program);

// Reads the link result once (starting the program first if nobody did); true when linked.
bool finish_gl_program(GlProgram& program);

}  // namespace megamem::web
