// window.megamem, the page's script interface (platform glue; JavaScript side in js_api.cpp):
//   window.megamem.ready         true once the first frame is on screen
//   window.megamem.state()       {config, megatron_args, world_size, result, error, ...}
//   window.megamem.inputRects()  {label: {x, y, width, height}} in canvas pixels
//   window.megamem.pixelRatio    canvas pixels per CSS pixel
#pragma once

namespace megamem::web {

// Defines window.megamem (ready = false).
void install_js_api(float pixel_ratio);

// Sets window.megamem.ready = true.
void mark_js_api_ready();

}  // namespace megamem::web
