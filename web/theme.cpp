// Dark (default) and light styles at the device's pixel size (the fonts: fonts.cpp).
#include "theme.hpp"

namespace megamem::web {
namespace {

struct ThemeState {
  bool light = false;
};
ThemeState theme;

}  // namespace

ImU32 focus_ring_color() { return theme.light ? rgb(0x0B4FB3) : rgb(0x7CC0FF); }
ImU32 muted_text_color() { return theme.light ? rgb(0x5F5F66) : rgb(0x9D9DA0); }
ImU32 strong_text_color() { return theme.light ? rgb(0x111114) : rgb(0xF2F2F4); }
ImU32 panel_background_color() { return theme.light ? rgb(0xF7F7F8) : rgb(0x17171A); }
bool light_theme() { return theme.light; }
ImU32 tight_color() { return theme.light ? rgb(0xA67C00) : kTightColor; }

ImU32 fit_status_color(FitStatus status) {
  return status == FitStatus::fits         ? kFitsColor
         : status == FitStatus::borderline ? tight_color()
                                           : kOverColor;
}

const char* fit_status_word(FitStatus status) {
  return status == FitStatus::fits         ? "fits"
         : status == FitStatus::borderline ? "borderline"
                                           : "does not fit";
}

void apply_theme(bool light, float pixel_ratio) {
  theme.light = light;

  ImGuiStyle& style = ImGui::GetStyle();
  style = ImGuiStyle();
  if (light) {
    ImGui::StyleColorsLight(&style);
  } else {
    ImGui::StyleColorsDark(&style);
  }
  style.WindowRounding = 0.0f;
  style.ChildRounding = 0.0f;
  style.FrameRounding = 3.0f;
  style.GrabRounding = 3.0f;
  style.WindowBorderSize = 0.0f;
  style.WindowPadding = ImVec2(10.0f, 8.0f);
  style.ItemSpacing = ImVec2(8.0f, 5.0f);
  style.ScrollbarSize = 12.0f;
  ImVec4* colors = style.Colors;
  const ImVec4 background = ImGui::ColorConvertU32ToFloat4(panel_background_color());
  colors[ImGuiCol_WindowBg] = background;
  colors[ImGuiCol_ChildBg] = background;
  colors[ImGuiCol_Text] = ImGui::ColorConvertU32ToFloat4(strong_text_color());
  colors[ImGuiCol_TextDisabled] = ImGui::ColorConvertU32ToFloat4(muted_text_color());
  // The page draws the keyboard's ring itself, on every control and as thick as the screen's
  // pixels need (tab_order.cpp): ImGui's own is 2 px on a 3x phone, and 1 px inside a row.
  colors[ImGuiCol_NavHighlight] = ImVec4(0.0f, 0.0f, 0.0f, 0.0f);
  if (light) {
    // ImGui's light frames are white on this near-white panel: checkboxes and inputs get a
    // grey fill and a border so they can be seen (issue 28 item 13).
    colors[ImGuiCol_FrameBg] = ImGui::ColorConvertU32ToFloat4(rgb(0xE2E4E9));
    colors[ImGuiCol_Border] = ImVec4(0.0f, 0.0f, 0.0f, 0.28f);
    style.FrameBorderSize = 1.0f;
  } else {
    colors[ImGuiCol_FrameBg] = ImVec4(0.17f, 0.18f, 0.21f, 1.0f);
    colors[ImGuiCol_Header] = ImVec4(0.22f, 0.24f, 0.29f, 1.0f);
    colors[ImGuiCol_TableRowBgAlt] = ImVec4(1.0f, 1.0f, 1.0f, 0.03f);
  }
  style.ScaleAllSizes(pixel_ratio);
}

}  // namespace megamem::web
