// Activation memory per layer and per chunk; see activations.hpp.
#include "activations.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "attention_backend.hpp"

namespace megamem {
namespace {

// Fine-grained offloading skips tensors under this many elements
// (transformer_config.py, min_offloaded_tensor_size).
constexpr double kMinOffloadElements = 1024.0 * 1024.0;

struct Shape {
  double tokens;     // N: tokens of one micro-batch on this CP rank
  double sp_tokens;  // N/TP under sequence parallel, else N
  double tp;
  double h;
  double batch;
  double seq;           // per CP rank
  double dropout_mask;  // 1 byte per element when hidden dropout is on
};

Shape shape_of(const NormalizedConfig& n) {
  const Config& c = n.config;
  Shape s;
  s.tp = c.parallel.tensor_parallel;
  s.batch = c.training.micro_batch_size;
  s.seq = static_cast<double>(c.training.seq_length) / c.parallel.context_parallel;
  s.tokens = s.batch * s.seq;
  s.sp_tokens = n.sequence_parallel ? s.tokens / s.tp : s.tokens;
  s.h = c.model.hidden_size;
  s.dropout_mask = c.model.hidden_dropout > 0 ? 1.0 : 0.0;
  return s;
}

bool unfused_attention(const Config& c) {
  const AttentionBackend backend = resolved_attention_backend(c);
  return backend == AttentionBackend::unfused || backend == AttentionBackend::local;
}

class LayerBuilder {
 public:
  LayerBuilder(const NormalizedConfig& n, LayerActivations& out)
      : c_(n.config), m_(n.config.model), s_(shape_of(n)), out_(out) {}

  void add(const char* tensor, ModuleKind module, double elements, double bytes_per_element,
           std::uint16_t freed_by = 0, OffloadModule offload = OffloadModule::none) {
    if (elements <= 0 || bytes_per_element <= 0) return;
    out_.saved.push_back(
        SavedActivation{tensor, module, elements * bytes_per_element, elements, freed_by, offload});
  }

  void forward_transient(double bytes) {
    out_.forward_transient_bytes = std::max(out_.forward_transient_bytes, bytes);
  }

  // A layer-specific backward working set beyond its activation gradients.
  void backward_transient(double bytes) { extra_backward_ = std::max(extra_backward_, bytes); }
  double extra_backward() const { return extra_backward_; }

  // megatron/core/transformer/transformer_layer.py: input norm, attention, bias-dropout-add.
  void attention() {
    const bool te = c_.training.transformer_impl == TransformerImpl::transformer_engine;
    // The TE spec fuses the input norm into linear_qkv (TELayerNormColumnParallelLinear),
    // which saves the norm input and, under SP, its local output shard (layernorm_linear.py,
    // ln_out_needs_gather). MLA keeps a standalone input norm (gpt_layer_specs.py).
    const bool standalone_norm = !te || m_.multi_latent_attention;
    // Offloading hooks every tensor saved inside the named module's forward
    // (fine_grained_activation_offload.py, saved_tensors_hooks): a fused norm's input is saved
    // inside qkv_linear; attn_norm offloads only a standalone norm.
    add("input_layernorm input", ModuleKind::input_layernorm, s_.sp_tokens * s_.h, 2, 0,
        standalone_norm ? OffloadModule::attn_norm : OffloadModule::qkv_linear);
    add("input_layernorm output", ModuleKind::input_layernorm, s_.sp_tokens * s_.h, 2,
        standalone_norm && m_.multi_latent_attention ? kRecomputeLayernorm : 0,
        OffloadModule::qkv_linear);
    if (m_.multi_latent_attention) {
      mla_attention();
    } else {
      gqa_attention();
    }
    add("attention dropout mask", ModuleKind::self_attention, s_.sp_tokens * s_.h, s_.dropout_mask);
  }

  // megatron/core/transformer/attention.py and TE DotProductAttention.
  void gqa_attention() {
    const double heads = m_.num_attention_heads / s_.tp;
    // With fewer query groups than TP ranks each rank keeps one group (attention.py).
    const double groups = std::max(1.0, m_.num_query_groups / s_.tp);
    const double dh = m_.kv_channels;
    const double n = s_.tokens;
    const ModuleKind attn = ModuleKind::self_attention;
    // The fused QKV output is copied into contiguous Q, K, V; only the copies are saved.
    forward_transient(2 * n * (heads + 2 * groups) * dh);
    if (m_.qk_layernorm) {
      add("q/k layernorm inputs", attn, n * (heads + groups) * dh, 2, 0, OffloadModule::qkv_linear);
    }
    if (unfused_attention(c_)) {
      unfused_core_attention(heads, groups, dh);
    } else {
      add("Q, K, V (core attention inputs)", attn, n * (heads + 2 * groups) * dh, 2, 0,
          OffloadModule::core_attn);
      // Flash/cuDNN keep the fp32 log-sum-exp per head and token.
      add("softmax statistics (fp32)", attn, n * heads, 4, kRecomputeCoreAttn,
          OffloadModule::core_attn);
    }
    add("attention output (linear_proj input)", attn, n * heads * dh, 2, 0,
        OffloadModule::attn_proj);
  }

  // megatron/core/transformer/dot_product_attention.py: baddbmm scores, fused (or torch)
  // masked softmax, attention dropout, bmm with V. K and V are expanded to all heads.
  void unfused_core_attention(double heads, double groups, double dh) {
    const ModuleKind attn = ModuleKind::self_attention;
    const double n = s_.tokens;
    const double scores = s_.batch * heads * s_.seq * s_.seq;
    const bool expanded = heads > groups;
    add("Q (core attention input)", attn, n * heads * dh, 2, 0, OffloadModule::core_attn);
    add("K, V (expanded to all heads)", attn, n * 2 * (expanded ? heads : groups) * dh, 2, 0,
        OffloadModule::core_attn);
    add("attention probabilities", attn, scores, 2, kRecomputeCoreAttn, OffloadModule::core_attn);
    if (m_.attention_dropout > 0) {
      add("attention dropout mask and output", attn, scores, 3, kRecomputeCoreAttn,
          OffloadModule::core_attn);
    }
    // The raw bf16 scores live until the softmax kernel has run.
    forward_transient(2 * scores + (c_.training.masked_softmax_fusion ? 0 : 4 * scores));
    // In backward the probabilities' gradient and the scores' gradient (the softmax
    // backward's output) are both alive next to the saved probabilities.
    backward_transient(2 * 2 * scores);
  }

  // megatron/core/transformer/multi_latent_attention.py (MLASelfAttention).
  void mla_attention() {
    const ModuleKind attn = ModuleKind::self_attention;
    const double heads = m_.num_attention_heads / s_.tp;
    const double n = s_.tokens;
    const double nsp = s_.sp_tokens;
    const double q_head = static_cast<double>(m_.qk_head_dim) + m_.qk_pos_emb_head_dim;
    const double norm_outputs = m_.qk_layernorm ? 1 : 0;
    if (m_.q_lora_rank > 0) {
      add("q_down output", attn, nsp * m_.q_lora_rank, 2, 0, OffloadModule::qkv_linear);
      add("q norm output", attn, nsp * m_.q_lora_rank * norm_outputs, 2, kRecomputeMlaUpProj,
          OffloadModule::qkv_linear);
    }
    add("kv_down output", attn,
        nsp * (static_cast<double>(m_.kv_lora_rank) + m_.qk_pos_emb_head_dim), 2, 0,
        OffloadModule::qkv_linear);
    add("kv norm output", attn, nsp * m_.kv_lora_rank * norm_outputs, 2, kRecomputeMlaUpProj,
        OffloadModule::qkv_linear);
    add("Q, K (core attention inputs)", attn, 2 * n * heads * q_head, 2, kRecomputeMlaUpProj,
        OffloadModule::core_attn);
    add("V (core attention input)", attn, n * heads * m_.v_head_dim, 2, kRecomputeMlaUpProj,
        OffloadModule::core_attn);
    if (unfused_attention(c_)) {
      const double scores = s_.batch * heads * s_.seq * s_.seq;
      add("attention probabilities", attn, scores, 2, kRecomputeCoreAttn, OffloadModule::core_attn);
      if (m_.attention_dropout > 0) {
        add("attention dropout mask and output", attn, scores, 3, kRecomputeCoreAttn,
            OffloadModule::core_attn);
      }
      forward_transient(2 * scores);
      backward_transient(2 * 2 * scores);
    } else {
      add("softmax statistics (fp32)", attn, n * heads, 4, kRecomputeCoreAttn,
          OffloadModule::core_attn);
    }
    add("attention output (linear_proj input)", attn, n * heads * m_.v_head_dim, 2, 0,
        OffloadModule::attn_proj);
    // mla_up_proj keeps the gathered RoPE slice as a checkpoint input.
    if (recompute_bits_ & kRecomputeMlaUpProj) {
      add("RoPE slice (mla_up_proj checkpoint input)", attn, n * m_.qk_pos_emb_head_dim, 2);
    }
    forward_transient(2 * n * heads * (2 * q_head + m_.v_head_dim));
  }

  // megatron/core/transformer/mlp.py: pre-MLP norm (fused into fc1 under TE), fc1,
  // activation, fc2; bias-dropout-add.
  void dense_mlp() {
    const ModuleKind mlp = ModuleKind::mlp;
    const double ffn = m_.ffn_hidden_size / s_.tp;
    const double glu = m_.activation == Activation::swiglu ? 2 : 1;
    // Under TE the norm is fused into fc1 (no standalone module for mlp_norm to offload).
    const bool standalone_norm = c_.training.transformer_impl == TransformerImpl::local;
    add("pre_mlp_layernorm input", ModuleKind::pre_mlp_layernorm, s_.sp_tokens * s_.h, 2, 0,
        standalone_norm ? OffloadModule::mlp_norm : OffloadModule::none);
    add("pre_mlp_layernorm output", ModuleKind::pre_mlp_layernorm, s_.sp_tokens * s_.h, 2,
        kRecomputeMlp);
    add("fc1 output (activation input)", mlp, s_.tokens * glu * ffn, 2, kRecomputeMlp);
    add("activation output (fc2 input)", mlp, s_.tokens * ffn, 2, kRecomputeMlp);
    add("MLP dropout mask", mlp, s_.sp_tokens * s_.h, s_.dropout_mask);
  }

  // megatron/core/transformer/moe/: router, token dispatch, grouped experts, shared experts.
  void moe_mlp() {
    const double nsp = s_.sp_tokens;
    const double etp = c_.parallel.expert_tensor_parallel;
    const double width = m_.moe_latent_size > 0 ? m_.moe_latent_size : m_.hidden_size;
    const double expert_ffn = m_.moe_ffn_hidden_size / etp;
    const double glu = m_.activation == Activation::swiglu ? 2 : 1;
    const double routed = routed_tokens();
    add("pre_mlp_layernorm input", ModuleKind::pre_mlp_layernorm, nsp * s_.h, 2, 0,
        OffloadModule::mlp_norm);
    add("pre_mlp_layernorm output", ModuleKind::pre_mlp_layernorm, nsp * s_.h, 2,
        kRecomputeLayernorm | kRecomputeMoe);
    // router.py: one fp32 score tensor over all experts for the aux loss and one for the
    // score function; top-k itself keeps indices only.
    add("router scores (fp32)", ModuleKind::router, 2 * nsp * m_.num_experts, 4, kRecomputeMoe);
    add("dispatched tokens (expert fc1 input)", ModuleKind::routed_experts, routed * width, 2,
        kRecomputeMoe, OffloadModule::expert_fc1);
    add("expert fc1 output", ModuleKind::routed_experts, routed * glu * expert_ffn, 2,
        kRecomputeMoe, OffloadModule::moe_act);
    add("expert activation output", ModuleKind::routed_experts, routed * expert_ffn, 2,
        kRecomputeMoe | kRecomputeMoeAct);
    // experts.py bias_act_func: only the fused weighted SwiGLU folds the routing
    // probabilities into the activation kernel. Otherwise the activation output is saved by
    // the multiplication with the probabilities and their product again by fc2 (a GLU also
    // keeps its silu output).
    const bool fused = m_.activation == Activation::swiglu && c_.training.bias_activation_fusion;
    if (!fused) {
      const double copies = m_.activation == Activation::swiglu ? 2 : 1;
      add("expert activation output (probs-weighted copies)", ModuleKind::routed_experts,
          copies * routed * expert_ffn, 2, kRecomputeMoe | kRecomputeMoeAct);
    }
    if (m_.moe_shared_expert_intermediate_size > 0) {
      const double shared_ffn = m_.moe_shared_expert_intermediate_size / s_.tp;
      add("shared expert fc1 output", ModuleKind::shared_experts, s_.tokens * glu * shared_ffn, 2,
          kRecomputeMoe | kRecomputeSharedExperts);
      add("shared expert activation output", ModuleKind::shared_experts, s_.tokens * shared_ffn, 2,
          kRecomputeMoe | kRecomputeSharedExperts);
    }
    add("MoE dropout mask", ModuleKind::routed_experts, nsp * s_.h, s_.dropout_mask);
    // token_dispatcher.py: permute output, exchange buffers and their sorted copies exist
    // only inside the layer's forward (and again in backward).
    if (c_.training.moe_token_dispatcher != TokenDispatcher::allgather) {
      forward_transient(2 * 2 * routed * width);
    } else {
      forward_transient(2 * routed * width);
    }
  }

  // Tokens reaching this GPU's local experts: k copies of each SP token, all-gathered over
  // ETP; the hottest EP rank gets the imbalance factor more (memory-model.md 4.4).
  double routed_tokens() const {
    const TrainingConfig& t = c_.training;
    const double balanced = m_.moe_router_topk * s_.sp_tokens * c_.parallel.expert_tensor_parallel;
    const double capacity = t.moe_expert_capacity_factor;
    if (capacity > 0 && t.moe_pad_expert_input_to_capacity) return capacity * balanced;
    const double share =
        capacity > 0 ? std::min(t.moe_imbalance_factor, capacity) : t.moe_imbalance_factor;
    return share * balanced;
  }

  void set_recompute_bits(std::uint16_t bits) { recompute_bits_ = bits; }

 private:
  const Config& c_;
  const ModelConfig& m_;
  const Shape s_;
  LayerActivations& out_;
  std::uint16_t recompute_bits_ = 0;
  double extra_backward_ = 0;
};

bool offload_selected(const NormalizedConfig& n, OffloadModule module) {
  const OffloadConfig& offload = n.config.training.offload;
  if (!offload.fine_grained_activation_offloading || module == OffloadModule::none) return false;
  const char* name = "";
  switch (module) {
    case OffloadModule::attn_norm:
      name = "attn_norm";
      break;
    case OffloadModule::qkv_linear:
      name = "qkv_linear";
      break;
    case OffloadModule::core_attn:
      name = "core_attn";
      break;
    case OffloadModule::attn_proj:
      name = "attn_proj";
      break;
    case OffloadModule::mlp_norm:
      name = "mlp_norm";
      break;
    case OffloadModule::expert_fc1:
      name = "expert_fc1";
      break;
    case OffloadModule::moe_act:
      name = "moe_act";
      break;
    case OffloadModule::none:
      return false;
  }
  return std::find(offload.offload_modules.begin(), offload.offload_modules.end(), name) !=
         offload.offload_modules.end();
}

// The largest bf16 weight gradient of a layer, alive between its wgrad GEMM and the DDP
// hook that adds it to main_grad, when gradient-accumulation fusion is off
// (megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication).
double largest_weight_grad_bytes(const NormalizedConfig& n, bool moe_layer) {
  if (n.config.training.gradient_accumulation_fusion) return 0;
  const ModelConfig& m = n.config.model;
  const double h = m.hidden_size;
  const double tp = n.config.parallel.tensor_parallel;
  const double glu = m.activation == Activation::swiglu ? 2 : 1;
  const double fc1 =
      moe_layer ? glu * m.moe_ffn_hidden_size * h / n.config.parallel.expert_tensor_parallel
                : glu * m.ffn_hidden_size * h / tp;
  const double qkv = (static_cast<double>(m.num_attention_heads) + 2.0 * m.num_query_groups) *
                     m.kv_channels * h / tp;
  return 2 * std::max(fc1, qkv);
}

}  // namespace

std::uint16_t recompute_module_bits(const NormalizedConfig& n) {
  const RecomputeConfig& recompute = n.config.training.recompute;
  if (recompute.granularity != RecomputeGranularity::selective) return 0;
  if (recompute.modules.empty()) return kRecomputeCoreAttn;  // transformer_config.py default
  std::uint16_t bits = 0;
  for (const std::string& module : recompute.modules) {
    if (module == "core_attn") bits |= kRecomputeCoreAttn;
    if (module == "moe_act") bits |= kRecomputeMoeAct;
    if (module == "layernorm") bits |= kRecomputeLayernorm;
    if (module == "mla_up_proj") bits |= kRecomputeMlaUpProj;
    if (module == "mlp") bits |= kRecomputeMlp;
    if (module == "moe") bits |= kRecomputeMoe;
    if (module == "shared_experts") bits |= kRecomputeSharedExperts;
  }
  return bits;
}

LayerActivations layer_activations(const NormalizedConfig& n, bool moe_layer) {
  LayerActivations out;
  LayerBuilder builder(n, out);
  const std::uint16_t bits = recompute_module_bits(n);
  builder.set_recompute_bits(bits);
  builder.attention();
  if (moe_layer) {
    builder.moe_mlp();
  } else {
    builder.dense_mlp();
  }
  // Normal checkpoints (core_attn, mlp, moe, shared_experts) recompute one module at a time
  // in backward; output-discarding ones (moe_act, layernorm, mla_up_proj) bring back their
  // outputs just before the layer's backward: take the larger of the two.
  double recompute_normal = 0, recompute_discarding = 0;
  const std::uint16_t discarding = kRecomputeMoeAct | kRecomputeLayernorm | kRecomputeMlaUpProj;
  for (SavedActivation& item : out.saved) {
    out.full_bytes += item.bytes;
    if (item.freed_by & bits) {
      ((item.freed_by & bits & discarding) ? recompute_discarding : recompute_normal) += item.bytes;
      continue;
    }
    if (offload_selected(n, item.offload) && item.elements >= kMinOffloadElements) {
      item.on_host = true;
      out.offloaded_bytes += item.bytes;
      continue;
    }
    out.kept_bytes += item.bytes;
  }
  out.recompute_bytes = std::max(recompute_normal, recompute_discarding);
  // [calibrate] activation gradients in a layer's backward: the size of what it saved.
  out.backward_transient_bytes =
      std::max(out.full_bytes, builder.extra_backward()) + largest_weight_grad_bytes(n, moe_layer);
  return out;
}

LayerProfiles layer_profiles(const NormalizedConfig& n) {
  LayerProfiles profiles;
  profiles.dense = layer_activations(n, false);
  profiles.moe = n.config.model.num_experts > 0 ? layer_activations(n, true) : profiles.dense;
  return profiles;
}

ChunkActivations chunk_activations(const NormalizedConfig& n, const StagePlacement& stage,
                                   const LayerProfiles& profiles) {
  const Config& c = n.config;
  const Shape s = shape_of(n);
  const RecomputeConfig& recompute = c.training.recompute;
  ChunkActivations out;

  // Layers of this chunk in order; dense and MoE profiles computed once each.
  const LayerActivations& dense = profiles.dense;
  const LayerActivations& moe = profiles.moe;
  auto layer_at = [&](int index) -> const LayerActivations& {
    return n.moe_layer_pattern[static_cast<std::size_t>(stage.first_layer + index)] ? moe : dense;
  };

  // Forward walk: saved so far, and the peak of (saved so far + transient).
  double saved = 0;
  double forward_peak = 0;
  std::vector<double> backward_free;       // freed by each phase, reverse order later
  std::vector<double> backward_transient;  // transient of each phase
  // A phase keeps `kept` bytes on the GPU; `offloaded` bytes are saved too but copied to the
  // host as the phase ends (they are on the GPU during it, and reloaded for its backward).
  auto forward_phase = [&](double kept, double transient, double backward_extra,
                           double offloaded = 0) {
    forward_peak = std::max(forward_peak, saved + transient + offloaded);
    saved += kept;
    out.offloaded_bytes += offloaded;
    backward_free.push_back(kept);
    backward_transient.push_back(backward_extra + offloaded);
  };
  ;

  if (stage.has_embedding) {
    // Embedding dropout mask; the embedding output is layer 0's saved input.
    forward_phase(s.sp_tokens * s.h * s.dropout_mask, 0, 0);
  }

  const bool full = recompute.granularity == RecomputeGranularity::full;
  const double stash = (recompute.distribute_saved_activations && !n.sequence_parallel)
                           ? 2 * s.tokens * s.h / s.tp
                           : 2 * s.sp_tokens * s.h;
  const int group = std::max(1, recompute.num_layers);
  for (int i = 0; i < stage.num_layers; ++i) {
    const LayerActivations& layer = layer_at(i);
    const bool checkpointed =
        full && (recompute.method == RecomputeMethod::uniform || i < recompute.num_layers);
    // Legacy --cpu-offloading moves whole layers' activations to the host (PP = 1 only).
    const bool legacy_offloaded =
        c.training.offload.cpu_offloading &&
        stage.first_layer + i < c.training.offload.cpu_offloading_num_layers;
    if (legacy_offloaded) {
      forward_phase(0, layer.forward_transient_bytes,
                    layer.backward_transient_bytes + layer.recompute_bytes,
                    layer.kept_bytes + layer.offloaded_bytes);
      continue;
    }
    if (!checkpointed) {
      // Backward of a layer: its activation gradients, selective recompute and the reload
      // of offloaded inputs.
      forward_phase(layer.kept_bytes, layer.forward_transient_bytes,
                    layer.backward_transient_bytes + layer.recompute_bytes, layer.offloaded_bytes);
      continue;
    }
    // megatron/core/recompute.py: one input stashed per group of recompute_num_layers
    // (uniform) or per checkpointed layer (block); backward re-runs the group's forward.
    const bool group_start = recompute.method == RecomputeMethod::block || i % group == 0;
    double group_full = 0;
    const int group_layers = recompute.method == RecomputeMethod::block ? 1 : group;
    const int first = recompute.method == RecomputeMethod::block ? i : i - i % group;
    for (int k = first; k < std::min(stage.num_layers, first + group_layers); ++k) {
      group_full += layer_at(k).full_bytes;
    }
    forward_phase(group_start ? stash : 0, layer.forward_transient_bytes,
                  group_full + layer.backward_transient_bytes);
  }

  auto loss_phase = [&]() {
    // tensor_parallel/cross_entropy.py: fp32 upcast of the bf16 logits, softmax in place
    // and saved; the bf16 logits die after the forward. TE's fused CE (up to TE 2.17)
    // keeps the bf16 logits and writes the gradient into them.
    const double logits = s.tokens * static_cast<double>(n.padded_vocab_size) / s.tp;
    out.logits_bytes = 2 * logits;
    const double norm = 4 * s.sp_tokens * s.h;  // final norm input and output
    const bool te_ce = c.training.cross_entropy == CrossEntropyImpl::te_fused;
    // fusions/fused_cross_entropy.py (--cross-entropy-loss-fusion, impl native) runs the same
    // steps inside jit-fused functions, where the in-place subtract/exp and the in-place
    // gradient become new tensors: one more fp32 logits copy at both peaks. [calibrate]
    // Megatron CI (gpt3_mcore_te_tp2_pp2_cross_entropy_loss_fusion): +4 bytes per logit.
    const double jit_copy = c.training.cross_entropy == CrossEntropyImpl::native_fused ? 4 : 0;
    const double saved_loss = te_ce ? 2 * logits : 4 * logits;
    const double ce_forward_transient = te_ce ? 2 * logits : (6 + jit_copy) * logits;
    // Backward: the bf16 logits gradient on top of the saved softmax.
    const double ce_backward_transient = te_ce ? 0 : (2 + jit_copy) * logits;
    // Output layer backward: the logits gradient and, without gradient-accumulation
    // fusion, the bf16 weight gradient of the output layer, after the softmax is freed.
    const double output_wgrad = c.training.gradient_accumulation_fusion
                                    ? 0
                                    : 2 * static_cast<double>(n.padded_vocab_size) * s.h / s.tp;
    forward_phase(norm, 0, 0);
    forward_phase(0, 0, (te_ce ? saved_loss : 2 * logits) + output_wgrad);
    forward_phase(saved_loss, ce_forward_transient, ce_backward_transient);
  };

  if (stage.has_loss) {
    // gpt_model.py _postprocess: MTP layers and their losses run before the main loss.
    const LayerActivations& mtp_layer = layer_at(c.model.num_layers - 1 - stage.first_layer);
    for (int depth = 0; depth < stage.num_mtp_layers; ++depth) {
      // enorm/hnorm inputs and outputs, eh_proj input (concatenated), the layer, its norm.
      forward_phase(12 * s.sp_tokens * s.h, 0, 0);
      forward_phase(mtp_layer.kept_bytes, mtp_layer.forward_transient_bytes,
                    mtp_layer.backward_transient_bytes + mtp_layer.recompute_bytes,
                    mtp_layer.offloaded_bytes);
      loss_phase();
    }
    loss_phase();
  }

  // Backward walk in reverse: each phase's transient on top of what is still saved.
  double freed = 0;
  double backward_peak = 0;
  for (std::size_t k = backward_free.size(); k-- > 0;) {
    backward_peak = std::max(backward_peak, backward_transient[k] - freed);
    freed += backward_free[k];
  }
  // Offloaded inputs sit on the host between their forward and the reload before backward
  // (one layer's reload at a time, counted in that layer's backward transient).
  out.saved_bytes = saved;
  out.forward_peak_extra_bytes = std::max(forward_peak, saved);
  out.backward_peak_extra_bytes = std::max(0.0, backward_peak);
  return out;
}

}  // namespace megamem
