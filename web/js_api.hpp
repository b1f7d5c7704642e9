// window.megamem, the page's script interface (platform glue; JavaScript side in js_api.cpp):
//   window.megamem.ready         true once the first frame is on screen
//   window.megamem.firstFrameMs  performance.now() at the first frame (ms since navigation)
//   window.megamem.mainStartMs   performance.now() when main() started (download + compile)
//   window.megamem.state()       {config, url, result, error, link_error, ...} (app.hpp)
//   window.megamem.inputRects()  {label: {x, y, width, height, kind}} in canvas pixels
//   window.megamem.keyboardFocus() {id, label, window, x, y, ...}: the control with the keyboard
//   window.megamem.frames()      frames drawn so far
//   window.megamem.pixelRatio    canvas pixels per CSS pixel
#pragma once

namespace megamem::web {

// Defines window.megamem (ready = false).
void install_js_api(float pixel_ratio);

// Sets window.megamem.ready = true and records the first frame's time.
void mark_js_api_ready();

}  // namespace megamem::web
