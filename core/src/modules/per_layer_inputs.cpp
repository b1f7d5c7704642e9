// Module spec: Gemma 4's per-layer input block (ModelConfig::per_layer_input_size P), which
// Megatron-Bridge's Gemma4DenseTransformerLayer.forward (gemma/modeling_gemma4.py) runs after
// the MLP's bias-dropout-add: h = gelu_tanh(per_layer_input_gate(x)) * per_layer_input,
// per_layer_projection(h), post_per_layer_input_norm, added to x. The model-level table and
// projection that make per_layer_input are embedding.cpp's.
//   parameters: per_layer_input_gate [P x h] and per_layer_projection [h x P], plain
//     torch.nn.Linear without bias, so replicated on every TP rank (not TE GEMMs, never FP8),
//     and the norm's weight of h (a Gemma4RMSNorm, whatever ModelConfig::normalization says).
//     Dense bucket.
//   saved: the gate's input x (the MLP bias-dropout-add output, which the layer's output
//     (x + h) * layer_scalar replaces), the gate output (GELU's input), the GELU output and the
//     product (the projection's input), P wide, on this rank's sequence shard; the norm (a
//     Gemma4RMSNorm, _gemma4_rms_norm) keeps fp32 intermediates, 12 bytes per element and 8
//     per row, and not its input. None of it is inside the mlp checkpoint (the block runs
//     outside _forward_mlp), so only full recompute frees it.
//   FLOPs: none counted (training.py transformer_flops has no term for it).
#include "module_spec.hpp"

namespace megamem {
namespace {

constexpr double kNormBytesPerElement = 3 * 4;  // torch_rms_norms.cpp
constexpr double kNormBytesPerRow = 2 * 4;

bool present(const ModuleContext& c) {
  return c.model.per_layer_input_size > 0 && layer_kind_has_dense_mlp(c.kind);
}

void params(const ModuleContext& c, ParamSink& sink) {
  const std::int64_t h = c.model.hidden_size;
  const std::int64_t p = c.model.per_layer_input_size;
  sink.tensor(ModuleKind::mlp, h * p);  // per_layer_input_gate
  sink.tensor(ModuleKind::mlp, p * h);  // per_layer_projection
  sink.tensor(ModuleKind::mlp, h);      // post_per_layer_input_norm (RMSNorm: a weight)
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const double p = c.model.per_layer_input_size;
  const ModuleKind mlp = ModuleKind::mlp;
  sink.add("per-layer input gate input (MLP block output)", mlp, s.sp_tokens * s.h, s.act);
  sink.add("per-layer gate output, GELU output, gated product", mlp, s.sp_tokens * p, 3 * s.act);
  sink.add("post_per_layer_input_norm fp32 intermediates", mlp, s.sp_tokens * s.h,
           kNormBytesPerElement);
  sink.add("plain-PyTorch RMSNorm row statistics (fp32)", mlp, s.sp_tokens, kNormBytesPerRow);
}

}  // namespace

extern const LayerModuleSpec kPerLayerInputSpec = {
    "per-layer input", LayerBlock::mlp, present, params, saved, no_flops};

}  // namespace megamem
