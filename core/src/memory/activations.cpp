// Activation memory per layer and per chunk; see activations.hpp.
#include "memory/activations.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string_view>

#include "memory/fp8_memory.hpp"
#include "modules/sliding_window.hpp"

namespace megamem {
namespace {

// Fine-grained offloading skips tensors under this many elements
// (transformer_config.py, min_offloaded_tensor_size).
constexpr double kMinOffloadElements = 1024.0 * 1024.0;

bool offload_selected(const NormalizedConfig& n, OffloadModules module) {
  const OffloadConfig& offload = n.config.training.offload;
  return offload.fine_grained_activation_offloading && offload.offload_modules.intersects(module);
}

// The largest weight gradient (params dtype) of a layer, alive between its wgrad GEMM and the DDP
// hook that adds it to main_grad, when gradient-accumulation fusion is off
// (megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication).
// TE's grouped GEMM makes the wgrads of all its local experts in one packed tensor
// (grouped_linear.py backward: wgrad_packed [N, out, in]), freed when the last hook has run.
double largest_weight_grad_bytes(const NormalizedConfig& n, bool moe_layer) {
  if (n.config.training.gradient_accumulation_fusion) return 0;
  const ModelConfig& m = n.config.model;
  const TrainingConfig& t = n.config.training;
  const double h = m.hidden_size;
  const double tp = n.config.parallel.tensor_parallel;
  const double glu = m.activation == Activation::swiglu ? 2 : 1;
  const double widest_ffn = layer_ffn_hidden_size(
      m, m.kv_shared_layers > 0 ? LayerKind::kv_shared_dense : LayerKind::dense);
  const bool packed =
      t.moe_grouped_gemm && t.transformer_impl == TransformerImpl::transformer_engine;
  const double experts_in_gemm =
      packed ? static_cast<double>(m.num_experts) / n.config.parallel.expert_parallel : 1.0;
  const double fc1 = moe_layer ? experts_in_gemm * glu * m.moe_ffn_hidden_size * h /
                                     n.config.parallel.expert_tensor_parallel
                               : glu * widest_ffn * h / tp;
  // The larger attention shape where windowed layers have their own (sliding_window.hpp).
  double qkv = 0;
  for (const LayerKind kind : {LayerKind::dense, LayerKind::window_dense}) {
    const AttentionShape a = attention_shape(m, kind);
    const double width = (a.heads + static_cast<double>(a.query_groups)) * a.kv_channels +
                         static_cast<double>(a.query_groups) * a.v_channels;
    qkv = std::max(qkv, width * h / tp);
  }
  return activation_element_bytes(n.config) * std::max(fc1, qkv);
}

}  // namespace

RecomputeModules active_recompute_modules(const NormalizedConfig& n) {
  const RecomputeConfig& recompute = n.config.training.recompute;
  if (recompute.granularity != RecomputeGranularity::selective) return {};
  // transformer_config.py: no modules means core_attn. Kimi K3's layers never reach some.
  const RecomputeModules inert = recompute_modules_without_effect(n.config.model);
  if (recompute.modules.empty()) return RecomputeModules{RecomputeModule::core_attn} - inert;
  return recompute.modules - inert;
}

LayerActivations layer_activations(const NormalizedConfig& n, bool moe_layer, bool bf16_layer,
                                   GraphPart part) {
  return layer_activations(n, moe_layer ? LayerKind::moe : LayerKind::dense, bf16_layer, part);
}

LayerActivations layer_activations(const NormalizedConfig& n, LayerKind kind, bool bf16_layer,
                                   GraphPart part) {
  const bool fp8 = !bf16_layer && fp8_enabled(n.config.training);
  const bool moe_layer = layer_kind_is_moe(kind);
  LayerActivations out;
  // Room for every module's saved tensors (a DeepSeek-V3 layer has 17, some MoE variants
  // more): one allocation of 1,000 bytes, within the allocator's per-thread cache (up to
  // 1,032; a larger request first consolidates the allocator's free lists).
  out.saved.reserve(25);
  const RecomputeModules active = active_recompute_modules(n);
  SavedSink sink(out, active, n.config.training.delay_wgrad_compute);
  layer_saved(module_context(n, kind, fp8), activation_shape(n), sink);
  std::erase_if(out.saved, [&](const SavedActivation& item) {
    return !in_graph_part(n, part, item.module, kind);
  });
  // Normal checkpoints (core_attn, mlp, moe, shared_experts) recompute one module at a time
  // in backward; output-discarding ones (moe_act, layernorm, mla_up_proj, gdn_norm_out) bring back
  // their outputs just before the layer's backward: take the larger of the two.
  double recompute_normal = 0, recompute_discarding = 0;
  const RecomputeModules discarding = {RecomputeModule::moe_act, RecomputeModule::layernorm,
                                       RecomputeModule::mla_up_proj, RecomputeModule::gdn_norm_out};
  for (SavedActivation& item : out.saved) {
    out.full_bytes += item.bytes;
    // The module's offload group runs whatever its tensors' sizes or recompute.
    if (offload_selected(n, item.offload)) out.offload_groups = out.offload_groups | item.offload;
    const RecomputeModules freeing = item.freed_by & active;
    if (!freeing.empty()) {
      (freeing.intersects(discarding) ? recompute_discarding : recompute_normal) += item.bytes;
      continue;
    }
    if (offload_selected(n, item.offload) && item.elements >= kMinOffloadElements) {
      item.on_host = true;
      out.offloaded_bytes += item.bytes;
      // One module per tensor (SavedActivation::offload): its group's index.
      out.offloaded_by_module[static_cast<std::size_t>(std::countr_zero(item.offload.bits()))] +=
          item.bytes;
      continue;
    }
    out.kept_bytes += item.bytes;
  }
  out.recompute_bytes = std::max(recompute_normal, recompute_discarding);
  // [calibrate] activation gradients in a layer's backward: the size of what it saved in
  // bf16. Under FP8 the gradients stay bf16 (TE's dgrad outputs), so the bf16 sizes count.
  const double saved_bf16 =
      fp8 ? layer_activations(n, kind, true, part).full_bytes : out.full_bytes;
  out.backward_transient_bytes = std::max(saved_bf16, sink.extra_backward()) +
                                 largest_weight_grad_bytes(n, moe_layer) +
                                 sink.delayed_wgrad_peak();
  return out;
}

LayerProfiles layer_profiles(const NormalizedConfig& n, GraphPart part) {
  LayerProfiles profiles;
  profiles.part = part;
  const bool moe = n.config.model.num_experts > 0;
  profiles.dense = layer_activations(n, false, false, part);
  profiles.moe = moe ? layer_activations(n, true, false, part) : profiles.dense;
  const TrainingConfig& t = n.config.training;
  const bool bf16_layers =
      fp8_enabled(t) && t.fp8_bf16_layers_at_start + t.fp8_bf16_layers_at_end > 0;
  profiles.bf16_layers = bf16_layers;
  if (bf16_layers) {
    profiles.dense_bf16 = layer_activations(n, false, true, part);
    profiles.moe_bf16 = moe ? layer_activations(n, true, true, part) : profiles.moe;
  }
  // The kinds the decoder and MTP layers use, in one pass rather than a search per kind.
  std::array<bool, kLayerKindCount> used{};
  for (const LayerKind kind : n.layer_kinds) used[static_cast<std::size_t>(kind)] = true;
  for (const LayerKind kind : n.mtp_layer_kinds) used[static_cast<std::size_t>(kind)] = true;
  for (std::size_t k = 2; k < kLayerKindCount; ++k) {
    const auto kind = static_cast<LayerKind>(k);
    if (!used[k]) continue;
    profiles.hybrid[k] = layer_activations(n, kind, false, part);
    if (bf16_layers) profiles.hybrid_bf16[k] = layer_activations(n, kind, true, part);
  }
  profiles.mtp = mtp_profiles(n, profiles);
  return profiles;
}

namespace {

const LayerActivations& profile_of_kind(const LayerProfiles& profiles, LayerKind kind, bool bf16) {
  bf16 = bf16 && profiles.bf16_layers;  // else the bf16 profiles equal the others
  if (kind != LayerKind::dense && kind != LayerKind::moe) {
    return (bf16 ? profiles.hybrid_bf16 : profiles.hybrid)[static_cast<std::size_t>(kind)];
  }
  if (bf16) return kind == LayerKind::moe ? profiles.moe_bf16 : profiles.dense_bf16;
  return kind == LayerKind::moe ? profiles.moe : profiles.dense;
}

}  // namespace

// MTP layers run in the global FP8 context (multi_token_prediction.py). A hybrid model's are
// never in a CUDA graph (NormalizedConfig::mtp_layers_graphable): the graphed part has none of
// their tensors and the eager part all of them.
std::vector<LayerActivations> mtp_profiles(const NormalizedConfig& n,
                                           const LayerProfiles& profiles) {
  std::vector<LayerActivations> out;
  for (const LayerKind kind : n.mtp_layer_kinds) {
    if (n.mtp_layers_graphable || profiles.part == GraphPart::whole) {
      out.push_back(profile_of_kind(profiles, kind, false));
    } else if (profiles.part == GraphPart::graphed) {
      out.emplace_back();
    } else {
      out.push_back(layer_activations(n, kind, false, GraphPart::whole));
    }
  }
  return out;
}

const LayerActivations& profile_of_layer(const NormalizedConfig& n, const LayerProfiles& profiles,
                                         int layer) {
  const TrainingConfig& t = n.config.training;
  const LayerKind kind = n.layer_kinds[static_cast<std::size_t>(layer)];
  const bool bf16 = fp8_enabled(t) && !fp8_layer(t, n.config.model.num_layers, layer);
  return profile_of_kind(profiles, kind, bf16);
}

namespace {

// Legacy --cpu-offloading moves whole layers' activations to the host (PP = 1 only).
bool cpu_offloaded_layer(const NormalizedConfig& n, int layer) {
  const OffloadConfig& offload = n.config.training.offload;
  return offload.cpu_offloading && layer < offload.cpu_offloading_num_layers;
}

// One chunk's phases in forward order: what each keeps saved, its transients, and the
// backward walk in reverse over them.
class ChunkWalk {
 public:
  ChunkWalk(const NormalizedConfig& n, const StagePlacement& stage, const LayerProfiles& profiles,
            ChunkWalkBuffers& buffers)
      : n_(n),
        stage_(stage),
        profiles_(profiles),
        s_(activation_shape(n)),
        backward_free_(buffers.backward_free),
        backward_transient_(buffers.backward_transient),
        forward_transient_(buffers.forward_transient) {
    // A phase per layer and a few for the embedding and the loss: one allocation each, the
    // first time the buffers are used.
    const std::size_t phases = static_cast<std::size_t>(std::max(0, stage.num_layers)) + 8;
    backward_free_.clear();
    backward_transient_.clear();
    forward_transient_.clear();
    backward_free_.reserve(phases);
    backward_transient_.reserve(phases);
    if (combined_steps_) forward_transient_.reserve(phases);
  }

  // mhc recompute (transformer_block.py MHCCheckpointManager; mhc_recompute_layer_num None:
  // one group per block) discards every layer's n-stream input but the block's own input, the
  // group's checkpoint input, which stays saved.
  double mhc_group_input_bytes() const {
    const ModelConfig& m = n_.config.model;
    const bool mhc = m.enable_mhc_connections &&
                     active_recompute_modules(n_).has(RecomputeModule::mhc) &&
                     stage_.num_layers > 0;
    return mhc ? s_.act * s_.sp_tokens * s_.h * m.mhc_num_residual_streams : 0;
  }

  ChunkActivations run() {
    // The capture runs the graphed layers alone (cuda_graphs.hpp).
    const bool capture = profiles_.part == GraphPart::graphed;
    // Embedding dropout mask; the embedding output is layer 0's saved input.
    if (stage_.has_embedding && !capture) phase(embedding_saved_bytes(n_.config.model, s_), 0, 0);
    // Kimi K3: the stage-boundary tensor (prefix and AttnRes bank) a later stage keeps.
    const double stage_input = attn_res_stage_input_bytes(n_.config.model, s_, stage_.first_layer);
    if (stage_input > 0 && !capture) phase(stage_input, 0, 0);
    if (!capture) phase(mhc_group_input_bytes(), 0, 0);
    first_layer_phase_ = backward_free_.size();
    if (n_.config.parallel.fsdp.impl == FsdpImpl::megatron) {
      out_.layer_backward_extra_bytes.resize(static_cast<std::size_t>(stage_.num_layers));
    }
    for (int i = 0; i < stage_.num_layers; ++i) decoder_layer(i);
    if (capture) {
      for (int depth = 0; stage_.has_loss && depth < stage_.num_mtp_layers; ++depth) {
        for (const LayerActivations& inner : profiles_.mtp) kept_layer(inner);
      }
    } else if (stage_.has_loss) {
      // gpt_model.py _postprocess: MTP layers and their losses run before the main loss.
      // Every depth saves its activations, also with --mtp-use-repeated-layer's shared weights
      // (MultiTokenPredictionBlock.forward).
      for (int depth = 0; depth < stage_.num_mtp_layers; ++depth) {
        mtp_depth();
        loss();
      }
      loss();
    }
    return finish();
  }

 private:
  // Layers of this chunk in order; each kind's profile computed once.
  const LayerActivations& layer_at(int index) const {
    return profile_of_layer(n_, profiles_, stage_.first_layer + index);
  }

  // A phase keeps `kept` bytes on the GPU; `offloaded` bytes are saved too but copied to the
  // host as the phase ends (they are on the GPU during it, and reloaded for its backward).
  void phase(double kept, double transient, double backward_extra, double offloaded = 0) {
    forward_peak_ = std::max(forward_peak_, saved_ + transient + offloaded);
    forward_peak_after_margin_ =
        std::max(forward_peak_after_margin_, saved_ + transient + offloaded);
    if (combined_steps_) forward_transient_.push_back(transient + offloaded);
    saved_ += kept;
    out_.offloaded_bytes += offloaded;
    backward_free_.push_back(kept);
    backward_transient_.push_back(backward_extra + offloaded);
  }

  // Backward of a layer: its activation gradients, selective recompute and the reload of
  // offloaded inputs.
  void kept_layer(const LayerActivations& layer, double attn_res = 0) {
    phase(layer.kept_bytes + attn_res, layer.forward_transient_bytes,
          layer.backward_transient_bytes + layer.recompute_bytes, layer.offloaded_bytes);
    if (!layer.offload_groups.empty()) note_offload_groups(layer);
  }

  // The last group of each offloaded module so far (ChunkOffloadHandler.find_next_group finds
  // none after it): what the chunk keeps when its backward comes next.
  void note_offload_groups(const LayerActivations& layer) {
    for (std::size_t m = 0; m < last_offloaded_.size(); ++m) {
      if ((layer.offload_groups.bits() >> m) & 1u)
        last_offloaded_[m] = layer.offloaded_by_module[m];
    }
    margin_phase_ = backward_free_.size() - 1;
    forward_peak_upto_margin_ = forward_peak_;
    forward_peak_after_margin_ = 0;
  }

  // Kimi K3's AttnRes mixes of decoder layer `i` of this chunk (attention_residuals.cpp): plain
  // PyTorch in KimiK3TransformerLayer.forward, counted with the eager part under CUDA graphs.
  double attn_res(int i) const {
    if (profiles_.part == GraphPart::graphed) return 0;
    return attn_res_saved_bytes(n_.config.model, s_, stage_.first_layer + i);
  }

  void decoder_layer(int i) {
    const TrainingConfig& t = n_.config.training;
    const RecomputeConfig& recompute = t.recompute;
    const LayerActivations& layer = layer_at(i);
    if (cpu_offloaded_layer(n_, stage_.first_layer + i)) {
      phase(0, layer.forward_transient_bytes,
            layer.backward_transient_bytes + layer.recompute_bytes,
            layer.kept_bytes + layer.offloaded_bytes + attn_res(i));
      return;
    }
    const bool checkpointed =
        recompute.granularity == RecomputeGranularity::full &&
        (recompute.method == RecomputeMethod::uniform || i < recompute.num_layers);
    if (checkpointed) {
      checkpointed_layer(i);
    } else {
      kept_layer(layer, attn_res(i));
    }
  }

  // One MTP depth: its own tensors (modules/mtp.cpp), then its inner layers. Under full uniform
  // recompute of one layer per group (multi_token_prediction.py MultiTokenPredictionLayer
  // forward -> _checkpointed_forward, since Megatron-Core 08abeedbfe) the depth keeps only its
  // two inputs, the hidden states (n streams with hyper-connections) and the embedding's
  // output, and its backward re-runs the projection, the inner layers and the final norm.
  // Megatron-Core asserts one layer per group there and recomputes nothing under the block
  // method (rules/recompute_offload.cpp warns for both).
  void mtp_depth() {
    const ModelConfig& m = n_.config.model;
    const RecomputeConfig& recompute = n_.config.training.recompute;
    const bool checkpointed = recompute.granularity == RecomputeGranularity::full &&
                              recompute.method == RecomputeMethod::uniform &&
                              recompute.num_layers == 1;
    if (!checkpointed) {
      phase(mtp_saved_bytes(m, s_), 0, 0);
      for (const LayerActivations& inner : profiles_.mtp) kept_layer(inner);
      return;
    }
    const double streams = m.enable_mhc_connections ? m.mhc_num_residual_streams : 1.0;
    double full = mtp_saved_bytes(m, s_);
    double forward_transient = 0, backward_transient = 0;
    for (const LayerActivations& inner : profiles_.mtp) {
      full += inner.full_bytes;
      forward_transient = std::max(forward_transient, inner.forward_transient_bytes);
      backward_transient = std::max(backward_transient, inner.backward_transient_bytes);
    }
    phase((streams + 1.0) * s_.act * s_.sp_tokens * s_.h, forward_transient,
          full + backward_transient);
  }

  // megatron/core/recompute.py: one input stashed per group of recompute_num_layers
  // (uniform) or per checkpointed layer (block); backward re-runs the group's forward.
  void checkpointed_layer(int i) {
    const RecomputeConfig& recompute = n_.config.training.recompute;
    const double stash = (recompute.distribute_saved_activations && !n_.sequence_parallel)
                             ? s_.act * s_.tokens * s_.h / s_.tp
                             : s_.act * s_.sp_tokens * s_.h;
    const int group = std::max(1, recompute.num_layers);
    const bool block = recompute.method == RecomputeMethod::block;
    const bool group_start = block || i % group == 0;
    double group_full = 0;
    const int group_layers = block ? 1 : group;
    const int first = block ? i : i - i % group;
    for (int k = first; k < std::min(stage_.num_layers, first + group_layers); ++k) {
      group_full += layer_at(k).full_bytes + attn_res(k);
    }
    const LayerActivations& layer = layer_at(i);
    phase(group_start ? stash : 0, layer.forward_transient_bytes,
          group_full + layer.backward_transient_bytes);
  }

  // Final norm, output layer, cross entropy (modules/output_loss.cpp).
  void loss() {
    const LossActivations loss = loss_activations(n_, s_);
    out_.logits_bytes = loss.logits_bytes;
    phase(loss.norm_saved, 0, 0);
    phase(0, 0, loss.output_backward);
    if (loss.softcap_saved > 0) {
      phase(loss.softcap_saved, loss.softcap_forward_transient, loss.softcap_backward_transient);
    }
    phase(loss.loss_saved, loss.loss_forward_transient, loss.loss_backward_transient);
    loss_phase_ = backward_free_.size() - 1;
  }

  // Backward walk in reverse: each phase's transient on top of what is still saved.
  // Offloaded inputs sit on the host between their forward and the reload before backward
  // (one layer's reload at a time, counted in that layer's backward transient).
  ChunkActivations finish() {
    double freed = 0;
    double loss_peak = 0;
    double rest_peak = 0;
    // With the margin kept, the last layer's groups need no reload and leave with its backward.
    const double margin = std::accumulate(last_offloaded_.begin(), last_offloaded_.end(), 0.0);
    double margin_peak = 0;
    for (std::size_t k = backward_free_.size(); k-- > 0;) {
      double& peak = k == loss_phase_ ? loss_peak : rest_peak;
      peak = std::max(peak, backward_transient_[k] - freed);
      margin_peak = std::max(margin_peak,
                             backward_transient_[k] - freed - (k <= margin_phase_ ? margin : 0.0));
      record_fsdp_phase(k, backward_transient_[k] - freed);
      freed += backward_free_[k];
    }
    if (margin_phase_ != SIZE_MAX) {
      out_.offload_margin_bytes = margin;
      out_.margin_backward_peak_extra_bytes = margin_peak;
      out_.margin_forward_peak_extra_bytes = std::max(
          {forward_peak_upto_margin_, forward_peak_after_margin_ + margin, saved_ + margin});
    }
    out_.saved_bytes = saved_;
    out_.forward_peak_extra_bytes = std::max(forward_peak_, saved_);
    out_.loss_backward_peak_extra_bytes = loss_peak;
    out_.weight_grad_backward_peak_extra_bytes = rest_peak;
    out_.backward_peak_extra_bytes = std::max(loss_peak, rest_peak);
    if (combined_steps_) out_.combined_step_extra_bytes = combined_step_extra();
    return out_;
  }

  // TransformerModelChunkSchedulePlan.run: the new micro-batch's embedding, the old one's
  // loss backward, then forward layer i with backward layer L-1-i (the forward's saved
  // tensors taken before the backward's are freed: the attention backward runs last in
  // TransformerLayerSchedulePlan.run), then the new loss forward and the old embedding
  // backward. `held` is the new saved minus the old freed so far.
  double combined_step_extra() const {
    const std::size_t phases = backward_free_.size();
    const std::size_t first = std::min(first_layer_phase_, phases);
    const std::size_t layers = std::min<std::size_t>(
        phases - first, static_cast<std::size_t>(std::max(0, stage_.num_layers)));
    const std::size_t tail = first + layers;
    double held = 0;
    double peak = 0;
    auto forward = [&](std::size_t k) {
      peak = std::max(peak, held + forward_transient_[k]);
      held += backward_free_[k];
    };
    auto backward = [&](std::size_t k) {
      peak = std::max(peak, held + backward_transient_[k]);
      held -= backward_free_[k];
    };
    for (std::size_t k = 0; k < first; ++k) forward(k);
    for (std::size_t k = phases; k-- > tail;) backward(k);
    for (std::size_t i = 0; i < layers; ++i) {
      const std::size_t f = first + i;
      const std::size_t b = first + layers - 1 - i;
      peak = std::max(
          peak, held + backward_free_[f] + std::max(forward_transient_[f], backward_transient_[b]));
      held += backward_free_[f] - backward_free_[b];
    }
    for (std::size_t k = tail; k < phases; ++k) forward(k);
    for (std::size_t k = first; k-- > 0;) backward(k);
    return peak;
  }

  // Phase k's backward extra, kept per decoder layer and for the embedding under FSDP.
  void record_fsdp_phase(std::size_t k, double extra) {
    std::vector<double>& layers = out_.layer_backward_extra_bytes;
    if (k >= first_layer_phase_ && k - first_layer_phase_ < layers.size()) {
      layers[k - first_layer_phase_] = extra;
    } else if (k + 1 == first_layer_phase_) {
      out_.embedding_backward_extra_bytes = extra;
    }
  }

  const NormalizedConfig& n_;
  const StagePlacement& stage_;
  const LayerProfiles& profiles_;
  const ActivationShape s_;
  ChunkActivations out_;
  double saved_ = 0;                    // saved so far in the forward walk
  double forward_peak_ = 0;             // max of (saved so far + transient)
  std::vector<double>& backward_free_;  // ChunkWalkBuffers'
  std::vector<double>& backward_transient_;
  std::vector<double>& forward_transient_;
  // Only the EP overlap's schedule has combined steps (combined_step_extra).
  const bool combined_steps_ = n_.config.training.overlap_moe_expert_parallel_comm;
  std::size_t loss_phase_ = SIZE_MAX;         // the cross entropy's phase, if the chunk has it
  std::size_t first_layer_phase_ = SIZE_MAX;  // the first decoder layer's phase
  // Fine-grained offloading's margin (note_offload_groups): per module, the bytes its last group
  // offloads; the phase of the last layer with groups; the forward peak up to it and after it.
  std::array<double, kOffloadModuleNames.size()> last_offloaded_{};
  std::size_t margin_phase_ = SIZE_MAX;
  double forward_peak_upto_margin_ = 0;
  double forward_peak_after_margin_ = 0;
};

}  // namespace

ChunkActivations chunk_activations(const NormalizedConfig& n, const StagePlacement& stage,
                                   const LayerProfiles& profiles) {
  ChunkWalkBuffers buffers;
  return ChunkWalk(n, stage, profiles, buffers).run();
}

// ChunkWalk reads of a stage only these fields, and of each layer its profile and whether
// legacy CPU offloading takes it.
bool ChunkActivationsMemo::walks_alike(const StagePlacement& a, const StagePlacement& b) const {
  if (a.has_embedding != b.has_embedding || a.has_loss != b.has_loss ||
      a.num_mtp_layers != b.num_mtp_layers || a.num_layers != b.num_layers) {
    return false;
  }
  // Kimi K3's AttnRes bank grows with the global layer index.
  if (kimi_k3_layers(n_->config.model) && a.first_layer != b.first_layer) return false;
  // Without bf16 layers or legacy offloading a layer's profile is its kind's: compare kinds.
  if (!profiles_->bf16_layers && !n_->config.training.offload.cpu_offloading) {
    const auto kinds = n_->layer_kinds.begin();
    return std::equal(kinds + a.first_layer, kinds + a.first_layer + a.num_layers,
                      kinds + b.first_layer);
  }
  for (int i = 0; i < a.num_layers; ++i) {
    const int la = a.first_layer + i, lb = b.first_layer + i;
    if (&profile_of_layer(*n_, *profiles_, la) != &profile_of_layer(*n_, *profiles_, lb) ||
        cpu_offloaded_layer(*n_, la) != cpu_offloaded_layer(*n_, lb)) {
      return false;
    }
  }
  return true;
}

void ChunkActivationsMemo::restart(const NormalizedConfig& normalized,
                                   const LayerProfiles& profiles, std::size_t stages) {
  n_ = &normalized;
  profiles_ = &profiles;
  walks_.clear();
  walks_.reserve(stages);
}

const ChunkActivations& ChunkActivationsMemo::of(const StagePlacement& stage) {
  for (const auto& [walked, chunk] : walks_) {
    if (walks_alike(*walked, stage)) return chunk;
  }
  return walks_.emplace_back(&stage, ChunkWalk(*n_, stage, *profiles_, buffers_).run()).second;
}

}  // namespace megamem
