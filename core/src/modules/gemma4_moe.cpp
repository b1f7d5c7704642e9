// Module spec: what Megatron-Bridge's Gemma 4 MoE layer adds to a Megatron-Core MoE layer
// (ModelConfig::gemma4_moe_layer; gemma/modeling_gemma4.py at Megatron-Bridge 067f987). Its
// attention and experts are Megatron-Core's Transformer Engine modules (gemma4_block_spec); the
// layer replaces the MLP half of TransformerLayer (Gemma4TransformerLayer._forward_mlp):
//   expert_input = _gemma4_rms_norm(x, pre_mlp_layernorm.weight)        (x: the residual stream)
//   shared_input = _gemma4_rms_norm(x, pre_shared_expert_layernorm.weight)
//   out = Gemma4MoELayer.forward_with_separate_inputs(expert_input, shared_input, x)
//       = post_moe_layernorm(routed(expert_input)) + post_shared_expert_layernorm(shared(...))
//   y = (x + post_ffn_layernorm(out)) * layer_scalar
// and the router (Gemma4TopKRouter) gates on _gemma4_rms_norm(x, None) * scale * h**-0.5, then
// renormalises the top-k probabilities and multiplies them by per_expert_scale.
// _gemma4_rms_norm is x.float() * pow(x.float().pow(2).mean(-1) + eps, -0.5) [* w.float()]: with
// a weight autograd keeps two fp32 copies of x and the fp32 product (12 bytes per element), and
// per row the fp32 mean + eps and its -0.5 power (8 bytes); without one the two copies (8).
//   parameters: pre_shared_expert_layernorm, post_moe_layernorm, post_shared_expert_layernorm and
//     post_ffn_layernorm [h] each, the router's scale [h] and per_expert_scale [E] (replicated;
//     layer_scalar is a buffer). Dense bucket.
//   saved, beside the Megatron-Core MoE layer's (moe_router.cpp leaves out its pre-MLP norm's
//     input and output, which nothing here keeps):
//     outside the moe checkpoint (freed only by full recompute): the two pre-norms' fp32
//     intermediates, the shared expert's own input (its fc1 saves it; a shared_experts or moe
//     checkpoint keeps it as its input), post_ffn_layernorm's fp32 intermediates; with moe
//     recompute the checkpoint's two other inputs, expert_input and x;
//     inside it (freed by moe recompute): the router norm's fp32 copies, its normalised bf16
//     input (kept by the product with scale) and the rescaled input (router_gating_linear's),
//     the top-k renormalisation's two fp32 [tokens x E] probability tensors and two fp32
//     values per token, the two post-norms' fp32 intermediates;
//     in the attention half, V's plain-PyTorch norm (Gemma4SelfAttention.
//     get_query_key_value_tensors: v.float() / sqrt(mean(v.float()^2) + eps): the fp32 copy and
//     the fp32 root per row), freed only by full recompute.
//   FLOPs: none counted (training.py counts no norms; the router GEMM is left out there).
// Left out: the layer's hidden states in fp32 (fp32_residual_connection) and fp32 activations,
// where x.float() returns x itself: Bridge's provider trains in bf16.
#include "module_spec.hpp"

namespace megamem {
namespace {

bool v_norm_present(const ModuleContext& c) {
  // The dense layer's V norm is torch_rms_norms.cpp's.
  return c.model.gemma4_moe_layer && !c.model.torch_rms_norms && layer_kind_has_attention(c.kind) &&
         !c.model.multi_latent_attention;
}

bool present(const ModuleContext& c) { return c.model.gemma4_moe_layer && c.moe_layer; }

void params(const ModuleContext& c, ParamSink& sink) {
  // Gemma4RMSNorm: a weight only, whatever the model's normalization.
  const std::int64_t h = c.model.hidden_size;
  sink.tensor(ModuleKind::shared_experts, h);            // pre_shared_expert_layernorm
  sink.tensor(ModuleKind::routed_experts, h);            // post_moe_layernorm
  sink.tensor(ModuleKind::shared_experts, h);            // post_shared_expert_layernorm
  sink.tensor(ModuleKind::routed_experts, h);            // post_ffn_layernorm
  sink.tensor(ModuleKind::router, h);                    // Gemma4TopKRouter.scale
  sink.tensor(ModuleKind::router, c.model.num_experts);  // per_expert_scale
}

void v_norm_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const AttentionShape shape = attention_shape(c.model, c.kind);
  const double rows = s.tokens * std::max(1.0, shape.query_groups / s.tp);
  sink.add("V norm fp32 copy of V", ModuleKind::self_attention, rows * shape.v_channels, 4);
  sink.add("V norm root per row (fp32)", ModuleKind::self_attention, rows, 4);
}

// A plain-PyTorch norm over this rank's sequence shard, none of it counted elsewhere.
void torch_norm(const char* tensor, ModuleKind module, Gemma4NormWeight weight,
                const ActivationShape& s, RecomputeModules freed_by, SavedSink& sink) {
  gemma4_rms_norm_saved(tensor, module, s.sp_tokens, s.h, weight, 0, freed_by, sink);
}

// Gemma4TopKRouter.gating and .routing, inside the moe checkpoint.
void router_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const RecomputeModules moe = {RecomputeModule::moe};
  torch_norm("router norm fp32 copies", ModuleKind::router, Gemma4NormWeight::scaleless, s, moe,
             sink);
  sink.add("router normalised input (product with scale)", ModuleKind::router, s.sp_tokens * s.h,
           s.act, moe);
  sink.add("router rescaled input (gating linear)", ModuleKind::router, s.sp_tokens * s.h, s.act,
           moe);
  // routing_probs / prob_sums keeps both (and clamp its input); * per_expert_scale keeps the
  // quotient. router.py's probabilities are [tokens x E] in the router dtype.
  const double prob_bytes = c.config.training.moe_router_fp32 ? 4 : s.act;
  sink.add("top-k renormalisation probabilities", ModuleKind::router,
           2 * s.sp_tokens * c.model.num_experts, prob_bytes, moe);
  sink.add("top-k probability sums", ModuleKind::router, 2 * s.sp_tokens, prob_bytes, moe);
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const RecomputeModules moe = {RecomputeModule::moe};
  torch_norm("pre-MLP (routed experts) norm fp32 intermediates", ModuleKind::pre_mlp_layernorm,
             Gemma4NormWeight::weighted, s, {}, sink);
  const bool shared = c.model.moe_shared_expert_intermediate_size > 0;
  if (shared) {  // without a shared expert its norm's output is dropped unused
    torch_norm("pre-shared-expert norm fp32 intermediates", ModuleKind::pre_mlp_layernorm,
               Gemma4NormWeight::weighted, s, {}, sink);
    sink.add("shared expert input (its own norm's output)", ModuleKind::shared_experts,
             s.sp_tokens * s.h, s.act);
  }
  if (sink.active_recompute().has(RecomputeModule::moe)) {
    // forward_with_separate_inputs: tensor_parallel.checkpoint saves its three inputs.
    sink.add("moe checkpoint inputs (expert input, residual stream)", ModuleKind::pre_mlp_layernorm,
             2 * s.sp_tokens * s.h, s.act);
  }
  router_saved(c, s, sink);
  torch_norm("post_moe_layernorm fp32 intermediates", ModuleKind::routed_experts,
             Gemma4NormWeight::weighted, s, moe, sink);
  if (shared) {
    torch_norm("post_shared_expert_layernorm fp32 intermediates", ModuleKind::shared_experts,
               Gemma4NormWeight::weighted, s, moe, sink);
  }
  torch_norm("post_ffn_layernorm fp32 intermediates", ModuleKind::routed_experts,
             Gemma4NormWeight::weighted, s, {}, sink);
}

}  // namespace

extern const LayerModuleSpec kGemma4VNormSpec = {"Gemma 4 MoE layer's V norm",
                                                 LayerBlock::attention,
                                                 v_norm_present,
                                                 no_params,
                                                 v_norm_saved,
                                                 no_flops};
extern const LayerModuleSpec kGemma4MoeSpec = {
    "Gemma 4 MoE layer's norms and router", LayerBlock::mlp, present, params, saved, no_flops};

}  // namespace megamem
