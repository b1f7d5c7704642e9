// estimate --anchor LOG, or --anchor-args "<flags>" --anchor-world-size N --anchor-peak-bytes B
// [--anchor-static-bytes B] [--anchor-reserved-bytes B] [--anchor-rank R], or a --url link with
// anchor= (decode_link_anchor): the estimate
// anchored on a measured run (anchor.hpp, anchor_input.hpp), printed beside the raw one.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "cli_options.hpp"
#include "megamem/anchor.hpp"
#include "megamem/estimate.hpp"

namespace megamem::cli {

// The value options above.
std::set<std::string> anchor_value_options();

// A training log's text, refused when it cannot be read or is over kMaxMegatronLogBytes
// (field: the option that named it).
Expected<std::string> read_log_file(const std::string& path, const std::string& field);

// The anchored estimate when an anchor is given (std::nullopt when none is), or the Error of a
// bad anchor.
Expected<std::optional<AnchoredEstimate>> anchored_from_options(const ParsedOptions& options,
                                                                const Estimate& target);

// Below the table: the anchor, and raw beside anchored per rank (GiB).
void print_anchored(const AnchoredEstimate& anchored);

}  // namespace megamem::cli
