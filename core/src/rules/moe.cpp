// Rule book, mixture-of-experts topic: how experts split over EP and ETP, the router's top-k,
// the shared experts, and the layer pattern.
#include <algorithm>
#include <string>

#include "memory/flex_dispatcher_buffers.hpp"
#include "rule_book.hpp"

namespace megamem::rules {
namespace {

// megatron/core/transformer/moe/moe_layer.py: each EP rank holds num_experts / EP experts;
// transformer_config.py: expert parallelism needs experts.
std::optional<Error> experts_divide_by_ep(NormalizedConfig& n) {
  const int experts = n.config.model.num_experts;
  const int ep = n.config.parallel.expert_parallel;
  if (experts == 0 && ep > 1) {
    return rule_error("expert_model_parallel_size",
                      "expert_model_parallel_size > 1 needs a MoE model (num_experts > 0)",
                      "megatron/core/transformer/transformer_config.py");
  }
  return must_divide("num_experts", "num_experts", experts, "expert_model_parallel_size", ep,
                     "megatron/core/transformer/moe/moe_layer.py");
}

// megatron/core/transformer/moe/router.py: torch.topk over the experts.
std::optional<Error> router_topk_within_experts(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.num_experts == 0 || (m.moe_router_topk >= 1 && m.moe_router_topk <= m.num_experts)) {
    return std::nullopt;
  }
  return rule_error("moe_router_topk",
                    "moe_router_topk " + str(m.moe_router_topk) +
                        " must be between 1 and num_experts " + str(m.num_experts),
                    "megatron/core/transformer/moe/router.py");
}

// megatron/core/transformer/moe/experts.py asserts "`moe_apply_probs_on_input` only works
// with `moe_router_topk`=1".
std::optional<Error> probs_on_input_needs_top1(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.num_experts == 0 || !m.moe_apply_probs_on_input || m.moe_router_topk == 1) {
    return std::nullopt;
  }
  return rule_error("moe_apply_probs_on_input",
                    "applying the routing probabilities on the input needs moe_router_topk 1, "
                    "not " +
                        str(m.moe_router_topk),
                    "megatron/core/transformer/moe/experts.py");
}

// megatron/core/transformer/moe/experts.py asserts "Bias is not supported with fused weighted
// squared relu" when the experts have biases.
std::optional<Error> fused_weighted_squared_relu_without_bias(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  return error_when(m.num_experts > 0 && m.activation == Activation::squared_relu &&
                        n.config.training.moe_fused_weighted_squared_relu && m.add_bias_linear,
                    "use_fused_weighted_squared_relu",
                    "the fused weighted squared ReLU does not support expert biases "
                    "(--disable-bias-linear)",
                    "megatron/core/transformer/moe/experts.py");
}

// megatron/core/transformer/moe/experts.py: expert FC1/FC2 are split over ETP ranks.
std::optional<Error> expert_ffn_divides_by_etp(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.num_experts == 0) return std::nullopt;
  return must_divide("moe_ffn_hidden_size", "moe_ffn_hidden_size", m.moe_ffn_hidden_size,
                     "expert_tensor_parallel_size", n.config.parallel.expert_tensor_parallel,
                     "megatron/core/transformer/moe/experts.py");
}

// megatron/core/transformer/moe/shared_experts.py: a TP-split MLP.
std::optional<Error> shared_experts_divide_by_tp(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.num_experts == 0) return std::nullopt;
  return must_divide("moe_shared_expert_intermediate_size", "moe_shared_expert_intermediate_size",
                     m.moe_shared_expert_intermediate_size, "tensor_model_parallel_size",
                     n.config.parallel.tensor_parallel,
                     "megatron/core/transformer/moe/shared_experts.py");
}

// moe_layer.py forward raises in training when TP > 1 runs without sequence parallelism
// (core_r0.12-r0.15 already refused it in model_parallel_config.py with EP > 1).
std::optional<Error> moe_with_tp_needs_sequence_parallel(NormalizedConfig& n) {
  if (n.config.model.num_experts == 0 || n.config.parallel.tensor_parallel == 1 ||
      n.sequence_parallel) {
    return std::nullopt;
  }
  return rule_error("sequence_parallel",
                    "MoE layers with tensor_model_parallel_size > 1 need --sequence-parallel",
                    "megatron/core/transformer/moe/moe_layer.py");
}

// --delay-wgrad-compute runs the wgrad GEMMs in the combined 1F1B schedule's backward_dw
// (model_chunk_schedule_plan.py); TransformerConfig asserts the EP overlap since core_v0.14,
// and only Transformer Engine linears take delay_wgrad_compute (extensions/transformer_engine.py).
std::optional<Error> delay_wgrad_needs_ep_overlap(NormalizedConfig& n) {
  const TrainingConfig& t = n.config.training;
  if (!t.delay_wgrad_compute) return std::nullopt;
  return warn_when(n,
                   !t.overlap_moe_expert_parallel_comm ||
                       t.transformer_impl != TransformerImpl::transformer_engine,
                   "--delay-wgrad-compute needs --overlap-moe-expert-parallel-comm and "
                   "--transformer-impl transformer_engine (Megatron-Core 0.14 and later refuse it "
                   "otherwise); estimated as delayed",
                   "megatron/core/transformer/transformer_config.py __post_init__");
}

// DeepEP's normal kernels have chunk sizes for a few group sizes only and assert on others
// (deep_ep/buffer.py get_dispatch_config); Megatron-Core passes the group on unchecked.
std::optional<Error> deepep_group_size(NormalizedConfig& n) {
  const Config& c = n.config;
  if (c.model.num_experts == 0 || c.training.moe_token_dispatcher != TokenDispatcher::flex ||
      c.training.moe_flex_dispatcher_backend != FlexDispatcherBackend::deepep) {
    return std::nullopt;
  }
  const std::int64_t ranks = flex_dispatcher_group(c);
  return warn_when(n, !deepep_supports_group(ranks),
                   "the flex dispatcher's DeepEP backend has no configuration for a group of " +
                       std::to_string(ranks) +
                       " expert ranks (TP x EP; it takes 2, 4, 8, 16, 24, 32, 64, 128, 144 or "
                       "160) and fails at the first dispatch; its buffers are estimated for the "
                       "next size it takes",
                   "deep_ep/buffer.py Buffer.get_dispatch_config");
}

// transformer_block.py / moe_utils.py: --moe-layer-freq, an integer or one 0/1 per layer.
std::optional<Error> resolve_moe_layer_pattern(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  const auto layers = static_cast<std::size_t>(m.num_layers);
  if (m.num_experts == 0) {
    n.moe_layer_pattern.assign(layers, 0);
    return std::nullopt;
  }
  if (!m.moe_layer_pattern.empty()) {
    if (m.moe_layer_pattern.size() != layers) {
      return rule_error("moe_layer_freq",
                        "moe_layer_freq pattern has " +
                            str(static_cast<std::int64_t>(m.moe_layer_pattern.size())) +
                            " entries but num_layers is " + str(m.num_layers),
                        "megatron/core/transformer/transformer_config.py");
    }
    n.moe_layer_pattern = m.moe_layer_pattern;
    return std::nullopt;
  }
  if (m.moe_layer_freq < 1) {
    return Error{"moe_layer_freq",
                 "moe_layer_freq must be at least 1, got " + str(m.moe_layer_freq)};
  }
  n.moe_layer_pattern.resize(layers);
  for (std::size_t i = 0; i < layers; ++i) {
    n.moe_layer_pattern[i] = (static_cast<int>(i) % m.moe_layer_freq == 0) ? 1 : 0;
  }
  return std::nullopt;
}

// moe_layer.py MoELayer.preprocess: with latent projections the shared experts cannot overlap
// the dispatch in training (an AssertionError). A dense model ignores the latent size here
// (arguments.py asserts it; the field does not apply, fields.hpp field_not_applicable).
std::optional<Error> latent_moe_rules(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.moe_latent_size <= 0 || m.num_experts == 0) return std::nullopt;
  return error_when(n.config.training.moe_shared_expert_overlap, "moe_shared_expert_overlap",
                    "Shared expert overlap with MoE latent projections is not supported during "
                    "training. Disable moe_shared_expert_overlap.",
                    "megatron/core/transformer/moe/moe_layer.py");
}

// Megatron-Bridge's Gemma 4 MoE layer (gemma/modeling_gemma4.py Gemma4TransformerLayer) calls
// self.mlp.forward_with_separate_inputs, which only Gemma4MoELayer has, so every layer is MoE
// (Gemma4ModelProvider sets moe_layer_freq 1). gemma4_provider.py
// _validate_gemma4_moe_orchestration refuses the shared experts' overlap, CUDA graphs and MLP
// norm offloading: only that launcher's check, so a warning, and the run is priced as set
// (layernorm recompute, which fails in the layer itself: field_applicability.cpp
// recompute_modules_failing).
std::optional<Error> gemma4_moe_layer_rules(NormalizedConfig& n) {
  const Config& c = n.config;
  if (!c.model.gemma4_moe_layer) return std::nullopt;
  constexpr const char* kSource = "Megatron-Bridge gemma/gemma4_provider.py, modeling_gemma4.py";
  const bool all_moe =
      c.model.num_experts > 0 && std::all_of(n.moe_layer_pattern.begin(), n.moe_layer_pattern.end(),
                                             [](std::uint8_t bit) { return bit == 1; });
  if (!all_moe) {
    return rule_error("gemma4_moe_layer",
                      "Gemma 4's MoE layer needs experts on every layer (moe_layer_freq 1)",
                      kSource);
  }
  const OffloadConfig& offload = c.training.offload;
  const struct {
    bool set;
    const char* field;
    const char* what;
  } refused[] = {
      {c.training.moe_shared_expert_overlap, "moe_shared_expert_overlap",
       "the shared experts' overlap"},
      {c.training.cuda_graph_impl != CudaGraphImpl::none, "cuda_graph_impl", "CUDA graphs"},
      {offload.fine_grained_activation_offloading &&
           offload.offload_modules.has(OffloadModule::mlp_norm),
       "offload_modules", "MLP norm activation offloading"},
  };
  for (const auto& item : refused) {
    if (!item.set) continue;
    policy_warning(n,
                   std::string("Megatron-Bridge's Gemma 4 MoE provider refuses ") + item.what +
                       " (" + item.field +
                       "): its router, shared and routed experts take separate inputs",
                   "Megatron-Bridge gemma/gemma4_provider.py _validate_gemma4_moe_orchestration");
  }
  return std::nullopt;
}

constexpr Check kMoeChecks[] = {experts_divide_by_ep,
                                router_topk_within_experts,
                                probs_on_input_needs_top1,
                                fused_weighted_squared_relu_without_bias,
                                expert_ffn_divides_by_etp,
                                shared_experts_divide_by_tp,
                                moe_with_tp_needs_sequence_parallel,
                                resolve_moe_layer_pattern,
                                gemma4_moe_layer_rules,
                                delay_wgrad_needs_ep_overlap,
                                deepep_group_size,
                                latent_moe_rules};

}  // namespace

const std::span<const Check> moe_checks{kMoeChecks};

}  // namespace megamem::rules
