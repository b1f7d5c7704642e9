// Anchoring an estimate on a measured run (issue #26): the estimate of a target configuration,
// corrected by what the estimator got wrong on a run of the same model that was measured.
//
// anchor_estimate() estimates the anchor's configuration with the same estimate() and splits
// the anchor's measured-minus-estimated difference into the terms megamem can tell apart:
//   * static: memory_allocated() after a step minus allocated_after_step_bytes() (only when
//     the anchor gives it);
//   * activation: the rest of the peak difference (max_memory_allocated() minus
//     peak_allocated_bytes, minus the static difference); without a static figure the whole
//     peak difference;
//   * device: max_memory_reserved() minus peak_reserved_bytes, minus the peak difference
//     (only when the anchor gives max reserved): the allocator's caching beyond its model.
// Each is carried to every pipeline rank of the target by what it scales with: the static
// difference per byte of weights, gradients and optimizer state on the rank, the activation
// difference per byte of saved activations at the peak (activation_peak_bytes), the device
// difference per process (as is). Anchored = raw + carried differences, the static and
// activation ones together at most what keeps the anchored peak inside the target's verdict
// band around the raw peak (a warning says where they were limited).
//
// Refused, naming the reason: an anchor of another model (the first architecture field that
// differs), or one that differs in what the differences depend on and the rule cannot carry
// (precision and FP8 recipe, attention backend, MoE token dispatcher); a carried difference
// that would make a term of a target rank negative (the anchor disagrees with the model by
// more than the term itself: nothing to scale). Warned: a different recompute or CUDA-graph
// setting (the activation difference is carried per saved byte, which those change).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/estimate.hpp"
#include "megamem/expected.hpp"
#include "megamem/verdict.hpp"

namespace megamem {

// What was measured on one rank of the anchor run, in bytes.
struct AnchorMeasurement {
  std::string source = "typed in";  // the log's file name, or "typed in"
  std::int64_t world_size = 0;
  std::int64_t global_rank = -1;           // the rank the figures are of; -1 = not known
  int pp_rank = 0;                         // its pipeline rank (compared with that rank's estimate)
  std::uint64_t peak_allocated_bytes = 0;  // torch.cuda.max_memory_allocated()
  std::optional<std::uint64_t> static_bytes;        // memory_allocated() after a step
  std::optional<std::uint64_t> max_reserved_bytes;  // torch.cuda.max_memory_reserved()
  // The iterations its report came after (0: not known, a later one): after one, the peak is
  // the first iteration's (max_allocated_after_bytes).
  std::int64_t iterations = 0;
  std::vector<std::string> notes;  // how the rank was chosen, and so on
};

struct Anchor {
  Config config;  // the anchor run's configuration
  AnchorMeasurement measured;
  // A log's argument dump and typed-in flags do not say which GPU and software stack the run
  // had: unless set, the anchor is taken to have run on the target's (config.device and
  // whether flash-attn is installed come from the target), as a user anchors on their cluster.
  bool environment_known = false;
};

// Refuses numbers no run can have: a zero, NaN-born or absurd peak (over 16 TiB), a static
// figure above the peak, a max reserved below the peak, a pipeline rank the anchor's layout
// does not have, a world size that differs from the configuration's.
std::optional<Error> check_anchor_measurement(const AnchorMeasurement& measured,
                                              const Config& config);

// One term's difference on the anchor and as carried to each target rank (target rank order).
struct AnchorTerm {
  bool measured = false;               // the anchor gives the figure the term needs
  double anchor_difference_bytes = 0;  // measured - estimated on the anchor (signed)
  std::vector<double> carried_bytes;   // per target rank
};

struct AnchoredRank {
  int pp_rank = 0;
  std::uint64_t raw_peak_allocated_bytes = 0;
  std::uint64_t anchored_peak_allocated_bytes = 0;
  std::uint64_t raw_peak_reserved_bytes = 0;
  std::uint64_t anchored_peak_reserved_bytes = 0;
  std::uint64_t raw_peak_total_bytes = 0;
  std::uint64_t anchored_peak_total_bytes = 0;
};

struct AnchoredEstimate {
  AnchorMeasurement anchor;
  // The anchor's own estimate on the measured rank.
  std::uint64_t anchor_estimated_peak_allocated_bytes = 0;
  std::uint64_t anchor_estimated_static_bytes = 0;  // allocated_after_step_bytes
  std::uint64_t anchor_estimated_peak_reserved_bytes = 0;
  AnchorTerm static_term;           // per parameter byte on the rank
  AnchorTerm activation_term;       // per saved activation byte at the peak
  AnchorTerm device_term;           // per process
  std::vector<AnchoredRank> ranks;  // target rank order
  // Target ranks whose carried static and activation differences were scaled down to keep the
  // anchored peak inside the target's error band (anchor_estimate).
  std::vector<int> band_limited_ranks;
  std::vector<std::string> warnings;  // recompute or CUDA graphs differ, ...
};

// The first model-architecture field in which two configurations differ (after defaults are
// resolved), as "model.num_layers: 32 vs 40"; "" when they are the same model.
std::string model_difference(const Config& anchor, const Config& target);

// Anchors target (the estimate of the target configuration) on the measured anchor.
Expected<AnchoredEstimate> anchor_estimate(const Anchor& anchor, const Estimate& target);

// The same with the anchor's configuration already estimated (anchor_config's estimate), for
// callers that anchor many targets on one run (the validation's pairs).
Expected<AnchoredEstimate> anchor_estimate(const AnchorMeasurement& measured,
                                           const Estimate& anchor, const Estimate& target);

// The verdict of the target with each rank's anchored peak in place of its raw one, under the
// target's error band: what a front end shows while an anchor applies.
Verdict anchored_verdict(const Estimate& target, const AnchoredEstimate& anchored);

}  // namespace megamem
