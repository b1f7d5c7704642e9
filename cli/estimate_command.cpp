// megamem estimate: Megatron-LM flags -> per-pipeline-rank memory, as a table or JSON.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "commands.hpp"
#include "megamem/estimate.hpp"
#include "megamem/json_output.hpp"
#include "megamem/megatron_args.hpp"

namespace megamem::cli {
namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", static_cast<double>(bytes) / kBytesPerGiB);
  return text;
}

// "671.0 B", "85.1 M": parameter counts in the units of ui.md's header line.
std::string parameter_count(std::int64_t params) {
  char text[32];
  const double value = static_cast<double>(params);
  if (value >= 1e9) {
    std::snprintf(text, sizeof(text), "%.1f B", value / 1e9);
  } else {
    std::snprintf(text, sizeof(text), "%.1f M", value / 1e6);
  }
  return text;
}

std::string pad_left(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

// ui.md "WHAT-IF": the limiting rank's peak under each recompute/offload choice.
void print_what_if(const Estimate& estimate) {
  if (estimate.what_if.empty()) return;
  std::size_t width = 7;
  for (const WhatIfRow& row : estimate.what_if) width = std::max(width, row.label.size());
  const auto padded = [&](const std::string& label) {
    return label + std::string(width + 2 - label.size(), ' ');
  };
  std::cout << "\n" << padded("what-if") << "   peak   saving\n";
  for (const WhatIfRow& row : estimate.what_if) {
    std::cout << padded(row.label);
    if (!row.valid) {
      std::cout << "not allowed: " << row.error << "\n";
      continue;
    }
    char cells[64];
    if (row.current) {
      std::snprintf(cells, sizeof(cells), "%7s        —", gib(row.peak_total_bytes).c_str());
    } else {
      const double saving = static_cast<double>(row.saving_bytes) / kBytesPerGiB;
      std::snprintf(cells, sizeof(cells), "%7s   %+6.2f", gib(row.peak_total_bytes).c_str(),
                    -saving);
    }
    std::cout << cells << "\n";
  }
}

// ui.md "The CLI": a header line with the model and the layout, then one row per PP rank.
void print_table(const Estimate& estimate) {
  const NormalizedConfig& n = estimate.normalized;
  const Config& c = n.config;
  const std::string name = c.model.name.empty() ? "Megatron-LM model" : c.model.name;
  std::cout << name << " (" << parameter_count(estimate.totals.params) << " params) on "
            << c.parallel.world_size << " GPUs · TP" << c.parallel.tensor_parallel << " PP"
            << c.parallel.pipeline_parallel;
  if (c.parallel.virtual_stages_per_pipeline_rank > 1) {
    std::cout << " VPP" << c.parallel.virtual_stages_per_pipeline_rank;
  }
  std::cout << " EP" << c.parallel.expert_parallel << " CP" << c.parallel.context_parallel
            << " · DP" << n.data_parallel << " expert-DP" << n.expert_data_parallel << " · mbs "
            << c.training.micro_batch_size << " · seq " << c.training.seq_length << "\n";

  // Per rank: the static parts, the step's activations and transients at the peak, the
  // runtime overheads outside the allocator, the peak the card must hold, and the headroom.
  const double capacity_gib = c.device.capacity_gib;
  char fits_header[32];
  std::snprintf(fits_header, sizeof(fits_header), "fits (%.1f GiB)", capacity_gib);
  const std::vector<std::string> headers = {"rank",   "weights",     "grads",      "optimizer",
                                            "static", "activations", "transients", "runtime",
                                            "peak",   fits_header};
  std::string line;
  for (std::size_t i = 0; i < headers.size(); ++i) line += (i ? "  " : "") + headers[i];
  std::cout << line << "\n";
  for (const RankMemory& rank : estimate.ranks) {
    const double peak_gib = static_cast<double>(rank.peak_total_bytes) / kBytesPerGiB;
    char fits[48];
    if (peak_gib <= capacity_gib) {
      std::snprintf(fits, sizeof(fits), "yes  %.1f free", capacity_gib - peak_gib);
    } else {
      std::snprintf(fits, sizeof(fits), "no   %.1f over", peak_gib - capacity_gib);
    }
    const std::vector<std::string> cells = {
        std::to_string(rank.pp_rank), gib(rank.weight_bytes),
        gib(rank.gradient_bytes),     gib(rank.optimizer_bytes),
        gib(rank.static_bytes),       gib(rank.activation_peak_bytes),
        gib(rank.transient_bytes),    gib(rank.runtime_overhead_bytes),
        gib(rank.peak_total_bytes)};
    line.clear();
    for (std::size_t i = 0; i < cells.size(); ++i) {
      line += (i ? "  " : "") + pad_left(cells[i], headers[i].size());
    }
    line += std::string("  ") + fits;
    if (rank.pp_rank == estimate.limiting_pp_rank && estimate.ranks.size() > 1) {
      line += "  ← limiting";
    }
    std::cout << line << "\n";
  }
  std::cout << "GiB per GPU; peak = static + activations + transients + runtime overheads\n";
  print_what_if(estimate);
}

}  // namespace

int run_estimate(const std::vector<std::string>& args) {
  Expected<ParsedOptions> options =
      parse_options(args, {"--megatron-args", "--world-size", "--vocab-size"}, {"--json"});
  if (!options) {
    print_error(options.error());
    return kExitUsage;
  }
  const auto flags = options->values.find("--megatron-args");
  if (flags == options->values.end()) {
    print_error({"--megatron-args", "is required (the Megatron-LM flags, quoted)"});
    return kExitUsage;
  }
  const auto world_text = options->values.find("--world-size");
  if (world_text == options->values.end()) {
    print_error({"--world-size", "is required (the number of GPUs)"});
    return kExitUsage;
  }
  const Expected<std::int64_t> world_size = positive_integer("--world-size", world_text->second);
  if (!world_size) {
    print_error(world_size.error());
    return kExitUsage;
  }
  std::int64_t vocab_size = 0;
  if (const auto vocab = options->values.find("--vocab-size"); vocab != options->values.end()) {
    const Expected<std::int64_t> parsed = positive_integer("--vocab-size", vocab->second);
    if (!parsed) {
      print_error(parsed.error());
      return kExitUsage;
    }
    vocab_size = *parsed;
  }

  const Expected<MegatronArgs> parsed = parse_megatron_args(flags->second, *world_size, vocab_size);
  if (!parsed) {
    print_error(parsed.error());
    return kExitError;
  }
  for (const std::string& flag : parsed->unknown_flags) {
    std::cerr << "megamem: warning: " << flag << " is not a Megatron-LM flag; ignored\n";
  }
  for (const std::string& flag : parsed->unmodeled_flags) {
    std::cerr << "megamem: warning: " << flag
              << " changes memory but is not modeled; the estimate leaves it out\n";
  }

  EstimateOptions estimate_options;
  estimate_options.what_if = true;
  const Expected<Estimate> estimated = estimate(parsed->config, estimate_options);
  if (!estimated) {
    print_error(estimated.error());
    return kExitError;
  }
  for (const std::string& warning : estimated->warnings) {
    std::cerr << "megamem: warning: " << warning << "\n";
  }
  if (options->switches.count("--json")) {
    std::cout << estimate_to_json(*estimated) << "\n";
  } else {
    print_table(*estimated);
  }
  return kExitOk;
}

}  // namespace megamem::cli
