// Module spec: shared experts (megatron/core/transformer/moe/shared_experts.py), an ordinary
// TP MLP of --moe-shared-expert-intermediate-size beside the routed experts.
//   parameters: fc1 [glu x shared x h] /TP, fc2 [h x shared] /TP (bias replicated), the
//     optional gate [h] (--moe-shared-expert-gate). Dense bucket.
//   saved: fc1 output and activation output (fc2's FP8 input in an FP8 layer), freed by moe
//     or shared_experts recompute (SharedExpertMLP is an MLP: without bias-activation fusion
//     its glu() keeps two more tensors, dense_mlp.cpp); under delayed scaling fc1's own FP8 input
//     copy; with
//     --moe-shared-expert-overlap under SP the gathered fc1 input.
//   FLOPs: training.py: 2h x shared x (1 + glu) per token.
#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) {
  return c.moe_layer && c.model.moe_shared_expert_intermediate_size > 0;
}

void params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  tp_mlp_params(c, ModuleKind::shared_experts, m.moe_shared_expert_intermediate_size, sink);
  if (m.moe_shared_expert_gate) sink.tensor(ModuleKind::shared_experts, m.hidden_size, true);
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const double shared_ffn = c.model.moe_shared_expert_intermediate_size / s.tp;
  const RecomputeModules recompute = {RecomputeModule::moe, RecomputeModule::shared_experts};
  glu_activation_input_saved(c, sink, "shared expert fc1 output", ModuleKind::shared_experts,
                             s.tokens, shared_ffn, recompute, {});
  if (unfused_glu(c)) {
    unfused_glu_products_saved(c, sink, ModuleKind::shared_experts, s.tokens, shared_ffn,
                               recompute);
  }
  sink.add("shared expert activation output", ModuleKind::shared_experts, s.tokens * shared_ffn,
           gemm_input_bytes(c), recompute);
  // fc1's input is the pre-MLP norm output the router already saves unquantized. With
  // --moe-shared-expert-overlap and SP the shared experts gather it themselves on their stream
  // (shared_experts.py pre_forward_comm: cached_fc1_input) and fc1 runs with parallel_mode
  // None, so TE saves the whole-sequence input.
  if (c.config.training.moe_shared_expert_overlap && s.sp_tokens < s.tokens) {
    sink.add("shared expert fc1 input (gathered for the overlap)", ModuleKind::shared_experts,
             s.tokens * s.h, gemm_input_bytes(c), recompute);
  }
  delayed_scaling_copy(c, sink, "shared expert fc1 FP8 input copy", ModuleKind::shared_experts,
                       s.sp_tokens * s.h, {});
  // The combined 1F1B plan runs the shared experts in the attention node (pre_dispatch).
  sink.delayed_wgrad(
      LayerBlock::attention,
      gemm_input_bytes(c) * (s.tokens * glu_factor(c.model) * shared_ffn + s.sp_tokens * s.h));
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  f.moe_shared = 2.0 * m.hidden_size * static_cast<double>(m.moe_shared_expert_intermediate_size) *
                 (1.0 + glu_factor(m));
}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kSharedExpertsSpec, "MoE shared experts", LayerBlock::mlp);

}  // namespace megamem
