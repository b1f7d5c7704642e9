// Module spec: routed experts with token dispatch and the optional latent projections
// (megatron/core/transformer/moe/{experts.py, token_dispatcher.py, moe_layer.py}).
//   parameters: latent down/up projections [h x latent] each (replicated, dense bucket);
//     E/EP local experts (TEGroupedMLP: one fc1 [glu x ffn x width] and fc2 [width x ffn]
//     weight, and bias, per expert) split /ETP: expert bucket, sharded over expert-DP.
//   saved: the dispatched tokens (expert_fc1 offload), fc1 output (moe_act offload),
//     activation output (moe_act recompute), and without the fused weighted SwiGLU the
//     probability-weighted copies; all freed by moe recompute. The permute and exchange
//     buffers are forward transients.
//   FLOPs: training.py: top-k experts' 2h x moe_ffn x (1 + glu) per token, and the latent
//     projections.
#include <algorithm>

#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) { return c.moe_layer; }

void params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const ParallelConfig& p = c.config.parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t bias = m.add_bias_linear ? 1 : 0;
  if (m.moe_latent_size > 0) {
    sink.linear(ModuleKind::moe_latent_projection, h * m.moe_latent_size, bias * m.moe_latent_size);
    sink.linear(ModuleKind::moe_latent_projection, m.moe_latent_size * h, bias * h);
  }
  const std::int64_t width = m.moe_latent_size > 0 ? m.moe_latent_size : h;
  const std::int64_t etp = p.expert_tensor_parallel;
  const std::int64_t local_experts = m.num_experts / p.expert_parallel;
  const std::int64_t fc1_out =
      (m.activation == Activation::swiglu ? 2 : 1) * std::int64_t{m.moe_ffn_hidden_size};
  sink.experts(ModuleKind::routed_experts, fc1_out * width / etp, bias * fc1_out / etp,
               local_experts);
  sink.experts(ModuleKind::routed_experts, m.moe_ffn_hidden_size * width / etp, bias * width,
               local_experts);
}

// Tokens reaching this GPU's local experts: k copies of each SP token, all-gathered over
// ETP; the hottest EP rank gets the imbalance factor more (memory-model.md 4.4).
double routed_tokens(const ModuleContext& c, const ActivationShape& s) {
  const TrainingConfig& t = c.config.training;
  const double balanced =
      c.model.moe_router_topk * s.sp_tokens * c.config.parallel.expert_tensor_parallel;
  const double capacity = t.moe_expert_capacity_factor;
  if (capacity > 0 && t.moe_pad_expert_input_to_capacity) return capacity * balanced;
  const double share =
      capacity > 0 ? std::min(t.moe_imbalance_factor, capacity) : t.moe_imbalance_factor;
  return share * balanced;
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const double width = m.moe_latent_size > 0 ? m.moe_latent_size : m.hidden_size;
  const double expert_ffn = m.moe_ffn_hidden_size / c.config.parallel.expert_tensor_parallel;
  const double routed = routed_tokens(c, s);
  const ModuleKind experts = ModuleKind::routed_experts;
  const RecomputeModules moe = {RecomputeModule::moe};
  const RecomputeModules moe_act = {RecomputeModule::moe, RecomputeModule::moe_act};
  sink.add("dispatched tokens (expert fc1 input)", experts, routed * width, 2, moe,
           {OffloadModule::expert_fc1});
  sink.add("expert fc1 output", experts, routed * glu_factor(m) * expert_ffn, 2, moe,
           {OffloadModule::moe_act});
  sink.add("expert activation output", experts, routed * expert_ffn, 2, moe_act);
  // experts.py bias_act_func: only the fused weighted SwiGLU folds the routing
  // probabilities into the activation kernel. Otherwise the activation output is saved by
  // the multiplication with the probabilities and their product again by fc2 (a GLU also
  // keeps its silu output).
  const bool fused = m.activation == Activation::swiglu && c.config.training.bias_activation_fusion;
  if (!fused) {
    sink.add("expert activation output (probs-weighted copies)", experts,
             glu_factor(m) * routed * expert_ffn, 2, moe_act);
  }
  // token_dispatcher.py: permute output, exchange buffers and their sorted copies exist
  // only inside the layer's forward (and again in backward).
  const bool allgather = c.config.training.moe_token_dispatcher == TokenDispatcher::allgather;
  sink.forward_transient((allgather ? 2 : 2 * 2) * routed * width);
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  const double h = m.hidden_size;
  const double routed =
      static_cast<double>(m.moe_ffn_hidden_size) * m.moe_router_topk * (1.0 + glu_factor(m));
  f.moe_routed = m.moe_latent_size > 0
                     ? 2.0 * h * (routed * m.moe_latent_size / h + 2.0 * m.moe_latent_size)
                     : 2.0 * h * routed;
}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kRoutedExpertsSpec, "MoE routed experts", LayerBlock::mlp);

}  // namespace megamem
