// The web app's state: the inputs being edited, the last valid estimate and the current error.
// One struct, owned by app.cpp; panels receive it by reference and own nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "megamem/config.hpp"
#include "megamem/estimate.hpp"
#include "megamem/expected.hpp"

namespace megamem::web {

// Screen rectangle of one labelled input, in canvas pixels (for tests that click on it).
struct WidgetRect {
  float x = 0, y = 0, width = 0, height = 0;
};

struct AppState {
  Config config;                          // what the inputs edit; fed to megamem::estimate
  std::optional<Estimate> last_estimate;  // last valid result, kept while inputs are invalid
  std::optional<Error> error;             // why the current inputs are invalid, if they are
  std::map<std::string, WidgetRect> input_rects;  // by input label, refreshed every frame
  std::uint64_t estimates_computed = 0;           // how often the inputs changed
};

}  // namespace megamem::web
