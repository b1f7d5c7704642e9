// Activation memory of one micro-batch: what Megatron-Core saves for backward per layer and
// per chunk, after selective/full recompute and activation offloading, plus the transient
// tensors each forward and backward pass adds on top (memory-model.md 4, 5 and 6.4).
//
// Sources: megatron/core/transformer/{transformer_layer.py, attention.py,
// dot_product_attention.py, multi_latent_attention.py, mlp.py, moe/}, TransformerEngine's
// saved tensors (layernorm_linear.py, dot_product_attention), megatron/core/
// tensor_parallel/cross_entropy.py, megatron/core/recompute.py and
// megatron/core/pipeline_parallel/fine_grained_activation_offload.py.
// Not modeled: CP ring-attention transients beyond the saved set, FP8 activation caches,
// CUDA-graph pools.
#pragma once

#include <cstdint>
#include <vector>

#include "layer_placement.hpp"
#include "parameter_count.hpp"

namespace megamem {

// --recompute-modules, as bits.
enum RecomputeModuleBit : std::uint16_t {
  kRecomputeCoreAttn = 1u << 0,
  kRecomputeMoeAct = 1u << 1,
  kRecomputeLayernorm = 1u << 2,
  kRecomputeMlaUpProj = 1u << 3,
  kRecomputeMlp = 1u << 4,
  kRecomputeMoe = 1u << 5,
  kRecomputeSharedExperts = 1u << 6,
};

// --offload-modules of fine-grained activation offloading.
enum class OffloadModule : std::uint8_t {
  none,
  attn_norm,
  qkv_linear,
  core_attn,
  attn_proj,
  mlp_norm,
  expert_fc1,
  moe_act,
};

// One tensor (or group of tensors) a layer saves for backward.
struct SavedActivation {
  const char* tensor = "";
  ModuleKind module = ModuleKind::self_attention;
  double bytes = 0;
  double elements = 0;         // for the offload size threshold
  std::uint16_t freed_by = 0;  // RecomputeModuleBit set that discards it
  OffloadModule offload = OffloadModule::none;
  bool on_host = false;  // set by layer_activations when fine-grained offloading moves it
};

// One decoder (or MTP transformer) layer, per micro-batch per GPU.
struct LayerActivations {
  std::vector<SavedActivation> saved;   // before recompute and offload
  double full_bytes = 0;                // everything saved without recompute
  double kept_bytes = 0;                // on the GPU after selective recompute and offload
  double offloaded_bytes = 0;           // moved to the host by fine-grained offloading
  double recompute_bytes = 0;           // brought back by selective recompute in backward
  double forward_transient_bytes = 0;   // largest tensor alive only inside the forward
  double backward_transient_bytes = 0;  // activation gradients + bf16 weight grads
};

LayerActivations layer_activations(const NormalizedConfig& normalized, bool moe_layer);

// The two layer kinds of a model, computed once per estimate.
struct LayerProfiles {
  LayerActivations dense;
  LayerActivations moe;  // equal to dense for a dense model
};

LayerProfiles layer_profiles(const NormalizedConfig& normalized);

// One chunk (its embedding, layers, loss and MTP), per micro-batch per GPU.
struct ChunkActivations {
  double saved_bytes = 0;                // A_chunk: held from its forward until its backward
  double forward_peak_extra_bytes = 0;   // max over the forward of (saved so far + transient)
  double backward_peak_extra_bytes = 0;  // max over the backward of (transient - freed)
  double offloaded_bytes = 0;            // on the host per in-flight micro-batch
  double logits_bytes = 0;               // bf16 logits of the loss (diagnostic)
};

ChunkActivations chunk_activations(const NormalizedConfig& normalized, const StagePlacement& stage,
                                   const LayerProfiles& profiles);

// Bits of config.training.recompute.modules (selective granularity).
std::uint16_t recompute_module_bits(const NormalizedConfig& normalized);

}  // namespace megamem
