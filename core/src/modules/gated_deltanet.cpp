// Module spec: the Gated DeltaNet linear attention of a GPT model's linear-attention layers
// (--experimental-attention-variant gated_delta_net / gdn with --linear-attention-freq),
// megatron/core/ssm/gated_delta_net/gdn.py GatedDeltaNet on _GDNBase in
// megatron/core/ssm/gated_delta_net/common.py; spec get_gated_delta_net_module_spec in
// megatron/core/models/gpt/experimental_attention_variant_module_specs.py (in_proj
// TELayerNormColumnParallelLinear with the layer's input norm fused in, out_norm TENorm,
// out_proj TERowParallelLinear). qk = key heads x key head dim, v = value heads x value head
// dim, conv_dim = 2 qk + v; Hv value heads, dk / dv head dims.
//   parameters: the fused input norm (replicated); in_proj [(2 qk + 2 v + 2 Hv) x h] /TP
//     (q, k, v, z, beta, alpha; bias=False, _GDNBase default); conv1d weight [conv_dim x
//     kernel] /TP (conv_bias=False default); dt_bias and A_log [Hv] /TP; out_norm weight [dv]
//     (replicated: it normalises each head); out_proj [h x v] /TP. Dense bucket.
//   saved (training path, fla kernels, common.py imports):
//     - in_proj's fused norm: its input and output (layernorm_linear.py), as Mamba's in_proj.
//     - the whole in_proj output (q, k, v, z, beta, alpha). gdn.py forward hands fla's
//       causal_conv1d qkv, a view of it (qkvzba.transpose(0, 1) split by torch.split), and fla
//       keeps the view: CausalConv1dFunction.forward (fla/modules/conv/triton/ops.py) saves x
//       as passed, its input_guard exempting x from .contiguous() (no_guard_contiguous=["x"],
//       fla PR #712, in 0.4.2 and later, January 2026), and a view keeps its base alive. The
//       jit-fused _compute_gates takes alpha, another view, so the base stays pinned in
//       --deterministic-mode too, where gdn.py convolves a contiguous transposed copy with
//       F.conv1d, which keeps that copy and silu keeps the conv output (kernel - 1 longer).
//       fla before 0.4.2 made x contiguous and kept only q, k, v.
//     - fla l2norm on q and k (fla/modules/l2norm.py L2NormFunction: save_for_backward(y,
//       rstd)): the normalised q, k and one fp32 rstd per token and key head.
//     - fla chunk_gated_delta_rule (fla/ops/gated_delta_rule/chunk.py ChunkGatedDeltaRule
//       Function.forward save_for_backward): q and k after Megatron repeats them to the value
//       heads (common.py _prepare_input_for_gated_delta_rule), v, g as its chunk-local cumsum
//       (fp32), beta (sigmoid in Megatron, so beta_raw is the same tensor) and A [Hv x 64] per
//       token (chunk_gated_delta_rule_fwd_intra, k.dtype). initial_state is None in training;
//       q_rstd / k_rstd are None (use_qk_l2norm_in_kernel=False). The chunk states h are not
//       saved: backward recomputes them (chunk.py, chunk_gated_delta_rule_bwd).
//     - gated norm (common.py _apply_gated_norm, out_norm(x) * silu(z)): the delta-rule output
//       x and the gate z (the inputs CheckpointWithoutOutput keeps under gdn_norm_out), TE
//       RMSNorm's fp32 rstd per token and value head and its output; out_proj's input (FP8 in
//       an FP8 layer). --recompute-modules gdn_norm_out (transformer_config.py) discards the
//       last three and recomputes them before out_proj's backward (gdn.py forward).
//     Not modeled: the fp32 intermediates of the jit-fused gate math (_compute_gates'
//     softplus(alpha + dt_bias), silu(z.float()) in _apply_gated_norm) — what the fuser keeps
//     depends on jit_fuser (megatron/core/jit.py); and the kernels' autotuned workspaces.
//   transients: the forward's chunk states h [B x chunks x Hv x dk x dv] (k.new_empty,
//     fla/ops/common/chunk_delta_h.py) with w, u and v_new; backward recomputes w, u, h, v_new
//     and adds dh of h's size (chunk_delta_h.py chunk_gated_delta_rule_bwd_dhu).
//   FLOPs: training.py gdn_layer_flops (and transformer_flops' linear_self_attn_term): 2 x
//     (h in_proj_dim + kernel conv_dim + 4 Hv dv^2 + h v) per token.
#include "module_spec.hpp"

namespace megamem {
namespace {

constexpr double kChunkSize = 64;  // GatedDeltaNet._setup_variant_attrs (gdn.py) chunk_size

struct GdnShape {
  double key_heads = 0;  // whole layer (all TP ranks)
  double value_heads = 0;
  double key_dim = 0;
  double value_dim = 0;
  double kernel = 0;
  double qk() const { return key_heads * key_dim; }
  double v() const { return value_heads * value_dim; }
  double conv_dim() const { return 2 * qk() + v(); }
  double in_proj_out() const { return 2 * qk() + 2 * v() + 2 * value_heads; }
};

GdnShape gdn_shape(const ModelConfig& m) {
  return GdnShape{.key_heads = static_cast<double>(m.linear_num_key_heads),
                  .value_heads = static_cast<double>(m.linear_num_value_heads),
                  .key_dim = static_cast<double>(m.linear_key_head_dim),
                  .value_dim = static_cast<double>(m.linear_value_head_dim),
                  .kernel = static_cast<double>(m.linear_conv_kernel_dim)};
}

// KDA layers share the linear-attention kinds (kimi_delta_attention.cpp).
bool present(const ModuleContext& c) {
  return layer_kind_is_gdn(c.kind) && c.model.kda_layer_pattern.empty();
}

void params(const ModuleContext& c, ParamSink& sink) {
  const GdnShape shape = gdn_shape(c.model);
  const std::int64_t tp = c.config.parallel.tensor_parallel;
  const std::int64_t h = c.model.hidden_size;
  const auto heads = static_cast<std::int64_t>(shape.value_heads) / tp;
  const auto conv_dim = static_cast<std::int64_t>(shape.conv_dim()) / tp;
  const ModuleKind gdn = ModuleKind::gated_deltanet;
  fused_norm_in_proj_params(c, gdn, static_cast<std::int64_t>(shape.in_proj_out()), sink);
  sink.tensor(gdn, conv_dim * c.model.linear_conv_kernel_dim);         // conv1d.weight
  sink.tensor(gdn, heads);                                             // dt_bias
  sink.tensor(gdn, heads);                                             // A_log
  sink.norm(gdn, c.model.linear_value_head_dim);                       // out_norm
  sink.linear(gdn, h * static_cast<std::int64_t>(shape.v()) / tp, 0);  // out_proj
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const GdnShape shape = gdn_shape(c.model);
  const ModuleKind gdn = ModuleKind::gated_deltanet;
  const double n = s.tokens;
  const double key_heads = shape.key_heads / s.tp;
  const double heads = shape.value_heads / s.tp;
  const double v = shape.v() / s.tp;
  const RecomputeModules norm_out = {RecomputeModule::gdn_norm_out};
  fused_norm_in_proj_saved(c, s, gdn, sink);
  sink.add("in_proj output (conv1d's q, k, v view keeps it whole)", gdn,
           n * shape.in_proj_out() / s.tp, s.act);
  if (c.config.training.deterministic_mode) {
    const double conv_dim = shape.conv_dim() / s.tp;
    sink.add("conv1d input copy (deterministic F.conv1d)", gdn, n * conv_dim, s.act);
    sink.add("conv1d output (silu input, deterministic)", gdn,
             n * conv_dim * (s.seq + shape.kernel - 1) / s.seq, s.act);
  }
  sink.add("l2norm output (q, k)", gdn, n * 2 * key_heads * shape.key_dim, s.act);
  sink.add("l2norm rstd (fp32)", gdn, n * 2 * key_heads, 4);
  sink.add("delta rule q, k (value heads)", gdn, n * 2 * heads * shape.key_dim, s.act);
  sink.add("delta rule v", gdn, n * v, s.act);
  sink.add("delta rule g cumsum (fp32)", gdn, n * heads, 4);
  sink.add("delta rule beta", gdn, n * heads, s.act);
  sink.add("delta rule A (64 per token and head)", gdn, n * heads * kChunkSize, s.act);
  sink.add("output gate z", gdn, n * v, s.act);
  sink.add("gated norm input (delta rule output)", gdn, n * v, s.act);
  sink.add("gated norm rstd (fp32)", gdn, n * heads, 4, norm_out);
  sink.add("gated norm output", gdn, n * v, s.act, norm_out);
  sink.add("out_proj input", gdn, n * v, gemm_input_bytes(c), norm_out);
  const DeltaRuleWorkingSet w =
      delta_rule_working_set(s, shape.value_heads, shape.key_dim, shape.value_dim);
  sink.forward_transient(w.states_bytes + w.wu_bytes + w.v_new_bytes);
  sink.backward_transient(2 * w.states_bytes + w.wu_bytes + w.v_new_bytes);
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const GdnShape shape = gdn_shape(c.model);
  const double h = c.model.hidden_size;
  f.gdn = 2 * (h * shape.in_proj_out() + shape.kernel * shape.conv_dim() +
               4 * shape.value_heads * shape.value_dim * shape.value_dim + h * shape.v());
}

}  // namespace

DeltaRuleWorkingSet delta_rule_working_set(const ActivationShape& s, double heads, double key_dim,
                                           double value_dim) {
  const double local_heads = heads / s.tp;
  return DeltaRuleWorkingSet{
      .states_bytes = 2 * per_chunk_elements(s, kChunkSize, heads, key_dim, value_dim),
      .wu_bytes = 2 * s.tokens * local_heads * (key_dim + value_dim),
      .v_new_bytes = 2 * s.tokens * local_heads * value_dim};
}

MEGAMEM_LAYER_MODULE_SPEC(kGatedDeltaNetSpec, "Gated DeltaNet", LayerBlock::attention);

}  // namespace megamem
