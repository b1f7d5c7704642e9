// The browser platform: a GLFW window (Emscripten's GLFW emulation over the page's canvas)
// with a WebGL2 context, Dear ImGui's GLFW + OpenGL3 backends, and the main loop driven by
// requestAnimationFrame through emscripten_set_main_loop. The canvas follows the browser
// window and renders at device pixels; a change of devicePixelRatio (zoom, another screen)
// rebuilds the fonts at the new size.
//
// Browser glue (the only JavaScript besides js_api.cpp), installed by install_browser_glue():
//   - the address bar: history.pushState / replaceState, and popstate -> app_open_link();
//   - the clipboard: ImGui's copy writes navigator.clipboard, paste events feed ImGui's
//     Ctrl+V (Emscripten's GLFW has no clipboard), the import boxes' Paste buttons read it;
//   - the wheel, normalised to lines (Emscripten 3.1.6's GLFW passes raw pixels with the
//     wrong sign), and touch: a drag scrolls, a tap clicks (reading results on a phone).
#include <GLES3/gl3.h>
#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <emscripten/html5.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app.hpp"
#include "fonts.hpp"
#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_internal.h"
#include "js_api.hpp"
#include "platform.hpp"
#include "timeline_renderer.hpp"
#include "ui_renderer.hpp"

namespace {

struct PlatformState {
  GLFWwindow* window = nullptr;
  float pixel_ratio = 1.0f;  // device pixels per CSS pixel
  int width_px = 0;          // canvas size in device pixels
  int height_px = 0;
  bool first_frame_shown = false;
  int frames = 0;
  std::string clipboard;  // what ImGui's Ctrl+V pastes (last paste event or copy)
  // Touch: the pointer position set by touches (kept until the mouse moves), and a tap's
  // press (one frame) and release (the next).
  bool touch_pointer = false;
  float touch_x = 0.0f, touch_y = 0.0f;
  double mouse_x = -1.0, mouse_y = -1.0;  // GLFW's cursor when the touch began
  int tap_phase = 0;                      // 2: press next frame, 1: release next frame
  // Frames still to draw after the last input event; at 0 (and an idle app) frames are
  // skipped: the canvas keeps showing the last one, and the machine's CPU is left alone.
  int frames_to_draw = 0;
  bool app_busy = true;
};
PlatformState platform;

// The last frames as Dear ImGui saw the mouse (window.megamem.inputLog()): where it was, the
// button, the window and item under it and the active item. Browser tests print it when a
// click did not do what it should (issue 24: clicks lost on a loaded machine).
struct InputLogEntry {
  int frame = 0;
  float x = 0.0f, y = 0.0f;
  bool down = false;
  std::string window;
  ImGuiID hovered_id = 0;
  ImGuiID active_id = 0;
  float window_y = 0.0f, scroll_y = 0.0f, content_height = 0.0f;  // the hovered window's
  bool nav_blocks_hover = false;  // keyboard navigation turned mouse hovering off
};
constexpr std::size_t kInputLogFrames = 64;
std::vector<InputLogEntry> input_log;

void log_input_frame() {
  const ImGuiContext& g = *ImGui::GetCurrentContext();
  if (input_log.size() == kInputLogFrames) input_log.erase(input_log.begin());
  input_log.push_back({.frame = platform.frames,
                       .x = g.IO.MousePos.x,
                       .y = g.IO.MousePos.y,
                       .down = g.IO.MouseDown[0],
                       .window = g.HoveredWindow ? g.HoveredWindow->Name : "",
                       .hovered_id = g.HoveredId,
                       .active_id = g.ActiveId,
                       .window_y = g.HoveredWindow ? g.HoveredWindow->Pos.y : 0.0f,
                       .scroll_y = g.HoveredWindow ? g.HoveredWindow->Scroll.y : 0.0f,
                       .content_height = g.HoveredWindow ? g.HoveredWindow->ContentSize.y : 0.0f,
                       .nav_blocks_hover = g.NavDisableMouseHover});
}

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

// Touch input replaces the mouse until the mouse moves again.
void apply_touch(ImGuiIO& io) {
  if (!platform.touch_pointer) return;
  double x = 0, y = 0;
  glfwGetCursorPos(platform.window, &x, &y);
  if (x != platform.mouse_x || y != platform.mouse_y) {
    platform.touch_pointer = false;  // a real mouse moved
    return;
  }
  io.MousePos = ImVec2(platform.touch_x, platform.touch_y);
  if (platform.tap_phase == 2) {
    io.MouseDown[0] = true;
    platform.tap_phase = 1;
  } else if (platform.tap_phase == 1) {
    io.MouseDown[0] = false;
    platform.tap_phase = 0;
  }
}

// Keyboard events reach ImGui through a queue, applied before each frame so that a key
// pressed and released between two frames is still seen pressed for one (Dear ImGui 1.86
// reads key states, not events; on a slow frame a quick Ctrl+V or Enter would be lost), a
// key released and pressed again between two frames is still seen up for one (else ImGui
// sees it held: the second of two quick Tabs was lost), and characters and keys keep their
// order (Tab, then typing; Ctrl+A, then typing).
struct KeyEvent {
  int key = 0;
  int scancode = 0;
  int action = 0;  // GLFW_PRESS, GLFW_RELEASE, GLFW_REPEAT; -1: a character
  int mods = 0;
  unsigned int character = 0;
};
std::vector<KeyEvent> key_events;

bool is_modifier(int key) {
  return key == GLFW_KEY_LEFT_CONTROL || key == GLFW_KEY_RIGHT_CONTROL ||
         key == GLFW_KEY_LEFT_SHIFT || key == GLFW_KEY_RIGHT_SHIFT || key == GLFW_KEY_LEFT_ALT ||
         key == GLFW_KEY_RIGHT_ALT || key == GLFW_KEY_LEFT_SUPER || key == GLFW_KEY_RIGHT_SUPER;
}

void apply_key_events() {
  std::vector<int> pressed;   // keys pressed this frame
  std::vector<int> released;  // keys released this frame
  bool key_pressed = false;   // a non-modifier key was pressed this frame
  bool typed = false;         // characters were typed this frame
  const auto has = [](const std::vector<int>& keys, int key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  std::size_t applied = 0;
  for (; applied < key_events.size(); ++applied) {
    const KeyEvent& event = key_events[applied];
    // A release, or a press after a release, of one key waits for the next frame.
    if (event.action == GLFW_RELEASE ? has(pressed, event.key) : has(released, event.key)) break;
    if (event.action == -1) {
      if (key_pressed) break;
      ImGui_ImplGlfw_CharCallback(platform.window, event.character);
      typed = true;
      continue;
    }
    if (event.action == GLFW_RELEASE && is_modifier(event.key) && key_pressed) break;
    if (event.action != GLFW_RELEASE && !is_modifier(event.key)) {
      if (key_pressed || typed) break;
      key_pressed = true;
    }
    if (event.action == GLFW_PRESS) pressed.push_back(event.key);
    if (event.action == GLFW_RELEASE) released.push_back(event.key);
    ImGui_ImplGlfw_KeyCallback(platform.window, event.key, event.scancode, event.action,
                               event.mods);
  }
  key_events.erase(key_events.begin(), key_events.begin() + static_cast<std::ptrdiff_t>(applied));
  if (!key_events.empty()) platform.frames_to_draw = std::max(platform.frames_to_draw, 2);
}

// Input arrived: draw the next frames (hover effects and tooltips settle within a few).
constexpr int kFramesAfterInput = 12;
void wake() { platform.frames_to_draw = kFramesAfterInput; }

constexpr float kLongestFrameCountedSeconds = 0.1f;

// One frame's UI, built up to ImGui::Render() or EndFrame().
void build_ui() {
  megamem::web::app_prepare_frame(platform.pixel_ratio);
  ImGui_ImplGlfw_NewFrame();
  // The canvas size is ours (see follow_window_size); mouse positions arrive in canvas pixels.
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize =
      ImVec2(static_cast<float>(platform.width_px), static_cast<float>(platform.height_px));
  io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
  // Dear ImGui counts a key as held for the frame's whole DeltaTime and repeats it once that
  // passes KeyRepeatDelay (0.275 s): on a slow frame (software WebGL, a loaded machine) one
  // quick Tab would move the focus twice. A frame counts as at most 0.1 s; only hover delays
  // and repeats read the time, and they are simply slower on such a machine.
  io.DeltaTime = std::min(io.DeltaTime, kLongestFrameCountedSeconds);
  apply_key_events();
  apply_touch(io);
  ImGui::NewFrame();
  platform.app_busy =
      megamem::web::app_frame(static_cast<float>(platform.width_px),
                              static_cast<float>(platform.height_px), platform.pixel_ratio);
  log_input_frame();
}

// Before the first frame is drawn: the font atlas (rasterised on the CPU) and its texture,
// each marked; then one frame built and not drawn, in which the auto-sized top bar measures
// itself (ImGui hides such a window the first time it is built), so that the first frame
// drawn shows the settled layout and the verdict; last the UI and timeline programs' link
// results, which the GPU process has had since main() to produce (gl_program.hpp).
void prepare_first_frame() {
  megamem::web::update_fonts(platform.pixel_ratio);  // with the Chinese font, if it came
  ImGui::GetIO().Fonts->Build();
  megamem::web::mark_startup_step("font atlas built");
  megamem::web::upload_ui_font_texture();
  megamem::web::mark_startup_step("font texture");
  build_ui();
  ImGui::EndFrame();
  megamem::web::mark_startup_step("layout pass (not drawn)");
  megamem::web::finish_ui_renderer();
  megamem::web::finish_timeline_program();
  megamem::web::mark_startup_step("UI and timeline programs linked");
}

void frame() {
  glfwPollEvents();
  const float pixel_ratio = static_cast<float>(emscripten_get_device_pixel_ratio());
  if (pixel_ratio > 0.0f && pixel_ratio != platform.pixel_ratio) {
    platform.pixel_ratio = pixel_ratio;
    wake();
  }
  const int width_px = platform.width_px;
  const int height_px = platform.height_px;
  follow_window_size();
  if (width_px != platform.width_px || height_px != platform.height_px) wake();
  if (platform.frames_to_draw <= 0 && !platform.app_busy && platform.first_frame_shown) return;
  const bool first_frame = !platform.first_frame_shown;
  // A Chinese page's first frame shows Chinese, not replacement boxes: it waits for the font
  // (fetched beside the wasm by index.html, so usually there already; fonts.hpp).
  if (first_frame && megamem::web::first_frame_waits_for_font()) return;
  if (platform.frames_to_draw > 0) --platform.frames_to_draw;

  if (first_frame) prepare_first_frame();
  build_ui();
  if (first_frame) megamem::web::mark_startup_step("first frame: UI built");
  ImGui::Render();

  glViewport(0, 0, platform.width_px, platform.height_px);
  glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  megamem::web::render_ui(*ImGui::GetDrawData(), platform.width_px, platform.height_px);
  ++platform.frames;

  if (first_frame) {
    megamem::web::mark_startup_step("first frame: GL calls issued");
    platform.first_frame_shown = true;
    megamem::web::mark_js_api_ready();
  }
}

const char* get_clipboard(void*) { return platform.clipboard.c_str(); }

void set_clipboard(void*, const char* text) {
  platform.clipboard = text;
  megamem::web::copy_to_clipboard(text);
}

// clang-format off
EM_JS(void, install_browser_glue, (double max_paste_bytes), {
  function withString(text, call) {
    var size = lengthBytesUTF8(text) + 1;
    var pointer = _malloc(size);
    stringToUTF8(text, pointer, size);
    call(pointer);
    _free(pointer);
  }
  Module.megamemWithString = withString;
  // Pastes over the page's limit stay in the browser (platform.hpp kMaxPasteBytes).
  Module.megamemPasteBytes = function(text) {
    if (text.length > max_paste_bytes) return text.length;
    var bytes = lengthBytesUTF8(text);
    return bytes > max_paste_bytes ? bytes : 0;
  };
  window.addEventListener("popstate", function() {
    withString(location.href, function(p) { _megamem_popstate(p); });
  });
  document.addEventListener("paste", function(event) {
    var text = event.clipboardData ? event.clipboardData.getData("text/plain") : "";
    var too_large = text ? Module.megamemPasteBytes(text) : 0;
    if (too_large) {
      _megamem_paste_refused(-1, too_large);
    } else if (text) {
      withString(text, function(p) { _megamem_set_clipboard(p); });
    }
  });
  var canvas = Module.canvas;
  window.addEventListener("wheel", function(event) {
    if (event.target !== canvas) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    var lines = event.deltaMode === 1 ? 1 / 3 : (event.deltaMode === 2 ? 1 : 1 / 100);
    _megamem_wheel(-event.deltaX * lines, -event.deltaY * lines);
  }, {capture: true, passive: false});
  // One wheel unit scrolls ImGui by 5 lines of 15 CSS pixels.
  var cssPixelsPerWheelUnit = 75;
  var touch = null;
  function canvasPoint(t) {
    var rect = canvas.getBoundingClientRect();
    return [(t.clientX - rect.left) * canvas.width / rect.width,
            (t.clientY - rect.top) * canvas.height / rect.height];
  }
  function own(event) {
    if (event.target !== canvas) return false;
    event.preventDefault();  // no emulated mouse events, no page zoom or scroll
    event.stopImmediatePropagation();
    return true;
  }
  window.addEventListener("touchstart", function(event) {
    if (!own(event)) return;
    var t = event.changedTouches[0];
    touch = {x: t.clientX, y: t.clientY, lastX: t.clientX, lastY: t.clientY, scrolling: false};
    var p = canvasPoint(t);
    _megamem_touch(p[0], p[1], 0);
  }, {capture: true, passive: false});
  window.addEventListener("touchmove", function(event) {
    if (!own(event) || !touch) return;
    var t = event.changedTouches[0];
    if (!touch.scrolling && Math.hypot(t.clientX - touch.x, t.clientY - touch.y) > 8) {
      touch.scrolling = true;
    }
    if (touch.scrolling) {
      _megamem_wheel((t.clientX - touch.lastX) / cssPixelsPerWheelUnit,
                     (t.clientY - touch.lastY) / cssPixelsPerWheelUnit);
      touch.lastX = t.clientX;
      touch.lastY = t.clientY;
    }
  }, {capture: true, passive: false});
  window.addEventListener("touchend", function(event) {
    if (!own(event)) return;
    if (touch && !touch.scrolling) {
      var p = canvasPoint(event.changedTouches[0]);
      _megamem_touch(p[0], p[1], 1);
    }
    touch = null;
  }, {capture: true, passive: false});
  window.addEventListener("touchcancel", function(event) {
    if (own(event)) touch = null;
  }, {capture: true, passive: false});
});

EM_JS(void, js_mark_startup_step, (const char* step, double now_ms), {
  var name = UTF8ToString(step);
  (Module.megamemMarks = Module.megamemMarks || []).push({name: name, ms: now_ms});
  if (performance.mark) performance.mark("megamem: " + name);
});

EM_JS(char*, js_page_url, (int base_only), {
  var text = base_only ? location.origin + location.pathname : location.href;
  var size = lengthBytesUTF8(text) + 1;
  var pointer = _malloc(size);
  stringToUTF8(text, pointer, size);
  return pointer;
});

EM_JS(void, js_show_query, (const char* query, int push), {
  var q = UTF8ToString(query);
  var url = location.pathname + (q.length ? "?" + q : "") + location.hash;
  if (push) {
    history.pushState(null, "", url);
  } else {
    history.replaceState(null, "", url);
  }
});

EM_JS(char*, js_browser_language, (), {
  var text = navigator.language || "";
  var size = lengthBytesUTF8(text) + 1;
  var pointer = _malloc(size);
  stringToUTF8(text, pointer, size);
  return pointer;
});

EM_JS(void, js_copy_to_clipboard, (const char* text), {
  var value = UTF8ToString(text);
  function fallback() {
    var area = document.createElement("textarea");
    area.value = value;
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) {}
    document.body.removeChild(area);
    Module.canvas.focus();
  }
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(value).catch(fallback);
  } else {
    fallback();
  }
});

// The font's bytes go to a malloc'd block the app keeps (megamem_font_arrived); index.html may
// have started the fetch (Module.megamemFontFetches), else it starts here.
EM_JS(void, js_fetch_font, (int font, const char* path), {
  var file = UTF8ToString(path);
  var fetches = Module.megamemFontFetches || (Module.megamemFontFetches = {});
  var response = fetches[file] || fetch(file, {credentials: "same-origin"});
  delete fetches[file];
  response.then(function(r) {
    if (!r.ok) throw new Error("HTTP " + r.status);
    return r.arrayBuffer();
  }).then(function(buffer) {
    var bytes = new Uint8Array(buffer);
    var pointer = _malloc(bytes.length);
    HEAPU8.set(bytes, pointer);
    _megamem_font_arrived(font, pointer, bytes.length);
  }).catch(function(error) {
    console.warn("megamem: font " + file + " not loaded: " + error);
    _megamem_font_arrived(font, 0, 0);
  });
});

EM_JS(void, js_read_clipboard, (int target), {
  if (!navigator.clipboard || !navigator.clipboard.readText) return;
  navigator.clipboard.readText().then(function(text) {
    var too_large = Module.megamemPasteBytes(text);
    if (too_large) {
      _megamem_paste_refused(target, too_large);
      return;
    }
    Module.megamemWithString(text, function(p) { _megamem_clipboard_result(target, p); });
  }).catch(function(error) { console.warn("megamem: clipboard not readable: " + error); });
});
// clang-format on

std::string take_string(char* pointer) {
  std::string text = pointer ? pointer : "";
  std::free(pointer);
  return text;
}

}  // namespace

namespace megamem::web {

double now_seconds() { return emscripten_get_now() / 1000.0; }
void mark_startup_step(const char* step) {
  if (!platform.first_frame_shown) js_mark_startup_step(step, emscripten_get_now());
}
std::string page_url() { return take_string(js_page_url(0)); }
std::string page_base_url() { return take_string(js_page_url(1)); }
void show_query(const std::string& query, bool push) { js_show_query(query.c_str(), push); }
void copy_to_clipboard(const std::string& text) { js_copy_to_clipboard(text.c_str()); }
void read_clipboard(int target) { js_read_clipboard(target); }
void fetch_font_file(int font, const char* path) { js_fetch_font(font, path); }
std::string browser_language() { return take_string(js_browser_language()); }
bool pointer_is_touch() { return platform.touch_pointer; }

}  // namespace megamem::web

extern "C" {
EMSCRIPTEN_KEEPALIVE int megamem_frame_count() { return platform.frames; }

// Whether the page has stopped drawing: no frames owed to input and nothing the app is still
// working on (frame() skips such frames), so the last frame's layout is the one that stays.
EMSCRIPTEN_KEEPALIVE int megamem_idle() {
  return platform.first_frame_shown && platform.frames_to_draw <= 0 && !platform.app_busy;
}

EMSCRIPTEN_KEEPALIVE const char* megamem_input_log_json() {
  static std::string json;
  nlohmann::json frames = nlohmann::json::array();
  for (const InputLogEntry& e : input_log) {
    frames.push_back({{"frame", e.frame},
                      {"x", e.x},
                      {"y", e.y},
                      {"down", e.down},
                      {"window", e.window},
                      {"hovered_id", e.hovered_id},
                      {"active_id", e.active_id},
                      {"window_y", e.window_y},
                      {"scroll_y", e.scroll_y},
                      {"content_height", e.content_height},
                      {"nav_blocks_hover", e.nav_blocks_hover}});
  }
  // Replace, not throw: a window name is ImGui's bytes, not always whole UTF-8.
  json = frames.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return json.c_str();
}

EMSCRIPTEN_KEEPALIVE void megamem_popstate(const char* url) {
  wake();
  megamem::web::app_open_link(url);
}

EMSCRIPTEN_KEEPALIVE void megamem_set_clipboard(const char* text) { platform.clipboard = text; }

// A font fetched by js_fetch_font: its malloc'd bytes (kept by the atlas), or null.
EMSCRIPTEN_KEEPALIVE void megamem_font_arrived(int font, unsigned char* bytes, int size) {
  wake();
  megamem::web::font_file_arrived(font, bytes, static_cast<std::size_t>(std::max(size, 0)));
}

EMSCRIPTEN_KEEPALIVE void megamem_clipboard_result(int target, const char* text) {
  wake();
  megamem::web::app_clipboard_text(target, text);
}

// A paste over kMaxPasteBytes stayed in the browser; Ctrl+V (target -1) then pastes nothing.
EMSCRIPTEN_KEEPALIVE void megamem_paste_refused(int target, double bytes) {
  wake();
  if (target < 0) platform.clipboard.clear();
  megamem::web::app_paste_refused(target, bytes);
}

EMSCRIPTEN_KEEPALIVE void megamem_wheel(double lines_x, double lines_y) {
  wake();
  ImGui_ImplGlfw_ScrollCallback(platform.window, lines_x, lines_y);
}

// phase 0: a finger is down at (x, y) (canvas pixels); 1: a tap there.
EMSCRIPTEN_KEEPALIVE void megamem_touch(double x, double y, int phase) {
  wake();
  glfwGetCursorPos(platform.window, &platform.mouse_x, &platform.mouse_y);
  platform.touch_pointer = true;
  platform.touch_x = static_cast<float>(x);
  platform.touch_y = static_cast<float>(y);
  if (phase == 1) platform.tap_phase = 2;
}
}

namespace {

// The WebGL2 context on the page's canvas (GLFW emulation), sized to the window.
bool create_window() {
  if (!glfwInit()) {
    std::fprintf(stderr, "megamem: glfwInit failed\n");
    return false;
  }
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);  // WebGL2
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  // As the page made the context (web/shell/index.html): ImGui needs no depth, stencil or alpha.
  glfwWindowHint(GLFW_ALPHA_BITS, 0);
  glfwWindowHint(GLFW_DEPTH_BITS, 0);
  glfwWindowHint(GLFW_STENCIL_BITS, 0);
  platform.pixel_ratio = static_cast<float>(emscripten_get_device_pixel_ratio());
  // At the size the page gave the canvas, so that its drawing buffer is not reallocated.
  int width_px = 0, height_px = 0;
  emscripten_get_canvas_element_size("#canvas", &width_px, &height_px);
  platform.window =
      glfwCreateWindow(std::max(width_px, 1), std::max(height_px, 1), "megamem", nullptr, nullptr);
  if (platform.window == nullptr) {
    std::fprintf(stderr, "megamem: no WebGL2 context\n");
    return false;
  }
  glfwMakeContextCurrent(platform.window);
  follow_window_size();
  return true;
}

// Dear ImGui with its GLFW backend and megamem's WebGL2 renderer; every input wakes the loop.
void init_imgui() {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // no imgui.ini on the web
  // Installed before ImGui's backend, which keeps and calls them: every input wakes the loop.
  glfwSetCursorPosCallback(platform.window, [](GLFWwindow*, double, double) { wake(); });
  glfwSetMouseButtonCallback(platform.window, [](GLFWwindow*, int, int, int) { wake(); });
  glfwSetScrollCallback(platform.window, [](GLFWwindow*, double, double) { wake(); });
  glfwSetKeyCallback(platform.window, [](GLFWwindow*, int, int, int, int) { wake(); });
  glfwSetCharCallback(platform.window, [](GLFWwindow*, unsigned int) { wake(); });
  glfwSetCursorEnterCallback(platform.window, [](GLFWwindow*, int) { wake(); });
  glfwSetWindowFocusCallback(platform.window, [](GLFWwindow*, int) { wake(); });
  ImGui_ImplGlfw_InitForOpenGL(platform.window, true);
  // Keys and characters go through the queue (apply_key_events); ImGui's own callbacks are
  // called from there, and they still call the wake-up callbacks above.
  glfwSetKeyCallback(platform.window, [](GLFWwindow*, int key, int scancode, int action, int mods) {
    key_events.push_back({key, scancode, action, mods, 0});
    wake();
  });
  glfwSetCharCallback(platform.window, [](GLFWwindow*, unsigned int character) {
    key_events.push_back({0, 0, -1, 0, character});
    wake();
  });
  // The GL programs compile in the GPU process while the page starts (gl_program.hpp).
  megamem::web::start_ui_renderer();
  megamem::web::start_timeline_program();
  io.GetClipboardTextFn = get_clipboard;
  io.SetClipboardTextFn = set_clipboard;
}

}  // namespace

int main() {
  megamem::web::mark_startup_step("main");
  if (!create_window()) return 1;
  megamem::web::mark_startup_step("WebGL2 context");
  init_imgui();
  megamem::web::mark_startup_step("ImGui, and the GL programs asked for");
  install_browser_glue(static_cast<double>(megamem::web::kMaxPasteBytes));
  megamem::web::install_js_api(platform.pixel_ratio);
  megamem::web::app_init(platform.pixel_ratio);
  wake();  // hover effects and tooltips settle within the first frames
  emscripten_set_main_loop(frame, 0, true);
  return 0;
}
