// Parameter tensors each pipeline stage allocates, per GPU, in Megatron's module order:
// each module's tensors come from its spec (core/src/modules/), this file puts them in
// stage order (embedding, decoder layers, final norm, MTP, output layer).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "megamem/estimate_types.hpp"
#include "modules/module_spec.hpp"
#include "schedule/layer_placement.hpp"

namespace megamem {

// A run of tensors repeated `repeat` times in a row (consecutive layers of one kind).
struct TensorBlock {
  const ParamTensor* tensors = nullptr;
  std::size_t count = 0;
  std::int64_t repeat = 1;
  bool layer_template = false;  // tensors are a LayerTemplates list, the same on every stage
};

// One tensor list per layer kind, built once per estimate: every dense (MoE) layer of a
// model allocates the same tensors.
struct LayerTemplates {
  std::vector<ParamTensor> dense;
  std::vector<ParamTensor> moe;
  // The same layers kept in bf16 by --first-last-layers-bf16 (empty when there are none).
  std::vector<ParamTensor> dense_bf16;
  std::vector<ParamTensor> moe_bf16;
  // A hybrid model's layer kinds (indexed by LayerKind; only the kinds it has are built).
  std::array<std::vector<ParamTensor>, kLayerKindCount> hybrid;
  std::array<std::vector<ParamTensor>, kLayerKindCount> hybrid_bf16;

  // The tensors of a layer of `kind`, in the config's precision or kept in bf16.
  const std::vector<ParamTensor>& of(LayerKind kind, bool bf16) const {
    if (kind == LayerKind::dense) return bf16 ? dense_bf16 : dense;
    if (kind == LayerKind::moe) return bf16 ? moe_bf16 : moe;
    return (bf16 ? hybrid_bf16 : hybrid)[static_cast<std::size_t>(kind)];
  }
};

LayerTemplates layer_templates(const NormalizedConfig& normalized);

// A stage's tensors as blocks in Megatron's order: its own embedding, runs of identical
// layers (from the templates), then final norm, MTP and output layer.
struct StageParams {
  std::vector<TensorBlock> blocks;
  // The tensors outside the layers, in order: the embedding (the first block), then final
  // norm, MTP layers and output layer (the last block).
  std::vector<ParamTensor> ends;
};

// Fills `out` (its vectors are reused between calls to avoid allocations).
void stage_params(const NormalizedConfig& normalized, const StagePlacement& stage,
                  const LayerTemplates& templates, StageParams& out);

// Appends the tensors of one stage (its embedding, decoder layers, final norm, output
// layer and MTP layers) in Megatron's registration order.
void append_stage_tensors(const NormalizedConfig& normalized, const StagePlacement& stage,
                          std::vector<ParamTensor>& out);

// Whole-model totals (unique parameters, TP = EP = 1).
ModelTotals count_model_totals(const NormalizedConfig& normalized);

}  // namespace megamem
