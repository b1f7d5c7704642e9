// A hybrid model's layer pattern from the ratio settings, as the two allocators compute it:
// Megatron-LM's --hybrid-attention-ratio / --hybrid-mlp-ratio
// (megatron/core/models/hybrid/hybrid_layer_allocation.py pattern_from_ratios) and
// Megatron-Bridge's Falcon-H1 provider with its falconh1_ratio
// (src/megatron/bridge/models/falcon_h1/modeling_falconh1/mamba_hybrid_layer_allocation.py
// _allocate_auto), which first places the same attention and MLP layers.
#pragma once

#include <string>

namespace megamem::formats {

// One symbol per layer: attention '*' evenly spaced among Mamba 'M' layers, then MLP '-'
// among the remaining Mamba layers, then parallel 'P' (Falcon-H1) among those left.
std::string pattern_from_ratios(int layers, double attention_ratio, double mlp_ratio,
                                double parallel_ratio = 0.0);

}  // namespace megamem::formats
