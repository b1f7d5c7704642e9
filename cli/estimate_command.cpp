// megamem estimate: a configuration (preset, recipe, link, config.json or Megatron-LM flags,
// see config_options.hpp) -> per-pipeline-rank memory, as a table or JSON, with its share link.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "anchor_option.hpp"
#include "cli_options.hpp"
#include "commands.hpp"
#include "config_options.hpp"
#include "megamem/bridge_config.hpp"
#include "megamem/estimate.hpp"
#include "megamem/json_output.hpp"
#include "megamem/layout_label.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/share_link.hpp"
#include "megamem/suggestions.hpp"
#include "megamem/units.hpp"
#include "snapshot_option.hpp"

namespace megamem::cli {
namespace {

// A rank's verdict cell: "fits  8.6 free", "borderline  0.3 over", "no  2.1 over".
std::string rank_verdict_cell(const Verdict& verdict, int pp_rank) {
  for (const RankVerdict& rank : verdict.ranks) {
    if (rank.pp_rank != pp_rank) continue;
    const double headroom_gib = static_cast<double>(rank.headroom_bytes) / kBytesPerGiB;
    const char* status = rank.status == FitStatus::fits         ? "fits      "
                         : rank.status == FitStatus::borderline ? "borderline"
                                                                : "no        ";
    char cell[64];
    std::snprintf(cell, sizeof(cell), "%s  %.1f %s", status, std::abs(headroom_gib),
                  headroom_gib >= 0 ? "free" : "over");
    return cell;
  }
  return "";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The verdict in one sentence, with the band it rests on.
std::string verdict_line(const Verdict& verdict) {
  const ErrorBand& band = verdict.band;
  char text[200];
  std::snprintf(text, sizeof(text),
                "verdict: %s (rank %d); error band %+.1f %% .. %+.1f %% of the allocator peak "
                "(validated configurations: %d for %s)",
                fit_status_name(verdict.status), verdict.limiting_pp_rank, band.low_percent,
                band.high_percent, band.runs, band.thinnest_feature.c_str());
  std::string line = text;
  if (!band.features.empty()) line += "; features " + joined(band.features);
  if (!band.few_runs_features.empty()) {
    line += "; few validated runs with " + joined(band.few_runs_features) +
            ", so the band is the widest error seen";
  }
  return line;
}

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
  std::cout << "\n" << padded("what-if") << "   peak   change\n";
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

// ui.md "The CLI": a header line with the model and the layout, one row per PP rank, the
// share link, then the what-if table.
// Where the card is tight, the first iteration's lower peak explains a run that passes it and
// fails in the second: its passes run before the optimizer's first step creates Adam's moments.
void print_first_iteration(const Estimate& estimate) {
  if (estimate.verdict.status == FitStatus::fits) return;
  for (const RankMemory& rank : estimate.ranks) {
    if (rank.pp_rank != estimate.verdict.limiting_pp_rank || rank.lazy_optimizer_bytes == 0) {
      continue;
    }
    std::cout << "first iteration: " << gib(rank.first_iteration_peak_allocated_bytes)
              << " GiB allocated at most on rank " << rank.pp_rank << " against "
              << gib(rank.peak_allocated_bytes)
              << " from the second on (the optimizer's first step creates "
              << gib(rank.lazy_optimizer_bytes)
              << " GiB of state; a log's memory report after iteration 1 shows the first)\n";
  }
}

// A resume loads the checkpoint before its first step; where that load peaks above the
// training peak, a run that fits can fail when it resumes (memory-model.md §5).
void print_resume_load(const Estimate& estimate) {
  const RankMemory* worst = nullptr;
  for (const RankMemory& rank : estimate.ranks) {
    if (rank.resume_load_peak_bytes > rank.peak_allocated_bytes &&
        (!worst || rank.resume_load_peak_bytes > worst->resume_load_peak_bytes)) {
      worst = &rank;
    }
  }
  if (!worst) return;
  std::cout << "resuming: loading a checkpoint with its optimizer state holds "
            << gib(worst->resume_load_peak_bytes) << " GiB allocated on rank " << worst->pp_rank
            << ", above its " << gib(worst->peak_allocated_bytes)
            << " in training (the Adam moments twice, as Megatron-Core and TE FusedAdam load "
               "them; "
            << gib(worst->resume_load_single_copy_bytes)
            << " with one copy, as Megatron-Bridge loads a run without the precision-aware "
               "optimizer)\n";
}

void print_table(const Estimate& estimate, const std::string& link) {
  const NormalizedConfig& n = estimate.normalized;
  const Config& c = n.config;
  const std::string name = c.model.name.empty() ? "Megatron-LM model" : c.model.name;
  std::cout << name << " (" << parameter_count(estimate.totals.params) << " params) on "
            << c.parallel.world_size
            << (c.device.name.empty() ? std::string(" GPUs") : " × " + c.device.name) << " · "
            << layout_summary_label(c.parallel) << " · DP" << n.data_parallel << " expert-DP"
            << n.expert_data_parallel << " · mbs " << c.training.micro_batch_size << " · seq "
            << c.training.seq_length << "\n";

  // Per rank: the static parts, the step's activations and transients at the peak, the
  // runtime (allocator reserve and memory outside the allocator), the peak the card must hold,
  // and the headroom.
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
    const std::string fits = rank_verdict_cell(estimate.verdict, rank.pp_rank);
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
  std::cout << "GiB per GPU; peak = static + activations + transients + runtime (the caching "
               "allocator's reserve, CUDA context, NCCL and library buffers: what nvidia-smi "
               "shows)\n";
  std::cout << verdict_line(estimate.verdict) << "\n";
  print_first_iteration(estimate);
  print_resume_load(estimate);
  for (const std::string& assumption : estimate.assumptions) {
    std::cout << "assumes: " << assumption << "\n";
  }
  std::cout << "link: " << link << "\n";
  print_what_if(estimate);
}

// An invalid configuration: the error, then the nearest valid configurations the core
// suggests, each with its share link (text), or {"error", "suggestions"} as JSON.
int report_invalid(const SharedConfig& shared, const Error& error, const std::string& base,
                   bool json) {
  nlohmann::json suggestions = nlohmann::json::array();
  std::string text;
  for (const Suggestion& suggestion : suggest_valid_configs(shared.config)) {
    SharedConfig fixed = shared;
    fixed.config = suggestion.config;
    const std::string url = share_link(fixed, base);
    // Whether each fix fits its GPUs, as the core's verdict says (#28 item 1: a list that
    // keeps the GPU count is no help if none of it fits).
    const Expected<Estimate> estimated = estimate(suggestion.config);
    nlohmann::json entry = {{"label", suggestion.label}, {"field", suggestion.field}, {"url", url}};
    text += "  " + suggestion.label + "\n";
    if (estimated) {
      entry["verdict"] = fit_status_name(estimated->verdict.status);
      entry["headroom_bytes"] = estimated->verdict.headroom_bytes;
      text += "    " + verdict_text(*estimated) + "\n";
    }
    suggestions.push_back(std::move(entry));
    text += "    " + url + "\n";
  }
  if (json) {
    const nlohmann::json document = {
        {"error", {{"field", error.field}, {"message", error.message}}},
        {"suggestions", std::move(suggestions)}};
    std::cout << document.dump(2) << "\n";
  } else {
    print_error(error);
    if (!text.empty()) std::cerr << "nearest valid configurations:\n" << text;
  }
  return kExitError;
}

// The estimate (and its anchored numbers) as JSON or as the table, with the asked-for extras.
void print_estimate(const ParsedOptions& options, const SharedConfig& shared,
                    const Estimate& estimated, const std::optional<AnchoredEstimate>& anchored,
                    bool timeline) {
  const std::string link = share_link(shared, base_url(options));
  const bool print_flags = options.switches.count("--print-megatron-args") > 0;
  const bool print_overrides = options.switches.count("--print-bridge-overrides") > 0;
  if (options.switches.count("--json")) {
    nlohmann::json document = estimate_json(estimated, timeline);
    document["link"] = link;
    if (print_flags) document["megatron_args"] = to_megatron_args(shared.config);
    if (print_overrides) document["bridge_overrides"] = to_bridge_overrides(shared.config);
    if (anchored) document["anchored"] = anchored_json(*anchored);
    std::cout << document.dump(2) << "\n";
    return;
  }
  print_table(estimated, link);
  if (anchored) print_anchored(*anchored);
  if (print_flags) std::cout << "megatron args: " << to_megatron_args(shared.config) << "\n";
  if (print_overrides) {
    std::cout << "bridge overrides: " << to_bridge_overrides(shared.config) << "\n";
  }
}

}  // namespace

int run_estimate(const std::vector<std::string>& args) {
  std::set<std::string> switches = config_switch_options();
  switches.insert({"--json", "--print-megatron-args", "--print-bridge-overrides", "--timeline"});
  std::set<std::string> values = config_value_options();
  values.insert({"--snapshot", "--rank"});  // snapshot_option.hpp
  values.merge(anchor_value_options());
  const Expected<ParsedOptions> options = parse_options(args, values, switches);
  if (!options) {
    print_error(options.error());
    return kExitUsage;
  }
  if (const std::optional<Error> missing = missing_model(*options)) {
    print_error(*missing);
    return kExitUsage;
  }
  const Expected<ConfigFromOptions> built = config_from_options(*options);
  if (const int exit_code = report_config(built); exit_code != kExitOk) return exit_code;
  const SharedConfig& shared = built->shared;

  EstimateOptions estimate_options;
  // --timeline: each rank's memory after every forward/backward (JSON only).
  const bool timeline = options->switches.count("--timeline") > 0;
  estimate_options.timeline = timeline || options->values.count("--snapshot") > 0;
  Expected<Estimate> estimated = estimate(shared.config, estimate_options);
  if (!estimated) {
    return report_invalid(shared, estimated.error(), base_url(*options),
                          options->switches.count("--json") > 0);
  }
  for (const WhatIfOption& option : what_if_options(shared.config)) {
    estimated.value().what_if.push_back(option);
  }
  for (const std::string& warning : estimated->warnings) {
    std::cerr << "megamem: warning: " << warning << "\n";
  }
  if (const int exit_code = write_snapshot_option(*options, *estimated); exit_code != kExitOk) {
    return exit_code;
  }
  const Expected<std::optional<AnchoredEstimate>> anchored =
      anchored_from_options(*options, *estimated);
  if (!anchored) return fail(anchored.error(), kExitError);
  if (*anchored) {
    for (const std::string& warning : (*anchored)->warnings) {
      std::cerr << "megamem: warning: anchor: " << warning << "\n";
    }
  }
  print_estimate(*options, shared, *estimated, *anchored, timeline);
  return kExitOk;
}

}  // namespace megamem::cli
