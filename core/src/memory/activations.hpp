// Activation memory of one micro-batch: what Megatron-Core saves for backward per layer and
// per chunk, after selective/full recompute and activation offloading, plus the transient
// tensors each forward and backward pass adds on top (memory-model.md 4, 5 and 6.4).
//
// Sources: megatron/core/transformer/{transformer_layer.py, attention.py,
// dot_product_attention.py, multi_latent_attention.py, mlp.py, moe/}, TransformerEngine's
// saved tensors (layernorm_linear.py, dot_product_attention), megatron/core/
// tensor_parallel/cross_entropy.py, megatron/core/recompute.py and
// megatron/core/pipeline_parallel/fine_grained_activation_offload.py.
// FP8 GEMM inputs follow Transformer Engine (fp8_memory.hpp). Not modeled: CP ring-attention
// transients beyond the saved set, CUDA-graph pools.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "memory/cuda_graphs.hpp"
#include "memory/parameter_count.hpp"
#include "modules/module_spec.hpp"
#include "schedule/layer_placement.hpp"

namespace megamem {

// bf16_layer: one of --first-last-layers-bf16's layers, outside FP8 (else FP8 follows the
// config's recipe: FP8 GEMM inputs are saved in FP8, fp8_memory.hpp). part: the saved tensors
// inside or outside the layer's CUDA graph (cuda_graphs.hpp), or all of them.
LayerActivations layer_activations(const NormalizedConfig& normalized, bool moe_layer,
                                   bool bf16_layer = false, GraphPart part = GraphPart::whole);
// The same for any layer kind (a hybrid model's Mamba, attention, MLP or MoE layers).
LayerActivations layer_activations(const NormalizedConfig& normalized, LayerKind kind,
                                   bool bf16_layer = false, GraphPart part = GraphPart::whole);

// The layer kinds of a model, computed once per estimate.
struct LayerProfiles {
  LayerActivations dense;
  LayerActivations moe;         // equal to dense for a dense model
  LayerActivations dense_bf16;  // --first-last-layers-bf16 layers (bf16_layers only)
  LayerActivations moe_bf16;
  // A hybrid model's layer kinds (indexed by LayerKind; only the kinds it has are computed).
  std::array<LayerActivations, kLayerKindCount> hybrid;
  std::array<LayerActivations, kLayerKindCount> hybrid_bf16;
  // The *_bf16 profiles are computed; without such layers profile_of_layer() never asks for
  // them, and they stay empty rather than copies.
  bool bf16_layers = false;
  // The inner layers of one MTP depth (NormalizedConfig::mtp_layer_kinds), in order.
  std::vector<LayerActivations> mtp;
  GraphPart part = GraphPart::whole;  // what the profiles keep of each layer
};

LayerProfiles layer_profiles(const NormalizedConfig& normalized, GraphPart part = GraphPart::whole);

// Decoder layer `layer`'s (global index) profile: its kind; FP8, or bf16 for
// --first-last-layers-bf16's layers.
const LayerActivations& profile_of_layer(const NormalizedConfig& normalized,
                                         const LayerProfiles& profiles, int layer);

// The profiles of one MTP depth's inner layers (LayerProfiles::mtp), from the decoder kinds'.
std::vector<LayerActivations> mtp_profiles(const NormalizedConfig& normalized,
                                           const LayerProfiles& profiles);

// One chunk (its embedding, layers, loss and MTP), per micro-batch per GPU.
struct ChunkActivations {
  double saved_bytes = 0;                // A_chunk: held from its forward until its backward
  double forward_peak_extra_bytes = 0;   // max over the forward of (saved so far + transient)
  double backward_peak_extra_bytes = 0;  // max over the backward of (transient - freed)
  // The same split at the output layer's backward: the cross entropy's backward runs before
  // any weight gradient of the chunk exists (FSDP's gradient buckets come after it).
  double loss_backward_peak_extra_bytes = 0;
  // Under Megatron-FSDP, whose gradient buckets pile up through the backward: the same at
  // each decoder layer's backward (chunk order) and at the embedding's, the last.
  std::vector<double> layer_backward_extra_bytes = {};
  double embedding_backward_extra_bytes = 0;
  double weight_grad_backward_peak_extra_bytes = 0;
  // A step of the EP A2A overlap schedule (ScheduleOp::with_next_backward): max over it of
  // (this chunk's forward saved so far - an equal chunk's backward freed so far + transient),
  // with forward layer i beside backward layer L-1-i (model_chunk_schedule_plan.py).
  double combined_step_extra_bytes = 0;
  double offloaded_bytes = 0;  // on the host per in-flight micro-batch
  // Fine-grained offloading keeps the last layer's group of each module on the GPU in a chunk
  // whose backward comes next (simulate_rank() marks those micro-batches): these bytes, and
  // the forward and backward peaks above the live activations of such a micro-batch.
  double offload_margin_bytes = 0;
  double margin_forward_peak_extra_bytes = 0;
  double margin_backward_peak_extra_bytes = 0;
  double logits_bytes = 0;  // bf16 logits of the loss (diagnostic)
};

// Profiles of the graphed part run the chunk as the CUDA-graph capture does: its graphed
// layers only, without embedding and loss.
ChunkActivations chunk_activations(const NormalizedConfig& normalized, const StagePlacement& stage,
                                   const LayerProfiles& profiles);

// The per-phase lists a chunk walk fills, kept by a caller that walks many chunks so that they
// are allocated once rather than once per walk.
struct ChunkWalkBuffers {
  std::vector<double> backward_free;       // freed by each phase
  std::vector<double> backward_transient;  // transient of each phase
  std::vector<double> forward_transient;   // forward transient of each phase, if needed
};

// chunk_activations() once per group of stages that walk alike: the same embedding, loss and
// MTP, and layer by layer the same profile and the same legacy CPU offloading. A pipeline's
// middle stages usually do, so an estimate walks a few chunks rather than every stage.
class ChunkActivationsMemo {
 public:
  ChunkActivationsMemo() = default;
  ChunkActivationsMemo(const NormalizedConfig& normalized, const LayerProfiles& profiles) {
    restart(normalized, profiles, 0);
  }
  // Forgets the walks for another configuration, keeping the buffers (the planner restarts
  // one memo per cell); the references of()'s first `stages` calls stay valid together.
  void restart(const NormalizedConfig& normalized, const LayerProfiles& profiles,
               std::size_t stages);
  // The stage's chunk_activations(); without a `stages` reserve, valid until the next call.
  const ChunkActivations& of(const StagePlacement& stage);

 private:
  bool walks_alike(const StagePlacement& a, const StagePlacement& b) const;
  const NormalizedConfig* n_ = nullptr;
  const LayerProfiles* profiles_ = nullptr;
  std::vector<std::pair<const StagePlacement*, ChunkActivations>> walks_;
  ChunkWalkBuffers buffers_;
};

// The recompute modules a run uses: config.training.recompute.modules under selective
// granularity ({core_attn} when empty, transformer_config.py), none otherwise.
RecomputeModules active_recompute_modules(const NormalizedConfig& normalized);

}  // namespace megamem
