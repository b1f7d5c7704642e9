// What the platform-free app asks of the browser (implemented in platform_web.cpp): time,
// the page address and history, and the clipboard.
#pragma once

#include <string>

namespace megamem::web {

double now_seconds();

// location.href, and the address without query and fragment ("http://host/path").
std::string page_url();
std::string page_base_url();

// Shows "?query" in the address bar: a new history entry (push) or in place (replace).
void show_query(const std::string& query, bool push);

// Writes text to the system clipboard (navigator.clipboard, with a fallback).
void copy_to_clipboard(const std::string& text);

// navigator.language ("zh-CN", "en-US").
std::string browser_language();

// Reads the system clipboard asynchronously; the text arrives through
// app_clipboard_text(target, text) (app.hpp).
void read_clipboard(int target);

}  // namespace megamem::web
