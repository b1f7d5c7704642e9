#include "js_api.hpp"

#include <emscripten.h>

#include <string>

#include "app.hpp"

// Exported to JavaScript (EMSCRIPTEN_KEEPALIVE); each returns a JSON string that stays valid
// until the next call of the same function.
extern "C" {
EMSCRIPTEN_KEEPALIVE const char* megamem_state_json() {
  static std::string json;
  json = megamem::web::app_state_json();
  return json.c_str();
}

EMSCRIPTEN_KEEPALIVE double megamem_full_estimate_ms(int repeats) {
  return megamem::web::app_full_estimate_ms(repeats);
}

EMSCRIPTEN_KEEPALIVE const char* megamem_keyboard_focus_json() {
  static std::string json;
  json = megamem::web::app_keyboard_focus_json();
  return json.c_str();
}

EMSCRIPTEN_KEEPALIVE const char* megamem_input_rects_json() {
  static std::string json;
  json = megamem::web::app_input_rects_json();
  return json.c_str();
}
}

namespace {

// clang-format off
EM_JS(void, define_window_megamem, (double pixel_ratio), {
  window.megamem = {
    ready: false,
    firstFrameMs: null,
    mainStartMs: performance.now(),
    pixelRatio: pixel_ratio,
    state: function() { return JSON.parse(UTF8ToString(_megamem_state_json())); },
    inputRects: function() { return JSON.parse(UTF8ToString(_megamem_input_rects_json())); },
    keyboardFocus: function() { return JSON.parse(UTF8ToString(_megamem_keyboard_focus_json())); },
    inputLog: function() { return JSON.parse(UTF8ToString(_megamem_input_log_json())); },
    frames: function() { return _megamem_frame_count(); },
    idle: function() { return _megamem_idle() !== 0; },
    marks: function() { return Module.megamemMarks || []; },
    fullEstimateMs: function(repeats) { return _megamem_full_estimate_ms(repeats); },
  };
});

EM_JS(void, set_window_megamem_ready, (), {
  window.megamem.firstFrameMs = performance.now();
  window.megamem.ready = true;
});
// clang-format on

}  // namespace

namespace megamem::web {

void install_js_api(float pixel_ratio) { define_window_megamem(pixel_ratio); }

void mark_js_api_ready() { set_window_megamem_ready(); }

}  // namespace megamem::web
