// Module spec: the dense MLP with its pre-MLP norm (megatron/core/transformer/mlp.py).
//   parameters: pre-MLP norm (replicated); fc1 [glu x ffn x h] /TP, column parallel (x2 for
//     SwiGLU); fc2 [h x ffn] /TP, row parallel (bias replicated). Dense bucket. ffn is twice
//     ffn_hidden_size in Gemma 4 E2B's K/V-sharing layers (layer_ffn_hidden_size).
//   saved: the norm's input (mlp_norm offload only for a standalone norm: under TE it is fused
//     into fc1) and output, fc1 output (Kimi K3's SiTU-GLU: its fp32 intermediates instead) and
//     activation output; all but the norm input freed by mlp recompute. Without bias-activation
//     fusion a GLU runs mlp.py's glu(): its product keeps the gate activation's output and the
//     up half + glu_linear_offset as well (unfused_glu_products_saved).
//   Falcon-H1's parallel layer runs FalconH1MLP (Megatron-Bridge falcon_h1/modeling_falconh1/
//   falconh1_layer.py), which raises unless the activation is unfused: the gate half times
//   the gate multiplier goes into SiLU (kept), SiLU's output and the up half plus
//   glu_linear_offset (two new tensors) into the product (both kept), the product into fc2;
//   the fc1 output itself is not kept. FalconH1Layer calls its MLP directly, outside
//   transformer_layer.py's recompute_mlp checkpoint: mlp recompute frees nothing there.
//   FLOPs: training.py: 2h x ffn x (1 + glu) — fc1 (x2 for GLU) and fc2, at ffn_hidden_size
//     on every layer as training.py counts them.
#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) { return layer_kind_has_dense_mlp(c.kind); }

void params(const ModuleContext& c, ParamSink& sink) {
  sink.norm(ModuleKind::pre_mlp_layernorm, c.model.hidden_size);
  tp_mlp_params(c, ModuleKind::mlp, layer_ffn_hidden_size(c.model, c.kind), sink);
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind mlp = ModuleKind::mlp;
  const double ffn = layer_ffn_hidden_size(m, c.kind) / s.tp;
  const bool falcon = c.kind == LayerKind::parallel_hybrid;
  const RecomputeModules recompute =
      falcon ? RecomputeModules{} : RecomputeModules{RecomputeModule::mlp};
  // Under TE the norm is fused into fc1 (no standalone module for mlp_norm to offload).
  const bool standalone_norm = c.config.training.transformer_impl == TransformerImpl::local;
  // mhc recompute discards the aggregated streams (the norm's input) of hyper-connections.
  sink.add("pre_mlp_layernorm input", ModuleKind::pre_mlp_layernorm, s.sp_tokens * s.h, s.act,
           {RecomputeModule::mhc},
           standalone_norm ? OffloadModules{OffloadModule::mlp_norm} : OffloadModules{});
  // Saved by the fused LN+fc1 GEMM and by fc2 as GEMM inputs (FP8 in an FP8 layer:
  // layernorm_linear.py, linear.py); the activation keeps its bf16 input
  // (fusions/fused_bias_swiglu.py) in the activation dtype.
  const double gemm_input = gemm_input_bytes(c);
  sink.add("pre_mlp_layernorm output", ModuleKind::pre_mlp_layernorm, s.sp_tokens * s.h, gemm_input,
           recompute);
  if (falcon && m.activation == Activation::swiglu) {
    sink.add("gate x gate multiplier (SiLU input)", mlp, s.tokens * ffn, s.act);
  } else {
    glu_activation_input_saved(c, sink, "fc1 output (activation input)", mlp, s.tokens, ffn,
                               recompute, {});
  }
  if (unfused_glu(c)) unfused_glu_products_saved(c, sink, mlp, s.tokens, ffn, recompute);
  sink.add("activation output (fc2 input)", mlp, s.tokens * ffn, gemm_input, recompute);
  // fc1's and fc2's grad outputs until backward_dw.
  sink.delayed_wgrad(LayerBlock::mlp,
                     gemm_input * (s.tokens * glu_factor(m) * ffn + s.sp_tokens * s.h));
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  f.dense_mlp =
      2.0 * m.hidden_size * static_cast<double>(m.ffn_hidden_size) * (1.0 + glu_factor(m));
}

}  // namespace

bool unfused_glu(const ModuleContext& c) {
  // FalconH1MLP raises unless the activation is unfused (falcon_h1_layer.py).
  return c.model.activation == Activation::swiglu && !kimi_k3_layers(c.model) &&
         (c.kind == LayerKind::parallel_hybrid || !c.config.training.bias_activation_fusion);
}

// mlp.py MLP.forward, glu(): `activation_func(x_glu) * (x_linear + glu_linear_offset)`. The
// halves are views of fc1's output, which the activation keeps as its input (F.silu and F.gelu
// save their input; fast_gelu and quick_gelu are torch.compile'd pointwise functions
// (megatron/core/jit.py jit_fuser), whose partition keeps the input too). The activation's
// output and `x_linear + offset` (a new tensor even for an offset of 0) are new tensors in the
// activation dtype, and the product (MulBackward0) saves both.
void unfused_glu_products_saved(const ModuleContext& c, SavedSink& sink, ModuleKind module,
                                double rows, double width, RecomputeModules freed_by) {
  const double element_bytes = activation_element_bytes(c.config);
  sink.add("gate activation output (product input)", module, rows * width, element_bytes, freed_by);
  sink.add("up half + glu_linear_offset (product input)", module, rows * width, element_bytes,
           freed_by);
}

void glu_activation_input_saved(const ModuleContext& c, SavedSink& sink, const char* tensor,
                                ModuleKind module, double rows, double width,
                                RecomputeModules freed_by, OffloadModules offload,
                                RecomputeModules checkpoint) {
  const bool checkpointed = sink.active_recompute().intersects(checkpoint);
  if (!kimi_k3_layers(c.model) || checkpointed) {
    sink.add(tensor, module, rows * glu_factor(c.model) * width, activation_element_bytes(c.config),
             freed_by, offload);
    return;
  }
  sink.add("SiTU-GLU fp32 intermediates (tanh, sigmoid, products)", module, rows * 6 * width, 4,
           freed_by | checkpoint, offload);
}

void tp_mlp_params(const ModuleContext& c, ModuleKind kind, std::int64_t ffn, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const std::int64_t tp = c.config.parallel.tensor_parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t fc1_out = (m.activation == Activation::swiglu ? 2 : 1) * ffn;
  const std::int64_t bias = m.add_bias_linear ? 1 : 0;
  sink.linear(kind, fc1_out * h / tp, bias * fc1_out / tp);
  sink.linear(kind, ffn * h / tp, bias * h);
}

MEGAMEM_LAYER_MODULE_SPEC(kDenseMlpSpec, "dense MLP", LayerBlock::mlp);

}  // namespace megamem
