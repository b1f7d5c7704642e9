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
#include "modules/module_spec.hpp"
#include "parameter_count.hpp"

namespace megamem {

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

// The recompute modules a run uses: config.training.recompute.modules under selective
// granularity ({core_attn} when empty, transformer_config.py), none otherwise.
RecomputeModules active_recompute_modules(const NormalizedConfig& normalized);

}  // namespace megamem
