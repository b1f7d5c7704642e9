// Module spec: DeepSeek-V4's hybrid attention with its input norm (Megatron-LM dev
// experimental_attention_variant dsv4_hybrid:
// experimental_attention_variant/deepseek_v4_hybrid_attention.py DSv4HybridSelfAttention,
// core attention csa.py CompressedSparseAttention; built by
// experimental_attention_variant_module_specs.py get_dsv4_hybrid_module_spec_for_backend).
// Megatron-Bridge deepseek_v4_bridge.py builds DeepSeek-V4 with it. TP must be 1
// (rules/tensor_parallel.cpp), so nothing here is split over TP.
//   parameters: input norm; linear_q_down_proj [q_lora x h] ("duplicated"), q_layernorm
//     [q_lora], linear_q_up_proj [heads d x q_lora], linear_kv_proj [d x h] (one KV head of
//     d = v_head_dim), kv_layernorm [d]; linear_o_group_proj, a plain parameter
//     [o_groups o_lora x heads d / o_groups]; linear_proj [h x o_groups o_lora]; attn_sink
//     [heads] fp32. Layers whose ratio is above 1 add a Compressor (csa.py Compressor:
//     linear_wkv and linear_wgate [coff d x h] with coff 2 at ratio 4 (overlapping windows)
//     else 1, ape [ratio x coff d] fp32, an RMSNorm [d]); ratio 4 adds a CSAIndexer
//     (linear_wq_b [H_idx D_idx x q_lora], linear_weights_proj [H_idx x h] and its own
//     Compressor with head dim D_idx at ratio 4). Dense bucket, all replicated.
//   saved (the fused kernels' path, apply_dsa_kernel_fusion): the input norm; q_down output
//     and its norm (q_up's GEMM input, which the indexer reads detached); the q up-projection
//     output (_q_rms_norm's input) and the RMS-normed, RoPE'd query [heads d]; the kv
//     projection output and the normed, RoPE'd key [d] (mla_up_proj's checkpoint frees the
//     up-projected query and key); the attention output O [heads d] with its fp32 log-sum-exp;
//     the int32 indices of the keys each query attends (window + compressed picks) and the
//     compressed keys; the inverse-RoPE output (fused_mla_rope_out_of_place: private storage,
//     the grouped projection's einsum input); the grouped projection's output (linear_proj's
//     input, attn_proj). Compressors keep their kv and their fp32 gate scores (ape added;
//     csa_utils/fused_compressor.py save_for_backward(kv, score, ape)); the indexer its
//     query [H_idx D_idx] and head weights.
//     The PyTorch fallback (--dsa-kernel-backend none) keeps instead of O the fp32 query, every
//     attended key gathered per query and the fp32 scores and weights.
//   FLOPs: the projections, the compressors and indexer, attention over window + picked keys.
#include <algorithm>

#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) {
  return dsv4_attention(c.model) && layer_kind_has_attention(c.kind);
}

// Compressor(x): linear_wkv, linear_wgate, ape, norm (csa.py Compressor.__init__).
void compressor_params(std::int64_t h, std::int64_t head_dim, int ratio, ParamSink& sink) {
  const std::int64_t coff = ratio == 4 ? 2 : 1;
  const ModuleKind kind = ModuleKind::self_attention;
  sink.linear(kind, coff * head_dim * h, 0);
  sink.linear(kind, coff * head_dim * h, 0);
  sink.tensor(kind, ratio * coff * head_dim);
  sink.tensor(kind, head_dim);  // an RMSNorm whatever the model's normalization
}

void params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const std::int64_t h = m.hidden_size;
  const std::int64_t heads = m.num_attention_heads;
  const std::int64_t d = m.v_head_dim;
  const std::int64_t q_lora = m.q_lora_rank;
  const std::int64_t o_width = std::int64_t{m.o_groups} * m.o_lora_rank;
  const ModuleKind kind = ModuleKind::self_attention;
  sink.norm(ModuleKind::input_layernorm, h);
  sink.linear(kind, h * q_lora, 0);
  if (m.qk_layernorm) sink.norm(kind, q_lora);
  sink.linear(kind, q_lora * heads * d, 0);
  sink.linear(kind, h * d, 0);
  if (m.qk_layernorm) sink.norm(kind, d);
  // A plain parameter the forward's einsum reads, not a Transformer Engine linear.
  sink.tensor(kind, o_width * heads * d / std::max(1, m.o_groups));
  sink.linear(kind, o_width * h, m.add_bias_linear ? h : 0);
  sink.tensor(kind, heads);  // attn_sink
  const int ratio = layer_kind_compress_ratio(c.kind);
  if (ratio > 1) compressor_params(h, d, ratio, sink);
  if (ratio == 4) {
    const std::int64_t idx_heads = m.dsa_indexer_n_heads;
    const std::int64_t idx_dim = m.dsa_indexer_head_dim;
    sink.linear(kind, q_lora * idx_heads * idx_dim, 0);
    sink.linear(kind, h * idx_heads, 0);
    compressor_params(h, idx_dim, 4, sink);
  }
}

// Keys each query attends: the sliding window, and at ratio 4 the indexer's top-k of the
// compressed keys, at ratio 128 every compressed key (csa.py get_window_topk_idxs,
// get_compress_topk_idxs).
double attended_keys(const ModuleContext& c, double seq) {
  const ModelConfig& m = c.model;
  const int ratio = layer_kind_compress_ratio(c.kind);
  double keys = std::min<double>(m.csa_window_size, seq);
  if (ratio == 4) keys += std::min<double>(m.dsa_indexer_topk, seq / 4);
  if (ratio == 128) keys += seq / 128;
  return keys;
}

void projections_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind attn = ModuleKind::self_attention;
  const double n = s.tokens;
  const double heads = m.num_attention_heads;
  const double d = m.v_head_dim;
  const RecomputeModules up_proj = {RecomputeModule::mla_up_proj};
  const OffloadModules qkv_linear = {OffloadModule::qkv_linear};
  const OffloadModules core_attn = {OffloadModule::core_attn};
  sink.add("q_down output", attn, n * m.q_lora_rank, s.act, {}, qkv_linear);
  sink.add("q norm output (q_up and indexer input)", attn, n * m.q_lora_rank, gemm_input_bytes(c),
           {}, qkv_linear);
  sink.add("kv_proj output", attn, n * d, s.act, {}, qkv_linear);
  sink.add("q up-projection output (q RMS norm input)", attn, n * heads * d, s.act, up_proj);
  // mla_up_proj's CheckpointWithoutOutput keeps its inputs, the q norm output above and the
  // input norm's output (linear_kv_proj's input), both saved already.
  sink.add("query and key (normed, RoPE)", attn, n * (heads + 1) * d, s.act, up_proj, core_attn);
}

void compressor_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind attn = ModuleKind::self_attention;
  const int ratio = layer_kind_compress_ratio(c.kind);
  if (ratio <= 1) return;
  const double coff = ratio == 4 ? 2 : 1;
  const double d = m.v_head_dim;
  sink.add("compressor kv and fp32 gate scores", attn, s.tokens * coff * d, s.act + 4);
  sink.add("compressed keys", attn, s.tokens / ratio * d, s.act);
  if (ratio != 4) return;
  const double idx = static_cast<double>(m.dsa_indexer_n_heads) * m.dsa_indexer_head_dim;
  sink.add("indexer query and head weights", attn, s.tokens * (idx + m.dsa_indexer_n_heads), s.act);
  sink.add("indexer compressor kv and fp32 gate scores", attn,
           s.tokens * 2 * m.dsa_indexer_head_dim, s.act + 4);
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind attn = ModuleKind::self_attention;
  const double n = s.tokens;
  const double heads = m.num_attention_heads;
  const double d = m.v_head_dim;
  const OffloadModules core_attn = {OffloadModule::core_attn};
  input_norm_saved(c, s, sink);
  projections_saved(c, s, sink);
  compressor_saved(c, s, sink);
  if (c.config.training.dsa_kernel_backend == DsaKernelBackend::none) {
    // csa.py unfused_compressed_sparse_attn: the fp32 query, every attended key gathered per
    // query in fp32, the exponentiated scores and the softmax weights [heads x keys] in fp32.
    const double keys = attended_keys(c, s.seq);
    sink.add("fallback: fp32 query, gathered keys, exp scores and weights", attn, n,
             4 * (heads * d + keys * d + 2 * heads * keys), {}, core_attn);
  } else {
    sink.add("attention output and fp32 log-sum-exp", attn, n * heads, d * s.act + 4, {},
             core_attn);
  }
  sink.add("attended key indices (int32)", attn, n * attended_keys(c, s.seq), 4, {}, core_attn);
  sink.add("inverse-RoPE output (grouped projection input)", attn, n * heads * d, s.act);
  sink.add("grouped projection output (linear_proj input)", attn,
           n * static_cast<double>(m.o_groups) * m.o_lora_rank, gemm_input_bytes(c), {},
           {OffloadModule::attn_proj});
  sink.forward_transient(s.act * n * heads * d);
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  const double h = m.hidden_size;
  const double heads = m.num_attention_heads;
  const double d = m.v_head_dim;
  const double q_lora = m.q_lora_rank;
  const double o_width = static_cast<double>(m.o_groups) * m.o_lora_rank;
  const int ratio = layer_kind_compress_ratio(c.kind);
  double proj = h * q_lora + q_lora * heads * d + h * d + heads * d * m.o_lora_rank + o_width * h;
  if (ratio > 1) proj += 2 * h * (ratio == 4 ? 2 : 1) * d;
  if (ratio == 4) {
    const double idx = static_cast<double>(m.dsa_indexer_n_heads) * m.dsa_indexer_head_dim;
    proj += q_lora * idx + h * m.dsa_indexer_n_heads + 2 * h * 2 * m.dsa_indexer_head_dim;
  }
  f.attention_projections = 2 * proj;
  f.mla_up_projections = 2 * q_lora * heads * d;
  // Scores and values over the attended keys (one KV head of width d).
  f.attention_core = 2 * 2 * heads * d * attended_keys(c, c.config.training.seq_length);
}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kDsv4AttentionSpec, "attention (DeepSeek-V4 hybrid)",
                          LayerBlock::attention);

}  // namespace megamem
