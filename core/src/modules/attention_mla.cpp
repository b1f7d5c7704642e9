// Module spec: multi-latent attention with its input norm
// (megatron/core/transformer/multi_latent_attention.py MLASelfAttention).
//   parameters: input norm (replicated); q down-projection [h x q_lora] replicated (every TP
//     rank duplicates the down-projections), q norm with --qk-layernorm
//     (mla_qk_norm_config.py), q up-projection [q_lora x heads (qk + rope)] /TP (or one
//     linear_q_proj /TP without q_lora); kv down-projection [h x (kv_lora + rope)] replicated,
//     kv norm, kv up-projection [kv_lora x heads (qk + v)] /TP; output projection /TP.
//     Dense bucket.
//   saved: input norm (standalone: attn_norm offload; its output freed by layernorm
//     recompute), down-projection outputs and their norms (qkv_linear; the norm outputs freed
//     by mla_up_proj), Q/K/V (mla_up_proj; core_attn offload), softmax statistics or unfused
//     probabilities (core_attn), linear_proj input (attn_proj), the RoPE slice mla_up_proj
//     keeps as its checkpoint input.
//   FLOPs: training.py transformer_flops, the MLA branch.
#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) {
  return c.model.multi_latent_attention && !dsa_attention(c.model) && !dsv4_attention(c.model) &&
         layer_kind_has_attention(c.kind);
}

}  // namespace

void mla_params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const std::int64_t tp = c.config.parallel.tensor_parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t heads = m.num_attention_heads;
  const std::int64_t q_head = std::int64_t{m.qk_head_dim} + m.qk_pos_emb_head_dim;
  const std::int64_t kv_down = std::int64_t{m.kv_lora_rank} + m.qk_pos_emb_head_dim;
  const std::int64_t bias = m.add_bias_linear ? 1 : 0;
  const ModuleKind kind = ModuleKind::self_attention;
  sink.norm(ModuleKind::input_layernorm, h);
  if (m.q_lora_rank > 0) {
    sink.linear(kind, h * m.q_lora_rank, bias * m.q_lora_rank);
    if (m.qk_layernorm) sink.norm(kind, m.q_lora_rank);
    sink.linear(kind, m.q_lora_rank * heads * q_head / tp, bias * heads * q_head / tp);
  } else {
    sink.linear(kind, h * heads * q_head / tp, bias * heads * q_head / tp);
  }
  sink.linear(kind, h * kv_down, bias * kv_down);
  if (m.qk_layernorm) sink.norm(kind, m.kv_lora_rank);
  const std::int64_t kv_up = heads * (std::int64_t{m.qk_head_dim} + m.v_head_dim);
  sink.linear(kind, m.kv_lora_rank * kv_up / tp, bias * kv_up / tp);
  sink.linear(kind, heads * m.v_head_dim * h / tp, bias * h);
  // Kimi K3's MLA (kimi_k3_layers.py KimiK3Attention _init_mla): an output gate g_proj
  // [heads x v_head_dim x h] /TP (column, no bias) whose sigmoid multiplies the core output.
  if (kimi_k3_layers(m)) sink.linear(kind, h * heads * m.v_head_dim / tp, 0);
}

void mla_flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  const double h = m.hidden_size;
  const double s = c.config.training.seq_length;
  const double heads = m.num_attention_heads;
  const double qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
  const double q_term =
      m.q_lora_rank == 0 ? h * heads * qk : m.q_lora_rank * (h + heads * qk + 1.0);
  const double kv_term = m.kv_lora_rank * (h + heads * (m.qk_head_dim + m.v_head_dim) + 1.0);
  const double gate = kimi_k3_layers(m) ? h * heads * m.v_head_dim : 0.0;  // K3's g_proj
  f.attention_projections =
      2.0 * (q_term + kv_term + h * m.qk_pos_emb_head_dim + heads * m.v_head_dim * h + gate);
  f.attention_core = 2.0 * s * (heads * qk / 2.0 + heads * m.v_head_dim / 2.0);
  f.mla_up_projections = 2.0 * ((m.q_lora_rank > 0 ? m.q_lora_rank * heads * qk : 0.0) +
                                m.kv_lora_rank * heads * (m.qk_head_dim + m.v_head_dim));
}

namespace {

void params(const ModuleContext& c, ParamSink& sink) { mla_params(c, sink); }

// Kimi K3's MLA (kimi_k3_layers.py KimiK3Attention._forward_mla) runs on the sequence it
// gathers over TP itself, with duplicated down-projections and kimi_k3_ops.py KimiRMSNorm
// (plain PyTorch) as q_a/kv_a norms. Per token of the whole sequence: the gathered input beyond
// the norm output's SP shard (the projections' saved input); for each norm the fp32 copy of
// its input and an fp32 rsqrt (square and the rsqrt product), the bf16 normalised input (the
// weight product) and its output (the up-projection's input); no bf16 down-projection output.
void kimi_k3_latents_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const double gemm_input = gemm_input_bytes(c);
  const ModuleKind attn = ModuleKind::self_attention;
  const double n = s.tokens;
  const double heads = m.num_attention_heads / s.tp;
  const double q_head = static_cast<double>(m.qk_head_dim) + m.qk_pos_emb_head_dim;
  const OffloadModules core_attn = {OffloadModule::core_attn};
  sink.add("gathered attention input (beyond the norm output's shard)", attn,
           (n - s.sp_tokens) * s.h, gemm_input);
  const double ranks[] = {static_cast<double>(m.q_lora_rank), static_cast<double>(m.kv_lora_rank)};
  for (const double rank : ranks) {
    if (rank <= 0) continue;
    sink.add("q_a/kv_a KimiRMSNorm fp32 input copy", attn, n * rank, 4);
    sink.add("q_a/kv_a KimiRMSNorm rsqrt (fp32)", attn, n, 4);
    sink.add("q_a/kv_a KimiRMSNorm normalised input", attn, n * rank, s.act);
    sink.add("q_a/kv_a KimiRMSNorm output (up-projection input)", attn, n * rank, gemm_input);
  }
  sink.add("Q, K (core attention inputs)", attn, 2 * n * heads * q_head, s.act, {}, core_attn);
  sink.add("V (core attention input)", attn, n * heads * m.v_head_dim, s.act, {}, core_attn);
}

// The compressed latents, their norms and the up-projected Q, K, V.
// The q/kv norms' outputs are the up-projections' GEMM inputs, FP8 in an FP8 layer
// (linear.py, saved_inputmat).
void latents_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  if (kimi_k3_layers(m)) return kimi_k3_latents_saved(c, s, sink);
  const double gemm_input = gemm_input_bytes(c);
  const ModuleKind attn = ModuleKind::self_attention;
  const double heads = m.num_attention_heads / s.tp;
  const double n = s.tokens;
  const double nsp = s.sp_tokens;
  const double q_head = static_cast<double>(m.qk_head_dim) + m.qk_pos_emb_head_dim;
  const double norm_outputs = m.qk_layernorm ? 1 : 0;
  const RecomputeModules up_proj = {RecomputeModule::mla_up_proj};
  const OffloadModules qkv_linear = {OffloadModule::qkv_linear};
  const OffloadModules core_attn = {OffloadModule::core_attn};
  if (m.q_lora_rank > 0) {
    sink.add("q_down output", attn, nsp * m.q_lora_rank, s.act, {}, qkv_linear);
    sink.add("q norm output", attn, nsp * m.q_lora_rank * norm_outputs, gemm_input, up_proj,
             qkv_linear);
  }
  sink.add("kv_down output", attn,
           nsp * (static_cast<double>(m.kv_lora_rank) + m.qk_pos_emb_head_dim), s.act, {},
           qkv_linear);
  sink.add("kv norm output", attn, nsp * m.kv_lora_rank * norm_outputs, gemm_input, up_proj,
           qkv_linear);
  sink.add("Q, K (core attention inputs)", attn, 2 * n * heads * q_head, s.act, up_proj, core_attn);
  sink.add("V (core attention input)", attn, n * heads * m.v_head_dim, s.act, up_proj, core_attn);
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind attn = ModuleKind::self_attention;
  const double heads = m.num_attention_heads / s.tp;
  const double n = s.tokens;
  const double q_head = static_cast<double>(m.qk_head_dim) + m.qk_pos_emb_head_dim;
  const RecomputeModules core_attn = {RecomputeModule::core_attn};
  const OffloadModules offload_core = {OffloadModule::core_attn};
  input_norm_saved(c, s, sink);
  latents_saved(c, s, sink);
  if (unfused_attention(c.config)) {
    const double scores = s.batch * heads * s.seq * s.seq;
    sink.add("attention probabilities", attn, scores, s.act, core_attn, offload_core);
    if (m.attention_dropout > 0) {
      sink.add("attention dropout mask and output", attn, scores, 1 + s.act, core_attn,
               offload_core);
    }
    sink.forward_transient(s.act * scores);
    sink.backward_transient(2 * s.act * scores);
  } else {
    sink.add("softmax statistics (fp32)", attn, n * heads, 4, core_attn, offload_core);
  }
  sink.add("attention output (linear_proj input)", attn, n * heads * m.v_head_dim, s.act, {},
           {OffloadModule::attn_proj});
  delayed_scaling_copy(c, sink, "attention output FP8 copy (linear_proj input)", attn,
                       n * heads * m.v_head_dim, {OffloadModule::attn_proj});
  if (kimi_k3_layers(m)) {
    // KimiK3Attention._forward_mla: output * sigmoid(g_proj(x)) keeps the sigmoid's output
    // (sigmoid and the product) and o_proj its input, the gated output.
    sink.add("output gate sigmoid", attn, n * heads * m.v_head_dim, s.act);
    sink.add("gated output (o_proj input)", attn, n * heads * m.v_head_dim, gemm_input_bytes(c));
  }
  // The five projections' grad outputs until backward_dw.
  const double kv_down = static_cast<double>(m.kv_lora_rank) + m.qk_pos_emb_head_dim;
  const double q_up = m.q_lora_rank > 0 ? n * heads * q_head : 0;
  sink.delayed_wgrad(
      LayerBlock::attention,
      gemm_input_bytes(c) * (s.sp_tokens * (m.q_lora_rank + kv_down + s.h) + q_up +
                             n * heads * (static_cast<double>(m.qk_head_dim) + m.v_head_dim)));
  // mla_up_proj keeps the gathered RoPE slice as a checkpoint input.
  if (sink.active_recompute().has(RecomputeModule::mla_up_proj)) {
    sink.add("RoPE slice (mla_up_proj checkpoint input)", attn, n * m.qk_pos_emb_head_dim, s.act);
  }
  sink.forward_transient(s.act * n * heads * (2 * q_head + m.v_head_dim));
}

void flops(const ModuleContext& c, ModuleFlops& f) { mla_flops(c, f); }

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kMlaAttentionSpec, "attention (MLA)", LayerBlock::attention);

}  // namespace megamem
