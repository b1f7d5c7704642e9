// The browser platform: a GLFW window (Emscripten's GLFW emulation over the page's canvas)
// with a WebGL2 context, Dear ImGui's GLFW + OpenGL3 backends, and the main loop driven by
// requestAnimationFrame through emscripten_set_main_loop. The canvas follows the browser
// window and renders at device pixels.
#include <GLES3/gl3.h>
#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <emscripten/html5.h>

#include <cmath>
#include <cstdio>

#include "app.hpp"
#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "js_api.hpp"

namespace {

struct PlatformState {
  GLFWwindow* window = nullptr;
  float pixel_ratio = 1.0f;  // device pixels per CSS pixel
  int width_px = 0;          // canvas size in device pixels
  int height_px = 0;
  bool first_frame_shown = false;
};
PlatformState platform;

// Keeps the canvas backing store at the window's size in device pixels (CSS sizes the canvas).
// Sized directly, not with glfwSetWindowSize: Emscripten's GLFW turns a window the size of
// the screen into a fullscreen request, which browsers refuse without a user gesture.
void follow_window_size() {
  double css_width = 0, css_height = 0;
  emscripten_get_element_css_size("#canvas", &css_width, &css_height);
  const int width_px = static_cast<int>(std::lround(css_width * platform.pixel_ratio));
  const int height_px = static_cast<int>(std::lround(css_height * platform.pixel_ratio));
  if (width_px > 0 && height_px > 0 &&
      (width_px != platform.width_px || height_px != platform.height_px)) {
    platform.width_px = width_px;
    platform.height_px = height_px;
    emscripten_set_canvas_element_size("#canvas", width_px, height_px);
  }
}

void frame() {
  glfwPollEvents();
  follow_window_size();

  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  // The canvas size is ours (see follow_window_size); mouse positions arrive in canvas pixels.
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize =
      ImVec2(static_cast<float>(platform.width_px), static_cast<float>(platform.height_px));
  io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
  ImGui::NewFrame();
  megamem::web::app_frame(static_cast<float>(platform.width_px),
                          static_cast<float>(platform.height_px));
  ImGui::Render();

  glViewport(0, 0, platform.width_px, platform.height_px);
  glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

  if (!platform.first_frame_shown) {
    platform.first_frame_shown = true;
    megamem::web::mark_js_api_ready();
  }
}

}  // namespace

int main() {
  if (!glfwInit()) {
    std::fprintf(stderr, "megamem: glfwInit failed\n");
    return 1;
  }
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);  // WebGL2
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  platform.pixel_ratio = static_cast<float>(emscripten_get_device_pixel_ratio());
  platform.window = glfwCreateWindow(1280, 720, "megamem", nullptr, nullptr);
  if (platform.window == nullptr) {
    std::fprintf(stderr, "megamem: no WebGL2 context\n");
    return 1;
  }
  glfwMakeContextCurrent(platform.window);
  follow_window_size();

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini on the web
  ImGui_ImplGlfw_InitForOpenGL(platform.window, true);
  ImGui_ImplOpenGL3_Init("#version 300 es");

  megamem::web::install_js_api(platform.pixel_ratio);
  megamem::web::app_init(platform.pixel_ratio);
  emscripten_set_main_loop(frame, 0, true);
  return 0;
}
