// A training log beside the estimate of its run (see megatron_log.hpp, compare_megatron_log).
#include <string>
#include <utility>
#include <vector>

#include "megamem/estimate.hpp"
#include "megamem/megatron_log.hpp"

namespace megamem {

Expected<LogComparison> compare_megatron_log(std::string_view text,
                                             const LogComparisonOptions& options) {
  LogComparison out;
  Expected<MegatronLog> log = read_megatron_log(text);
  if (!log) return log.error();
  out.log = std::move(log).value();
  Expected<LogConfig> config = log_config(out.log, options.vocab_size);
  if (!config) return config.error();
  out.config = std::move(config).value();
  out.shared = with_detected_presets(out.config.args.config);
  if (!options.gpu_id.empty()) {
    Expected<SharedConfig> applied = apply_share_parameters(out.shared, {{"gpu", options.gpu_id}});
    if (!applied) return Error{"gpu", applied.error().message};
    out.shared = std::move(applied).value();
  }
  // Timelines kept: a front end may write a rank's memory snapshot of the same estimate.
  Expected<Estimate> estimated = estimate(out.shared.config, EstimateOptions{});
  if (!estimated) return estimated.error();
  out.estimate = std::move(estimated).value();
  Expected<std::vector<RankComparison>> ranks = compare_log(out.log, out.config, out.estimate);
  if (!ranks) return ranks.error();
  out.ranks = std::move(ranks).value();
  return out;
}

std::vector<std::string> log_comparison_warnings(const LogComparison& comparison) {
  std::vector<std::string> out = comparison.config.args.warnings;
  for (const std::string& flag : comparison.config.args.unmodeled_flags) {
    out.push_back(flag + " changes memory but is not modeled; the estimate leaves it out");
  }
  out.insert(out.end(), comparison.estimate.warnings.begin(), comparison.estimate.warnings.end());
  return out;
}

std::vector<std::string> log_comparison_notes(const LogComparison& comparison) {
  const std::vector<std::string>& unused = comparison.config.unused_arguments;
  if (unused.empty()) return {};
  std::string names;
  for (const std::string& name : unused) names += (names.empty() ? "" : " ") + name;
  return {
      "dumped values that are no flag of this Megatron-LM version (derived, or from another "
      "version), not used: " +
      names};
}

}  // namespace megamem
