// Device memory outside PyTorch's allocator (memory-model.md 7.3): the CUDA context, NCCL
// buffers of each communicator a rank actually uses, allocator fragmentation, and the
// DeepEP/HybridEP buffers of the flex dispatcher. All are user-set constants
// (RuntimeOverheadConfig); the CI measurements contain none of them.
#pragma once

#include "megamem/estimate.hpp"

namespace megamem {

// The number of NCCL communicators with more than one member that a rank uses.
int active_communicators(const NormalizedConfig& normalized);

double runtime_overhead_bytes(const NormalizedConfig& normalized, double peak_allocated_bytes);

}  // namespace megamem
