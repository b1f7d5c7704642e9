// Module spec: what Falcon-H1's parallel layer ('P') adds around its two mixers (Megatron-Bridge
// src/megatron/bridge/models/falcon_h1/modeling_falconh1/falconh1_layer.py FalconH1Layer,
// falconh1_layer_specs.py falconh1_layer, falconh1_block.py FalconH1Stack). The layer runs
//   x -> norm (TENorm) -> [Mamba-2 mixer on norm x ssm_in_multiplier,
//                          self-attention on norm x attention_in_multiplier]
//     -> mamba x ssm_out_multiplier + attention x attention_out_multiplier
//     -> bias-dropout-add with the fp32 residual -> MLP (TELayerNormColumnParallelLinear fc1)
//     -> bias-dropout-add.
// The mixers are the Mamba-2 spec (mamba_mixer.cpp) and the GQA spec (attention_gqa.cpp), the
// MLP the dense MLP spec (dense_mlp.cpp), each with its Falcon-H1 differences; this spec holds
// the one input norm both branches share.
//   parameters: the shared input norm [h] (RMSNorm; replicated, dense bucket).
//   saved: the norm's input (TENorm keeps it for backward; its output is not kept: each branch
//     multiplies it by its in-multiplier and its first linear keeps that product).
//   transients: FalconH1Stack builds 'P' layers with residual_in_fp32=True, so the residual
//     stream is fp32: the layer's fp32 residual, the summed branch output upcast to fp32 and
//     their fp32 sum (megatron/core/fusions/fused_bias_dropout.py _bias_dropout_add_func
//     upcasts x to the residual's dtype) are alive together at the bias-dropout-add.
//   The muP multipliers are Python floats: no parameters; each product is a copy, saved only
//   where a linear layer takes it as input (the in-multipliers).
//   FLOPs: none beyond its mixers and MLP (the norm and the scalings are element-wise).
// Not modeled here: selective recompute of layernorm/mlp and full recompute, which
// transformer_layer.py / transformer_block.py implement and FalconH1Layer / FalconH1Stack do not
// (rules/hybrid.cpp falcon_h1_stack turns full recompute off with a warning).
#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) { return c.kind == LayerKind::parallel_hybrid; }

void params(const ModuleContext& c, ParamSink& sink) {
  sink.norm(ModuleKind::input_layernorm, c.model.hidden_size);
}

void saved(const ModuleContext&, const ActivationShape& s, SavedSink& sink) {
  const double hidden = s.sp_tokens * s.h;
  sink.add("input norm input (shared by the Mamba and attention branches)",
           ModuleKind::input_layernorm, hidden, s.act);
  // The fp32 residual, the upcast branch sum and the fp32 output of the bias-dropout-add.
  sink.forward_transient(3.0 * 4.0 * hidden);
}

void flops(const ModuleContext&, ModuleFlops&) {}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kFalconH1LayerSpec, "Falcon-H1 parallel layer (shared input norm)",
                          LayerBlock::attention);

}  // namespace megamem
