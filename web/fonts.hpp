// The page's font atlas: Roboto (compiled in) at the device's pixel size, and Noto Sans CJK SC
// glyphs from fonts the page fetches only when it needs them (site/fonts/, cut at build time
// by scripts/subset_cjk_font.py):
//   - the message table's characters, when the page shows Chinese (lang=zh or a Chinese
//     browser; index.html starts that fetch beside the wasm's, and the first frame waits
//     for it, up to kChineseFontWaitS);
//   - characters typed or pasted into a text box that the atlas lacks: exactly those glyphs
//     join the atlas, from the messages font, then GB2312's level-1 hanzi with CJK
//     punctuation and full-width forms ("common"), then its level-2 hanzi ("rare"), each
//     fetched only while glyphs are still missing.
// A character in none of them (or beyond U+FFFF, which Dear ImGui 1.86 reads as U+FFFD) shows
// as U+FFFD, the replacement character from Roboto: visible, never a silent '?'.
// English never fetches a CJK font unless CJK text is typed or pasted; the language switch's
// label "简体中文" is drawn from four glyphs compiled in.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "imgui.h"

namespace megamem::web {

// How long the first frame of a Chinese page waits for the messages font (seconds); a page
// whose font is slower shows with U+FFFD and gains the glyphs when it arrives.
inline constexpr double kChineseFontWaitS = 5.0;

// Makes the atlas at the device pixel ratio again when it changed or glyphs were asked for
// (a font arrived, text needs glyphs, the language changed). Call at the start of a frame,
// before any widget: true when the atlas was rebuilt (the frame must begin again).
bool update_fonts(float pixel_ratio);

// True while the next frame has font work: the atlas to make again, or glyphs still missing
// to look for in the next font.
bool fonts_pending();

// Font for headings and the verdict (larger); nullptr before update_fonts().
ImFont* large_font();

// Whether the atlas holds the message table's Chinese glyphs (the page shows Chinese): the
// first time, fetches the messages font.
void use_chinese_glyphs(bool chinese);

// Text typed or pasted into a text box (UTF-8): glyphs it needs that the atlas lacks join it at
// the next frame, fetching the CJK fonts that may hold them. Call when the text changed.
void add_glyphs_for_text(std::string_view text);

// True while the first frame should wait: the page shows Chinese, its font is still loading,
// for less than kChineseFontWaitS.
bool first_frame_waits_for_font();

// A fetched font file (platform_web.cpp): `bytes` (malloc'd, kept for the atlas's lifetime)
// or nullptr when the fetch failed.
void font_file_arrived(int font, unsigned char* bytes, std::size_t size);

// For window.megamem.state().fonts: {files: {path: "not requested"|"loading"|"loaded"|
// "failed"}, pending (a font loading or the atlas about to change), text_code_points (typed
// or pasted beyond Latin-1), missing_glyphs (those the atlas lacks: drawn as the replacement),
// chinese_glyphs_missing (of the message table, when Chinese is shown), replacement_char}.
nlohmann::json fonts_json();

}  // namespace megamem::web
