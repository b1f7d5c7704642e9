// Module spec: Kimi Delta Attention, the self-attention of Kimi K3's KDA layers
// (Megatron-Bridge src/megatron/bridge/models/kimi/kimi_k3_layers.py KimiK3Attention _init_kda
// and _forward_kda, kimi_k3_ops.py kda; the layer's input norm is a standalone TENorm,
// kimi_k3_spec.py). H heads of d (query, key and value alike), P = H d, conv kernel K.
//   parameters: input norm h (replicated); q_proj, k_proj, v_proj [P x h] /TP (column, no
//     bias); q/k/v_conv1d weights [P x K] /TP (fla ShortConvolution, kept in fp32, no bias);
//     f_a_proj [d x h] (duplicated on every TP rank); f_b_proj [P x d] /TP; b_proj [H x h] /TP;
//     g_proj [P x h] /TP; A_log [H] /TP and dt_bias [P] /TP (fp32); o_norm weight [d]
//     (replicated: fla FusedRMSNormGated normalises each head); o_proj [h x P] /TP (row).
//   saved (training path; the attention runs on the sequence gathered over TP, its linears
//   built with sequence_parallel off):
//     - the input norm's input and rstd (TENorm), and its output gathered over TP
//       (gather_from_sequence_parallel_region): the one input tensor q/k/v/f_a/b/g_proj save.
//     - fla ShortConvolution (causal_conv1d, save_for_backward(x, ...)): each projection's
//       output, q, k and v.
//     - f_b_proj's input (f_a_proj's output, d per token).
//     - chunk_kda (fla/ops/kda/chunk.py ChunkKDAFunction.forward save_for_backward, as
//       kimi_k3_ops.py calls it: use_qk_l2norm_in_kernel, use_gate_in_kernel, safe_gate):
//       q and k after l2norm with one fp32 rstd per token and head each, v, the raw gate g
//       (f_b_proj's output, per channel), beta (sigmoid of b_proj's output in fp32, the same
//       tensor as beta_raw), Aqk and Akk [tokens x H x 64] in k's dtype (chunk_intra.py
//       chunk_kda_fwd_intra). With use_gate_in_kernel the gate's chunk cumsum is not kept and
//       without disable_recompute neither are w, u, qg, kg, v_new, h (chunk_fwd.py).
//     - fla FusedRMSNormGated (sigmoid): its inputs, the KDA output and the gate (g_proj's
//       output), and one fp32 rstd per token and head; o_proj's input (its output).
//   transients: the forward's chunk states h with w, u, kg and v_new (chunk_fwd.py); backward
//     recomputes them with qg (recompute_w_u_fwd) and adds dh of h's size (chunk_bwd.py).
//   FLOPs: Megatron-Bridge training/utils/flop_utils.py (Kimi K3 branch): 2 (5 h P + h H + h d
//     + d P + 3 K P + 4 H d^2) per token.
//   Not modeled: fla's autotuned kernel workspaces; KDA under packed sequences (cu_seqlens).
#include "module_spec.hpp"

namespace megamem {
namespace {

constexpr double kChunkSize = 64;  // fla chunk_kda chunk_size default

struct KdaShape {
  double heads = 0;  // whole layer (all TP ranks)
  double dim = 0;
  double kernel = 0;
  double projection() const { return heads * dim; }
};

KdaShape kda_shape(const ModelConfig& m) {
  return KdaShape{.heads = static_cast<double>(m.kda_num_heads),
                  .dim = static_cast<double>(m.kda_head_dim),
                  .kernel = static_cast<double>(m.kda_conv_kernel)};
}

bool present(const ModuleContext& c) {
  return layer_kind_is_gdn(c.kind) && !c.model.kda_layer_pattern.empty();
}

void params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const std::int64_t tp = c.config.parallel.tensor_parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t d = m.kda_head_dim;
  const std::int64_t heads = m.kda_num_heads / tp;
  const std::int64_t p = heads * d;  // this rank's projection
  const ModuleKind attn = ModuleKind::self_attention;
  sink.norm(ModuleKind::input_layernorm, h);
  for (int i = 0; i < 3; ++i) sink.linear(attn, h * p, 0);               // q_proj, k_proj, v_proj
  for (int i = 0; i < 3; ++i) sink.tensor(attn, p * m.kda_conv_kernel);  // q/k/v_conv1d
  sink.linear(attn, h * d, 0);                                           // f_a_proj (duplicated)
  sink.linear(attn, d * p, 0);                                           // f_b_proj
  sink.linear(attn, h * heads, 0);                                       // b_proj
  sink.linear(attn, h * p, 0);                                           // g_proj
  sink.tensor(attn, heads);                                              // A_log
  sink.tensor(attn, p);                                                  // dt_bias
  sink.norm(attn, d);                                                    // o_norm
  sink.linear(attn, p * h, 0);                                           // o_proj
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const KdaShape shape = kda_shape(c.model);
  const ModuleKind attn = ModuleKind::self_attention;
  const double n = s.tokens;
  const double heads = shape.heads / s.tp;
  const double p = shape.projection() / s.tp;
  const double gemm_input = gemm_input_bytes(c);
  sink.add("input_layernorm input", ModuleKind::input_layernorm, s.sp_tokens * s.h, s.act);
  sink.add("input_layernorm rstd (fp32)", ModuleKind::input_layernorm, s.sp_tokens, 4);
  sink.add("gathered attention input (the projections' input)", attn, n * s.h, gemm_input);
  sink.add("short convolution inputs (q, k, v projections)", attn, 3 * n * p, s.act);
  sink.add("f_b_proj input", attn, n * shape.dim, gemm_input);
  sink.add("chunk_kda q, k after l2norm", attn, 2 * n * p, s.act);
  sink.add("chunk_kda q, k l2norm rstd (fp32)", attn, 2 * n * heads, 4);
  sink.add("chunk_kda v", attn, n * p, s.act);
  sink.add("chunk_kda raw gate g (f_b_proj output)", attn, n * p, s.act);
  sink.add("chunk_kda beta (fp32 sigmoid)", attn, n * heads, 4);
  sink.add("chunk_kda Aqk, Akk (64 per token and head each)", attn, 2 * n * heads * kChunkSize,
           s.act);
  sink.add("gated norm inputs (KDA output, g_proj output)", attn, 2 * n * p, s.act);
  sink.add("gated norm rstd (fp32)", attn, n * heads, 4);
  sink.add("o_proj input", attn, n * p, gemm_input);
  const DeltaRuleWorkingSet w = delta_rule_working_set(s, shape.heads, shape.dim, shape.dim);
  const double gated_keys_bytes = 2 * n * p;  // kg (recompute_w_u_fwd), and qg in backward
  sink.forward_transient(w.states_bytes + w.wu_bytes + w.v_new_bytes + gated_keys_bytes);
  sink.backward_transient(2 * w.states_bytes + w.wu_bytes + w.v_new_bytes + 2 * gated_keys_bytes);
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const KdaShape shape = kda_shape(c.model);
  const double h = c.model.hidden_size;
  const double p = shape.projection();
  f.gdn = 2 * (5 * h * p + h * shape.heads + h * shape.dim + shape.dim * p + 3 * shape.kernel * p +
               4 * shape.heads * shape.dim * shape.dim);
}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kKimiDeltaAttentionSpec, "Kimi Delta Attention", LayerBlock::attention);

}  // namespace megamem
