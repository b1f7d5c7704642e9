// Module spec: multi-head / grouped-query self-attention with its input norm
// (megatron/core/transformer/attention.py SelfAttention, TE DotProductAttention).
//   parameters: input norm (replicated); fused QKV [(q + gate + k + v) x h] /TP, column
//     parallel, bias with --add-bias-linear or --add-qkv-bias (gate: q rows with the output
//     gate, one row per head with the head-wise gate); optional per-head
//     q/k norms (replicated); output projection [h x heads·dv] /TP, row parallel (bias
//     replicated). Dense bucket. V's head dimension dv is kv_channels unless v_channels sets
//     its own (Megatron-Bridge's MiMoV2FlashSelfAttention: V and linear_proj's input take it,
//     Q and K keep kv_channels; mimo_v2_flash/modeling_mimo_v2_flash.py).
//   saved: input norm input/output (offload qkv_linear, or attn_norm when standalone), q/k
//     norm inputs (qkv_linear), Q/K/V copies (core_attn offload; core_attn recompute keeps
//     linear_qkv's output behind V instead of V's copy), flash attention's fp32
//     log-sum-exp (freed by core_attn recompute) or, unfused, the probabilities and dropout
//     (core_attn recompute), linear_proj input (attn_proj offload); with Gemma 2's score
//     soft-cap, FlexAttention's own output or, unfused, the capped scores (core_attn). The
//     head-wise gate (Megatron-LM dev attention.py:
//     core_attn_out * sigmoid(gate.float()).to(dtype)) also keeps the sigmoid's fp32 output, its
//     16-bit cast and the ungated output (the product's inputs) beside the product, linear_proj's
//     input; the full output gate (attention.py _apply_output_gate, a torch.compile'd
//     jit_fuser function) keeps its two inputs, the 16-bit gate and the ungated output.
//     A K/V-sharing layer (Gemma 4 E2B/E4B, LayerKind::kv_shared_*) keeps its K/V
//     weights but saves no K norm input and, where it is not expanded, no V of its own.
//   In Falcon-H1's parallel layer (Megatron-Bridge falcon_h1/modeling_falconh1/
//   falconh1_layer_specs.py) linear_qkv is a plain TEColumnParallelLinear: the layer's shared
//   input norm lives in falcon_h1_layer.cpp, and linear_qkv saves its own input, the norm
//   output times attention_in_multiplier (falconh1_layer.py: a new tensor). key_multiplier
//   and attention_out_multiplier scale K and the output into copies nothing saves.
//   FLOPs: training.py transformer_flops: 2h(q + k + v + gate) + 2·heads·dv·h projections;
//     causal core attention heads·s·(dk + dv) (QK^T and softmax·V at half the sequence each).
#include <algorithm>

#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) {
  return !c.model.multi_latent_attention && layer_kind_has_attention(c.kind);
}

// Megatron-Bridge's Gemma 2 core attention caps the scores whatever --attention-backend says
// (gemma/gemma2_provider.py gemma2_layer_spec): PyTorch FlexAttention, or, when a dataset
// mask is given or attention dropout is on, its unfused parent Gemma2DotProductAttention.
// Bridge's GPT step passes no mask by default (gpt_step.py
// skip_getting_attention_mask_from_dataset), so dropout decides here.
bool softcapped(const ModelConfig& m) { return m.attn_logit_softcapping > 0; }
bool softcapped_attention_unfused(const ModelConfig& m) {
  return softcapped(m) && m.attention_dropout > 0;
}

void params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const AttentionShape shape = attention_shape(m, c.kind);
  const std::int64_t tp = c.config.parallel.tensor_parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t q = std::int64_t{shape.heads} * shape.kv_channels;
  const std::int64_t kv = std::int64_t{shape.query_groups} * (shape.kv_channels + shape.v_channels);
  const std::int64_t qkv_out = q + shape.gate_rows + kv;
  const bool qkv_bias = m.add_bias_linear || m.add_qkv_bias;
  const ModuleKind attn = ModuleKind::self_attention;
  if (c.kind != LayerKind::parallel_hybrid) sink.norm(ModuleKind::input_layernorm, h);
  sink.linear(attn, qkv_out * h / tp, qkv_bias ? qkv_out / tp : 0);
  // attention.py: qk_l2_norm picks torch_norm.py L2Norm, which has no weights, before
  // qk_layernorm's TENorm.
  if (m.qk_layernorm && !m.qk_l2_norm) {
    sink.norm(attn, shape.kv_channels);  // q_layernorm
    sink.norm(attn, shape.kv_channels);  // k_layernorm
  }
  sink.linear(attn, std::int64_t{shape.heads} * shape.v_channels * h / tp,
              m.add_bias_linear ? h : 0);
}

// megatron/core/fusions/fused_softmax.py is_kernel_available: the fused kernel runs on 16-bit
// scores with 16 < sk <= 4096, sq and sk multiples of 4 and b·np a multiple of 4, and (causal
// mask) of the kernel's rows per block, get_batch_per_block: 128 threads in warps of
// min(next_pow2(sk), 32) lanes, two rows per warp up to 128 keys (scaled_masked_softmax.h).
bool fused_softmax_runs(const ModuleContext& c, const ActivationShape& s, double heads) {
  if (!c.config.training.masked_softmax_fusion || s.act != 2) return false;
  const auto sk = static_cast<std::int64_t>(s.seq);
  const auto rows = static_cast<std::int64_t>(s.batch * heads);
  if (sk <= 16 || sk > 4096 || sk % 4 != 0 || rows % 4 != 0) return false;
  std::int64_t pow2 = 1;
  while (pow2 < sk) pow2 *= 2;
  const std::int64_t lanes = std::min<std::int64_t>(pow2, 32);
  const std::int64_t rows_per_block = (128 / lanes) * (pow2 <= 128 ? 2 : 1);
  return rows % rows_per_block == 0;
}

// megatron/core/transformer/dot_product_attention.py: baddbmm scores, fused (or torch)
// masked softmax, attention dropout, bmm with V. K and V are expanded to all heads.
void unfused_core_attention(const ModuleContext& c, const ActivationShape& s, SavedSink& sink,
                            double heads, double groups) {
  const ModuleKind attn = ModuleKind::self_attention;
  const AttentionShape shape = attention_shape(c.model, c.kind);
  const double dh = shape.kv_channels;
  const double n = s.tokens;
  const double scores = s.batch * heads * s.seq * s.seq;
  const bool expanded = heads > groups;
  const RecomputeModules core_attn = {RecomputeModule::core_attn};
  const OffloadModules offload = {OffloadModule::core_attn};
  sink.add("Q (core attention)", attn, n * heads * dh, s.act, {}, offload);
  // A K/V-sharing layer's V is its source layer's normed V, which that layer's core attention
  // already keeps, unless repeat_interleave copies it to all heads; K is RoPE'd anew.
  const double v = layer_kind_shares_kv(c.kind) && !expanded ? 0.0 : shape.v_channels;
  sink.add("K, V (expanded to all heads)", attn, n * (expanded ? heads : groups) * (dh + v), s.act,
           {}, offload);
  // The softmax keeps its output for backward. Without the fused kernel, PyTorch's softmax
  // runs in fp32 under attention_softmax_in_fp32 and keeps that fp32 output; its 16-bit cast
  // is what dropout (or, without dropout, the bmm with V) then sees (forward_torch_softmax).
  const bool fused_softmax = fused_softmax_runs(c, s, heads);
  const bool fp32_softmax =
      !fused_softmax && s.act == 2 && c.config.training.attention_softmax_in_fp32;
  if (softcapped(c.model)) {
    // gemma2_provider.py logit_softcapping: cap * tanh(scores / cap); tanh keeps its output.
    sink.add("soft-capped scores (tanh output)", attn, scores, s.act, core_attn, offload);
  }
  sink.add("attention probabilities", attn, scores, fp32_softmax ? 4 : s.act, core_attn, offload);
  if (c.model.attention_dropout > 0) {
    sink.add("attention dropout mask and output", attn, scores, 1 + s.act, core_attn, offload);
  } else if (fp32_softmax) {
    sink.add("attention probabilities (16-bit cast, bmm input)", attn, scores, s.act, core_attn,
             offload);
  }
  // The raw scores live until the softmax kernel has run. Without the fused kernel the mask
  // and softmax make an fp32 copy.
  sink.forward_transient(s.act * scores + (fused_softmax ? 0 : 4 * scores));
  // In backward the probabilities' gradient and the scores' gradient (the softmax
  // backward's output) are both alive next to the saved probabilities.
  sink.backward_transient(2 * s.act * scores);
}

// The head-wise gate (Megatron-LM dev attention.py): sigmoid saves its fp32 output, the
// product its two inputs, the 16-bit gate and the ungated core attention output (which the
// core_attn offload group hands on); the product is linear_proj's input, counted by saved().
void head_wise_gate_saved(const ActivationShape& s, SavedSink& sink, double heads, double dv) {
  const ModuleKind attn = ModuleKind::self_attention;
  const double n = s.tokens;
  sink.add("head-wise gate sigmoid (fp32)", attn, n * heads, 4);
  sink.add("head-wise gate (16-bit, product input)", attn, n * heads, s.act);
  sink.add("ungated attention output (product input)", attn, n * heads * dv, s.act, {},
           {OffloadModule::core_attn});
}

// The full output gate (--attention-output-gate; attention.py _apply_output_gate,
// x * sigmoid(gate.float()) under jit_fuser, which is torch.compile from PyTorch 2.2,
// megatron/core/jit.py). AOTAutograd's min-cut partitioner keeps the compiled product's two
// 16-bit inputs and recomputes the sigmoid in backward: the gate, a contiguous copy the
// reshape of its split slice makes (get_query_key_value_tensors), and the ungated core
// attention output, which the attention kernel's own backward shares and the core_attn offload
// group hands on. The product is linear_proj's input, counted by saved().
void output_gate_saved(const ActivationShape& s, SavedSink& sink, double heads, double dh,
                       double dv) {
  const ModuleKind attn = ModuleKind::self_attention;
  const double n = s.tokens;
  sink.add("output gate (16-bit, product input)", attn, n * heads * dh, s.act);
  sink.add("ungated attention output (product input)", attn, n * heads * dv, s.act, {},
           {OffloadModule::core_attn});
}

// The Q/K norms save views of their inputs, keeping linear_qkv's output alive: Transformer
// Engine's norm modules before 1.13 (module/rmsnorm.py, layernorm.py: inp.view) and L2Norm
// (torch_norm.py, a jit_fuser expression whose compiled backward keeps its input).
bool qk_norms_keep_views(const Config& config) {
  const ModelConfig& m = config.model;
  return m.qk_l2_norm || (m.qk_layernorm && config.training.te_norm_saves_input_view);
}

// V reaches core attention as a slice of linear_qkv's output: not after Gemma 4's V norm, in a
// K/V-sharing layer (the source layer's V), or with the head-wise gate, whose slice already
// keeps the output; the soft-capped FlexAttention path saves its own copies.
bool v_is_qkv_output_view(const ModelConfig& m, LayerKind kind) {
  return !m.torch_rms_norms && !m.gemma4_moe_layer && !layer_kind_shares_kv(kind) &&
         !m.head_wise_attn_gate && !softcapped(m);
}

// linear_qkv's output and the Q, K and V get_query_key_value_tensors cuts from it
// (attention.py: SplitAlongDim views; Q is copied by its reshape when a rank holds more than
// one query group of more than one head, and RoPE or a Q/K norm makes new Q and K tensors). With
// fewer query groups than TP ranks each rank slices the all-gathered output, which is then what
// lives.
struct QkvSlices {
  double output = 0;  // elements of the output a rank holds
  double q = 0;
  double k = 0;
  double q_fresh = 0;  // Q's and K's elements where they are new tensors, 0 where views
  double k_fresh = 0;
  bool reshaped = false;
  bool norms_keep_views = false;  // qk_norms_keep_views()
};

QkvSlices qkv_slices(const ModuleContext& c, const ActivationShape& s, const AttentionShape& shape,
                     double heads, double groups) {
  const ModelConfig& m = c.model;
  const double dh = shape.kv_channels;
  const double total = static_cast<double>(shape.heads) * dh + shape.gate_rows +
                       static_cast<double>(shape.query_groups) * (dh + shape.v_channels);
  const bool rope = m.position_embedding == PositionEmbedding::rope ||
                    m.position_embedding == PositionEmbedding::yarn;
  const bool normed = m.qk_layernorm || m.qk_l2_norm;
  QkvSlices out;
  out.output = s.tokens * (shape.query_groups < s.tp ? total : total / s.tp);
  out.q = s.tokens * heads * dh;
  out.k = s.tokens * groups * dh;
  // The reshape merges the group and per-group head dimensions: a copy when both exceed one.
  out.reshaped = groups > 1 && heads > groups;
  out.q_fresh = rope || normed || out.reshaped ? out.q : 0.0;
  out.k_fresh = rope || normed ? out.k : 0.0;
  out.norms_keep_views = qk_norms_keep_views(c.config);
  return out;
}

// What the Q/K norms keep for their backward: contiguous copies of Q and K (TE from 1.13), or
// views that keep linear_qkv's output alive, with the reshape's copy of Q where there is one.
// A K/V-sharing layer keeps no K norm input (its K is the source layer's).
void qk_norm_inputs_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink,
                          const QkvSlices& slices, double own_groups) {
  const ModelConfig& m = c.model;
  if (!m.qk_layernorm && !m.qk_l2_norm) return;
  const bool views = slices.norms_keep_views && own_groups > 0;
  const double copies = slices.q + (own_groups > 0 ? slices.k : 0.0);
  const double held = slices.output + (slices.reshaped ? slices.q : 0.0);
  sink.add(views ? "q/k norm inputs (QKV output views)" : "q/k layernorm inputs",
           ModuleKind::self_attention, views ? held : copies, s.act, {},
           {OffloadModule::qkv_linear});
}

// The core attention's inputs for its backward. Without recompute TE keeps contiguous Q, K
// and V (dot_product_attention/utils.py get_qkv_layout: V, a strided slice of linear_qkv's
// output beside new Q and K, matches no packed layout, so all three are made contiguous), and
// linear_qkv's output is freed. --recompute-modules core_attn instead saves the inputs as
// attention.py _checkpointed_attention_forward hands them to tensor_parallel.checkpoint
// (tensor_parallel/random.py CheckpointFunction): Q and K where they are new tensors, and V,
// a view that keeps the whole output alive where nothing else does; TE's copies are made
// again in the recomputed forward (v_is_qkv_output_view: where V is such a slice).
void core_attention_inputs_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink,
                                 const QkvSlices& slices, double copies) {
  const ModuleKind attn = ModuleKind::self_attention;
  const OffloadModules offload = {OffloadModule::core_attn};
  if (!v_is_qkv_output_view(c.model, c.kind)) {
    sink.add("Q, K, V (core attention inputs)", attn, copies, s.act, {}, offload);
    return;
  }
  // One entry per tensor TE saves (fine-grained offloading moves each by its own size).
  const RecomputeModules recomputed = {RecomputeModule::core_attn};
  sink.add("Q (core attention)", attn, slices.q, s.act,
           slices.q_fresh > 0 ? RecomputeModules{} : recomputed, offload);
  sink.add("K (core attention)", attn, slices.k, s.act,
           slices.k_fresh > 0 ? RecomputeModules{} : recomputed, offload);
  sink.add("V copy (core attention)", attn, copies - slices.q - slices.k, s.act, recomputed,
           offload);
  if (!sink.active_recompute().has(RecomputeModule::core_attn) || slices.norms_keep_views) return;
  sink.add("QKV output (core_attn checkpoint)", attn, slices.output, s.act);
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const AttentionShape shape = attention_shape(m, c.kind);
  if (c.kind == LayerKind::parallel_hybrid) {
    sink.add("linear_qkv input (input norm output x attention_in_multiplier)",
             ModuleKind::self_attention, s.sp_tokens * s.h, gemm_input_bytes(c), {},
             {OffloadModule::qkv_linear});
  } else {
    input_norm_saved(c, s, sink);
  }
  const double heads = shape.heads / s.tp;
  // With fewer query groups than TP ranks each rank keeps one group (attention.py).
  const double groups = std::max(1.0, shape.query_groups / s.tp);
  const double dh = shape.kv_channels;
  const double dv = shape.v_channels;
  const double n = s.tokens;
  const double qkv = n * ((heads + groups) * dh + groups * dv);
  const ModuleKind attn = ModuleKind::self_attention;
  // A K/V-sharing layer (Megatron-Bridge gemma/modeling_gemma4.py Gemma4DenseSelfAttention)
  // still runs linear_qkv and k_layernorm, then drops its own K and V for its source layer's
  // (wire_gemma4_kv_sharing): nothing keeps the K norm's graph, and V is the source's.
  const double own_groups = layer_kind_shares_kv(c.kind) ? 0.0 : groups;
  // The fused QKV output is copied into contiguous Q, K, V; only the copies are saved. The
  // head-wise gate's slice is a view that keeps the whole output (gate rows too) alive beside
  // its contiguous QKV copy; the output gate's rows are copied and saved like Q (attention.py
  // get_query_key_value_tensors), so the fused output is that much wider while it lives.
  const double gate_rows = m.attention_output_gate ? n * heads * dh : 0.0;
  sink.forward_transient(s.act * (m.head_wise_attn_gate ? 2 * qkv + n * heads : qkv + gate_rows));
  const QkvSlices slices = qkv_slices(c, s, shape, heads, groups);
  qk_norm_inputs_saved(c, s, sink, slices, own_groups);
  if (softcapped_attention_unfused(m) || (!softcapped(m) && unfused_attention(c.config))) {
    unfused_core_attention(c, s, sink, heads, groups);
  } else {
    core_attention_inputs_saved(c, s, sink, slices, qkv - n * (groups - own_groups) * dv);
    // Flash/cuDNN (and FlexAttention) keep the fp32 log-sum-exp per head and token.
    sink.add("softmax statistics (fp32)", attn, n * heads, 4, {RecomputeModule::core_attn},
             {OffloadModule::core_attn});
    if (softcapped(m)) {
      // Gemma2FlexDotProductAttention: flex_attention keeps its own [b, np, s, d] output for
      // its backward; linear_proj gets a permuted .contiguous() copy of it.
      sink.add("FlexAttention output (its backward's copy)", attn, n * heads * dv, s.act,
               {RecomputeModule::core_attn}, {OffloadModule::core_attn});
    }
  }
  if (m.head_wise_attn_gate) head_wise_gate_saved(s, sink, heads, dv);
  if (m.attention_output_gate) output_gate_saved(s, sink, heads, dh, dv);
  sink.add("attention output (linear_proj input)", attn, n * heads * dv, s.act, {},
           {OffloadModule::attn_proj});
  delayed_scaling_copy(c, sink, "attention output FP8 copy (linear_proj input)", attn,
                       n * heads * dv, {OffloadModule::attn_proj});
  // linear_qkv's and linear_proj's grad outputs until backward_dw.
  const double gate = n * heads * (static_cast<double>(shape.gate_rows) / shape.heads);
  sink.delayed_wgrad(LayerBlock::attention, gemm_input_bytes(c) * (qkv + gate + s.sp_tokens * s.h));
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  const AttentionShape shape = attention_shape(m, c.kind);
  const double h = m.hidden_size;
  const double s = c.config.training.seq_length;
  const double q = shape.kv_channels * static_cast<double>(shape.heads);
  const double v_out = shape.v_channels * static_cast<double>(shape.heads);
  const double kv =
      (static_cast<double>(shape.kv_channels) + shape.v_channels) * shape.query_groups;
  f.attention_projections = 2.0 * (h * (q + kv + shape.gate_rows) + v_out * h);
  // causal mask halves QK^T (head dim dk) and softmax·V (dv).
  f.attention_core = (q + v_out) * s;
}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kGqaAttentionSpec, "attention (MHA/GQA)", LayerBlock::attention);

bool core_attn_recompute_can_grow(const Config& config) {
  const ModelConfig& m = config.model;
  return !m.multi_latent_attention && !unfused_attention(config) &&
         v_is_qkv_output_view(m, LayerKind::dense) && !qk_norms_keep_views(config);
}

}  // namespace megamem
