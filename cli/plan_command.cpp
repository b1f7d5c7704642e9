// megamem plan: the fastest parallel layouts that fit, for a model on a cluster.
//
//   megamem plan <configuration options (config_options.hpp)> --gpus N --gbs B [--seq S]
//                [--gpu ID | --gpu-memory-gib G --gpus-per-node K --intra-node-gb-s X
//                 --inter-node-gb-s Y --peak-tflops T] [--margin-gib 2] [--top 10]
//                [--tp 1,2,4 --pp ... --vpp-max 8 --cp ... --ep ... --mbs ...]
//                [--no-recompute-search] [--no-offload-search] [--json]
//
// The configuration options give the model and the training settings as for `estimate`;
// the layout options restrict the search to the listed values instead of fixing one layout.
// The table lists the top layouts with their memory (limiting rank's peak) and time, then
// each layout's Megatron-LM flags, the Pareto front of memory against step time, and why
// the other candidates were rejected.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "commands.hpp"
#include "config_options.hpp"
#include "megamem/json_output.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/planner.hpp"

namespace megamem::cli {
namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// Layout options: comma lists that restrict the search (they fix a layout in `estimate`).
const std::vector<std::string> kLayoutLists = {"--tp", "--pp", "--cp", "--ep", "--mbs"};
// Plan's own value options.
const std::vector<std::string> kPlanValues = {
    "--top",           "--margin-gib",      "--gpu-memory-gib",
    "--gpus-per-node", "--intra-node-gb-s", "--inter-node-gb-s",
    "--peak-tflops",   "--vpp-max"};
const std::vector<std::string> kPlanSwitches = {"--json", "--no-recompute-search",
                                                "--no-offload-search", "--no-etp-search"};
Expected<std::vector<int>> int_list(const std::string& option, const std::string& text) {
  std::vector<int> out;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const Expected<std::int64_t> value = positive_integer(option, item);
    if (!value)
      return Error{option, "expects positive integers separated by commas, got '" + text + "'"};
    if (*value > (1 << 20)) return Error{option, "value " + item + " is beyond any real job"};
    out.push_back(static_cast<int>(*value));
  }
  if (out.empty()) return Error{option, "expects positive integers separated by commas"};
  return out;
}

Expected<double> positive_number(const std::string& option, const std::string& text,
                                 bool zero_allowed = false) {
  double value = 0;
  std::size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !(value > 0 || (zero_allowed && value == 0)) ||
      value > 1e9) {
    return Error{option, std::string("expects a ") + (zero_allowed ? "non-negative" : "positive") +
                             " number, got '" + text + "'"};
  }
  return value;
}

std::string fixed(double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

std::string with_commas(std::int64_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return digits;
}

std::string pad(const std::string& text, std::size_t width, bool left = false) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return left ? fill + text : text + fill;
}

std::string layout_cell(const Config& c) {
  const ParallelConfig& p = c.parallel;
  return "TP" + std::to_string(p.tensor_parallel) + " PP" + std::to_string(p.pipeline_parallel) +
         " VPP" + std::to_string(p.virtual_stages_per_pipeline_rank) + " CP" +
         std::to_string(p.context_parallel) + " EP" + std::to_string(p.expert_parallel) + " ETP" +
         std::to_string(p.expert_tensor_parallel > 0 ? p.expert_tensor_parallel
                                                     : p.tensor_parallel);
}

void print_rows(const std::vector<PlanCandidate>& rows, bool numbered) {
  std::size_t recompute_width = 9, offload_width = 7, layout_width = 6;
  for (const PlanCandidate& c : rows) {
    recompute_width = std::max(recompute_width, c.recompute.size());
    offload_width = std::max(offload_width, c.offload.size());
    layout_width = std::max(layout_width, layout_cell(c.config).size());
  }
  std::cout << (numbered ? "  # " : "    ") << pad("layout", layout_width) << "  mbs  "
            << pad("recompute", recompute_width) << "  " << pad("offload", offload_width)
            << "  peak GiB  rank   step s  tokens/s/GPU  TFLOP/s/GPU   MFU\n";
  int index = 1;
  for (const PlanCandidate& c : rows) {
    std::cout << (numbered ? pad(std::to_string(index++), 3, true) + " " : "    ")
              << pad(layout_cell(c.config), layout_width) << "  "
              << pad(std::to_string(c.config.training.micro_batch_size), 3, true) << "  "
              << pad(c.recompute, recompute_width) << "  " << pad(c.offload, offload_width) << "  "
              << pad(fixed(static_cast<double>(c.peak_total_bytes) / kBytesPerGiB, 2), 8, true)
              << "  " << pad(std::to_string(c.limiting_pp_rank), 4, true) << "  "
              << pad(fixed(c.time.step_time_s, c.time.step_time_s < 10 ? 3 : 2), 7, true) << "  "
              << pad(fixed(c.time.tokens_per_s_per_gpu, 0), 12, true) << "  "
              << pad(fixed(c.time.model_tflops_per_gpu, 0), 11, true) << "  "
              << pad(fixed(100 * c.time.mfu, 1) + "%", 5, true) << "\n";
  }
}

}  // namespace

int run_plan(const std::vector<std::string>& args) {
  std::set<std::string> values = config_value_options();
  values.insert(kPlanValues.begin(), kPlanValues.end());
  std::set<std::string> switches = config_switch_options();
  switches.insert(kPlanSwitches.begin(), kPlanSwitches.end());
  const Expected<ParsedOptions> options = parse_options(args, values, switches);
  if (!options) {
    print_error(options.error());
    return kExitUsage;
  }
  for (const char* fixed_only : {"--vpp", "--etp"}) {
    if (options->values.count(fixed_only)) {
      print_error({fixed_only, std::string("is not a plan option (the planner searches the "
                                           "layout; --tp/--pp/--cp/--ep/--mbs take lists)")});
      return kExitUsage;
    }
  }
  if (const std::optional<Error> missing = missing_model(*options)) {
    print_error(*missing);
    return kExitUsage;
  }

  // The configuration without the layout lists and plan's own options.
  ParsedOptions config_options = *options;
  PlannerSearchSpace space;
  for (const std::string& name : kLayoutLists) {
    const auto it = config_options.values.find(name);
    if (it == config_options.values.end()) continue;
    const Expected<std::vector<int>> list = int_list(name, it->second);
    if (!list) {
      print_error(list.error());
      return kExitUsage;
    }
    if (name == "--tp") space.tensor_parallel = *list;
    if (name == "--pp") space.pipeline_parallel = *list;
    if (name == "--cp") space.context_parallel = *list;
    if (name == "--ep") space.expert_parallel = *list;
    if (name == "--mbs") space.micro_batch_sizes = *list;
    config_options.values.erase(it);
  }
  for (const std::string& name : kPlanValues) config_options.values.erase(name);
  for (const std::string& name : kPlanSwitches) config_options.switches.erase(name);
  if (!config_options.values.count("--gpus") && !config_options.values.count("--world-size") &&
      !config_options.values.count("--recipe") && !config_options.values.count("--url")) {
    print_error({"--gpus", "is required (the number of GPUs to plan for)"});
    return kExitUsage;
  }
  const Expected<ConfigFromOptions> built = config_from_options(config_options);
  if (const int exit_code = report_config(built); exit_code != kExitOk) return exit_code;
  PlanRequest request = plan_request_for(built->shared.config);
  request.space = space;

  // Plan's own numbers.
  DeviceConfig& device = request.base.device;
  const struct {
    const char* option;
    double* target;
    bool zero_allowed;
  } numbers[] = {{"--margin-gib", &request.margin_gib, true},
                 {"--gpu-memory-gib", &device.capacity_gib, false},
                 {"--intra-node-gb-s", &device.intra_node_bandwidth_gb_per_s, false},
                 {"--inter-node-gb-s", &device.inter_node_bandwidth_gb_per_s, false},
                 {"--peak-tflops", &device.peak_bf16_tflops, false}};
  for (const auto& number : numbers) {
    const auto it = options->values.find(number.option);
    if (it == options->values.end()) continue;
    const Expected<double> value = positive_number(number.option, it->second, number.zero_allowed);
    if (!value) {
      print_error(value.error());
      return kExitUsage;
    }
    *number.target = *value;
  }
  const struct {
    const char* option;
    int* target;
  } integers[] = {{"--top", &request.top},
                  {"--gpus-per-node", &device.gpus_per_node},
                  {"--vpp-max", &request.space.max_virtual_stages}};
  for (const auto& integer : integers) {
    const auto it = options->values.find(integer.option);
    if (it == options->values.end()) continue;
    const Expected<std::int64_t> value = positive_integer(integer.option, it->second);
    if (!value || *value > (1 << 20)) {
      print_error(value ? Error{integer.option, "is beyond any real job"} : value.error());
      return kExitUsage;
    }
    *integer.target = static_cast<int>(*value);
  }
  request.space.search_recompute =
      !options->switches.count("--no-recompute-search") && !options->values.count("--recompute");
  request.space.search_offload = !options->switches.count("--no-offload-search");
  request.space.search_expert_tensor_parallel = !options->switches.count("--no-etp-search");
  if (!request.base.optimizer.use_distributed_optimizer) {
    std::cerr << "megamem: warning: planning without --use-distributed-optimizer: every "
                 "data-parallel rank keeps the full optimizer state\n";
  }

  const auto start = std::chrono::steady_clock::now();
  const Expected<PlanResult> planned = plan(request);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!planned) {
    print_error(planned.error());
    return kExitError;
  }
  const PlanResult& result = *planned;
  const Config& base = request.base;
  const double limit_gib = base.device.capacity_gib - request.margin_gib;

  if (options->switches.count("--json")) {
    std::cout << plan_to_json(request, result, seconds) << "\n";
    return kExitOk;
  }

  const PlanStats& s = result.stats;
  const std::string name = base.model.name.empty() ? "Megatron-LM model" : base.model.name;
  std::cout << name << " on " << base.parallel.world_size << " × "
            << (base.device.name.empty() ? "GPU" : base.device.name) << " · gbs "
            << base.training.global_batch_size << " · seq " << base.training.seq_length
            << " · fits under " << fixed(limit_gib, 2) << " GiB ("
            << fixed(base.device.capacity_gib, 2) << " − " << fixed(request.margin_gib, 2)
            << " margin)\n";
  std::cout << "searched " << with_commas(s.candidates) << " candidates (" << with_commas(s.layouts)
            << " layouts) in " << fixed(seconds, 2) << " s: " << with_commas(s.fitting) << " fit, "
            << with_commas(s.out_of_memory) << " out of memory, " << with_commas(s.invalid)
            << " invalid\n";
  if (result.top.empty()) {
    std::cout << "\nno layout fits; the rejections below say why\n";
  } else {
    std::cout << "\nfastest layouts that fit\n";
    print_rows(result.top, true);
    std::cout << "\nMegatron-LM flags of each layout (with the configuration's other flags)\n";
    int index = 1;
    for (const PlanCandidate& c : result.top) {
      std::cout << pad(std::to_string(index++), 3, true) << "  " << layout_megatron_args(c.config)
                << "\n";
    }
    // The front moves in small steps (a VPP more, one more module offloaded): show the
    // points at least 1 GiB apart, and the last (least memory) one.
    std::vector<PlanCandidate> shown;
    for (std::size_t i = 0; i < result.pareto.size(); ++i) {
      const PlanCandidate& c = result.pareto[i];
      if (shown.empty() || i + 1 == result.pareto.size() ||
          static_cast<double>(shown.back().peak_total_bytes) -
                  static_cast<double>(c.peak_total_bytes) >=
              kBytesPerGiB) {
        shown.push_back(c);
      }
    }
    std::cout << "\nPareto front: least memory at each step time (" << shown.size() << " of "
              << result.pareto.size() << " points, 1 GiB apart; --json lists all)\n";
    print_rows(shown, false);
  }
  std::cout << "\nrejected\n";
  for (const PlanRejection& r : result.rejections) {
    std::cout << pad(with_commas(r.count), 11, true) << "  "
              << (r.reason == "out_of_memory"
                      ? "out of memory (" + r.rule + ", " + r.example + ")"
                      : r.field + ": " + r.rule + " (e.g. " + r.example + ")")
              << "\n";
  }
  if (result.rejections.empty()) std::cout << "  nothing\n";
  std::cout << "GiB per GPU (limiting pipeline rank); time from the step-time model "
               "(docs/planner.md), throughput as Megatron logs it\n";
  return kExitOk;
}

}  // namespace megamem::cli
