// megamem check: the pre-flight. One line with the core's verdict for a configuration (as
// estimate takes it), the limiting rank and its headroom, and when it does not fit the best
// change that makes it fit, with its link. The exit status says the verdict, so a launch
// script can stop before a job takes its queue slot.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "commands.hpp"
#include "config_options.hpp"
#include "megamem/estimate.hpp"
#include "megamem/json_output.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/nvidia_smi.hpp"
#include "megamem/planner.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"
#include "megamem/suggestions.hpp"
#include "megamem/units.hpp"
#include "megamem/what_if.hpp"

namespace megamem::cli {
namespace {

// check's own options (beside config_options.hpp's).
const std::set<std::string> kCheckValues = {"--gpu-from-nvidia-smi"};
const std::set<std::string> kCheckSwitches = {"--json"};

// An option of check's that ends the flags after --megatron-args: one Megatron-LM does not
// also have (--vocab-size and --recompute-method are both).
bool ends_megatron_words(const std::string& word, const std::set<std::string>& values,
                         const std::set<std::string>& switches) {
  const std::string name = word.substr(0, word.find('='));
  return (values.count(name) > 0 || switches.count(name) > 0) && !is_megatron_lm_flag(name);
}

// A word as the core's flag lexer reads it back: single-quoted when it holds anything but
// plain characters.
std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_of(" \t\n'\"\\$`()[]*?&|;<>#") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `--megatron-args "$@"` in a launch script gives the flags as separate words: they run up to
// the next option of check's that is not also a Megatron-LM flag, and are joined back into
// one flags string.
std::vector<std::string> join_megatron_words(const std::vector<std::string>& args,
                                             const std::set<std::string>& values,
                                             const std::set<std::string>& switches) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    out.push_back(args[i]);
    if (args[i] != "--megatron-args") continue;
    std::vector<std::string> words;
    while (i + 1 < args.size() && !ends_megatron_words(args[i + 1], values, switches)) {
      words.push_back(args[++i]);
    }
    if (words.size() == 1) {
      out.push_back(words.front());  // "$*" or one quoted string: as given
      continue;
    }
    std::string flags;
    for (const std::string& word : words) flags += (flags.empty() ? "" : " ") + shell_word(word);
    out.push_back(flags);
  }
  return out;
}

Expected<std::string> read_text(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"--gpu-from-nvidia-smi", "cannot read '" + path + "'"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// --gpu-from-nvidia-smi FILE|-: the device nvidia-smi lists replaces the configured one.
std::optional<Error> apply_nvidia_smi(const ParsedOptions& options, SharedConfig& shared) {
  const auto given = options.values.find("--gpu-from-nvidia-smi");
  if (given == options.values.end()) return std::nullopt;
  Expected<std::string> text = read_text(given->second);
  if (!text) return text.error();
  const Expected<PresetCatalog>& catalog = builtin_presets();
  if (!catalog) return catalog.error();
  Expected<DeviceFromNvidiaSmi> device =
      device_from_nvidia_smi(*text, *catalog, shared.config.device);
  if (!device) return Error{"--gpu-from-nvidia-smi", device.error().message};
  for (const std::string& warning : device->warnings) {
    std::cerr << "megamem: warning: " << warning << "\n";
  }
  shared.config.device = device->device;
  shared.gpu_id = device->gpu_id;
  return std::nullopt;
}

struct Fix {
  std::string label;
  Config config;
  std::uint64_t peak_total_bytes = 0;
};

// The cheapest recompute/offload change that fits (least step time, else most saved), else
// the fastest layout the planner finds on the same GPUs, for the batch the estimate ran
// (plan_request_for).
std::optional<Fix> best_fix(const Config& config) {
  std::optional<WhatIfOption> best;
  for (WhatIfOption& option : what_if_options(config)) {
    if (option.current || !option.valid || option.status != FitStatus::fits) continue;
    if (!best || option.step_time_change < best->step_time_change ||
        (option.step_time_change == best->step_time_change &&
         option.saving_bytes > best->saving_bytes)) {
      best = std::move(option);
    }
  }
  if (best) return Fix{best->label, best->config, best->peak_total_bytes};
  const Expected<PlanResult> plan_result = plan(plan_request_for(config));
  if (!plan_result || plan_result->top.empty()) return std::nullopt;
  const PlanCandidate& fastest = plan_result->top.front();
  return Fix{fastest.label, fastest.config, fastest.peak_total_bytes};
}

int exit_code_of(FitStatus status) {
  return status == FitStatus::fits         ? kExitOk
         : status == FitStatus::borderline ? kExitCheckBorderline
                                           : kExitCheckDoesNotFit;
}

// An invalid configuration: the error and the nearest valid one with its link.
int report_refused(const SharedConfig& shared, const Error& error, const std::string& base) {
  print_error(error);
  const std::vector<Suggestion> suggestions = suggest_valid_configs(shared.config, 1);
  if (!suggestions.empty()) {
    SharedConfig fixed = shared;
    fixed.config = suggestions.front().config;
    std::cerr << "nearest valid: " << suggestions.front().label << " " << share_link(fixed, base)
              << "\n";
  }
  return kExitError;
}

int print_verdict(const Estimate& estimate, const SharedConfig& shared, const std::string& base,
                  bool json) {
  std::optional<Fix> fix;
  if (estimate.verdict.status != FitStatus::fits) fix = best_fix(shared.config);
  SharedConfig fixed = shared;
  if (fix) fixed.config = fix->config;
  if (json) {
    nlohmann::json document = {{"verdict", verdict_json(estimate.verdict)},
                               {"link", share_link(shared, base)}};
    if (fix) {
      document["suggestion"] = {{"label", fix->label},
                                {"peak_total_bytes", fix->peak_total_bytes},
                                {"link", share_link(fixed, base)}};
    }
    std::cout << document.dump(2) << "\n";
  } else {
    std::cout << verdict_text(estimate);
    if (fix) {
      std::cout << "; try " << fix->label << " ("
                << one_decimal_gib(static_cast<double>(fix->peak_total_bytes))
                << " GiB): " << share_link(fixed, base);
    } else if (estimate.verdict.status != FitStatus::fits) {
      std::cout << "; no recompute, offload or layout on these GPUs fits";
    }
    std::cout << "\n";
  }
  return exit_code_of(estimate.verdict.status);
}

}  // namespace

int run_check(const std::vector<std::string>& args) {
  std::set<std::string> switches = config_switch_options();
  switches.insert(kCheckSwitches.begin(), kCheckSwitches.end());
  std::set<std::string> values = config_value_options();
  values.insert(kCheckValues.begin(), kCheckValues.end());
  const Expected<ParsedOptions> options =
      parse_options(join_megatron_words(args, values, switches), values, switches);
  if (!options) return fail(options.error(), kExitError);
  if (const std::optional<Error> missing = missing_model(*options)) {
    return fail(*missing, kExitError);
  }
  Expected<ConfigFromOptions> built = config_from_options(*options);
  if (report_config(built) != kExitOk) return kExitError;
  SharedConfig shared = built->shared;
  if (const std::optional<Error> error = apply_nvidia_smi(*options, shared)) {
    return fail(*error, kExitError);
  }
  EstimateOptions estimate_options;
  estimate_options.module_tree = false;
  estimate_options.timeline = false;
  const Expected<Estimate> estimated = estimate(shared.config, estimate_options);
  if (!estimated) return report_refused(shared, estimated.error(), base_url(*options));
  for (const std::string& warning : estimated->warnings) {
    std::cerr << "megamem: warning: " << warning << "\n";
  }
  return print_verdict(*estimated, shared, base_url(*options),
                       options->switches.count("--json") > 0);
}

}  // namespace megamem::cli
