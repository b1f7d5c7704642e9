// megamem estimator API: a Config in, per-pipeline-rank memory out.
//
// estimate() validates the layout (every rule Megatron-Core enforces that changes what is
// allocated), places layers on pipeline ranks and virtual chunks, counts parameters per
// module, and prices them as Megatron's DDP buffers and optimizers store them. All byte
// figures are per GPU of the named pipeline rank; GPUs of one rank hold the same amount.
#pragma once

#include "megamem/config.hpp"
#include "megamem/estimate_types.hpp"
#include "megamem/expected.hpp"

namespace megamem {

struct EstimateOptions {
  bool module_tree = true;  // build ChunkMemory::modules (off for fast searches)
  bool timeline = true;     // keep RankMemory::timeline (off for fast searches)
};

// Resolves defaults, places the layers and runs the rule book (core/src/rules): the Error
// names the field and the rule; policies of one launcher or version become warnings.
Expected<NormalizedConfig> normalize(const Config& config);

// The full estimate.
Expected<Estimate> estimate(const Config& config, const EstimateOptions& options = {});

// max_memory_reserved() of a rank while a resume's checkpoint load of load_bytes is allocated
// (RankMemory::resume_load_peak_bytes or resume_load_single_copy_bytes): the allocator's
// reserve at the estimate's own share of the rank's peak (memory-model.md 5, 6).
double resume_reserved_bytes(const RankMemory& rank, std::uint64_t load_bytes);

}  // namespace megamem
