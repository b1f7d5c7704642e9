// The names of all Megatron-LM flags (megatron_flag_names.cpp, generated from arguments.py), for
// sorting unknown flags from Megatron flags that do not change memory, and the argparse
// destination of each flag whose destination is not its own name (for argument dumps).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace megamem::formats {

// True when "--<name_without_dashes>" is a flag of Megatron-LM's pretraining scripts.
bool is_megatron_flag(std::string_view name_without_dashes);

// How many flag names the table holds (for tests).
std::size_t megatron_flag_count();

// What a flag does to its destination: stores its value, or sets it true or false.
enum class DestinationAction { value, sets_true, sets_false };

struct RenamedDestination {
  std::string_view flag;         // without the leading "--"
  std::string_view destination;  // add_argument's dest= or the dataclass field it sets
  DestinationAction action;
};

// The flags whose destination is not the flag's own name with "_" for "-", sorted by flag
// (e.g. fp8-format -> fp8, disable-bias-linear -> add_bias_linear).
std::span<const RenamedDestination> renamed_destinations();

}  // namespace megamem::formats
