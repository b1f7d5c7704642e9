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
#include <cmath>
#include <cstdio>
#include <iostream>
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
#include "megamem/layout_label.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/planner.hpp"
#include "megamem/units.hpp"

namespace megamem::cli {
namespace {

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

// A candidate's change from the current configuration: "-3.10 GiB  -12.0 %" ("?" where the
// current one has no figure).
std::string change_text(const PlanCandidate& c, const PlanReference& reference) {
  const PlanChange change = plan_change(c, reference);
  char gib[32] = "?";
  // Under half a hundredth reads as no change, not "-0.00".
  if (change.peak_known) {
    const double value = to_gib(change.peak_bytes);
    std::snprintf(gib, sizeof gib, std::abs(value) < 0.005 ? "0.00" : "%+.2f", value);
  }
  char time[32] = "?";
  if (change.time_known) {
    const double percent = 100.0 * change.step_time;
    std::snprintf(time, sizeof time, std::abs(percent) < 0.05 ? "0.0 %%" : "%+.1f %%", percent);
  }
  return pad(std::string(gib) + (change.peak_known ? " GiB" : ""), 10, true) + "  " +
         pad(time, 8, true);
}

void print_rows(const std::vector<PlanCandidate>& rows, bool numbered,
                const PlanReference& reference) {
  std::size_t recompute_width = 9, offload_width = 7, layout_width = 6;
  for (const PlanCandidate& c : rows) {
    recompute_width = std::max(recompute_width, c.recompute.size());
    offload_width = std::max(offload_width, c.offload.size());
    layout_width = std::max(layout_width, layout_label(c.config.parallel).size());
  }
  std::cout << (numbered ? "  # " : "    ") << pad("layout", layout_width) << "  mbs  "
            << pad("recompute", recompute_width) << "  " << pad("offload", offload_width)
            << "  peak GiB  rank   step s  tokens/s/GPU  TFLOP/s/GPU   MFU  vs current\n";
  int index = 1;
  for (const PlanCandidate& c : rows) {
    std::cout << (numbered ? pad(std::to_string(index++), 3, true) + " " : "    ")
              << pad(layout_label(c.config.parallel), layout_width) << "  "
              << pad(std::to_string(c.config.training.micro_batch_size), 3, true) << "  "
              << pad(c.recompute, recompute_width) << "  " << pad(c.offload, offload_width) << "  "
              << pad(fixed(to_gib(c.peak_total_bytes), 2), 8, true) << "  "
              << pad(std::to_string(c.limiting_pp_rank), 4, true) << "  "
              << pad(fixed(c.time.step_time_s, c.time.step_time_s < 10 ? 3 : 2), 7, true) << "  "
              << pad(fixed(c.time.tokens_per_s_per_gpu, 0), 12, true) << "  "
              << pad(fixed(c.time.model_tflops_per_gpu, 0), 11, true) << "  "
              << pad(fixed(100 * c.time.mfu, 1) + "%", 5, true) << "  " << change_text(c, reference)
              << "\n";
  }
}

// The options only `estimate` takes, and a missing model, are usage errors of `plan`.
std::optional<Error> plan_usage_error(const ParsedOptions& options) {
  for (const char* fixed_only : {"--vpp", "--etp"}) {
    if (options.values.count(fixed_only)) {
      return Error{fixed_only,
                   "is not a plan option (the planner searches the layout; "
                   "--tp/--pp/--cp/--ep/--mbs take lists)"};
    }
  }
  return missing_model(options);
}

// Moves the layout lists out of the options into a search space.
Expected<PlannerSearchSpace> take_layout_lists(ParsedOptions& options) {
  PlannerSearchSpace space;
  for (const std::string& name : kLayoutLists) {
    const auto it = options.values.find(name);
    if (it == options.values.end()) continue;
    const Expected<std::vector<int>> list = int_list(name, it->second);
    if (!list) return list.error();
    if (name == "--tp") space.tensor_parallel = *list;
    if (name == "--pp") space.pipeline_parallel = *list;
    if (name == "--cp") space.context_parallel = *list;
    if (name == "--ep") space.expert_parallel = *list;
    if (name == "--mbs") space.micro_batch_sizes = *list;
    options.values.erase(it);
  }
  return space;
}

// The configuration's options: all but the layout lists and plan's own options.
Expected<ParsedOptions> configuration_options(const ParsedOptions& options,
                                              PlannerSearchSpace& space) {
  ParsedOptions config_options = options;
  const Expected<PlannerSearchSpace> lists = take_layout_lists(config_options);
  if (!lists) return lists.error();
  space = *lists;
  for (const std::string& name : kPlanValues) config_options.values.erase(name);
  for (const std::string& name : kPlanSwitches) config_options.switches.erase(name);
  if (!config_options.values.count("--gpus") && !config_options.values.count("--world-size") &&
      !config_options.values.count("--recipe") && !config_options.values.count("--url")) {
    return Error{"--gpus", "is required (the number of GPUs to plan for)"};
  }
  return config_options;
}

// Plan's own numbers (margin, GPU overrides, --top, --vpp-max) into the request.
std::optional<Error> apply_plan_numbers(const ParsedOptions& options, PlanRequest& request) {
  DeviceConfig& device = request.base.device;
  const struct {
    const char* option;
    double* target;
    bool zero_allowed;
  } numbers[] = {
      {.option = "--margin-gib", .target = &request.margin_gib, .zero_allowed = true},
      {.option = "--gpu-memory-gib", .target = &device.capacity_gib, .zero_allowed = false},
      {.option = "--intra-node-gb-s",
       .target = &device.intra_node_bandwidth_gb_per_s,
       .zero_allowed = false},
      {.option = "--inter-node-gb-s",
       .target = &device.inter_node_bandwidth_gb_per_s,
       .zero_allowed = false},
      {.option = "--peak-tflops", .target = &device.peak_bf16_tflops, .zero_allowed = false}};
  for (const auto& number : numbers) {
    const auto it = options.values.find(number.option);
    if (it == options.values.end()) continue;
    const Expected<double> value = positive_number(number.option, it->second, number.zero_allowed);
    if (!value) return value.error();
    *number.target = *value;
  }
  const struct {
    const char* option;
    int* target;
  } integers[] = {{.option = "--top", .target = &request.top},
                  {.option = "--gpus-per-node", .target = &device.gpus_per_node},
                  {.option = "--vpp-max", .target = &request.space.max_virtual_stages}};
  for (const auto& integer : integers) {
    const auto it = options.values.find(integer.option);
    if (it == options.values.end()) continue;
    const Expected<std::int64_t> value = positive_integer(integer.option, it->second);
    if (!value) return value.error();
    if (*value > (1 << 20)) return Error{integer.option, "is beyond any real job"};
    *integer.target = static_cast<int>(*value);
  }
  return std::nullopt;
}

void apply_plan_switches(const ParsedOptions& options, PlanRequest& request) {
  request.space.search_recompute =
      !options.switches.count("--no-recompute-search") && !options.values.count("--recompute");
  request.space.search_offload = !options.switches.count("--no-offload-search");
  request.space.search_expert_tensor_parallel = !options.switches.count("--no-etp-search");
}

void print_header(const PlanRequest& request, const PlanStats& s, double seconds) {
  const Config& base = request.base;
  const double limit_gib = base.device.capacity_gib - request.margin_gib;
  const std::string name = base.model.name.empty() ? "Megatron-LM model" : base.model.name;
  std::cout << name << " on " << base.parallel.world_size << " × "
            << (base.device.name.empty() ? "GPU" : base.device.name) << " · gbs "
            << base.training.global_batch_size << " · seq " << base.training.seq_length
            << " · fits under " << fixed(limit_gib, 2) << " GiB ("
            << fixed(base.device.capacity_gib, 2) << " − " << fixed(request.margin_gib, 2)
            << " margin), and the top of each layout's error band under "
            << fixed(base.device.capacity_gib, 2) << " GiB\n";
  std::cout << "searched " << with_commas(s.candidates) << " candidates (" << with_commas(s.layouts)
            << " layouts) in " << fixed(seconds, 2) << " s: " << with_commas(s.fitting) << " fit, "
            << with_commas(s.out_of_memory) << " out of memory, " << with_commas(s.invalid)
            << " invalid\n";
}

// The configuration as given: what the "vs current" column compares each layout with.
void print_reference(const PlanReference& r) {
  std::cout << "current " << r.layout << ": ";
  if (r.error) {
    std::cout << "does not run (" << r.error->field << ": " << r.error->message << ")\n";
    return;
  }
  std::cout << fixed(to_gib(r.peak_total_bytes), 2) << " GiB on PP rank " << r.limiting_pp_rank
            << ", "
            << (r.status == FitStatus::fits         ? "fits"
                : r.status == FitStatus::borderline ? "borderline"
                                                    : "does not fit");
  if (r.step_time_s > 0) std::cout << "; step " << fixed(r.step_time_s, 3) << " s";
  std::cout << "\n";
}

void print_top(const std::vector<PlanCandidate>& top, const PlanReference& reference) {
  std::cout << "\nfastest layouts that fit\n";
  print_rows(top, true, reference);
  std::cout << "\nMegatron-LM flags of each layout (with the configuration's other flags)\n";
  int index = 1;
  for (const PlanCandidate& c : top) {
    std::cout << pad(std::to_string(index++), 3, true) << "  " << layout_megatron_args(c.config)
              << "\n";
  }
}

void print_pareto(const std::vector<PlanCandidate>& pareto, const PlanReference& reference) {
  // The front moves in small steps (a VPP more, one more module offloaded): show the
  // points at least 1 GiB apart, and the last (least memory) one.
  std::vector<PlanCandidate> shown;
  for (std::size_t i = 0; i < pareto.size(); ++i) {
    const PlanCandidate& c = pareto[i];
    if (shown.empty() || i + 1 == pareto.size() ||
        to_gib(shown.back().peak_total_bytes) - to_gib(c.peak_total_bytes) >= 1.0) {
      shown.push_back(c);
    }
  }
  std::cout << "\nPareto front: least memory at each step time (" << shown.size() << " of "
            << pareto.size() << " points, 1 GiB apart; --json lists all)\n";
  print_rows(shown, false, reference);
}

void print_rejections(const std::vector<PlanRejection>& rejections) {
  std::cout << "\nrejected\n";
  for (const PlanRejection& r : rejections) {
    std::cout << pad(with_commas(r.count), 11, true) << "  "
              << (r.reason == "out_of_memory"
                      ? "out of memory (" + r.rule + ", " + r.example + ")"
                      : r.field + ": " + r.rule + " (e.g. " + r.example + ")")
              << "\n";
  }
  if (rejections.empty()) std::cout << "  nothing\n";
}

void print_plan(const PlanRequest& request, const PlanResult& result, double seconds,
                const PlanReference& reference) {
  print_header(request, result.stats, seconds);
  print_reference(reference);
  if (result.top.empty()) {
    std::cout << "\nno layout fits; the rejections below say why\n";
  } else {
    print_top(result.top, reference);
    print_pareto(result.pareto, reference);
  }
  print_rejections(result.rejections);
  std::cout << "GiB per GPU (limiting pipeline rank); time from the step-time model "
               "(docs/planner.md), throughput as Megatron logs it\n";
}

// The configuration as the options give it, on the device the plan's options make
// (--gpu-memory-gib ...), priced as the reference of the plan's rows.
PlanReference reference_of(Config current, const PlanRequest& request) {
  current.device = request.base.device;
  const Expected<Estimate> estimated = estimate(current);
  return estimated ? plan_reference(current, *estimated, request.step_time)
                   : plan_reference(current, estimated.error());
}

// The request the options describe, and the configuration as given as its `reference`;
// nullopt once what was wrong is printed, with exit_code saying how it was wrong.
std::optional<PlanRequest> plan_request_from(const ParsedOptions& options, int& exit_code,
                                             std::optional<PlanReference>& reference) {
  exit_code = kExitUsage;
  if (const std::optional<Error> usage = plan_usage_error(options)) {
    print_error(*usage);
    return std::nullopt;
  }
  PlannerSearchSpace space;
  const Expected<ParsedOptions> config_options = configuration_options(options, space);
  if (!config_options) {
    print_error(config_options.error());
    return std::nullopt;
  }
  const Expected<ConfigFromOptions> built = config_from_options(*config_options);
  exit_code = report_config(built);  // prints the error or the warnings
  if (exit_code != kExitOk) return std::nullopt;
  PlanRequest request = plan_request_for(built->shared.config);
  if (request.global_batch_proposed && !options.values.count("--gbs")) {
    std::cerr << "megamem: note: no global batch given (--gbs): planning for "
              << request.base.training.global_batch_size << ", " << request.global_batch_proposed
              << "\n";
  }
  request.space = space;
  if (const std::optional<Error> bad = apply_plan_numbers(options, request)) {
    print_error(*bad);
    exit_code = kExitUsage;
    return std::nullopt;
  }
  apply_plan_switches(options, request);
  reference = reference_of(built->shared.config, request);
  return request;
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
  int exit_code = kExitOk;
  std::optional<PlanReference> reference;
  const std::optional<PlanRequest> request = plan_request_from(*options, exit_code, reference);
  if (!request) return exit_code;
  if (!request->base.optimizer.use_distributed_optimizer) {
    std::cerr << "megamem: warning: planning without --use-distributed-optimizer: every "
                 "data-parallel rank keeps the full optimizer state\n";
  }
  const auto start = std::chrono::steady_clock::now();
  const Expected<PlanResult> planned = plan(*request);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!planned) {
    print_error(planned.error());
    return kExitError;
  }
  if (options->switches.count("--json")) {
    std::cout << plan_to_json(*request, *planned, seconds, *reference) << "\n";
  } else {
    print_plan(*request, *planned, seconds, *reference);
  }
  return kExitOk;
}

}  // namespace megamem::cli
