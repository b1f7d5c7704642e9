// Shortest round-trip decimal text; see number_text.hpp.
#include "number_text.hpp"

#include <cstdio>
#include <cstdlib>

namespace megamem {

std::string shortest_double_text(double value) {
  char buffer[64];
  // %.17g always round-trips; the first shorter precision that does is the shortest text.
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

}  // namespace megamem
