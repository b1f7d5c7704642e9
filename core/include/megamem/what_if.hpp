// What-if savings: the same configuration under each recompute and offload choice, with the
// peak it would reach and the saving against the current setting (issue: "which recompute
// or offload setting makes it fit").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/estimate_types.hpp"

namespace megamem {

// A what-if row with the configuration it stands for.
struct WhatIfOption : WhatIfRow {
  Config config;  // the configuration with this choice applied
};

// The current setting first, then each alternative in the order a person would try them.
std::vector<WhatIfOption> what_if_options(const Config& config);

}  // namespace megamem
