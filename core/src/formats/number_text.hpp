// Numbers as text for the formats (flags, links, presets): the shortest decimal that reads
// back as the same double. std::to_chars(double) is missing from Emscripten 3.1.6's libc++.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace megamem {

std::string shortest_double_text(double value);

// The decimal at the start of `text` (digits, '.', exponent, sign: 1234.5, 1e-05, 3.5GiB),
// with how many characters it took; nullopt when there is none or it is not finite.
struct LeadingNumber {
  double value = 0.0;
  std::size_t length = 0;
};
std::optional<LeadingNumber> leading_number(std::string_view text);

}  // namespace megamem
