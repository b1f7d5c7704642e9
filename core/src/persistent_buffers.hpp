// Allocations that stay in torch.cuda.memory_allocated() for the whole run but belong to
// no parameter: cuBLAS workspaces, Megatron's global memory buffer, MoE expert-bias
// buffers and a small calibrated remainder (memory-model.md 3.6, C_fixed).
#pragma once

#include <vector>

#include "megamem/estimate.hpp"
#include "parameter_count.hpp"

namespace megamem {

// Per GPU, whatever its pipeline rank holds.
double workspace_bytes(const NormalizedConfig& normalized);

// Megatron's GlobalMemoryBuffer keeps its largest request alive (megatron/core/utils.py):
// the allgather dispatcher's gathered tokens, or local-spec SP all-gathers.
double global_buffer_bytes(const NormalizedConfig& normalized);

// fp32 local_tokens_per_expert and expert_bias of each MoE layer with expert bias
// (megatron/core/transformer/moe/router.py).
double expert_bias_buffer_bytes(const NormalizedConfig& normalized,
                                const std::vector<TensorBlock>& blocks);

}  // namespace megamem
