// The recompute and offload choices that apply to a model, named once for the planner's
// search rows and the what-if table.
#pragma once

#include <string>
#include <vector>

#include "megamem/config.hpp"

namespace megamem {

// Selective recompute module sets worth trying for this model, least memory saved first
// (transformer_config.py's modules, each only where its layer exists).
std::vector<RecomputeModules> selective_recompute_choices(const Config& base);

// Every offload module that holds saved tensors for this architecture (the module specs'
// offload handles): standalone norms only exist in MLA (input) and MoE (pre-MLP) layers or
// the local spec; TE fuses them into qkv_linear / fc1.
OffloadModules activation_offload_choice(const Config& base);

// "core_attn, mlp" (labels) or "core_attn mlp" (flags), in the modules table's order.
template <class Module>
std::string join_module_names(ModuleSet<Module> set, const char* separator) {
  std::string out;
  for (const std::string& name : module_name_list(set)) {
    out += (out.empty() ? "" : separator) + name;
  }
  return out;
}

}  // namespace megamem
