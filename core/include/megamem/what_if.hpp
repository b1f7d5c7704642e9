// What-if savings: the same configuration under each recompute and offload choice, with the
// peak it would reach and the saving against the current setting (issue: "which recompute
// or offload setting makes it fit").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/estimate.hpp"

namespace megamem {

struct WhatIfOption {
  std::string label;           // "selective: core_attn, mlp", "full, uniform, 1 layer", ...
  std::string megatron_flags;  // the flags that select it
  Config config;               // the configuration with this choice applied
  bool current = false;        // the configuration as given
  bool valid = true;           // false: Megatron would refuse it (reason in error)
  std::string error;
  std::uint64_t peak_allocated_bytes = 0;  // the limiting rank's
  std::uint64_t peak_total_bytes = 0;
  std::int64_t saving_bytes = 0;  // current peak_total minus this one (positive = saves)
  int limiting_pp_rank = 0;
};

// The current setting first, then each alternative in the order a person would try them.
std::vector<WhatIfOption> what_if_options(const Config& config);

}  // namespace megamem
