// What-if savings; see what_if.hpp.
#include "megamem/what_if.hpp"

#include <algorithm>

namespace megamem {
namespace {

struct Choice {
  std::string label;
  std::string flags;
  Config config;
};

RecomputeConfig no_recompute() { return RecomputeConfig{}; }

RecomputeConfig selective(std::vector<std::string> modules) {
  RecomputeConfig r;
  r.granularity = RecomputeGranularity::selective;
  r.modules = std::move(modules);
  return r;
}

RecomputeConfig full(RecomputeMethod method, int layers) {
  RecomputeConfig r;
  r.granularity = RecomputeGranularity::full;
  r.method = method;
  r.num_layers = layers;
  return r;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
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
    out.push_back({std::move(label), std::move(flags), std::move(c)});
  };
  add("recompute: none", "", no_recompute());
  std::vector<std::vector<std::string>> module_sets = {{"core_attn"}};
  const bool moe = base.model.num_experts > 0;
  if (base.model.multi_latent_attention) module_sets.push_back({"core_attn", "mla_up_proj"});
  if (moe && base.training.moe_grouped_gemm) module_sets.push_back({"moe_act"});
  if (moe && base.model.moe_shared_expert_intermediate_size > 0) {
    module_sets.push_back({"shared_experts"});
  }
  if (moe) {
    module_sets.push_back({"moe"});
  } else {
    module_sets.push_back({"mlp"});
  }
  module_sets.push_back({"core_attn", moe ? "moe" : "mlp", "layernorm"});
  for (const auto& modules : module_sets) {
    add("selective: " + join(modules, ", "),
        "--recompute-granularity selective --recompute-modules " + join(modules, " "),
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

std::vector<Choice> offload_choices(const Config& base) {
  std::vector<Choice> out;
  const bool moe = base.model.num_experts > 0;
  if (!base.training.offload.fine_grained_activation_offloading) {
    Config c = base;
    c.training.offload.fine_grained_activation_offloading = true;
    // Every module that holds saved tensors for this architecture: standalone norms only
    // exist in MLA (input) and MoE (pre-MLP) layers or the local spec.
    const bool local = base.training.transformer_impl == TransformerImpl::local;
    std::vector<std::string>& offloaded = c.training.offload.offload_modules;
    offloaded.clear();
    if (local || base.model.multi_latent_attention) offloaded.push_back("attn_norm");
    offloaded.insert(offloaded.end(), {"qkv_linear", "core_attn", "attn_proj"});
    if (local || moe) offloaded.push_back("mlp_norm");
    if (moe) offloaded.push_back("expert_fc1");
    if (moe && base.training.moe_grouped_gemm) offloaded.push_back("moe_act");
    const std::string modules = join(c.training.offload.offload_modules, " ");
    out.push_back({"activation offload: " + join(c.training.offload.offload_modules, ", "),
                   "--fine-grained-activation-offloading --offload-modules " + modules, c});
  }
  for (double fraction : {0.5, 1.0}) {
    const OptimizerConfig& opt = base.optimizer;
    if (opt.optimizer_cpu_offload && opt.optimizer_offload_fraction == fraction) continue;
    Config c = base;
    c.optimizer.use_precision_aware_optimizer = true;
    c.optimizer.optimizer_cpu_offload = true;
    c.optimizer.optimizer_offload_fraction = fraction;
    out.push_back({"optimizer offload " + std::to_string(static_cast<int>(fraction * 100)) + " %",
                   "--use-precision-aware-optimizer --optimizer-cpu-offload "
                   "--optimizer-offload-fraction " +
                       std::string(fraction == 1.0 ? "1.0" : "0.5"),
                   c});
  }
  if (!base.optimizer.use_distributed_optimizer) {
    Config c = base;
    c.optimizer.use_distributed_optimizer = true;
    out.push_back({"distributed optimizer", "--use-distributed-optimizer", c});
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
    }
    out.push_back(std::move(option));
  };
  evaluate({"current setting", "", config}, true);
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
  }
  return out;
}

}  // namespace megamem
