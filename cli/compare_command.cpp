// megamem compare LOG: a Megatron-LM training log's measured memory beside the estimate of the
// configuration the log's argument dump describes (megatron_log.hpp does the reading).
//
//   megamem compare LOG [--json] [--vocab-size V] [--gpu ID] [--base-url URL]
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "anchor_option.hpp"
#include "cli_options.hpp"
#include "commands.hpp"
#include "config_options.hpp"
#include "megamem/estimate.hpp"
#include "megamem/json_output.hpp"
#include "megamem/megatron_log.hpp"
#include "megamem/share_link.hpp"

namespace megamem::cli {
namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

Expected<LogComparison> build(const ParsedOptions& options, const std::string& text) {
  LogComparisonOptions compare_options;
  if (const auto it = options.values.find("--vocab-size"); it != options.values.end()) {
    const Expected<std::int64_t> parsed = positive_integer("--vocab-size", it->second);
    if (!parsed) return parsed.error();
    compare_options.vocab_size = *parsed;
  }
  if (const auto gpu = options.values.find("--gpu"); gpu != options.values.end()) {
    compare_options.gpu_id = gpu->second;
  }
  Expected<LogComparison> compared = compare_megatron_log(text, compare_options);
  if (!compared && compared.error().field == "gpu") {
    return Error{"--gpu", compared.error().message};
  }
  return compared;
}

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", static_cast<double>(bytes) / kBytesPerGiB);
  return text;
}

// "estimated - measured" in GiB and in % of the measurement.
std::string difference(std::uint64_t estimated, std::uint64_t measured) {
  const double delta = (static_cast<double>(estimated) - static_cast<double>(measured));
  char text[64];
  if (measured == 0) {
    std::snprintf(text, sizeof(text), "%+8.2f", delta / kBytesPerGiB);
  } else {
    std::snprintf(text, sizeof(text), "%+8.2f  %+6.1f %%", delta / kBytesPerGiB,
                  100.0 * delta / static_cast<double>(measured));
  }
  return text;
}

void print_row(const char* label, std::uint64_t measured, std::uint64_t estimated) {
  char text[160];
  std::snprintf(text, sizeof(text), "  %-34s %9s %10s  %s\n", label, gib(measured).c_str(),
                gib(estimated).c_str(), difference(estimated, measured).c_str());
  std::cout << text;
}

void print_parameters(const RankComparison& row) {
  std::cout << "  parameters                          ";
  if (row.logged_params == 0) {
    std::cout << "(not in the log)  estimated " << row.estimated_params << "\n";
    return;
  }
  std::cout << row.logged_params << " logged, " << row.estimated_params << " estimated";
  if (row.logged_params == row.estimated_params) {
    std::cout << " (same)\n";
  } else {
    std::cout << " (" << (row.estimated_params - row.logged_params) << ")\n";
  }
}

void print_text(const LogComparison& c, const std::string& link) {
  std::cout << "lines read:\n";
  for (const LogLineRead& read : c.log.lines_read) {
    std::cout << "  line " << read.line << ": " << read.what << "\n";
  }
  for (const std::string& note : c.log.notes) std::cout << "  skipped " << note << "\n";
  const Config& config = c.shared.config;
  std::cout << "configuration: " << config.parallel.world_size << " GPUs · TP"
            << config.parallel.tensor_parallel << " PP" << config.parallel.pipeline_parallel
            << " CP" << config.parallel.context_parallel << " EP" << config.parallel.expert_parallel
            << " · mbs " << config.training.micro_batch_size << " · seq "
            << config.training.seq_length << "\n";
  std::cout << "\n                                     measured  estimated  estimated - measured\n";
  for (const RankComparison& row : c.ranks) {
    std::cout << "rank " << row.global_rank << " (pipeline rank " << row.pp_rank << ", after "
              << row.measured.iteration << " iterations), GiB:\n";
    // The log's allocated figure is taken after the optimizer step.
    print_row("allocated vs static", row.measured.allocated_bytes,
              allocated_after_step_bytes(*row.estimated));
    print_row("max allocated vs peak allocated", row.measured.max_allocated_bytes,
              max_allocated_after_bytes(*row.estimated, row.measured.iteration));
    print_row("max reserved vs peak reserved", row.measured.max_reserved_bytes,
              row.estimated->peak_reserved_bytes);
    print_parameters(row);
  }
  if (c.log.theoretical.line > 0) {
    std::cout << "Megatron's own theoretical footprint (line " << c.log.theoretical.line
              << "): weight and optimizer " << c.log.theoretical.weight_and_optimizer_mib
              << " MiB\n";
  }
  std::cout << "link: " << link << "\n";
}

void print_warnings(const LogComparison& c) {
  for (const std::string& warning : log_comparison_warnings(c)) {
    std::cerr << "megamem: warning: " << warning << "\n";
  }
  for (const std::string& note : log_comparison_notes(c)) {
    std::cerr << "megamem: note: " << note << "\n";
  }
}

}  // namespace

int run_compare(const std::vector<std::string>& args) {
  std::vector<std::string> rest = args;
  if (rest.empty() || rest[0].rfind("--", 0) == 0) {
    print_error({"LOG", "the training log to read is required: megamem compare LOG"});
    return kExitUsage;
  }
  const std::string path = rest[0];
  rest.erase(rest.begin());
  const Expected<ParsedOptions> options =
      parse_options(rest, {"--vocab-size", "--gpu", "--base-url"}, {"--json"});
  if (!options) {
    print_error(options.error());
    return kExitUsage;
  }
  const Expected<std::string> text = read_log_file(path, "LOG");
  if (!text) {
    print_error(text.error());
    return kExitError;
  }
  const Expected<LogComparison> built = build(*options, *text);
  if (!built) {
    print_error(built.error());
    return kExitError;
  }
  const LogComparison& c = *built;
  print_warnings(c);
  const std::string link = share_link(c.shared, base_url(*options));
  if (options->switches.count("--json")) {
    std::cout << log_comparison_json(c, link).dump(2) << "\n";
  } else {
    print_text(c, link);
  }
  return kExitOk;
}

}  // namespace megamem::cli
