// The font atlas (fonts.hpp): Roboto at the device's pixel size, the language switch's four
// compiled-in CJK glyphs, and the CJK glyphs of the fonts fetched on demand.
#include "fonts.hpp"

#include <array>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "messages.hpp"
#include "platform.hpp"
#include "ui_renderer.hpp"

namespace megamem::web::assets {
extern const unsigned char kUiFont[];  // generated/ui_font.cpp (Roboto, or empty)
extern const std::size_t kUiFont_size;
// web/messages: Noto Sans CJK SC cut to the language switch's label (or empty).
extern const unsigned char kSwitchLabelFont[];
extern const std::size_t kSwitchLabelFont_size;
}  // namespace megamem::web::assets

namespace megamem::web {
namespace {

// The fetched fonts, in the order text asks for them (web/messages/CMakeLists.txt cuts them).
enum CjkFont : int { kMessagesFont, kCommonFont, kRareFont, kCjkFontCount };
constexpr std::array<const char*, kCjkFontCount> kCjkFontPaths = {
    "fonts/NotoSansCJKsc-messages.otf", "fonts/NotoSansCJKsc-common.otf",
    "fonts/NotoSansCJKsc-rare.otf"};
enum class FileStatus { not_requested, loading, loaded, failed };
constexpr std::array<const char*, 4> kStatusNames = {"not requested", "loading", "loaded",
                                                     "failed"};

struct FontFile {
  FileStatus status = FileStatus::not_requested;
  unsigned char* bytes = nullptr;  // malloc'd by the fetch; lives as long as the page
  std::size_t size = 0;
};

struct FontState {
  float pixel_ratio = 0.0f;  // of the atlas configured; 0: none yet
  bool stale = false;        // glyphs were asked for or a font arrived: configure it again
  bool check_missing = false;
  bool chinese = false;  // the message table's Chinese glyphs are wanted
  double chinese_requested_s = 0.0;
  std::array<FontFile, kCjkFontCount> files;
  std::set<ImWchar> text_points;  // beyond the base ranges, typed or pasted
  // Glyph ranges handed to the atlas: they must live as long as its configuration.
  std::vector<ImWchar> text_ranges, chinese_ranges, messages_ranges, switch_ranges;
  ImFont* text = nullptr;
  ImFont* large = nullptr;
};
FontState fonts;

constexpr float kFontCssPx = 15.0f;
constexpr float kLargeFontCssPx = 19.0f;
// Noto CJK's line (ascent + descent) is 1.448 em, Roboto's 1.172 em; ImGui sizes a font by
// its line, so the CJK face needs ~1.24x the pixel size for ideographs a full em wide (1.2:
// a touch under, the usual optical match with Latin lower case).
constexpr float kCjkScale = 1.2f;
// The language switch's label (top_bar.cpp), shown in English too; the compiled-in font holds
// exactly these glyphs (web/messages/CMakeLists.txt).
constexpr const char* kSwitchLabel = "简体中文";
// Latin-1 plus the few symbols the page writes (dashes, arrows, multiplication sign), and
// U+FFFD: ImGui draws it for any character the atlas lacks (its first choice of fallback).
constexpr ImWchar kBaseRanges[] = {0x0020, 0x00FF, 0x2013, 0x2014, 0x2022, 0x2022, 0x2026,
                                   0x2026, 0x2190, 0x2193, 0x2212, 0x2212, 0x2264, 0x2265,
                                   0x25B2, 0x25BC, 0xFFFD, 0xFFFD, 0};

bool in_base_ranges(unsigned point) {
  for (const ImWchar* range = kBaseRanges; range[0] != 0; range += 2) {
    if (point >= range[0] && point <= range[1]) return true;
  }
  return false;
}

// Code points of UTF-8 text (malformed bytes are skipped as ImGui skips them).
template <typename Visit>
void for_each_code_point(std::string_view text, Visit visit) {
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    unsigned point = length == 1 ? lead : lead & (0x3Fu >> (length - 1));
    for (std::size_t k = 1; k < length && i + k < text.size(); ++k) {
      point = (point << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
    }
    visit(point);
    i += length;
  }
}

// Sorted code points as ImGui ranges (pairs, 0-terminated).
std::vector<ImWchar> ranges_of(const std::set<ImWchar>& points) {
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

// The CJK code points of the message table's Chinese column (the messages font has these).
const std::set<ImWchar>& message_points() {
  static const std::set<ImWchar> points = [] {
    std::set<ImWchar> out;
    for (const MessageRow& row : message_rows()) {
      for_each_code_point(row.chinese, [&](unsigned point) {
        if (point >= 0x2E80 && point <= 0xFFFF) out.insert(static_cast<ImWchar>(point));
      });
    }
    return out;
  }();
  return points;
}

// Blocks the CJK fonts may hold (GB2312's symbols, punctuation, ideographs, full-width forms):
// only these make the page fetch one.
bool may_be_in_cjk_fonts(ImWchar point) {
  return (point >= 0x2000 && point <= 0x2BFF) || (point >= 0x2E80 && point <= 0x9FFF) ||
         (point >= 0xF900 && point <= 0xFAFF) || (point >= 0xFE30 && point <= 0xFE4F) ||
         (point >= 0xFF00 && point <= 0xFFEF);
}

void request_font(int font) {
  fonts.files[font].status = FileStatus::loading;
  fetch_font_file(font, kCjkFontPaths[font]);
}

bool loaded(int font) { return fonts.files[font].status == FileStatus::loaded; }

// Text code points the atlas lacks (after it was built).
std::vector<ImWchar> missing_text_points() {
  std::vector<ImWchar> missing;
  if (fonts.text == nullptr || !ImGui::GetIO().Fonts->IsBuilt()) return missing;
  for (const ImWchar point : fonts.text_points) {
    if (fonts.text->FindGlyphNoFallback(point) == nullptr) missing.push_back(point);
  }
  return missing;
}

// Glyphs still missing that a CJK font may hold: fetch the next font not yet tried.
void fetch_fonts_for_missing_glyphs() {
  for (const FontFile& file : fonts.files) {
    if (file.status == FileStatus::loading) return;  // one at a time, in order
  }
  bool wanted = false;
  for (const ImWchar point : missing_text_points()) wanted |= may_be_in_cjk_fonts(point);
  if (!wanted) return;
  for (int font = 0; font < kCjkFontCount; ++font) {
    if (fonts.files[font].status == FileStatus::not_requested) {
      request_font(font);
      return;
    }
  }
}

ImFont* add_font(const unsigned char* data, std::size_t size, float size_px, bool merge,
                 const ImWchar* ranges, int oversample_h) {
  ImFontConfig config;
  config.FontDataOwnedByAtlas = false;  // compiled in, or kept in FontFile
  config.MergeMode = merge;
  config.OversampleH = oversample_h;  // ideographs are wide: no horizontal oversampling needed
  config.OversampleV = 1;
  return ImGui::GetIO().Fonts->AddFontFromMemoryTTF(
      const_cast<unsigned char*>(data), static_cast<int>(size), size_px, &config, ranges);
}

void merge_cjk(int font, float size_px, const std::vector<ImWchar>& ranges) {
  if (!loaded(font) || ranges.size() < 2) return;
  add_font(fonts.files[font].bytes, fonts.files[font].size, size_px * kCjkScale, true,
           ranges.data(), 1);
}

void merge_switch_label(float size_px) {
  if (assets::kSwitchLabelFont_size == 0) return;
  add_font(assets::kSwitchLabelFont, assets::kSwitchLabelFont_size, size_px * kCjkScale, true,
           fonts.switch_ranges.data(), 1);
}

// The text font: Roboto, then every CJK glyph wanted (the table's when Chinese, the text's).
void add_text_font(float size_px) {
  fonts.text = add_font(assets::kUiFont, assets::kUiFont_size, size_px, false, kBaseRanges, 2);
  if (!fonts.text_points.empty()) {
    add_font(assets::kUiFont, assets::kUiFont_size, size_px, true, fonts.text_ranges.data(), 2);
  }
  merge_switch_label(size_px);
  merge_cjk(kMessagesFont, size_px, fonts.chinese_ranges);
  merge_cjk(kCommonFont, size_px, fonts.text_ranges);
  merge_cjk(kRareFont, size_px, fonts.text_ranges);
}

// The glyph ranges of this configuration, kept while the atlas lives.
void make_ranges() {
  std::set<ImWchar> switch_points;
  for_each_code_point(kSwitchLabel,
                      [&](unsigned point) { switch_points.insert(static_cast<ImWchar>(point)); });
  fonts.switch_ranges = ranges_of(switch_points);
  fonts.text_ranges = ranges_of(fonts.text_points);
  fonts.messages_ranges = ranges_of(fonts.chinese ? message_points() : std::set<ImWchar>{});
  std::set<ImWchar> chinese = fonts.text_points;
  if (fonts.chinese) chinese.insert(message_points().begin(), message_points().end());
  fonts.chinese_ranges = ranges_of(chinese);
}

void configure_atlas(float pixel_ratio) {
  ImFontAtlas& atlas = *ImGui::GetIO().Fonts;
  atlas.Clear();
  if (assets::kUiFont_size == 0) {  // no Roboto: ImGui's built-in bitmap font, Latin only
    ImFontConfig config;
    config.SizePixels = 13.0f * pixel_ratio;
    fonts.text = atlas.AddFontDefault(&config);
    config.SizePixels = 16.0f * pixel_ratio;
    fonts.large = atlas.AddFontDefault(&config);
    return;
  }
  make_ranges();
  add_text_font(kFontCssPx * pixel_ratio);
  const float large_px = kLargeFontCssPx * pixel_ratio;
  fonts.large = add_font(assets::kUiFont, assets::kUiFont_size, large_px, false, kBaseRanges, 2);
  merge_switch_label(large_px);
  merge_cjk(kMessagesFont, large_px, fonts.messages_ranges);
}

}  // namespace

bool update_fonts(float pixel_ratio) {
  if (fonts.check_missing && ImGui::GetIO().Fonts->IsBuilt()) {
    fonts.check_missing = false;
    fetch_fonts_for_missing_glyphs();
  }
  if (pixel_ratio == fonts.pixel_ratio && !fonts.stale) return false;
  const bool had_texture = ImGui::GetIO().Fonts->TexID != nullptr;
  fonts.pixel_ratio = pixel_ratio;
  fonts.stale = false;
  configure_atlas(pixel_ratio);
  if (had_texture) {
    // The atlas changed after the renderer made its texture: make it again (this builds it).
    upload_ui_font_texture();
  }
  fonts.check_missing = true;  // once built, glyphs still missing may fetch the next font
  return true;
}

ImFont* large_font() { return fonts.large; }

bool fonts_pending() { return fonts.stale || fonts.check_missing; }

void use_chinese_glyphs(bool chinese) {
  if (chinese == fonts.chinese) return;
  fonts.chinese = chinese;
  if (chinese && fonts.files[kMessagesFont].status == FileStatus::not_requested) {
    fonts.chinese_requested_s = now_seconds();
    request_font(kMessagesFont);
  }
  fonts.stale |= loaded(kMessagesFont);
}

void add_glyphs_for_text(std::string_view text) {
  for_each_code_point(text, [](unsigned point) {
    // Beyond U+FFFF ImGui 1.86 (16-bit ImWchar) draws U+FFFD, which the atlas always has.
    if (point < 0x100 || point > 0xFFFF || in_base_ranges(point)) return;
    fonts.stale |= fonts.text_points.insert(static_cast<ImWchar>(point)).second;
  });
}

bool first_frame_waits_for_font() {
  return fonts.chinese && fonts.files[kMessagesFont].status == FileStatus::loading &&
         now_seconds() - fonts.chinese_requested_s < kChineseFontWaitS;
}

void font_file_arrived(int font, unsigned char* bytes, std::size_t size) {
  if (font < 0 || font >= kCjkFontCount) return;
  FontFile& file = fonts.files[font];
  file.status = bytes != nullptr ? FileStatus::loaded : FileStatus::failed;
  file.bytes = bytes;
  file.size = size;
  mark_startup_step(bytes != nullptr ? "CJK font arrived" : "CJK font failed");
  fonts.stale |= bytes != nullptr;
  fonts.check_missing = true;  // a failed font: the next one may hold the glyphs
}

nlohmann::json fonts_json() {
  nlohmann::json files = nlohmann::json::object();
  for (int font = 0; font < kCjkFontCount; ++font) {
    files[kCjkFontPaths[font]] = kStatusNames[static_cast<int>(fonts.files[font].status)];
  }
  nlohmann::json missing = nlohmann::json::array();
  for (const ImWchar point : missing_text_points()) missing.push_back(point);
  int chinese_missing = 0;
  if (fonts.chinese && fonts.text != nullptr && ImGui::GetIO().Fonts->IsBuilt()) {
    for (const ImWchar point : message_points()) {
      chinese_missing += fonts.text->FindGlyphNoFallback(point) == nullptr ? 1 : 0;
    }
  }
  bool loading = false;
  for (const FontFile& file : fonts.files) loading |= file.status == FileStatus::loading;
  return {{"files", files},
          {"pending", loading || fonts_pending()},
          {"text_code_points", fonts.text_points.size()},
          {"missing_glyphs", missing},
          {"chinese_glyphs_missing", chinese_missing},
          {"replacement_char", fonts.text != nullptr ? fonts.text->FallbackChar : 0}};
}

}  // namespace megamem::web
