// Module spec: shared experts (megatron/core/transformer/moe/shared_experts.py), an ordinary
// TP MLP of --moe-shared-expert-intermediate-size beside the routed experts.
//   parameters: fc1 [glu x shared x h] /TP, fc2 [h x shared] /TP (bias replicated), the
//     optional gate [h] (--moe-shared-expert-gate). Dense bucket.
//   saved: fc1 output and activation output, freed by moe or shared_experts recompute.
//   FLOPs: training.py: 2h x shared x (1 + glu) per token.
#include "module_spec.hpp"

namespace megamem {
namespace {

double glu(const ModelConfig& m) { return m.activation == Activation::swiglu ? 2.0 : 1.0; }

bool present(const ModuleContext& c) {
  return c.moe_layer && c.model.moe_shared_expert_intermediate_size > 0;
}

void params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const std::int64_t tp = c.config.parallel.tensor_parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t ffn = m.moe_shared_expert_intermediate_size;
  const std::int64_t fc1_out = (m.activation == Activation::swiglu ? 2 : 1) * ffn;
  const std::int64_t bias = m.add_bias_linear ? 1 : 0;
  sink.linear(ModuleKind::shared_experts, fc1_out * h / tp, bias * fc1_out / tp);
  sink.linear(ModuleKind::shared_experts, ffn * h / tp, bias * h);
  if (m.moe_shared_expert_gate) sink.tensor(ModuleKind::shared_experts, h, true);
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const double shared_ffn = c.model.moe_shared_expert_intermediate_size / s.tp;
  const RecomputeModules recompute = {RecomputeModule::moe, RecomputeModule::shared_experts};
  sink.add("shared expert fc1 output", ModuleKind::shared_experts,
           s.tokens * glu(c.model) * shared_ffn, 2, recompute);
  sink.add("shared expert activation output", ModuleKind::shared_experts, s.tokens * shared_ffn, 2,
           recompute);
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  f.moe_shared = 2.0 * m.hidden_size * static_cast<double>(m.moe_shared_expert_intermediate_size) *
                 (1.0 + glu(m));
}

}  // namespace

extern const LayerModuleSpec kSharedExpertsSpec = {
    .name = "MoE shared experts",
    .block = LayerBlock::mlp,
    .present = present,
    .params = params,
    .saved = saved,
    .flops = flops,
};

}  // namespace megamem
