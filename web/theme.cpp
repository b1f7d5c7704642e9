// Dark (default) and light styles, and the UI font at the device's pixel size.
#include "theme.hpp"

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "imgui_impl_opengl3.h"
#include "messages.hpp"

namespace megamem::web::assets {
extern const unsigned char kUiFont[];  // generated/ui_font.cpp (Roboto, or empty)
extern const std::size_t kUiFont_size;
extern const unsigned char kCjkFont[];  // web/messages: Noto Sans CJK SC, the table's subset
extern const std::size_t kCjkFont_size;
}  // namespace megamem::web::assets

namespace megamem::web {
namespace {

struct ThemeState {
  bool light = false;
  float pixel_ratio = 0.0f;
  bool fonts_built = false;
  bool chinese = false;             // every glyph of the message table's Chinese column
  std::vector<ImWchar> cjk_ranges;  // the CJK font's glyphs in the atlas (kept while it lives)
  ImFont* large = nullptr;
};
ThemeState theme;

constexpr float kFontCssPx = 15.0f;
constexpr float kLargeFontCssPx = 19.0f;
// Noto CJK's line (ascent + descent) is 1.448 em, Roboto's 1.172 em; ImGui sizes a font by
// its line, so the CJK face needs ~1.24x the pixel size for ideographs a full em wide (1.2:
// a touch under, the usual optical match with Latin lower case).
constexpr float kCjkScale = 1.2f;
// The language switch's own label, shown in English too.
constexpr const char* kAlwaysShownChinese = "简体中文";

void add_utf8_code_points(const std::string& text, std::set<ImWchar>* points) {
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    unsigned int point = length == 1 ? lead : lead & (0x3Fu >> (length - 1));
    for (std::size_t k = 1; k < length && i + k < text.size(); ++k) {
      point = (point << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
    }
    if (point >= 0x2E80 && point <= 0xFFFF) points->insert(static_cast<ImWchar>(point));
    i += length;
  }
}

// CJK code points for the atlas as ImGui ranges: the switch's label, and with `chinese`
// every CJK character of the message table (the subset font has exactly these).
std::vector<ImWchar> cjk_ranges(bool chinese) {
  std::set<ImWchar> points;
  add_utf8_code_points(kAlwaysShownChinese, &points);
  if (chinese) {
    for (const MessageRow& row : message_rows()) add_utf8_code_points(row.chinese, &points);
  }
  std::vector<ImWchar> ranges;
  for (const ImWchar point : points) {
    if (!ranges.empty() && ranges.back() + 1 == point) {
      ranges.back() = point;
    } else {
      ranges.insert(ranges.end(), {point, point});
    }
  }
  ranges.push_back(0);
  return ranges;
}

// Merges the CJK glyphs into the font just added (size: its pixel size).
void merge_cjk_font(float size_px) {
  if (assets::kCjkFont_size == 0) return;
  ImFontConfig config;
  config.FontDataOwnedByAtlas = false;
  config.MergeMode = true;
  config.OversampleH = 1;  // ideographs are wide: no horizontal oversampling needed
  config.OversampleV = 1;
  void* data = const_cast<unsigned char*>(assets::kCjkFont);
  ImGui::GetIO().Fonts->AddFontFromMemoryTTF(data, static_cast<int>(assets::kCjkFont_size),
                                             size_px * kCjkScale, &config, theme.cjk_ranges.data());
}

void load_fonts(float pixel_ratio) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  // Latin-1 plus the few symbols the page writes (dashes, arrows, multiplication sign).
  static const ImWchar kRanges[] = {0x0020, 0x00FF, 0x2013, 0x2014, 0x2022, 0x2022,
                                    0x2026, 0x2026, 0x2190, 0x2193, 0x2212, 0x2212,
                                    0x2264, 0x2265, 0x25B2, 0x25BC, 0};
  theme.cjk_ranges = cjk_ranges(theme.chinese);
  if (assets::kUiFont_size > 0) {
    ImFontConfig config;
    config.FontDataOwnedByAtlas = false;  // static data compiled into the page
    config.OversampleH = 2;
    config.OversampleV = 1;
    void* data = const_cast<unsigned char*>(assets::kUiFont);
    const int size = static_cast<int>(assets::kUiFont_size);
    io.Fonts->AddFontFromMemoryTTF(data, size, kFontCssPx * pixel_ratio, &config, kRanges);
    merge_cjk_font(kFontCssPx * pixel_ratio);
    theme.large =
        io.Fonts->AddFontFromMemoryTTF(data, size, kLargeFontCssPx * pixel_ratio, &config, kRanges);
    merge_cjk_font(kLargeFontCssPx * pixel_ratio);
  } else {
    ImFontConfig config;
    config.SizePixels = 13.0f * pixel_ratio;
    io.Fonts->AddFontDefault(&config);
    config.SizePixels = 16.0f * pixel_ratio;
    theme.large = io.Fonts->AddFontDefault(&config);
  }
  if (theme.fonts_built) {
    // The atlas changed after the renderer made its texture: make it again.
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  theme.fonts_built = true;
}

}  // namespace

ImU32 muted_text_color() { return theme.light ? rgb(0x5F5F66) : rgb(0x9D9DA0); }
ImU32 strong_text_color() { return theme.light ? rgb(0x111114) : rgb(0xF2F2F4); }
ImU32 panel_background_color() { return theme.light ? rgb(0xF7F7F8) : rgb(0x17171A); }
bool light_theme() { return theme.light; }
ImU32 tight_color() { return theme.light ? rgb(0xA67C00) : kTightColor; }
ImFont* large_font() { return theme.large; }

bool use_chinese_glyphs(bool chinese) {
  if (chinese == theme.chinese) return false;
  theme.chinese = chinese;
  theme.pixel_ratio = 0.0f;  // the next apply_theme() rebuilds the fonts
  return true;
}

void apply_theme(bool light, float pixel_ratio) {
  const bool rebuild_fonts = pixel_ratio != theme.pixel_ratio;
  theme.light = light;
  theme.pixel_ratio = pixel_ratio;

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
  if (!light) {
    colors[ImGuiCol_FrameBg] = ImVec4(0.17f, 0.18f, 0.21f, 1.0f);
    colors[ImGuiCol_Header] = ImVec4(0.22f, 0.24f, 0.29f, 1.0f);
    colors[ImGuiCol_TableRowBgAlt] = ImVec4(1.0f, 1.0f, 1.0f, 0.03f);
  }
  style.ScaleAllSizes(pixel_ratio);
  if (rebuild_fonts) load_fonts(pixel_ratio);
}

}  // namespace megamem::web
