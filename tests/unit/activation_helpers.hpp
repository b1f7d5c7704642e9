// Shared by the unit tests that check a layer module's saved tensors by hand: the bytes a
// layer's profile saves in the given modules.
#pragma once

#include <algorithm>
#include <initializer_list>

#include "memory/activations.hpp"
#include "modules/module_spec.hpp"

namespace megamem::testing {

inline double module_saved_bytes(const LayerActivations& layer,
                                 std::initializer_list<ModuleKind> modules) {
  double out = 0;
  for (const SavedActivation& s : layer.saved) {
    if (std::find(modules.begin(), modules.end(), s.module) != modules.end()) out += s.bytes;
  }
  return out;
}

// The attention block's own tensors: its input norm and the attention module.
inline double attention_saved_bytes(const LayerActivations& layer) {
  return module_saved_bytes(layer, {ModuleKind::self_attention, ModuleKind::input_layernorm});
}

}  // namespace megamem::testing
