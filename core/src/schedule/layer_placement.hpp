// Which decoder layers, embedding, loss and MTP layers each (pipeline rank, virtual chunk)
// builds. Follows megatron/core/transformer/transformer_block.py (get_num_layers_to_build),
// transformer_layer.py (get_transformer_layer_offset) and pipeline_parallel_layer_layout.py.
#pragma once

#include <vector>

#include "megamem/estimate_types.hpp"
#include "megamem/expected.hpp"

namespace megamem {

// One entry per stage, indexed vpp_chunk * pipeline_parallel + pp_rank (Megatron's stage
// order). Errors name the flag whose split does not work.
Expected<std::vector<StagePlacement>> place_layers(const NormalizedConfig& normalized);

}  // namespace megamem
