// Module spec: DeepSeek sparse attention with its input norm (--experimental-attention-variant
// dsa: megatron/core/models/gpt/experimental_attention_variant_module_specs.py
// get_dsa_module_spec_for_backend builds AbsorbedMLASelfAttention
// (experimental_attention_variant/absorbed_mla.py) around DSAttention and DSAIndexer (dsa.py);
// TE's fused attention never runs).
//   parameters: MLA's (mla_params), plus the indexer on every layer that computes its own
//     top-k: linear_wq_b [H_idx D_idx x q_lora], linear_wk [D_idx x h], k_norm (a LayerNorm
//     with bias), linear_weights_proj [H_idx x h], all parallel_mode "duplicated" (whole on
//     every TP rank). Dense bucket.
//   saved: the standalone input norm; the q/kv down-projections and norms; the q up-projection
//     output the absorb einsum keeps, the absorbed query [heads/TP x (kv_lora + rope)], the
//     single latent key head of the whole sequence (gathered over TP and CP) (mla_up_proj);
//     the latent attention output [heads/TP x kv_lora], its softmax statistics (cuDNN), the
//     int32 top-k indices and the contiguous copy of the V up-projection weight (core_attn,
//     which checkpoints the whole DSAttention); with the indexer loss its gradients, computed
//     in the forward (core_attn); the linear_proj input (attn_proj). With the PyTorch
//     reference kernels (the default) the dense fp32 scores instead (dsa.py
//     _unfused_absorbed_dsa_fn).
//   FLOPs: MLA's projections, the indexer's, and attention over the top-k keys.
#include <algorithm>

#include "module_spec.hpp"

namespace megamem {
namespace {

constexpr double kIndexerScoreChunkBytes = 1024.0 * 1024 * 1024;  // cuDNN: 1 GiB chunks

bool present(const ModuleContext& c) {
  return dsa_attention(c.model) && layer_kind_has_attention(c.kind);
}

void params(const ModuleContext& c, ParamSink& sink) {
  mla_params(c, sink);
  const ModelConfig& m = c.model;
  const std::int64_t h = m.hidden_size;
  const std::int64_t heads = m.dsa_indexer_n_heads;
  const std::int64_t dim = m.dsa_indexer_head_dim;
  const std::int64_t q_in = m.q_lora_rank > 0 ? m.q_lora_rank : h;  // DSAIndexer q_lora_rank
  // Layers that reuse another layer's top-k build no indexer (DSAttention.__init__): the
  // template carries the model's share of computing layers.
  const double computing = dsa_computing_layer_fraction(m);
  const auto share = [&](std::int64_t numel) {
    return static_cast<std::int64_t>(static_cast<double>(numel) * computing + 0.5);
  };
  const ModuleKind kind = ModuleKind::self_attention;
  sink.linear(kind, share(heads * dim * q_in), 0);
  sink.linear(kind, share(dim * h), 0);
  sink.tensor(kind, share(2 * dim));  // k_norm: LayerNorm weight and bias
  sink.linear(kind, share(heads * h), 0);
}

// The down-projections and their norms: q_down output (q norm input), q norm output (the
// q up-projection's GEMM input), kv_down output (kv norm input and the RoPE key slice).
void down_projections_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind attn = ModuleKind::self_attention;
  const OffloadModules qkv_linear = {OffloadModule::qkv_linear};
  if (m.q_lora_rank > 0) {
    sink.add("q_down output", attn, s.sp_tokens * m.q_lora_rank, s.act, {}, qkv_linear);
    if (m.qk_layernorm) {
      sink.add("q norm output", attn, s.sp_tokens * m.q_lora_rank, gemm_input_bytes(c), {},
               qkv_linear);
    }
  }
  sink.add("kv_down output", attn,
           s.sp_tokens * (static_cast<double>(m.kv_lora_rank) + m.qk_pos_emb_head_dim), s.act, {},
           qkv_linear);
}

// absorbed_mla.py qkv_up_proj_and_rope_apply: q = q_up(q_compressed) [heads/TP x (qk + rope)]
// stays saved by the absorb einsum with the k up-projection weight; the query is
// [heads/TP x (kv_lora + rope)]; the key is one [kv_lora + rope] head of every token of the
// sequence (gathered over TP, and over CP in DSAttention.forward, a new tensor mla_up_proj
// does not free).
void absorbed_qk_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind attn = ModuleKind::self_attention;
  const double heads = m.num_attention_heads / s.tp;
  const double latent = static_cast<double>(m.kv_lora_rank) + m.qk_pos_emb_head_dim;
  const double cp = c.config.parallel.context_parallel;
  const RecomputeModules up_proj = {RecomputeModule::mla_up_proj};
  const OffloadModules core_attn = {OffloadModule::core_attn};
  sink.add("q up-projection output (absorb einsum input)", attn,
           s.tokens * heads * (static_cast<double>(m.qk_head_dim) + m.qk_pos_emb_head_dim), s.act,
           up_proj, core_attn);
  sink.add("absorbed query", attn, s.tokens * heads * latent, s.act, up_proj, core_attn);
  sink.add("latent key (one head, whole sequence)", attn, s.batch * s.seq * cp * latent, s.act,
           cp > 1 ? RecomputeModules{} : up_proj, core_attn);
  if (sink.active_recompute().has(RecomputeModule::mla_up_proj)) {
    // CheckpointWithoutOutput keeps its inputs: the normed latent and the RoPE key slice.
    sink.add("kv latent and RoPE slice (mla_up_proj checkpoint inputs)", attn, s.tokens * latent,
             s.act);
  }
}

// The sparse attention with the fused kernels (cuDNN, TileLang): the latent output
// [heads/TP x kv_lora] (saved by the kernel and by the V up-projection einsum), cuDNN's fp32
// log-sum-exp, TileLang's per-head validity mask, the int32 top-k indices of every query row
// (duplicated on each TP rank) and the contiguous copy of the V up-projection weight
// DSAttention.forward makes; all inside core_attn's checkpoint.
void fused_attention_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind attn = ModuleKind::self_attention;
  const double heads = m.num_attention_heads / s.tp;
  const RecomputeModules core_attn = {RecomputeModule::core_attn};
  const OffloadModules offload = {OffloadModule::core_attn};
  const bool cudnn = c.config.training.dsa_kernel_backend == DsaKernelBackend::cudnn;
  sink.add("latent attention output", attn, s.tokens * heads * m.kv_lora_rank, s.act, core_attn,
           offload);
  if (cudnn) {
    sink.add("softmax log-sum-exp (fp32)", attn, s.tokens * heads, 4, core_attn, offload);
  } else {
    sink.add("valid-head mask", attn, s.tokens * heads, 1, core_attn, offload);
  }
  sink.add("top-k indices (int32)", attn, s.tokens * m.dsa_indexer_topk, 4, core_attn, offload);
  sink.add("V up-projection weight copy", attn,
           heads * static_cast<double>(m.v_head_dim) * m.kv_lora_rank, s.act, core_attn);
}

// dsa.py _unfused_absorbed_dsa_fn, the default --dsa-kernel-backend none: fp32 scores of every
// head against every key, then dsa_masking.masked_softmax: its exp and masked numerator (fp32)
// and three expanded boolean masks, and the bf16 probabilities the value matmul keeps, 13
// bytes per score, plus the fp32 copies of query and key.
void reference_attention_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind attn = ModuleKind::self_attention;
  const double heads = m.num_attention_heads / s.tp;
  const double keys = s.seq * c.config.parallel.context_parallel;
  const double scores = s.tokens * heads * keys;
  const double latent = static_cast<double>(m.kv_lora_rank) + m.qk_pos_emb_head_dim;
  const RecomputeModules core_attn = {RecomputeModule::core_attn};
  const OffloadModules offload = {OffloadModule::core_attn};
  sink.add("dense scores: softmax, masks and probabilities", attn, scores, 13, core_attn, offload);
  sink.add("query and key in fp32", attn, (s.tokens * heads + s.batch * keys) * latent, 4,
           core_attn, offload);
  sink.add("latent attention output", attn, s.tokens * heads * m.kv_lora_rank, s.act, core_attn,
           offload);
  // The fp32 scores and the softmax's temporaries; the indexer's [rows, H_idx, keys] fp32
  // einsum, its ReLU and weighting (fused_qk_topk_naive, under no_grad).
  sink.forward_transient(std::max(8 * scores, 12 * s.tokens * m.dsa_indexer_n_heads * keys));
}

// --dsa-indexer-loss-coeff > 0: the fused kernels compute the indexer's gradients in the
// forward and keep them (dsa_cudnn_kernels.py FusedIndexerSparseAttnFunc: grad of the index
// queries, keys and head weights), with k_norm's input, and under TP the gathered hidden and
// q latent rows (DSAIndexer.forward_before_topk). TileLang keeps the index q/k/w and the
// sparse KL loss's fp32 gradient and a second copy of the indices instead. Only layers that
// compute their own top-k; all inside core_attn.
void indexer_loss_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const TrainingConfig& t = c.config.training;
  if (t.dsa_indexer_loss_coeff <= 0) return;
  const double computing = dsa_computing_layer_fraction(m);
  const double rows = s.tokens * computing;
  const double keys = s.batch * s.seq * c.config.parallel.context_parallel * computing;
  const double q_in = m.q_lora_rank > 0 ? m.q_lora_rank : m.hidden_size;
  const double idx = static_cast<double>(m.dsa_indexer_n_heads) * m.dsa_indexer_head_dim;
  const RecomputeModules core_attn = {RecomputeModule::core_attn};
  const ModuleKind attn = ModuleKind::self_attention;
  sink.add("indexer query gradients or queries", attn, rows * idx, s.act, core_attn);
  sink.add("indexer key gradients or keys", attn, keys * m.dsa_indexer_head_dim, s.act, core_attn);
  sink.add("indexer head weights (fp32)", attn, rows * m.dsa_indexer_n_heads, 4, core_attn);
  sink.add("indexer k_norm input", attn, rows * m.dsa_indexer_head_dim, s.act, core_attn);
  if (t.dsa_kernel_backend == DsaKernelBackend::tilelang) {
    sink.add("sparse KL loss gradient (fp32) and index copy", attn, rows * m.dsa_indexer_topk, 8,
             core_attn);
  } else if (t.dsa_kernel_backend == DsaKernelBackend::none) {
    // FusedDSAIndexerLoss keeps its own int64 top-k indices.
    sink.add("indexer loss top-k indices (int64)", attn, rows * m.dsa_indexer_topk, 8, core_attn);
  }
  if (s.tp > 1) {
    sink.add("indexer inputs gathered over TP", attn, rows * (s.h + q_in), s.act, core_attn);
  }
  if (!t.dsa_indexer_use_sparse_loss && t.dsa_kernel_backend == DsaKernelBackend::cudnn) {
    // _compute_dense_indexer_loss_and_grads: index and attention scores [rows, keys] fp32 and
    // a clone of each.
    sink.forward_transient(16 * rows * keys / computing);
  }
}

// The fused kernels' temporaries: the indexer scores in chunks of at most 1 GiB (cuDNN, two
// alive when chunked; TileLang blocks of 8192 rows); cuDNN's sparse backward concatenates a
// zero row to q, out, dO, lse and the indices, gathers each again and allocates dq (heads
// padded to 64 on Hopper when fewer: FlashMLA).
void fused_transients(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const double keys = s.batch * s.seq * c.config.parallel.context_parallel;
  const double latent = static_cast<double>(m.kv_lora_rank) + m.qk_pos_emb_head_dim;
  const bool cudnn = c.config.training.dsa_kernel_backend == DsaKernelBackend::cudnn;
  const double scores = 4 * s.tokens * keys;
  if (cudnn) {
    sink.forward_transient(scores > kIndexerScoreChunkBytes ? 2 * kIndexerScoreChunkBytes : scores);
    double heads = m.num_attention_heads / s.tp;
    if (c.config.device.compute_capability == 90) heads = std::max(heads, 64.0);
    const double per_row =
        heads * (latent + 2.0 * m.kv_lora_rank) * s.act + 4 * heads + 4.0 * m.dsa_indexer_topk;
    sink.backward_transient(2 * s.tokens * per_row + 2 * s.act * heads * latent * s.tokens);
  } else {
    sink.forward_transient(4 * std::min(s.tokens, 8192.0) * keys);
  }
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind attn = ModuleKind::self_attention;
  const double heads = m.num_attention_heads / s.tp;
  input_norm_saved(c, s, sink);
  down_projections_saved(c, s, sink);
  absorbed_qk_saved(c, s, sink);
  if (c.config.training.dsa_kernel_backend == DsaKernelBackend::none) {
    reference_attention_saved(c, s, sink);
  } else {
    fused_attention_saved(c, s, sink);
    fused_transients(c, s, sink);
  }
  indexer_loss_saved(c, s, sink);
  sink.add("attention output (linear_proj input)", attn, s.tokens * heads * m.v_head_dim, s.act, {},
           {OffloadModule::attn_proj});
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  mla_flops(c, f);
  const double h = m.hidden_size;
  const double heads = m.num_attention_heads;
  const double seq = c.config.training.seq_length;
  const double q_in = m.q_lora_rank > 0 ? m.q_lora_rank : h;
  const double idx = static_cast<double>(m.dsa_indexer_n_heads) * m.dsa_indexer_head_dim;
  const double computing = dsa_computing_layer_fraction(m);
  f.attention_projections +=
      2.0 * computing * (q_in * idx + h * (m.dsa_indexer_head_dim + m.dsa_indexer_n_heads)) +
      2.0 * heads * m.kv_lora_rank * (m.qk_head_dim + m.v_head_dim);  // absorb einsums
  // Each query scores the keys before it with the indexer and attends to at most top-k of
  // them with the absorbed query (kv_lora + rope) and latent values (kv_lora).
  const double attended = std::min(static_cast<double>(m.dsa_indexer_topk), seq / 2.0);
  f.attention_core = 2.0 * heads * attended * (2.0 * m.kv_lora_rank + m.qk_pos_emb_head_dim) +
                     2.0 * computing * (seq / 2.0) * idx;
}

}  // namespace

// Declared in module_spec.hpp: shared with the MTP layers' DSA and the tests.
double dsa_computing_layer_fraction(const ModelConfig& m) {
  if (m.num_layers <= 0 || m.dsa_indexer_topk_freq <= 1) return 1.0;
  // dsa.py is_dsa_skip_topk_layer: layer_number (1-based) skips unless
  // max(layer_number - max(offset, 1), 0) % freq == 0.
  const int offset = std::max(m.dsa_indexer_skip_topk_offset, 1);
  int computing = 0;
  for (int layer = 1; layer <= m.num_layers; ++layer) {
    computing += std::max(layer - offset, 0) % m.dsa_indexer_topk_freq == 0 ? 1 : 0;
  }
  return static_cast<double>(computing) / m.num_layers;
}

MEGAMEM_LAYER_MODULE_SPEC(kDsaAttentionSpec, "attention (DSA)", LayerBlock::attention);

}  // namespace megamem
