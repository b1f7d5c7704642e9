// estimate --snapshot FILE [--rank P]: the estimated step of pipeline rank P (default: the
// limiting rank) written as a PyTorch memory snapshot pickle (memory_snapshot.hpp), for
// pytorch.org/memory_viz.
#pragma once

#include "cli_options.hpp"
#include "megamem/estimate.hpp"

namespace megamem::cli {

// Writes the file when --snapshot is given; returns the exit code (kExitOk when not asked).
int write_snapshot_option(const ParsedOptions& options, const Estimate& estimate);

}  // namespace megamem::cli
