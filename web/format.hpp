// Number formatting shared by the panels (ui.md: GiB with two decimals, never "GB").
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "megamem/units.hpp"

namespace megamem::web {

// printf into a string as long as the text: a translated format (Chinese takes three bytes a
// character) never truncates in a fixed buffer.
[[gnu::format(printf, 1, 2)]] inline std::string printf_text(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list measure;
  va_copy(measure, args);
  const int length = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  std::string text(length > 0 ? static_cast<std::size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(text.data(), text.size() + 1, format, args);
  va_end(args);
  return text;
}

// A configuration's model as a note names it: its name, or `unnamed` (a custom model).
inline const char* model_name_or(const std::string& name, const char* unnamed) {
  return name.empty() ? unnamed : name.c_str();
}

// "58.32 GiB"
inline std::string gib_text(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", to_gib(bytes));
  return text;
}

// "12,345,678,901"
inline std::string grouped(std::uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[static_cast<std::size_t>(i)];
  }
  return out;
}

// "671.0 B", "85.1 M", "12.3 K" parameters.
inline std::string count_text(std::int64_t count) {
  char text[32];
  const double value = static_cast<double>(count);
  if (value >= 1e12) {
    std::snprintf(text, sizeof text, "%.2f T", value / 1e12);
  } else if (value >= 1e9) {
    std::snprintf(text, sizeof text, "%.1f B", value / 1e9);
  } else if (value >= 1e6) {
    std::snprintf(text, sizeof text, "%.1f M", value / 1e6);
  } else if (value >= 1e3) {
    std::snprintf(text, sizeof text, "%.1f K", value / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(count));
  }
  return text;
}

}  // namespace megamem::web
