// The names of all Megatron-LM flags (megatron_flag_names.cpp), for sorting unknown flags from
// Megatron flags that do not change memory.
#pragma once

#include <cstddef>
#include <string_view>

namespace megamem::formats {

// True when "--<name_without_dashes>" is a flag of Megatron-LM's pretraining scripts.
bool is_megatron_flag(std::string_view name_without_dashes);

// How many flag names the table holds (for tests).
std::size_t megatron_flag_count();

}  // namespace megamem::formats
