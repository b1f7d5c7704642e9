// Parameter tensors each pipeline stage allocates, per GPU, in Megatron's module order.
//
// Shapes follow megatron/core/models/gpt/gpt_model.py, gpt_layer_specs.py and
// megatron/core/transformer/{attention.py, multi_latent_attention.py, mlp.py, moe/,
// multi_token_prediction.py}: column- and row-parallel weights divided by TP, routed
// experts by EP x ETP, norms, routers and MLA down-projections replicated.
#pragma once

#include <cstdint>
#include <vector>

#include "layer_placement.hpp"
#include "megamem/estimate.hpp"

namespace megamem {

enum class ModuleKind : std::uint8_t {
  word_embedding,
  position_embedding,
  input_layernorm,
  self_attention,
  pre_mlp_layernorm,
  mlp,
  router,
  routed_experts,
  shared_experts,
  moe_latent_projection,
  final_layernorm,
  output_layer,
  mtp_projection,  // enorm, hnorm, eh_proj
  mtp_final_layernorm,
};

const char* module_kind_name(ModuleKind kind);

struct ParamTensor {
  std::int64_t numel = 0;   // elements of one tensor
  std::int64_t copies = 1;  // identical tensors in a row (local experts' weights)
  ModuleKind module = ModuleKind::word_embedding;
  int layer = -1;                 // decoder layer index, or MTP depth when mtp
  bool mtp = false;               // part of a multi-token-prediction layer
  bool moe_layer = false;         // the layer it belongs to is a MoE layer
  bool expert = false;            // routed expert: sharded over expert-DP
  bool shared_embedding = false;  // Megatron puts it in a bucket of its own
  bool gemm_weight = false;       // 2-D GEMM weight (fp8 param gather, Muon)
  bool embedding_or_output = false;

  std::int64_t elements() const { return numel * copies; }
};

// A run of tensors repeated `repeat` times in a row (consecutive layers of one kind).
struct TensorBlock {
  const ParamTensor* tensors = nullptr;
  std::size_t count = 0;
  std::int64_t repeat = 1;
};

// One tensor list per layer kind, built once per estimate: every dense (MoE) layer of a
// model allocates the same tensors.
struct LayerTemplates {
  std::vector<ParamTensor> dense;
  std::vector<ParamTensor> moe;
};

LayerTemplates layer_templates(const NormalizedConfig& normalized);

// A stage's tensors as blocks in Megatron's order: its own embedding, runs of identical
// layers (from the templates), then final norm, MTP and output layer.
struct StageParams {
  std::vector<ParamTensor> head;  // embedding
  std::vector<ParamTensor> tail;  // final norm, MTP layers, output layer
  std::vector<TensorBlock> blocks;
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
