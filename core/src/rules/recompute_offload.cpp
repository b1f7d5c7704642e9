// Rule book, recompute and offload topic: full and selective recompute, fine-grained
// activation offloading and the legacy --cpu-offloading.
#include <algorithm>
#include <iterator>
#include <string>

#include "rule_book.hpp"

namespace megamem::rules {
namespace {

constexpr const char* kTransformerConfig = "megatron/core/transformer/transformer_config.py";

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
    arguments_policy(n,
                     "--distribute-saved-activations needs TP > 1 and full recompute in "
                     "Megatron-LM; it changes nothing here");
  }
  return std::nullopt;
}

// transformer_config.py __post_init__: the recompute modules. Unknown names never reach a
// Config (the parsers refuse them, naming the known ones from modules.hpp); modules of
// architectures megamem does not build (gated delta net, mHC) are accepted with a warning.
std::optional<Error> selective_recompute_modules(NormalizedConfig& n) {
  const RecomputeConfig& recompute = n.config.training.recompute;
  if (recompute.granularity != RecomputeGranularity::selective) return std::nullopt;
  const RecomputeModules absent = recompute_modules_of_absent_layers(n.config.model);
  for (const RecomputeModule module : (recompute.modules & absent).members()) {
    policy_warning(n,
                   "recompute module '" + std::string(module_name(module)) +
                       "' belongs to a layer megamem does not model; it changes nothing here",
                   kTransformerConfig);
  }
  const RecomputeModules inert = recompute_modules_without_effect(n.config.model);
  for (const RecomputeModule module : (recompute.modules & inert).members()) {
    policy_warning(n,
                   "recompute module '" + std::string(module_name(module)) +
                       "' has no effect on this model's layers (their forward bypasses its "
                       "checkpoint)",
                   recompute_bypass_source(n.config.model));
  }
  const RecomputeModules failing = recompute.modules & recompute_modules_failing(n.config.model);
  if (failing.empty()) return std::nullopt;
  const std::string name(module_name(failing.members().front()));
  if (n.config.model.gemma4_moe_layer) {
    return rule_error("recompute_modules",
                      "recompute module '" + name +
                          "' is refused for Gemma 4's MoE layer: its router, shared and routed "
                          "experts take separately normalised inputs, which the pre-MLP norm's "
                          "recompute does not cover (Gemma4ModelProvider.finalize raises)",
                      "Megatron-Bridge src/megatron/bridge/models/gemma/gemma4_provider.py "
                      "_validate_gemma4_moe_orchestration");
  }
  return rule_error("recompute_modules",
                    "recompute module '" + name +
                        "' fails in this model's layers: Gemma4DenseTransformerLayer._forward_mlp "
                        "starts the pre-MLP norm's checkpoint but never discards its output or "
                        "registers its recompute, so the first backward finds no saved inputs",
                    "Megatron-Bridge src/megatron/bridge/models/gemma/modeling_gemma4.py, "
                    "megatron/core/tensor_parallel/random.py CheckpointWithoutOutput");
}

// transformer_config.py __post_init__: what some recompute modules need.
std::optional<Error> recompute_module_prerequisites(NormalizedConfig& n) {
  const TrainingConfig& train = n.config.training;
  if (train.recompute.granularity != RecomputeGranularity::selective) return std::nullopt;
  if (train.recompute.modules.has(RecomputeModule::moe_act) && !train.moe_grouped_gemm) {
    return rule_error("recompute_modules", "moe_act recompute needs --moe-grouped-gemm",
                      kTransformerConfig);
  }
  if (train.recompute.modules.has(RecomputeModule::mla_up_proj) &&
      !n.config.model.multi_latent_attention) {
    return rule_error("recompute_modules", "mla_up_proj recompute needs --multi-latent-attention",
                      kTransformerConfig);
  }
  return error_when(
      train.recompute.modules.has(RecomputeModule::mhc) && !n.config.model.enable_mhc_connections,
      "recompute_modules", "'mhc' in recompute_modules requires enable_mhc_connections=True",
      kTransformerConfig);
}

// transformer_config.py __post_init__ (fine_grained_activation_offloading).
std::optional<Error> fine_grained_offload_modules(NormalizedConfig& n) {
  const OffloadConfig& offload = n.config.training.offload;
  if (!offload.fine_grained_activation_offloading) return std::nullopt;
  if (offload.offload_modules.empty()) {
    return rule_error("offload_modules",
                      "fine-grained activation offloading needs at least one module",
                      kTransformerConfig);
  }
  if (offload.offload_modules.has(OffloadModule::attn_proj) &&
      !offload.offload_modules.has(OffloadModule::core_attn)) {
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

// multi_token_prediction.py MultiTokenPredictionLayer._checkpointed_forward (since 08abeedbfe,
// August 2025): under full uniform recompute each MTP depth is one checkpoint, and Megatron-Core
// asserts recompute_num_layers == 1 for it; under the block method it warns and recomputes no
// MTP layer. Earlier releases recomputed none, so both are estimated without the checkpoint.
std::optional<Error> mtp_full_recompute(NormalizedConfig& n) {
  const RecomputeConfig& recompute = n.config.training.recompute;
  if (recompute.granularity != RecomputeGranularity::full || n.config.model.mtp_num_layers <= 0) {
    return std::nullopt;
  }
  const char* source = "megatron/core/transformer/multi_token_prediction.py";
  if (recompute.method == RecomputeMethod::block) {
    policy_warning(n,
                   "full recompute's block method recomputes no MTP layer; they keep all their "
                   "activations",
                   source);
  } else if (recompute.num_layers != 1) {
    policy_warning(n,
                   "Megatron-Core since 08abeedbfe asserts recompute_num_layers == 1 for MTP "
                   "layers under uniform full recompute (got " +
                       str(recompute.num_layers) +
                       "); estimated as earlier releases ran it, MTP layers not recomputed",
                   source);
  }
  return std::nullopt;
}

constexpr Check kRecomputeOffloadChecks[] = {
    full_recompute_layer_count,        distributed_saved_activations,  mtp_full_recompute,
    selective_recompute_modules,       recompute_module_prerequisites, fine_grained_offload_modules,
    fine_grained_offload_combinations, legacy_cpu_offloading,
};

}  // namespace

const std::span<const Check> recompute_offload_checks{kRecomputeOffloadChecks};

}  // namespace megamem::rules
