// Module spec: a MoE layer's pre-MLP norm and router (megatron/core/transformer/moe/router.py).
//   parameters: pre-MLP norm and the router weight [E x h] (bias with --add-bias-linear),
//     replicated on every rank (an fp32 weight with moe_router_fp32_params); dense bucket
//     (static_memory.cpp keeps the router out of the FP8/Muon GEMM sets).
//   saved: the norm's input (mlp_norm offload) and output (freed by layernorm recompute; moe
//     recompute's checkpoint keeps it as its input); two fp32 score tensors over all experts, one
//     for the aux loss and one for the score function (moe recompute); top-k keeps indices only;
//     an fp32 router weight (moe_router_fp32_params) also keeps the input's fp32 copy. Gemma 4's
//     MoE layer keeps the scores only (its norms and router input: gemma4_moe.cpp).
//   FLOPs: none in training.py's count (the router GEMM is left out there).
#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) { return c.moe_layer; }

void params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const std::int64_t h = m.hidden_size;
  const std::int64_t experts = m.num_experts;
  sink.norm(ModuleKind::pre_mlp_layernorm, h);
  if (m.moe_router_fp32_params) {
    // minimax_m3_bridge.py _promote_router_weights_to_float32: the weight only (router.py's
    // bias, with --add-bias-linear, stays in the params dtype).
    sink.fp32_weight(ModuleKind::router, experts * h);
    sink.tensor(ModuleKind::router, m.add_bias_linear ? experts : 0);
  } else {
    sink.linear(ModuleKind::router, experts * h, m.add_bias_linear ? experts : 0);
  }
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const double nsp = s.sp_tokens;
  // Gemma 4's MoE layer never runs the pre-MLP norm module: its own plain-PyTorch norms keep
  // fp32 copies instead, and the router gets an input of its own (gemma4_moe.cpp).
  if (c.model.gemma4_moe_layer) {
    sink.add("router scores (fp32)", ModuleKind::router, 2 * nsp * c.model.num_experts, 4,
             {RecomputeModule::moe});
    return;
  }
  // With hyper-connections mhc recompute discards the aggregated streams (this input) and
  // the norm's output (transformer_layer.py mhc_checkpoint_pre_mlp_layernorm).
  sink.add("pre_mlp_layernorm input", ModuleKind::pre_mlp_layernorm, nsp * s.h, s.act,
           {RecomputeModule::mhc}, {OffloadModule::mlp_norm});
  // moe recompute checkpoints the MoE layer with this tensor as its input, which
  // CheckpointFunction saves (moe_layer.py forward, tensor_parallel/random.py); only layernorm
  // recompute discards it.
  sink.add("pre_mlp_layernorm output", ModuleKind::pre_mlp_layernorm, nsp * s.h, s.act,
           {RecomputeModule::layernorm, RecomputeModule::mhc});
  sink.add("router scores (fp32)", ModuleKind::router, 2 * nsp * c.model.num_experts, 4,
           {RecomputeModule::moe});
  if (c.model.moe_router_fp32_params && s.act < 4) {
    // minimax_m3_bridge.py MiniMaxM3TopKRouter.gating widens its input to the fp32 weight's
    // dtype, and moe_utils.py RouterGatingLinearFunction saves that fp32 copy for the wgrad.
    sink.add("router input (fp32 copy)", ModuleKind::router, nsp * s.h, 4, {RecomputeModule::moe});
  }
}

void flops(const ModuleContext&, ModuleFlops&) {}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kMoeRouterSpec, "MoE router", LayerBlock::mlp);

}  // namespace megamem
