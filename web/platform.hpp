// What the platform-free app asks of the browser (implemented in platform_web.cpp): time,
// the page address and history, and the clipboard.
#pragma once

#include <cstddef>
#include <string>

namespace megamem::web {

double now_seconds();

// Marks a start-up step (until the first frame is shown): its emscripten_get_now() time goes
// to window.megamem.marks() and, as a performance.mark(), into a browser performance trace.
void mark_startup_step(const char* step);

// location.href, and the address without query and fragment ("http://host/path").
std::string page_url();
std::string page_base_url();

// Shows "?query" in the address bar: a new history entry (push) or in place (replace).
void show_query(const std::string& query, bool push);

// Writes text to the system clipboard (navigator.clipboard, with a fallback).
void copy_to_clipboard(const std::string& text);

// The largest paste the browser hands to the page (the clipboard's text, for Ctrl+V and the
// import boxes' Paste buttons). Over it the text stays in the browser and the box says why:
// a text box of 100 MB would stall every frame. A training log's argument dump and first
// memory reports fit easily; `megamem compare LOG` reads whole logs.
inline constexpr std::size_t kMaxPasteBytes = std::size_t{8} << 20;

// Offers bytes as a file download (a Blob behind a temporary link).
void download_file(const std::string& file_name, const std::string& bytes,
                   const std::string& mime_type);

// navigator.language ("zh-CN", "en-US").
std::string browser_language();

// Whether the pointer is a finger (the last touch, until a mouse moves): tooltips then open
// and close on taps, since the pointer stays where the finger lifted.
bool pointer_is_touch();
// Fetches a font file of the site ("fonts/NotoSansCJKsc-messages.otf"; index.html may have
// started the fetch already); its bytes arrive through font_file_arrived(font, ...) (fonts.hpp).
void fetch_font_file(int font, const char* path);

// Reads the system clipboard asynchronously; the text arrives through
// app_clipboard_text(target, text) (app.hpp).
void read_clipboard(int target);

}  // namespace megamem::web
