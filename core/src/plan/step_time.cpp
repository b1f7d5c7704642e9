// Step-time model; see step_time.hpp and docs/planner.md.
//
// [1] Megatron FLOP accounting   [2] per-layer GEMMs and attention   [3] communication
// [4] per-rank parameters        [5] StepTimeModel::evaluate          [6] public entry points
#include "megamem/step_time.hpp"

#include <algorithm>
#include <cmath>

#include "megamem/estimate.hpp"
#include "megamem/units.hpp"
#include "memory/activations.hpp"
#include "memory/parameter_count.hpp"
#include "modules/sliding_window.hpp"
#include "plan/step_time_model.hpp"
#include "schedule/layer_placement.hpp"

namespace megamem {
namespace {

constexpr double kGB = kBytesPerGB;  // link and HBM bandwidths are decimal GB/s

// Decoder and MTP layers of each kind (training.py counts a GPT model's MTP layers as the last
// layer's kind; a hybrid model's MTP depth is its '/' part's layers).
std::array<double, kLayerKindCount> layer_counts(const NormalizedConfig& n) {
  std::array<double, kLayerKindCount> out{};
  for (const LayerKind kind : n.layer_kinds) out[static_cast<std::size_t>(kind)] += 1;
  for (const LayerKind kind : n.mtp_layer_kinds) {
    out[static_cast<std::size_t>(kind)] += n.config.model.mtp_num_layers;
  }
  return out;
}

double forward_flops_per_token(const NormalizedConfig& n, const ModuleFlops& f) {
  const std::array<double, kLayerKindCount> layers = layer_counts(n);
  const double mtp = n.config.model.mtp_num_layers;
  double out = mtp * f.mtp_extra + (1.0 + mtp) * f.logits;
  for (std::size_t k = 0; k < kLayerKindCount; ++k) {
    out += layers[k] * layer_forward_flops(f, static_cast<LayerKind>(k));
  }
  return out;
}

double saturation(double dim, double half) { return dim / (dim + half); }

}  // namespace

// [1] -----------------------------------------------------------------------------------------

double model_flops_per_step(const NormalizedConfig& normalized) {
  const double tokens = static_cast<double>(normalized.config.training.global_batch_size) *
                        normalized.config.training.seq_length;
  // forward + backward (dgrad, wgrad): 3x the forward GEMMs.
  return 3.0 * tokens * forward_flops_per_token(normalized, model_module_flops(normalized));
}

// [2] -----------------------------------------------------------------------------------------

double StepTimeModel::gemm_s(double m, double n, double k) const {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const double half = cfg_.gemm_half_efficiency_dim;
  const double efficiency = saturation(m, half) * saturation(n, half) * saturation(k, half);
  return 2.0 * m * n * k / (gemm_flops_ * efficiency);
}

// Ring all-gather or reduce-scatter of a `bytes` tensor over `group` GPUs.
double StepTimeModel::collective_s(double group, double bytes, double bandwidth) const {
  if (group <= 1 || bytes <= 0) return 0;
  return (group - 1.0) / group * bytes / bandwidth;
}

// One dispatch (or combine) over the EP group for `tokens` tokens of `token_bytes` each,
// sent to top-k experts: the NVLink and the NIC parts run side by side. NCCL's all-to-all
// sends every copy; DeepEP (flex) crosses to each remote node once per token and fans out
// over NVLink there.
double StepTimeModel::all_to_all_s(double tokens, double token_bytes, double topk,
                                   bool deepep) const {
  if (ep_ <= 1 || tokens <= 0) return 0;
  const double copies = tokens * token_bytes * topk;
  const double intra = copies * ep_intra_share_;
  double inter = copies * ep_inter_share_;
  if (deepep && ep_nodes_ > 1) {
    // Expected distinct remote nodes among top-k experts spread evenly over the EP nodes.
    const double remote = (ep_nodes_ - 1.0) * (1.0 - std::pow(1.0 - 1.0 / ep_nodes_, topk));
    inter = tokens * token_bytes * remote;
  }
  const double efficiency = deepep ? cfg_.deepep_efficiency : cfg_.all_to_all_efficiency;
  return std::max(intra / intra_bw_, inter / inter_bw_) / efficiency;
}

StepTimeModel::LayerShape StepTimeModel::layer_shape(double micro_batch) const {
  LayerShape l;
  l.tokens = micro_batch * n_->config.training.seq_length / cp_;    // N on this CP rank
  l.sp_tokens = n_->sequence_parallel ? l.tokens / tp_ : l.tokens;  // Nsp
  l.heads = n_->config.model.num_attention_heads / tp_;
  l.hidden_bytes = 2.0 * l.tokens * n_->config.model.hidden_size;  // one bf16 [N, h]
  return l;
}

// MLA: the down-projections run duplicated on every TP rank (on the SP shard).
StepTimeModel::AttentionGemms StepTimeModel::mla_gemms(const LayerShape& l) const {
  const ModelConfig& m = n_->config.model;
  const double h = m.hidden_size;
  const double qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
  const double down_tokens = n_->sequence_parallel ? l.sp_tokens : l.tokens;
  AttentionGemms a;
  double q = 0;
  if (m.q_lora_rank > 0) {
    q = gemm_s(down_tokens, m.q_lora_rank, h) + gemm_s(l.tokens, l.heads * qk, m.q_lora_rank);
    a.up_projections += gemm_s(l.tokens, l.heads * qk, m.q_lora_rank);
  } else {
    q = gemm_s(l.tokens, l.heads * qk, h);
  }
  const double kv_up = gemm_s(l.tokens, l.heads * (m.qk_head_dim + m.v_head_dim), m.kv_lora_rank);
  a.up_projections += kv_up;
  a.projections = q + gemm_s(down_tokens, m.kv_lora_rank + m.qk_pos_emb_head_dim, h) + kv_up +
                  gemm_s(l.tokens, h, l.heads * m.v_head_dim);
  // QK^T and softmax·V over the keys a query sees (sliding_window.cpp; s/2 causal).
  const double keys = mean_attended_keys(m, n_->config.training.seq_length);
  a.core_flops = 2.0 * l.tokens * keys * l.heads * (qk + m.v_head_dim);
  a.kv_bytes_per_token = 2.0 * l.heads * (qk + m.v_head_dim);
  // SP gathers the compressed latents instead of the hidden states.
  a.tp_gather_bytes = 2.0 * l.tokens * (m.q_lora_rank + m.kv_lora_rank + m.qk_pos_emb_head_dim);
  return a;
}

// GQA with the shape a layer of `kind` builds (sliding_window.hpp attention_shape).
StepTimeModel::AttentionGemms StepTimeModel::attention_gemms(LayerKind kind,
                                                             const LayerShape& l) const {
  const ModelConfig& m = n_->config.model;
  if (m.multi_latent_attention) return mla_gemms(l);
  const AttentionShape shape = attention_shape(m, kind);
  const double h = m.hidden_size;
  const double dh = shape.kv_channels;
  const double dv = shape.v_channels;  // V's head dimension (MiMo-V2-Flash: 128 beside 192)
  const double heads = shape.heads / tp_;
  const double groups = std::max(1.0, shape.query_groups / tp_);  // replicated when g < TP
  const double q = heads * dh;
  const double gate = heads * (static_cast<double>(shape.gate_rows) / shape.heads);
  AttentionGemms a;
  a.projections =
      gemm_s(l.tokens, q + groups * (dh + dv) + gate, h) + gemm_s(l.tokens, h, heads * dv);
  // QK^T and softmax·V over the keys a query sees: s/2 causal, fewer in windowed layers
  // (sliding_window.cpp).
  const double keys = attended_keys(m, kind, n_->config.training.seq_length);
  a.core_flops = 2.0 * l.tokens * keys * heads * (dh + dv);
  a.kv_bytes_per_token = 2.0 * groups * (dh + dv);
  a.tp_gather_bytes = l.hidden_bytes;  // all-gathered input (SP)
  return a;
}

// Mamba-2 (mamba_mixer.py): in_proj and out_proj GEMMs; the SSD scan's FLOPs as Megatron counts
// them (training.py mamba_layer_flops, 7 d_inner d_state per token) at attention efficiency.
StepTimeModel::AttentionGemms StepTimeModel::mamba_gemms(const LayerShape& l) const {
  const ModelConfig& m = n_->config.model;
  const double h = m.hidden_size;
  const double inner = static_cast<double>(m.mamba_num_heads) * m.mamba_head_dim;
  const double bc = 2.0 * m.mamba_num_groups * m.mamba_state_dim;
  AttentionGemms a;
  a.projections = gemm_s(l.tokens, (2.0 * inner + bc + m.mamba_num_heads) / tp_, h) +
                  gemm_s(l.tokens, h, inner / tp_);
  a.core_flops = 7.0 * l.tokens * inner / tp_ * m.mamba_state_dim;
  a.tp_gather_bytes = l.hidden_bytes;
  return a;
}

// Gated DeltaNet (gated_delta_net/common.py): in_proj and out_proj GEMMs; the conv1d and the
// chunked delta rule as training.py gdn_layer_flops counts them, at attention efficiency.
StepTimeModel::AttentionGemms StepTimeModel::gdn_gemms(const LayerShape& l) const {
  const ModelConfig& m = n_->config.model;
  const double h = m.hidden_size;
  const double qk = static_cast<double>(m.linear_num_key_heads) * m.linear_key_head_dim;
  const double v = static_cast<double>(m.linear_num_value_heads) * m.linear_value_head_dim;
  const double in_proj = 2.0 * qk + 2.0 * v + 2.0 * m.linear_num_value_heads;
  AttentionGemms a;
  a.projections = gemm_s(l.tokens, in_proj / tp_, h) + gemm_s(l.tokens, h, v / tp_);
  a.core_flops =
      2.0 * l.tokens / tp_ *
      (m.linear_conv_kernel_dim * (2.0 * qk + v) +
       4.0 * m.linear_num_value_heads * m.linear_value_head_dim * m.linear_value_head_dim);
  a.tp_gather_bytes = l.hidden_bytes;
  return a;
}

// Kimi Delta Attention (Megatron-Bridge kimi_k3_layers.py _forward_kda): q/k/v/g projections,
// the low-rank forget gate, beta and o_proj as GEMMs; the short convolutions and the chunked
// delta rule as flop_utils.py's Kimi K3 branch counts them, at attention efficiency.
StepTimeModel::AttentionGemms StepTimeModel::kda_gemms(const LayerShape& l) const {
  const ModelConfig& m = n_->config.model;
  const double h = m.hidden_size;
  const double d = m.kda_head_dim;
  const double heads = m.kda_num_heads;
  const double p = heads * d;
  AttentionGemms a;
  a.projections = gemm_s(l.tokens, (4.0 * p + heads) / tp_, h) + gemm_s(l.tokens, d, h) +
                  gemm_s(l.tokens, p / tp_, d) + gemm_s(l.tokens, h, p / tp_);
  a.core_flops = 2.0 * l.tokens / tp_ * (3.0 * m.kda_conv_kernel * p + 4.0 * heads * d * d);
  a.tp_gather_bytes = l.hidden_bytes;
  return a;
}

// The mixer block of a layer: attention, Mamba, Gated DeltaNet or Kimi Delta Attention, both Mamba
// and attention (Falcon-H1's parallel layer, falconh1_layer.py: one gathered input feeds both), or
// none (a hybrid MLP / MoE layer).
StepTimeModel::AttentionGemms StepTimeModel::mixer_gemms(LayerKind kind,
                                                         const LayerShape& l) const {
  if (kind == LayerKind::parallel_hybrid) {
    AttentionGemms both = attention_gemms(kind, l);
    const AttentionGemms mamba = mamba_gemms(l);
    both.projections += mamba.projections;
    both.core_flops += mamba.core_flops;
    both.tp_mixers = 2;  // each branch gathers its own scaled input and reduce-scatters
    return both;
  }
  if (kind == LayerKind::mamba) return mamba_gemms(l);
  if (layer_kind_is_gdn(kind)) {
    return n_->config.model.kda_layer_pattern.empty() ? gdn_gemms(l) : kda_gemms(l);
  }
  if (layer_kind_has_attention(kind)) return attention_gemms(kind, l);
  return AttentionGemms{};
}

StepTimeModel::MlpGemms StepTimeModel::mlp_gemms(bool moe, const LayerShape& l) const {
  const ModelConfig& m = n_->config.model;
  const double h = m.hidden_size;
  const double gated = m.activation == Activation::swiglu ? 2.0 : 1.0;
  MlpGemms g;
  if (!moe) {
    const double f = m.ffn_hidden_size / tp_;
    g.mlp = gemm_s(l.tokens, gated * f, h) + gemm_s(l.tokens, h, f);
    g.act_bytes = 2.0 * l.tokens * f * (gated + 1.0);  // read fc1 output, write activation
    return g;
  }
  const double experts = m.num_experts;
  const double local_experts = experts / ep_;
  const double imbalance = std::max(1.0, n_->config.training.moe_imbalance_factor);
  // Token slots this GPU's experts process: its dispatched top-k copies, gathered over ETP.
  const double slots = l.sp_tokens * m.moe_router_topk * etp_ * imbalance;
  const double per_expert = slots / local_experts;
  const double f = m.moe_ffn_hidden_size / etp_;
  const double in = m.moe_latent_size > 0 ? m.moe_latent_size : h;
  g.routed = local_experts * (gemm_s(per_expert, gated * f, in) + gemm_s(per_expert, in, f));
  if (m.moe_latent_size > 0) g.routed += 2.0 * gemm_s(l.sp_tokens, m.moe_latent_size, h);
  g.router = gemm_s(l.sp_tokens, experts, h);
  if (m.moe_shared_expert_intermediate_size > 0) {
    const double fs = m.moe_shared_expert_intermediate_size / tp_;
    g.shared = gemm_s(l.tokens, gated * fs, h) + gemm_s(l.tokens, h, fs);
    g.act_bytes = 2.0 * l.tokens * fs * (gated + 1.0);
  }
  g.moe_act_bytes = 2.0 * slots * f * (gated + 1.0);  // read fc1 output, write activation
  g.act_bytes += g.moe_act_bytes;
  g.permute_bytes = 2.0 * 2.0 * 2.0 * slots * h;  // permute and unpermute, read + write
  return g;
}

// TP per layer: Megatron's SP all-gather before each column-parallel block and
// reduce-scatter after each row-parallel one; backward mirrors them and re-gathers the
// column-parallel inputs for the weight gradients. Without SP, one all-reduce per block.
// Returns the MLP block's forward share (re-run by mlp/moe/shared_experts recompute).
double StepTimeModel::tp_times(bool mixer_block, bool mlp_block, const LayerShape& l,
                               const AttentionGemms& a, LayerCost& cost) const {
  if (tp_ <= 1) return 0;
  const bool sp = n_->sequence_parallel;
  const double gather = collective_s(tp_, a.tp_gather_bytes, tp_bw_);
  const double scatter = collective_s(tp_, l.hidden_bytes, tp_bw_);
  double attn_fwd = 0, attn_bwd = 0, mlp_fwd = 0, mlp_bwd = 0;
  if (sp) {
    const double exposed = cfg_.tp_exposed_fraction;
    // MLA's down-projections stay local.
    const bool regather = !n_->config.model.multi_latent_attention;
    if (mixer_block) {
      attn_fwd = a.tp_mixers * exposed * (gather + scatter);
      attn_bwd = a.tp_mixers * exposed * (gather + scatter + (regather ? gather : 0.0));
    }
    if (mlp_block) {
      mlp_fwd = exposed * 2.0 * scatter;
      mlp_bwd = exposed * 3.0 * scatter;
    }
  } else {
    const double exposed = cfg_.tp_all_reduce_exposed_fraction;
    if (mixer_block) attn_fwd = attn_bwd = a.tp_mixers * exposed * 2.0 * scatter;
    if (mlp_block) mlp_fwd = mlp_bwd = exposed * 2.0 * scatter;
    // --distribute-saved-activations (no SP): the stashed input is re-gathered at recompute.
    cost.stash_gather = scatter;
  }
  cost.tp_forward = attn_fwd + mlp_fwd;
  cost.tp_backward = attn_bwd + mlp_bwd;
  return mlp_fwd;
}

// EP: dispatch and combine forward, their gradients backward.
void StepTimeModel::ep_times(const LayerShape& l, LayerCost& cost) const {
  const TrainingConfig& t = n_->config.training;
  const double h = n_->config.model.hidden_size;
  const double token_bytes = 2.0 * h * std::max(1.0, t.moe_imbalance_factor);
  const double topk = n_->config.model.moe_router_topk;
  double one_way = 0;
  if (t.moe_token_dispatcher == TokenDispatcher::allgather) {
    // MoEAllGatherTokenDispatcher: gather every token over the TP x EP group, scatter back.
    const double group = etp_ * ep_;
    one_way = collective_s(group, group * 2.0 * l.sp_tokens * h, gather_bw_);
  } else {
    const bool deepep = t.moe_token_dispatcher == TokenDispatcher::flex;
    one_way = all_to_all_s(l.sp_tokens, token_bytes, topk, deepep);
    // ETP > 1: the received tokens are all-gathered over the expert-TP group.
    if (etp_ > 1) one_way += collective_s(etp_, l.sp_tokens * token_bytes * topk * etp_, tp_bw_);
  }
  const double exposed = t.overlap_moe_expert_parallel_comm ? cfg_.ep_overlapped_exposed_fraction
                                                            : cfg_.ep_exposed_fraction;
  cost.ep_forward = exposed * 2.0 * one_way;
  cost.ep_backward = exposed * 2.0 * one_way;
}

// A GPT layer has both blocks; a hybrid layer one (its mixer, or its MLP / MoE).
StepTimeModel::LayerCost StepTimeModel::layer_cost(LayerKind kind, double micro_batch) const {
  const LayerShape l = layer_shape(micro_batch);
  const double s = n_->config.training.seq_length;
  const double h = n_->config.model.hidden_size;
  const bool moe = layer_kind_is_moe(kind);
  const bool mlp_block = moe || layer_kind_has_dense_mlp(kind);
  const bool mixer_block =
      kind == LayerKind::mamba || layer_kind_is_gdn(kind) || layer_kind_has_attention(kind);
  const double blocks = (mlp_block ? 1.0 : 0.0) + (mixer_block ? 1.0 : 0.0);
  const AttentionGemms a = mixer_gemms(kind, l);
  const MlpGemms g = mlp_block ? mlp_gemms(moe, l) : MlpGemms{};
  LayerCost cost;
  const double attention_efficiency =
      cfg_.attention_efficiency * saturation(s / cp_, cfg_.gemm_half_efficiency_dim);
  cost.attention_forward = a.core_flops / (peak_flops_ * attention_efficiency);
  cost.attention_backward = cost.attention_forward * cfg_.attention_backward_factor;
  // Element-wise kernels stream through HBM; without SP they run on all N tokens.
  const double hbm = cfg_.hbm_bandwidth_gb_per_s * kGB * cfg_.elementwise_efficiency;
  cost.elementwise_forward =
      (cfg_.elementwise_passes_per_layer * blocks / 2.0 * 2.0 * l.sp_tokens * h + g.act_bytes +
       g.permute_bytes) /
      hbm;
  const double forward_gemms = a.projections + g.mlp + g.routed + g.shared + g.router;
  cost.forward = forward_gemms + cost.attention_forward + cost.elementwise_forward;
  cost.backward = 2.0 * (forward_gemms + cost.elementwise_forward) + cost.attention_backward;
  cost.mla_up_forward = a.up_projections;
  cost.moe_act_forward = g.moe_act_bytes / hbm;
  cost.layernorm_forward = blocks * 2.0 * 2.0 * l.sp_tokens * h / hbm;  // a norm per block
  const double tp_mlp_fwd =
      tp_times(mixer_block, layer_kind_has_dense_mlp(kind) || g.shared > 0, l, a, cost);
  // CP: the ring passes K/V (forward) and K/V with their gradients (backward) around CP - 1
  // steps, each overlapping one step of attention.
  if (cp_ > 1 && layer_kind_has_attention(kind)) {
    const double ring = (cp_ - 1.0) * l.tokens * a.kv_bytes_per_token / cp_bw_;
    const double hidden = (cp_ - 1.0) / cp_;
    cost.cp_forward = std::max(0.0, ring - hidden * cost.attention_forward);
    cost.cp_backward = std::max(0.0, 2.0 * ring - hidden * cost.attention_backward);
  }
  if (moe) ep_times(l, cost);
  cost.mlp_forward = layer_kind_has_dense_mlp(kind) ? g.mlp + tp_mlp_fwd + g.act_bytes / hbm : 0.0;
  cost.shared_forward = g.shared + (g.shared > 0 ? tp_mlp_fwd : 0.0);
  cost.moe_forward = moe ? g.routed + g.shared + g.router + tp_mlp_fwd + cost.ep_forward +
                               (g.act_bytes + g.permute_bytes) / hbm
                         : 0.0;
  cost.full_recompute = cost.forward + cost.tp_forward + cost.cp_forward + cost.ep_forward;
  return cost;
}

// [3] [4] -------------------------------------------------------------------------------------

StepTimeModel::StepTimeModel(const NormalizedConfig& normalized,
                             const std::vector<StagePlacement>& stages,
                             const StepTimeConfig& config)
    : n_(&normalized), cfg_(config) {
  const Config& c = normalized.config;
  const ParallelConfig& par = c.parallel;
  pp_ = par.pipeline_parallel;
  vpp_ = std::max(1, static_cast<int>(stages.size()) / std::max(1, pp_));
  tp_ = par.tensor_parallel;
  cp_ = par.context_parallel;
  dp_ = static_cast<double>(normalized.data_parallel);
  ep_ = par.expert_parallel;
  etp_ = par.expert_tensor_parallel;
  edp_ = static_cast<double>(normalized.expert_data_parallel);
  set_bandwidths();
  peak_flops_ = c.device.peak_bf16_tflops * 1e12;
  gemm_flops_ = peak_flops_ * cfg_.gemm_efficiency *
                (c.training.fp8_recipe != Fp8Recipe::none ? cfg_.fp8_gemm_speedup : 1.0);
  count_chunks(stages);
  count_parameters(stages);
  module_flops_ = model_module_flops(normalized);
  model_layers_ = layer_counts(normalized);
  model_flops_per_sequence_ =
      3.0 * c.training.seq_length * forward_flops_per_token(normalized, module_flops_);
  // Gradient and parameter bytes on the wire (fp32 main grads unless reduced in 16 bits).
  const TrainingConfig& train = c.training;
  grad_bytes_ = train.params_dtype == DType::fp32                                        ? 4.0
                : (c.optimizer.grad_reduce_in_bf16 || train.params_dtype == DType::fp16) ? 2.0
                                                                                         : 4.0;
  param_bytes_ = train.params_dtype == DType::fp32 ? 4.0 : 2.0;
}

// Megatron's rank order tp-cp-ep-dp-pp: a group of `size` ranks `stride` apart stays in one
// node when size x stride <= GPUs per node. Across nodes, a ring collective crosses each node
// once per channel, and NCCL spreads its channels over the NICs of the group's members in
// that node: k members per node get k NICs. Point-to-point rings (CP, PP) send through one
// NIC.
void StepTimeModel::set_bandwidths() {
  const DeviceConfig& device = n_->config.device;
  const double node = device.gpus_per_node;
  intra_bw_ = device.intra_node_bandwidth_gb_per_s * kGB * cfg_.intra_node_efficiency;
  inter_bw_ = device.inter_node_bandwidth_gb_per_s * kGB * cfg_.inter_node_efficiency;
  auto bandwidth = [&](double size, double stride, bool collective) {
    if (size * stride <= node) return intra_bw_;
    const double members = collective ? std::clamp(std::floor(node / stride), 1.0, size) : 1.0;
    return inter_bw_ * members;
  };
  tp_bw_ = bandwidth(tp_, 1, true);
  cp_bw_ = bandwidth(cp_, tp_, false);
  dp_bw_ = bandwidth(dp_ * cp_, tp_, true);  // the distributed optimizer shards over DP x CP
  edp_bw_ = bandwidth(edp_, etp_ * ep_, true);
  pp_bw_ = bandwidth(pp_, tp_ * cp_ * dp_, false);
  gather_bw_ = bandwidth(etp_ * ep_, 1, true);  // the allgather dispatcher's TP x EP group
  if (ep_ > 1) {
    const double local = std::clamp(std::floor(node / etp_), 1.0, ep_);  // EP peers per node
    ep_intra_share_ = (local - 1.0) / ep_;
    ep_inter_share_ = (ep_ - local) / ep_;
    ep_nodes_ = ep_ / local;
  }
}

// Layers of each kind per chunk and per rank (an MTP depth's are NormalizedConfig::
// mtp_layer_kinds).
void StepTimeModel::count_chunks(const std::vector<StagePlacement>& stages) {
  const NormalizedConfig& n = *n_;
  kind_count_.assign(static_cast<std::size_t>(pp_), {});
  for (const StagePlacement& stage : stages) {
    Chunk chunk;
    chunk.pp_rank = stage.pp_rank;
    for (int i = 0; i < stage.num_layers; ++i) {
      const auto layer = static_cast<std::size_t>(stage.first_layer + i);
      chunk.layers[static_cast<std::size_t>(n.layer_kinds[layer])] += 1;
      chunk.order.push_back(n.layer_kinds[layer]);
    }
    chunk.mtp_layers = stage.num_mtp_layers;
    chunk.embedding = stage.has_embedding;
    chunk.loss = stage.has_loss;
    chunks_.push_back(chunk);
    auto& count = kind_count_[static_cast<std::size_t>(stage.pp_rank)];
    for (std::size_t k = 0; k < kLayerKindCount; ++k) count[k] += chunk.layers[k];
    for (const LayerKind kind : n.mtp_layer_kinds)
      count[static_cast<std::size_t>(kind)] += chunk.mtp_layers;
  }
}

// Parameters per GPU of each rank, from the module specs' tensors (for DP traffic and the
// optimizer step): dense ones are sharded over DP x CP, routed experts over expert-DP.
void StepTimeModel::count_parameters(const std::vector<StagePlacement>& stages) {
  dense_params_.assign(static_cast<std::size_t>(pp_), 0.0);
  expert_params_.assign(static_cast<std::size_t>(pp_), 0.0);
  const LayerTemplates templates = layer_templates(*n_);
  StageParams params;
  for (const StagePlacement& stage : stages) {
    stage_params(*n_, stage, templates, params);
    const auto r = static_cast<std::size_t>(stage.pp_rank);
    for (const TensorBlock& block : params.blocks) {
      for (std::size_t i = 0; i < block.count; ++i) {
        const ParamTensor& tensor = block.tensors[i];
        const auto elements = static_cast<double>(tensor.elements() * block.repeat);
        (tensor.expert ? expert_params_[r] : dense_params_[r]) += elements;
      }
    }
  }
}

// [5] -----------------------------------------------------------------------------------------

// Adds `count` layers of one kind to a rank's time per micro-batch.
void StepTimeModel::RankTime::add_layers(const LayerCost& l, double count) {
  if (count <= 0) return;
  compute += count * (l.forward + l.backward);
  forward += count * l.forward;
  backward += count * l.backward;
  tp += count * (l.tp_forward + l.tp_backward);
  cp += count * (l.cp_forward + l.cp_backward);
  ep += count * (l.ep_forward + l.ep_backward);
}

// One chunk's time per micro-batch on its rank: its layers, MTP, loss, embedding and PP sends.
void StepTimeModel::add_chunk(const Chunk& chunk, double micro_batch, RankTime& r) const {
  const ModelConfig& m = n_->config.model;
  const double tokens = micro_batch * n_->config.training.seq_length / cp_;
  const double hidden_bytes = 2.0 * tokens * m.hidden_size;
  const double tp_exposed =
      n_->sequence_parallel ? cfg_.tp_exposed_fraction : cfg_.tp_all_reduce_exposed_fraction;
  const double vocab = static_cast<double>(n_->padded_vocab_size) / tp_;
  const double logits = gemm_s(tokens, vocab, m.hidden_size);
  // Vocabulary-parallel cross entropy: fp32 upcast, max, exp, sum and the gradient, about
  // 24 bytes per logit through HBM over forward and backward.
  const double cross_entropy =
      24.0 * tokens * vocab / (cfg_.hbm_bandwidth_gb_per_s * kGB * cfg_.elementwise_efficiency);
  const double loss_forward = logits + cross_entropy / 2.0;
  const double loss_backward = 2.0 * logits + cross_entropy / 2.0;
  const double tp_one = collective_s(tp_, hidden_bytes, tp_bw_);
  for (std::size_t k = 0; k < kLayerKindCount; ++k) r.add_layers(cached_[k], chunk.layers[k]);
  // MTP: eh_proj, its inner layers (NormalizedConfig::mtp_layer_kinds) and its own logits.
  if (chunk.mtp_layers > 0) {
    for (const LayerKind kind : n_->mtp_layer_kinds)
      r.add_layers(cached_[static_cast<std::size_t>(kind)], chunk.mtp_layers);
    const double eh = gemm_s(tokens, m.hidden_size / tp_, 2.0 * m.hidden_size);
    r.compute += chunk.mtp_layers * (3.0 * eh + loss_forward + loss_backward);
    r.forward += chunk.mtp_layers * (eh + loss_forward);
    r.backward += chunk.mtp_layers * (2.0 * eh + loss_backward);
  }
  if (chunk.loss) {
    r.compute += loss_forward + loss_backward;
    r.forward += loss_forward;
    r.backward += loss_backward;
    r.tp += tp_exposed * 2.0 * tp_one;  // gather the final hidden states, scatter its grad
  }
  if (chunk.embedding) r.tp += tp_exposed * 2.0 * tp_one;
  if (pp_ > 1) {
    r.pp += cfg_.pp_exposed_fraction * 2.0 *
            (n_->sequence_parallel ? hidden_bytes / tp_ : hidden_bytes) / pp_bw_;
  }
}

// Data parallelism per rank: gradient reduce-scatter (all-reduce without the distributed
// optimizer) and parameter all-gather, less what one micro-batch's backward (forward)
// hides with --overlap-grad-reduce (--overlap-param-gather).
void StepTimeModel::data_parallel() const {
  const OptimizerConfig& opt = n_->config.optimizer;
  const double dense_group = dp_ * cp_;
  dp_exposed_.assign(base_.size(), 0.0);
  shard_.assign(base_.size(), 0.0);
  for (std::size_t i = 0; i < base_.size(); ++i) {
    const double dense_params = dense_params_[i];
    const double expert_params = expert_params_[i];
    double reduce = 0, gather = 0;
    if (opt.use_distributed_optimizer) {
      reduce = collective_s(dense_group, dense_params * grad_bytes_, dp_bw_) +
               collective_s(edp_, expert_params * grad_bytes_, edp_bw_);
      gather = collective_s(dense_group, dense_params * param_bytes_, dp_bw_) +
               collective_s(edp_, expert_params * param_bytes_, edp_bw_);
      shard_[i] = dense_params / dense_group + expert_params / edp_;
    } else {
      reduce = 2.0 * (collective_s(dense_group, dense_params * grad_bytes_, dp_bw_) +
                      collective_s(edp_, expert_params * grad_bytes_, edp_bw_));
      shard_[i] = dense_params + expert_params;
    }
    if (opt.overlap_grad_reduce) {
      reduce = std::max(0.0, reduce - cfg_.dp_overlap_fraction * base_[i].backward);
      if (cfg_.overlap_param_gather) {
        gather = std::max(0.0, gather - cfg_.dp_overlap_fraction * base_[i].forward);
      }
    }
    dp_exposed_[i] = reduce + gather;
  }
}

// The parts of a step that depend on the micro-batch size alone: layer costs, each rank's
// time per micro-batch without recompute and offload, and its exposed DP traffic.
void StepTimeModel::prepare(int micro_batch) const {
  if (cached_micro_batch_ == micro_batch) return;
  const double b = micro_batch;
  for (std::size_t k = 0; k < kLayerKindCount; ++k) {
    if (model_layers_[k] > 0) cached_[k] = layer_cost(static_cast<LayerKind>(k), b);
  }
  base_.assign(static_cast<std::size_t>(pp_), RankTime{});
  for (const Chunk& chunk : chunks_) {
    add_chunk(chunk, b, base_[static_cast<std::size_t>(chunk.pp_rank)]);
  }
  data_parallel();
  cached_micro_batch_ = micro_batch;
}

// The forward one layer re-runs under the variant's recompute setting.
double StepTimeModel::recompute_s(const LayerCost& l, LayerKind kind, const StepVariant& v) const {
  const bool is_moe = layer_kind_is_moe(kind);
  if (v.recompute == RecomputeGranularity::full) {
    return l.full_recompute + (v.distribute_saved_activations ? l.stash_gather : 0.0);
  }
  if (v.recompute != RecomputeGranularity::selective) return 0;
  const RecomputeModules r = v.recompute_modules;
  double t = 0;
  if (r.has(RecomputeModule::core_attn)) t += l.attention_forward + l.cp_forward;
  if (r.has(RecomputeModule::mlp)) t += l.mlp_forward;  // zero without a dense MLP
  if (r.has(RecomputeModule::moe) && is_moe) {
    t += l.moe_forward;
  } else {
    if (r.has(RecomputeModule::shared_experts) && is_moe) t += l.shared_forward;
    if (r.has(RecomputeModule::moe_act) && is_moe) t += l.moe_act_forward;
  }
  if (r.has(RecomputeModule::mla_up_proj)) t += l.mla_up_forward;
  if (r.has(RecomputeModule::layernorm)) t += l.layernorm_forward;
  return t;
}

// Full recompute with the block method re-runs the first recompute_num_layers decoder layers
// of each chunk and no MTP layer (transformer_block.py _checkpointed_forward,
// multi_token_prediction.py); every other setting prices each layer by recompute_s.
const StepTimeModel::KindCounts& StepTimeModel::recomputed_layers(const StepVariant& v,
                                                                  KindCounts& out) const {
  if (v.recompute != RecomputeGranularity::full || v.recompute_method != RecomputeMethod::block) {
    return kind_count_;
  }
  out.assign(kind_count_.size(), {});
  for (const Chunk& chunk : chunks_) {
    const std::size_t n = std::min<std::size_t>(
        static_cast<std::size_t>(std::max(0, v.recompute_num_layers)), chunk.order.size());
    for (std::size_t i = 0; i < n; ++i) {
      out[static_cast<std::size_t>(chunk.pp_rank)][static_cast<std::size_t>(chunk.order[i])] += 1;
    }
  }
  return out;
}

// Offloaded bytes per sample of a layer of `kind`: the planner measures dense and MoE layers;
// a hybrid model's other kinds offload nothing in this model (docs/memory-model.md).
double StepTimeModel::offload_bytes(LayerKind kind, const StepVariant& v) const {
  if (kind == LayerKind::dense) return v.offloaded_bytes_dense;
  if (kind == LayerKind::moe) return v.offloaded_bytes_moe;
  return 0.0;
}

// Host copies of offloaded activations hide behind the layer's own compute.
double StepTimeModel::offload_s(const LayerCost& l, double bytes_per_sample, double b) const {
  const double copy = bytes_per_sample * b / (cfg_.host_bandwidth_gb_per_s * kGB);
  if (copy <= 0) return 0.0;
  const double always = cfg_.offload_exposed_fraction * copy;
  return std::max(always, copy - l.forward) + std::max(always, copy - l.backward);
}

// The optimizer step per rank (Adam from HBM: fp32 master, two moments and the gradient
// read, three written, the 16-bit weight written: about 30 bytes per parameter of the
// shard; CPU Adam and the copies for the offloaded share); the slowest rank ends the step.
void StepTimeModel::optimizer_step(const StepVariant& v, StepTimeBreakdown& d) const {
  const double hbm = cfg_.hbm_bandwidth_gb_per_s * kGB;
  const double host_bw = cfg_.host_bandwidth_gb_per_s * kGB;
  const double f = std::clamp(v.optimizer_offload_fraction, 0.0, 1.0);
  d.dp_comm_s = d.optimizer_s = 0;
  for (std::size_t i = 0; i < base_.size(); ++i) {
    double step = shard_[i] * (1.0 - f) * 30.0 / hbm;
    if (f > 0) {
      step += shard_[i] * f / cfg_.cpu_optimizer_params_per_s +
              shard_[i] * f * (grad_bytes_ + param_bytes_) / host_bw;
    }
    if (dp_exposed_[i] + step > d.dp_comm_s + d.optimizer_s) {
      d.dp_comm_s = dp_exposed_[i];
      d.optimizer_s = step;
    }
  }
}

// Recomputed forwards, whole model, per token: the forward FLOPs they repeat (the module
// specs' FLOPs).
double StepTimeModel::recomputed_flops_per_token(const StepVariant& v) const {
  const ModuleFlops& mf = module_flops_;
  double full = 0, attention = 0, dense = 0, moe = 0;
  for (std::size_t k = 0; k < kLayerKindCount; ++k) {
    const auto kind = static_cast<LayerKind>(k);
    full += model_layers_[k] * layer_forward_flops(mf, kind);
    attention += layer_kind_has_attention(kind) ? model_layers_[k] : 0.0;
    dense += layer_kind_has_dense_mlp(kind) ? model_layers_[k] : 0.0;
    moe += layer_kind_is_moe(kind) ? model_layers_[k] : 0.0;
  }
  if (v.recompute == RecomputeGranularity::full) {
    if (v.recompute_method != RecomputeMethod::block) return full;
    // The block method's layers on every rank: each rank runs all micro-batches of its own
    // chunks, so the model-wide count is the sum over ranks.
    double block = 0;
    KindCounts block_counts;
    for (const auto& counts : recomputed_layers(v, block_counts)) {
      for (std::size_t k = 0; k < kLayerKindCount; ++k) {
        block += counts[k] * layer_forward_flops(mf, static_cast<LayerKind>(k));
      }
    }
    return block;
  }
  if (v.recompute != RecomputeGranularity::selective) return 0;
  const RecomputeModules r = v.recompute_modules;
  double per_token = 0;
  if (r.has(RecomputeModule::core_attn)) per_token += attention * mf.attention_core;
  if (r.has(RecomputeModule::mlp)) per_token += dense * mf.dense_mlp;
  if (r.has(RecomputeModule::moe)) {
    per_token += moe * (mf.moe_routed + mf.moe_shared);
  } else if (r.has(RecomputeModule::shared_experts)) {
    per_token += moe * mf.moe_shared;
  }
  if (r.has(RecomputeModule::mla_up_proj)) per_token += attention * mf.mla_up_projections;
  return per_token;
}

// Throughput as Megatron logs it.
void StepTimeModel::throughput(const StepVariant& v, StepTime& out) const {
  const TrainingConfig& train = n_->config.training;
  const double sequences = static_cast<double>(train.global_batch_size);
  const double gpus = static_cast<double>(n_->config.parallel.world_size);
  out.tokens_per_s = sequences * train.seq_length / out.step_time_s;
  out.tokens_per_s_per_gpu = out.tokens_per_s / gpus;
  out.model_flops_per_step = model_flops_per_sequence_ * sequences;
  out.hardware_flops_per_step =
      out.model_flops_per_step + recomputed_flops_per_token(v) * sequences * train.seq_length;
  out.model_tflops_per_gpu = out.model_flops_per_step / out.step_time_s / gpus / 1e12;
  out.hardware_tflops_per_gpu = out.hardware_flops_per_step / out.step_time_s / gpus / 1e12;
  out.mfu = out.model_tflops_per_gpu * 1e12 / peak_flops_;
}

StepTime StepTimeModel::evaluate(const StepVariant& v) const {
  prepare(v.micro_batch_size);
  const double b = v.micro_batch_size;
  std::array<double, kLayerKindCount> recompute{}, offload{};
  for (std::size_t k = 0; k < kLayerKindCount; ++k) {
    if (model_layers_[k] == 0) continue;
    const auto kind = static_cast<LayerKind>(k);
    recompute[k] = recompute_s(cached_[k], kind, v);
    offload[k] = offload_s(cached_[k], offload_bytes(kind, v), b);
  }
  KindCounts block_counts;
  const KindCounts& rerun = recomputed_layers(v, block_counts);
  auto per_rank = [&](std::size_t rank, const std::array<double, kLayerKindCount>& per_layer,
                      const std::vector<std::array<double, kLayerKindCount>>& counts) {
    double sum = 0;
    for (std::size_t k = 0; k < kLayerKindCount; ++k) sum += counts[rank][k] * per_layer[k];
    return sum;
  };

  // The slowest rank per micro-batch sets the pace of the pipeline.
  std::size_t bottleneck = 0;
  double micro = -1;
  for (std::size_t i = 0; i < base_.size(); ++i) {
    const double total =
        base_[i].total() + per_rank(i, recompute, rerun) + per_rank(i, offload, kind_count_);
    if (total > micro) {
      micro = total;
      bottleneck = i;
    }
  }
  const RankTime& slow = base_[bottleneck];
  const double m_count = static_cast<double>(v.num_microbatches);

  StepTime out;
  out.bottleneck_pp_rank = static_cast<int>(bottleneck);
  out.microbatch_time_s = micro;
  StepTimeBreakdown& d = out.breakdown;
  d.compute_s = m_count * slow.compute;
  d.recompute_s = m_count * per_rank(bottleneck, recompute, rerun);
  d.tp_comm_s = m_count * slow.tp;
  d.cp_comm_s = m_count * slow.cp;
  d.ep_comm_s = m_count * slow.ep;
  d.pp_comm_s = m_count * slow.pp;
  d.offload_s = m_count * per_rank(bottleneck, offload, kind_count_);
  d.pipeline_bubble_s = pp_ > 1 ? micro * (pp_ - 1.0) / vpp_ : 0.0;
  optimizer_step(v, d);
  out.step_time_s = m_count * micro + d.pipeline_bubble_s + d.dp_comm_s + d.optimizer_s;
  throughput(v, out);
  return out;
}

// [6] -----------------------------------------------------------------------------------------

namespace {

// Per sample: the dense layer's, and the MoE layer's (a dense model's MoE is its dense layer).
void offloaded_per_sample(const NormalizedConfig& normalized, const LayerActivations& dense_layer,
                          const LayerActivations* moe_layer, double& dense, double& moe) {
  const double b = normalized.config.training.micro_batch_size;
  dense = dense_layer.offloaded_bytes / b;
  moe = normalized.config.model.num_experts > 0 ? moe_layer->offloaded_bytes / b : dense;
}

}  // namespace

void offloaded_layer_bytes(const NormalizedConfig& normalized, double& dense, double& moe) {
  dense = moe = 0;
  if (!normalized.config.training.offload.fine_grained_activation_offloading) return;
  const bool experts = normalized.config.model.num_experts > 0;
  const LayerActivations moe_layer =
      experts ? layer_activations(normalized, true) : LayerActivations{};
  offloaded_per_sample(normalized, layer_activations(normalized, false), &moe_layer, dense, moe);
}

void offloaded_layer_bytes(const NormalizedConfig& normalized, const LayerProfiles& profiles,
                           double& dense, double& moe) {
  dense = moe = 0;
  if (!normalized.config.training.offload.fine_grained_activation_offloading) return;
  offloaded_per_sample(normalized, profiles.dense, &profiles.moe, dense, moe);
}

StepVariant step_variant(const NormalizedConfig& normalized) {
  const TrainingConfig& t = normalized.config.training;
  StepVariant v;
  v.micro_batch_size = t.micro_batch_size;
  v.num_microbatches = normalized.num_microbatches;
  v.recompute = t.recompute.granularity;
  v.recompute_modules = active_recompute_modules(normalized);
  v.recompute_method = t.recompute.method;
  v.recompute_num_layers = t.recompute.num_layers;
  v.distribute_saved_activations = t.recompute.distribute_saved_activations;
  offloaded_layer_bytes(normalized, v.offloaded_bytes_dense, v.offloaded_bytes_moe);
  const OptimizerConfig& o = normalized.config.optimizer;
  v.optimizer_offload_fraction = o.optimizer_cpu_offload ? o.optimizer_offload_fraction : 0.0;
  return v;
}

Expected<StepTime> estimate_step_time(const Config& config, const StepTimeConfig& model) {
  auto normalized = normalize(config);
  if (!normalized) return normalized.error();
  const StepTimeModel step_model(*normalized, normalized->stages, model);  // placed once
  return step_model.evaluate(step_variant(*normalized));
}

}  // namespace megamem
