// What-if savings; see what_if.hpp.
#include "megamem/what_if.hpp"

#include <algorithm>

#include "megamem/estimate.hpp"
#include "megamem/step_time.hpp"
#include "plan/memory_choices.hpp"

namespace megamem {
namespace {

struct Choice {
  std::string label;
  std::string flags;
  Config config;
  std::string note;
};

RecomputeConfig no_recompute() { return RecomputeConfig{}; }

RecomputeConfig selective(RecomputeModules modules) {
  RecomputeConfig r;
  r.granularity = RecomputeGranularity::selective;
  r.modules = modules;
  return r;
}

RecomputeConfig full(RecomputeMethod method, int layers) {
  RecomputeConfig r;
  r.granularity = RecomputeGranularity::full;
  r.method = method;
  r.num_layers = layers;
  return r;
}

bool same_recompute(const RecomputeConfig& a, const RecomputeConfig& b) {
  return a.granularity == b.granularity &&
         (a.granularity != RecomputeGranularity::full ||
          (a.method == b.method && a.num_layers == b.num_layers)) &&
         (a.granularity != RecomputeGranularity::selective || a.modules == b.modules);
}

// Recompute choices that apply to this model (Megatron's selective modules by architecture).
std::vector<Choice> recompute_choices(const Config& base) {
  std::vector<Choice> out;
  auto add = [&](std::string label, std::string flags, RecomputeConfig recompute) {
    Config c = base;
    c.training.recompute = std::move(recompute);
    out.push_back({std::move(label), std::move(flags), std::move(c), ""});
  };
  add("recompute: none", "", no_recompute());
  // The planner's selective sets (memory_choices.hpp).
  for (RecomputeModules modules : selective_recompute_choices(base)) {
    add("selective: " + join_module_names(modules, ", "),
        "--recompute-granularity selective --recompute-modules " + join_module_names(modules, " "),
        selective(modules));
  }
  add("full, uniform, 1 layer per group",
      "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1",
      full(RecomputeMethod::uniform, 1));
  add("full, block, 1 layer per chunk",
      "--recompute-granularity full --recompute-method block --recompute-num-layers 1",
      full(RecomputeMethod::block, 1));
  return out;
}

// What HybridDeviceOptimizer moves (megatron/core/optimizer/cpu_offloading/
// hybrid_optimizer.py): the offloaded share of the fp32 master weights and Adam moments, with
// an fp32 copy of their grads, goes to the host; the bf16 weights and the grad buffer stay on
// the GPU. It needs --use-precision-aware-optimizer (arguments.py), which keeps full fp32
// masters on the GPU for the share not offloaded (no 2-byte remainders).
std::string optimizer_offload_note(const Config& base) {
  std::string note =
      "Moves that share of the fp32 master weights and Adam moments (with an fp32 grad copy) "
      "to the host; weights and the grad buffer stay on the GPU.";
  if (!base.optimizer.use_precision_aware_optimizer) {
    note +=
        " Turns on the precision-aware optimizer it needs: the share kept on the GPU holds "
        "full fp32 masters.";
  }
  if (!base.optimizer.use_distributed_optimizer) return note;
  return note +
         " With the distributed optimizer only this rank's shard moves, so the saving "
         "shrinks as data parallelism grows.";
}

std::vector<Choice> offload_choices(const Config& base) {
  std::vector<Choice> out;
  if (!base.training.offload.fine_grained_activation_offloading) {
    Config c = base;
    c.training.offload.fine_grained_activation_offloading = true;
    c.training.offload.offload_modules = activation_offload_choice(base);
    const OffloadModules modules = c.training.offload.offload_modules;
    out.push_back({"activation offload: " + join_module_names(modules, ", "),
                   "--fine-grained-activation-offloading --offload-modules " +
                       join_module_names(modules, " "),
                   c, ""});
  }
  for (double fraction : {0.5, 1.0}) {
    const OptimizerConfig& opt = base.optimizer;
    if (opt.optimizer_cpu_offload && opt.optimizer_offload_fraction == fraction) continue;
    Config c = base;
    c.optimizer.use_precision_aware_optimizer = true;
    c.optimizer.optimizer_cpu_offload = true;
    c.optimizer.optimizer_offload_fraction = fraction;
    std::string label =
        "optimizer offload " + std::to_string(static_cast<int>(fraction * 100)) + " %";
    if (opt.optimizer_cpu_offload) {
      label += " (now " +
               std::to_string(static_cast<int>(opt.optimizer_offload_fraction * 100 + 0.5)) + " %)";
    }
    out.push_back({std::move(label),
                   "--use-precision-aware-optimizer --optimizer-cpu-offload "
                   "--optimizer-offload-fraction " +
                       std::string(fraction == 1.0 ? "1.0" : "0.5"),
                   c, optimizer_offload_note(base)});
  }
  if (!base.optimizer.use_distributed_optimizer) {
    Config c = base;
    c.optimizer.use_distributed_optimizer = true;
    out.push_back({"distributed optimizer", "--use-distributed-optimizer", c, ""});
  }
  return out;
}

std::uint64_t limiting_peak_total(const Estimate& e) {
  return e.ranks[static_cast<std::size_t>(e.limiting_pp_rank)].peak_total_bytes;
}

}  // namespace

std::vector<WhatIfOption> what_if_options(const Config& config) {
  EstimateOptions fast;
  fast.module_tree = false;
  fast.timeline = false;
  std::vector<WhatIfOption> out;
  auto evaluate = [&](const Choice& choice, bool current) {
    WhatIfOption option;
    option.label = choice.label;
    option.megatron_flags = choice.flags;
    option.config = choice.config;
    option.current = current;
    auto result = estimate(choice.config, fast);
    if (!result) {
      option.valid = false;
      option.error = result.error().field + ": " + result.error().message;
    } else {
      const RankMemory& rank = result->ranks[static_cast<std::size_t>(result->limiting_pp_rank)];
      option.peak_allocated_bytes = rank.peak_allocated_bytes;
      option.peak_total_bytes = limiting_peak_total(*result);
      option.limiting_pp_rank = result->limiting_pp_rank;
      option.status = result->verdict.status;
      option.note = choice.note;
      const Expected<StepTime> time = estimate_step_time(choice.config);
      if (time) option.step_time_s = time->step_time_s;
    }
    out.push_back(std::move(option));
  };
  evaluate({"current setting", "", config, ""}, true);
  for (const Choice& choice : recompute_choices(config)) {
    if (same_recompute(choice.config.training.recompute, config.training.recompute)) continue;
    evaluate(choice, false);
  }
  for (const Choice& choice : offload_choices(config)) evaluate(choice, false);
  const WhatIfOption& current = out.front();
  for (WhatIfOption& option : out) {
    if (option.valid && current.valid) {
      option.saving_bytes = static_cast<std::int64_t>(current.peak_total_bytes) -
                            static_cast<std::int64_t>(option.peak_total_bytes);
    }
    if (option.step_time_s > 0 && current.step_time_s > 0) {
      option.step_time_change = option.step_time_s / current.step_time_s - 1.0;
    }
  }
  return out;
}

}  // namespace megamem
