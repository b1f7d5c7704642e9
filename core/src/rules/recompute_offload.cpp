// Rule book, recompute and offload topic: full and selective recompute, fine-grained
// activation offloading and the legacy --cpu-offloading.
#include <algorithm>
#include <iterator>
#include <string>

#include "rule_book.hpp"

namespace megamem::rules {
namespace {

constexpr const char* kTransformerConfig = "megatron/core/transformer/transformer_config.py";

bool has(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// transformer_block.py _checkpointed_forward: "uniform" steps through the layers in groups
// of recompute_num_layers (0 never advances); "block" recomputes the first
// recompute_num_layers layers of each stage, so 0 recomputes none (real launch scripts pass
// --recompute-method block --recompute-num-layers 0).
std::optional<Error> full_recompute_layer_count(NormalizedConfig& n) {
  const RecomputeConfig& recompute = n.config.training.recompute;
  if (recompute.granularity != RecomputeGranularity::full) return std::nullopt;
  const int minimum = recompute.method == RecomputeMethod::block ? 0 : 1;
  if (recompute.num_layers >= minimum) return std::nullopt;
  return rule_error("recompute_num_layers",
                    "recompute_num_layers must be at least " + str(minimum) + " with the " +
                        (minimum == 0 ? "block" : "uniform") + " method, got " +
                        str(recompute.num_layers),
                    "megatron/core/transformer/transformer_block.py");
}

// transformer_config.py __post_init__ raises with sequence parallelism; arguments.py also
// asks for TP > 1 and full recompute, without which the flag changes nothing.
std::optional<Error> distributed_saved_activations(NormalizedConfig& n) {
  const RecomputeConfig& recompute = n.config.training.recompute;
  if (!recompute.distribute_saved_activations) return std::nullopt;
  if (n.sequence_parallel) {
    return rule_error("distribute_saved_activations",
                      "distribute_saved_activations cannot be used with sequence parallel",
                      kTransformerConfig);
  }
  if (n.config.parallel.tensor_parallel == 1 ||
      recompute.granularity != RecomputeGranularity::full) {
    policy_warning(n,
                   "--distribute-saved-activations needs TP > 1 and full recompute in "
                   "Megatron-LM; it changes nothing here",
                   "megatron/training/arguments.py validate_args");
  }
  return std::nullopt;
}

// transformer_config.py __post_init__: the recompute modules and what each needs. Modules of
// architectures megamem does not build (gated delta net, mHC) are accepted with a warning.
std::optional<Error> selective_recompute_modules(NormalizedConfig& n) {
  const TrainingConfig& train = n.config.training;
  if (train.recompute.granularity != RecomputeGranularity::selective) return std::nullopt;
  static const char* const kModeled[] = {"core_attn", "moe_act", "layernorm",     "mla_up_proj",
                                         "mlp",       "moe",     "shared_experts"};
  static const char* const kOtherArchitectures[] = {"gdn_norm_out", "gdp_in_proj", "gdp_qkv",
                                                    "mhc"};
  for (const std::string& module : train.recompute.modules) {
    const auto known = [&](const auto& list) {
      return std::find(std::begin(list), std::end(list), module) != std::end(list);
    };
    if (known(kOtherArchitectures)) {
      policy_warning(n,
                     "recompute module '" + module +
                         "' belongs to a layer megamem does not "
                         "model; it changes nothing here",
                     kTransformerConfig);
    } else if (!known(kModeled)) {
      return rule_error("recompute_modules",
                        "unknown recompute module '" + module +
                            "' (known: core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, "
                            "shared_experts, gdn_norm_out, gdp_in_proj, gdp_qkv, mhc)",
                        kTransformerConfig);
    }
  }
  return std::nullopt;
}

std::optional<Error> recompute_module_prerequisites(NormalizedConfig& n) {
  const TrainingConfig& train = n.config.training;
  if (train.recompute.granularity != RecomputeGranularity::selective) return std::nullopt;
  if (has(train.recompute.modules, "moe_act") && !train.moe_grouped_gemm) {
    return rule_error("recompute_modules", "moe_act recompute needs --moe-grouped-gemm",
                      kTransformerConfig);
  }
  if (has(train.recompute.modules, "mla_up_proj") && !n.config.model.multi_latent_attention) {
    return rule_error("recompute_modules", "mla_up_proj recompute needs --multi-latent-attention",
                      kTransformerConfig);
  }
  return std::nullopt;
}

// transformer_config.py __post_init__ (fine_grained_activation_offloading).
std::optional<Error> fine_grained_offload_modules(NormalizedConfig& n) {
  const OffloadConfig& offload = n.config.training.offload;
  if (!offload.fine_grained_activation_offloading) return std::nullopt;
  static const char* const kOffloadable[] = {"attn_norm", "qkv_linear",      "core_attn",
                                             "attn_proj", "mlp_norm",        "expert_fc1",
                                             "moe_act",   "fused_group_mlp", "gdp_qkv"};
  for (const std::string& module : offload.offload_modules) {
    if (std::find(std::begin(kOffloadable), std::end(kOffloadable), module) ==
        std::end(kOffloadable)) {
      return rule_error("offload_modules",
                        "unknown offload module '" + module +
                            "' (known: attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, "
                            "expert_fc1, moe_act, fused_group_mlp, gdp_qkv)",
                        kTransformerConfig);
    }
  }
  if (offload.offload_modules.empty()) {
    return rule_error("offload_modules",
                      "fine-grained activation offloading needs at least one module",
                      kTransformerConfig);
  }
  if (has(offload.offload_modules, "attn_proj") && !has(offload.offload_modules, "core_attn")) {
    return rule_error("offload_modules",
                      "attn_proj offload needs core_attn too (its input is core_attn's output)",
                      kTransformerConfig);
  }
  return std::nullopt;
}

// transformer_config.py __post_init__: fine-grained offloading runs through Transformer
// Engine's modules and excludes the legacy --cpu-offloading.
std::optional<Error> fine_grained_offload_combinations(NormalizedConfig& n) {
  const OffloadConfig& offload = n.config.training.offload;
  if (!offload.fine_grained_activation_offloading) return std::nullopt;
  if (offload.cpu_offloading) {
    return rule_error("fine_grained_activation_offloading",
                      "fine-grained activation offloading cannot be combined with "
                      "--cpu-offloading",
                      kTransformerConfig);
  }
  if (n.config.training.transformer_impl != TransformerImpl::transformer_engine) {
    return rule_error("fine_grained_activation_offloading",
                      "fine-grained activation offloading needs --transformer-impl "
                      "transformer_engine",
                      kTransformerConfig);
  }
  return std::nullopt;
}

// transformer_config.py __post_init__ (legacy CPU offloading).
std::optional<Error> legacy_cpu_offloading(NormalizedConfig& n) {
  const Config& c = n.config;
  const OffloadConfig& offload = c.training.offload;
  if (!offload.cpu_offloading) return std::nullopt;
  if (c.training.recompute.granularity != RecomputeGranularity::none) {
    return rule_error("cpu_offloading", "legacy --cpu-offloading is not allowed with recompute",
                      kTransformerConfig);
  }
  if (offload.cpu_offloading_num_layers < 0 ||
      offload.cpu_offloading_num_layers >= c.model.num_layers) {
    return rule_error("cpu_offloading_num_layers",
                      "cpu_offloading_num_layers must be between 0 and num_layers - 1",
                      kTransformerConfig);
  }
  if (c.parallel.pipeline_parallel > 1) {
    return rule_error("cpu_offloading",
                      "legacy --cpu-offloading is not allowed with pipeline parallel",
                      kTransformerConfig);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> check_recompute_offload(NormalizedConfig& n) {
  static constexpr Check kChecks[] = {
      full_recompute_layer_count,   distributed_saved_activations,
      selective_recompute_modules,  recompute_module_prerequisites,
      fine_grained_offload_modules, fine_grained_offload_combinations,
      legacy_cpu_offloading,
  };
  return run_checks(kChecks, n);
}

}  // namespace megamem::rules
