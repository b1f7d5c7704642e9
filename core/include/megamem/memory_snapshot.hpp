// A rank's estimated training step as a PyTorch memory snapshot, so the estimate opens in the
// viewer real runs open in (pytorch.org/memory_viz, torch/cuda/_memory_viz.py).
//
// torch.cuda.memory._dump_snapshot() pickles the dict torch.cuda.memory._snapshot() returns
// (its docstring in torch/cuda/memory.py is the format):
//   {"segments": [Segment], "device_traces": [[TraceEntry]]}
//   Segment    {device, address, total_size, stream, segment_type, allocated_size,
//               active_size, requested_size, blocks: [Block]}
//   Block      {address, size, requested_size, state: "active_allocated"|"inactive", frames}
//   TraceEntry {action: "segment_alloc"|"alloc"|"free_requested"|"free_completed"|
//               "segment_free", addr, size, stream, frames: [Frame], time_us}
//   Frame      {filename, line, name}
// The estimate has no allocator, so each allocation is its own segment (reserved equals
// allocated; memory_viz's "Active Memory Timeline" is the view to compare). The allocations
// are the rank's static memory (weights, gradients, optimizer state, persistent buffers),
// each micro-batch's saved activations (allocated by its forward, freed by its backward) and
// each operation's transient working memory, in the order of the estimate's timeline. The
// frame's name says what a block is ("activations: micro-batch 3, chunk 0").
//
// memory_snapshot_pickle() returns the bytes of a pickle (protocol 2) of that dict; it does
// no I/O.
#pragma once

#include <string>

#include "megamem/estimate.hpp"
#include "megamem/expected.hpp"

namespace megamem {

// Needs the estimate's timeline (EstimateOptions::timeline); errors name the rank.
Expected<std::string> memory_snapshot_pickle(const Estimate& estimate, int pp_rank);

}  // namespace megamem
