#include "theme.hpp"

namespace megamem::web {

void apply_theme(float content_scale) {
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 0.0f;
  style.FrameRounding = 3.0f;
  style.WindowBorderSize = 0.0f;
  style.ScaleAllSizes(content_scale);

  // The built-in font is a 13 px bitmap; load it at the device's pixel size so text stays sharp.
  ImGuiIO& io = ImGui::GetIO();
  ImFontConfig font_config;
  font_config.SizePixels = 13.0f * content_scale;
  io.Fonts->AddFontDefault(&font_config);
}

}  // namespace megamem::web
