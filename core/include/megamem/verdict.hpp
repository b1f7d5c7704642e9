// The one "does it fit" decision (issue 24): each rank's device peak against the card's
// capacity, with the error band the validation data gives the configuration's features.
// The CLI, the page, the planner and the exports read it; none decides on its own.
//
// The band: signed relative errors (estimated - measured) / measured of the allocator peak
// over the validated runs (megatron-ci, community, bridge-recipes), per feature of the
// configuration (configuration_features), as committed in core/src/error_bands.inc, which
// `megamem validate --bands core/src/error_bands.inc` writes. The configuration's band spans
// the 5th to 95th percentile of every feature it uses; a feature with fewer than
// kMinBandRuns validated configurations contributes its runs' extreme errors instead (too few
// for percentiles), one with none the largest error seen in any file, and is named in
// few_runs_features. memory-model.md, "The verdict", states the rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace megamem {

struct Config;
struct Estimate;

enum class FitStatus { fits, borderline, does_not_fit };
const char* fit_status_name(FitStatus status);  // "fits", "borderline", "does_not_fit"

inline constexpr int kMinBandRuns = 8;

// One feature's spread in the committed table.
struct FeatureBand {
  const char* feature;
  int runs;             // distinct validated configurations with the feature
  double low_percent;   // 5th percentile of the signed relative peak error
  double high_percent;  // 95th percentile
  double min_percent;   // the most negative error of those runs
  double max_percent;   // the most positive
};

// The committed table (error_bands.inc): "all" first, then each feature.
const std::vector<FeatureBand>& feature_bands();
// The largest |relative peak error| of any validated run: a thin feature's band.
double widest_error_percent();

struct ErrorBand {
  double low_percent = 0;   // the estimate may be this far under (negative) ...
  double high_percent = 0;  // ... or this far over the measurement
  // The configuration's feature with the fewest validated configurations ("all" when it
  // uses none), and that count.
  std::string thinnest_feature = "all";
  int runs = 0;
  std::vector<std::string> features;           // the configuration's features
  std::vector<std::string> few_runs_features;  // used, but with < kMinBandRuns runs
};

struct RankVerdict {
  int pp_rank = 0;
  FitStatus status = FitStatus::fits;
  std::int64_t headroom_bytes = 0;  // capacity - peak_total_bytes (negative: over)
  // peak_total_bytes with the allocator's part moved to the band's edges.
  std::uint64_t low_total_bytes = 0;
  std::uint64_t high_total_bytes = 0;
};

struct Verdict {
  FitStatus status = FitStatus::fits;  // the worst rank's
  int limiting_pp_rank = 0;
  std::int64_t headroom_bytes = 0;  // the limiting rank's
  std::uint64_t capacity_bytes = 0;
  ErrorBand band;
  std::vector<RankVerdict> ranks;
};

// The features the band table is kept for ("moe", "fp8", "pp", ...), in table order.
std::vector<std::string> configuration_features(const Config& config);

// The band of a set of features (from configuration_features); the band keeps them (taken by
// value: callers hand a temporary over rather than have it copied).
ErrorBand error_band(std::vector<std::string> features);

// A peak total's range under a band: the allocator's part (peak_reserved) divided by
// 1 + error at each edge, the memory outside the allocator as it is.
struct TotalRange {
  std::uint64_t low_bytes = 0;
  std::uint64_t high_bytes = 0;
};
TotalRange total_range(const ErrorBand& band, std::uint64_t peak_reserved_bytes,
                       std::uint64_t peak_total_bytes);
// One edge of that range: the total if the estimate errs by `error_percent` (the band's low
// edge gives the range's high bytes). The planner needs only that one.
std::uint64_t total_at_error(double error_percent, std::uint64_t peak_reserved_bytes,
                             std::uint64_t peak_total_bytes);

// fits: the range's top fits the capacity; does_not_fit: its bottom does not; else borderline.
FitStatus fit_status(const TotalRange& range, std::uint64_t capacity_bytes);

// The verdict of an estimate's ranks (estimate() fills Estimate::verdict with it).
Verdict verdict_of(const Estimate& estimate);

}  // namespace megamem
