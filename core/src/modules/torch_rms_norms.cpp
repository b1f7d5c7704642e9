// Module spec: the fp32 intermediates of plain-PyTorch RMSNorms (ModelConfig::torch_rms_norms).
// Megatron-Bridge's Gemma 4 dense layer (gemma/modeling_gemma4.py get_gemma4_layer_spec) builds
// every norm of the layer as Gemma4RMSNorm, the expression _gemma4_rms_norm, not a fused kernel:
//   y = (x.float() * pow(x.float().pow(2).mean(-1) + eps, -0.5) * w.float()).type_as(x)
// x.float() runs twice and each call makes a new fp32 tensor (x is bf16); autograd keeps one for
// pow's backward and one for the product's, the fp32 product for the weight's multiply, and per
// row the fp32 mean + eps (pow's input) and its -0.5 power (the product's other operand): 12
// bytes per element and 8 per row. The norm's input itself is not kept, but megamem's norm
// entries (input_layernorm, pre_mlp_layernorm, q/k layernorm, post-sublayer norm inputs) count
// it at the activation dtype, so this spec adds 12 bytes less that per element. The layer's
// norms: input and pre-MLP, Q's and K's per head (qk_layernorm forced on:
// Gemma4DenseSelfAttention), the post-attention and post-MLP ones (post_sublayer_norms), and
// V's scaleless norm (Gemma4DenseSelfAttention._v_norm, x.float() once: 4 bytes per element and
// 8 per row beside the normed V the core attention keeps).
//   parameters: none (the norms' weights are the other specs').
//   saved: as above, on this rank's sequence shard for the hidden-size norms; freed only by full
//     recompute (the Bridge layer's _forward_attention / _forward_mlp call the norms and the MLP
//     directly, so the layernorm and mlp checkpoints never wrap them).
//   FLOPs: none counted (training.py counts no norms).
#include "module_spec.hpp"
#include "sliding_window.hpp"

namespace megamem {
namespace {

constexpr double kVNormBytesPerElement = 4;  // one fp32 copy of x (_v_norm)
constexpr double kBytesPerRow = 2 * 4;       // mean + eps, and its -0.5 power

bool attention_present(const ModuleContext& c) {
  return c.model.torch_rms_norms && layer_kind_has_attention(c.kind) &&
         !c.model.multi_latent_attention;
}

bool mlp_present(const ModuleContext& c) {
  return c.model.torch_rms_norms && layer_kind_has_dense_mlp(c.kind);
}

// A weighted norm of `rows` rows of `width`, whose input megamem counts at the activation dtype.
void weighted_norm(const char* tensor, ModuleKind module, double rows, double width,
                   const ActivationShape& s, SavedSink& sink) {
  gemma4_rms_norm_saved(tensor, module, rows, width, Gemma4NormWeight::weighted, s.act, {}, sink);
}

void attention_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const AttentionShape shape = attention_shape(c.model, c.kind);
  const double heads = shape.heads / s.tp;
  const double groups = std::max(1.0, shape.query_groups / s.tp);
  weighted_norm("input_layernorm fp32 intermediates", ModuleKind::input_layernorm, s.sp_tokens, s.h,
                s, sink);
  // A K/V-sharing layer's K norm output and V norm are dropped for its source layer's K and V
  // (modeling_gemma4.py Gemma4DenseSelfAttention.get_query_key_value_tensors): not kept.
  const double own_groups = layer_kind_shares_kv(c.kind) ? 0.0 : groups;
  if (c.model.qk_layernorm) {
    weighted_norm("q/k layernorm fp32 intermediates", ModuleKind::self_attention,
                  s.tokens * (heads + own_groups), shape.kv_channels, s, sink);
  }
  const double v_rows = s.tokens * own_groups;
  if (v_rows > 0) {
    sink.add("V norm fp32 copy of V", ModuleKind::self_attention, v_rows * shape.v_channels,
             kVNormBytesPerElement);
    sink.add("V norm row statistics (fp32)", ModuleKind::self_attention, v_rows, kBytesPerRow);
  }
  if (c.model.post_sublayer_norms) {
    weighted_norm("post-attention norm fp32 intermediates", ModuleKind::self_attention, s.sp_tokens,
                  s.h, s, sink);
  }
}

void mlp_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  weighted_norm("pre_mlp_layernorm fp32 intermediates", ModuleKind::pre_mlp_layernorm, s.sp_tokens,
                s.h, s, sink);
  if (c.model.post_sublayer_norms) {
    weighted_norm("post-MLP norm fp32 intermediates", ModuleKind::mlp, s.sp_tokens, s.h, s, sink);
  }
}

}  // namespace

void gemma4_rms_norm_saved(const char* tensor, ModuleKind module, double rows, double width,
                           Gemma4NormWeight weight, double counted_bytes, RecomputeModules freed_by,
                           SavedSink& sink) {
  const double copies = weight == Gemma4NormWeight::weighted ? 3 : 2;
  sink.add(tensor, module, rows * width, copies * 4 - counted_bytes, freed_by);
  sink.add("plain-PyTorch RMSNorm row statistics (fp32)", module, rows, kBytesPerRow, freed_by);
}

extern const LayerModuleSpec kTorchRmsNormAttentionSpec = {"plain-PyTorch attention norms",
                                                           LayerBlock::attention,
                                                           attention_present,
                                                           no_params,
                                                           attention_saved,
                                                           no_flops};
extern const LayerModuleSpec kTorchRmsNormMlpSpec = {
    "plain-PyTorch MLP norms", LayerBlock::mlp, mlp_present, no_params, mlp_saved, no_flops};

}  // namespace megamem
