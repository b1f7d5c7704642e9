// Shortest round-trip decimal text; see number_text.hpp.
#include "number_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace megamem {

std::string shortest_double_text(double value) {
  char buffer[64];
  // %.17g always round-trips; the first shorter precision that does is the shortest text.
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  // %g writes 60 as "6e+01"; a person (and a share link) reads "60" better. Plain decimals
  // for magnitudes people type, exponents only beyond them.
  const double magnitude = value < 0 ? -value : value;
  if (std::strchr(buffer, 'e') == nullptr || magnitude < 1e-4 || magnitude >= 1e15) return buffer;
  for (int decimals = 0; decimals <= 17; ++decimals) {
    char fixed[64];
    std::snprintf(fixed, sizeof(fixed), "%.*f", decimals, value);
    if (std::strtod(fixed, nullptr) == value) return fixed;
  }
  return buffer;
}

std::optional<LeadingNumber> leading_number(std::string_view text) {
  std::size_t length = 0;
  while (length < text.size() &&
         std::string_view("0123456789.eE+-").find(text[length]) != std::string_view::npos) {
    ++length;
  }
  const std::string digits(text.substr(0, length));
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(value)) return std::nullopt;
  return LeadingNumber{value, length};
}

}  // namespace megamem
