// Numbers as text for the formats (flags, links, presets): the shortest decimal that reads
// back as the same double. std::to_chars(double) is missing from Emscripten 3.1.6's libc++.
#pragma once

#include <string>

namespace megamem {

std::string shortest_double_text(double value);

}  // namespace megamem
