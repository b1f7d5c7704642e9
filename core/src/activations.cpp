// Activation memory per layer and per chunk; see activations.hpp.
#include "activations.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace megamem {
namespace {

// Fine-grained offloading skips tensors under this many elements
// (transformer_config.py, min_offloaded_tensor_size).
constexpr double kMinOffloadElements = 1024.0 * 1024.0;

bool offload_selected(const NormalizedConfig& n, OffloadModules module) {
  const OffloadConfig& offload = n.config.training.offload;
  return offload.fine_grained_activation_offloading && offload.offload_modules.intersects(module);
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

RecomputeModules active_recompute_modules(const NormalizedConfig& n) {
  const RecomputeConfig& recompute = n.config.training.recompute;
  if (recompute.granularity != RecomputeGranularity::selective) return {};
  if (recompute.modules.empty()) return {RecomputeModule::core_attn};  // transformer_config.py
  return recompute.modules;
}

LayerActivations layer_activations(const NormalizedConfig& n, bool moe_layer) {
  LayerActivations out;
  const RecomputeModules active = active_recompute_modules(n);
  SavedSink sink(out, active);
  layer_saved(module_context(n, moe_layer), activation_shape(n), sink);
  // Normal checkpoints (core_attn, mlp, moe, shared_experts) recompute one module at a time
  // in backward; output-discarding ones (moe_act, layernorm, mla_up_proj) bring back their
  // outputs just before the layer's backward: take the larger of the two.
  double recompute_normal = 0, recompute_discarding = 0;
  const RecomputeModules discarding = {RecomputeModule::moe_act, RecomputeModule::layernorm,
                                       RecomputeModule::mla_up_proj};
  for (SavedActivation& item : out.saved) {
    out.full_bytes += item.bytes;
    const RecomputeModules freeing = item.freed_by & active;
    if (!freeing.empty()) {
      (freeing.intersects(discarding) ? recompute_discarding : recompute_normal) += item.bytes;
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
      std::max(out.full_bytes, sink.extra_backward()) + largest_weight_grad_bytes(n, moe_layer);
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
  const ActivationShape s = activation_shape(n);
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

  if (stage.has_embedding) {
    // Embedding dropout mask; the embedding output is layer 0's saved input.
    forward_phase(embedding_saved_bytes(s), 0, 0);
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

  // Final norm, output layer, cross entropy (modules/output_loss.cpp).
  const LossActivations loss = loss_activations(n, s);
  auto loss_phase = [&]() {
    out.logits_bytes = loss.logits_bytes;
    forward_phase(loss.norm_saved, 0, 0);
    forward_phase(0, 0, loss.output_backward);
    forward_phase(loss.loss_saved, loss.loss_forward_transient, loss.loss_backward_transient);
  };

  if (stage.has_loss) {
    // gpt_model.py _postprocess: MTP layers and their losses run before the main loss.
    const LayerActivations& mtp_layer = layer_at(c.model.num_layers - 1 - stage.first_layer);
    for (int depth = 0; depth < stage.num_mtp_layers; ++depth) {
      // MTP's own tensors (modules/mtp.cpp), then its transformer layer.
      forward_phase(mtp_saved_bytes(s), 0, 0);
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
