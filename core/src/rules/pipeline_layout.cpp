// Rule book, pipeline-layout topic: the layer placement (layer_placement.cpp holds the split
// rules of transformer_block.py and pipeline_parallel_layer_layout.py), computed once here
// and kept in NormalizedConfig::stages, the virtual-pipeline degree, and what the EP overlap
// schedule needs of it.
#include <string>

#include "rule_book.hpp"
#include "schedule/layer_placement.hpp"

namespace megamem::rules {
namespace {

std::optional<Error> place_stages(NormalizedConfig& n) {
  Expected<std::vector<StagePlacement>> stages = place_layers(n);
  if (!stages) return stages.error();
  n.stages = std::move(stages).value();
  ParallelConfig& par = n.config.parallel;
  // pipeline_parallel_layer_layout.py: a layout string's stage count is PP x VPP.
  if (!par.pipeline_layout.empty()) {
    par.virtual_stages_per_pipeline_rank =
        static_cast<int>(n.stages.size() / static_cast<std::size_t>(par.pipeline_parallel));
  }
  return std::nullopt;
}

// TransformerConfig.__post_init__ asserts what the combined 1F1B schedule of
// --overlap-moe-expert-parallel-comm needs in every release that has it (Aug 2025 on):
// expert parallelism, no full-layer recompute, and at PP > 1 an interleaved schedule (first
// PP 1 only; only forward_backward_pipelining_with_interleaving has a combined path). After
// place_stages: a layout sets VPP.
std::optional<Error> ep_overlap_requirements(NormalizedConfig& n) {
  const TrainingConfig& t = n.config.training;
  if (!t.overlap_moe_expert_parallel_comm) return std::nullopt;
  const ParallelConfig& p = n.config.parallel;
  constexpr const char* kSource = "megatron/core/transformer/transformer_config.py __post_init__";
  if (auto error = error_when(p.expert_parallel <= 1, "expert_model_parallel_size",
                              "overlap_moe_expert_parallel_comm is only supported with expert "
                              "model parallelism (expert_model_parallel_size > 1)",
                              kSource)) {
    return error;
  }
  if (auto error = error_when(
          p.pipeline_parallel > 1 && p.virtual_stages_per_pipeline_rank <= 1,
          "virtual_pipeline_model_parallel_size",
          "If enabling EP A2A overlap, virtual_pipeline_model_parallel_size must be specified "
          "when pipeline_model_parallel_size > 1",
          kSource)) {
    return error;
  }
  if (auto error =
          error_when(t.recompute.granularity == RecomputeGranularity::full, "recompute_granularity",
                     "disable full recomputation when enabling "
                     "overlap_moe_expert_parallel_comm",
                     kSource)) {
    return error;
  }
  // The 'moe' recompute assert came with core_v0.17 (PR #3917); earlier releases run it.
  return warn_when(n,
                   t.recompute.granularity == RecomputeGranularity::selective &&
                       t.recompute.modules.has(RecomputeModule::moe),
                   "recompute module 'moe' with --overlap-moe-expert-parallel-comm: Megatron-Core "
                   "0.17 and later refuse it (earlier releases run it); estimated as given",
                   kSource);
}

// megatron/core/pipeline_parallel/schedules.py: interleaving needs several pipeline ranks.
std::optional<Error> interleaving_needs_pipeline(NormalizedConfig& n) {
  const ParallelConfig& par = n.config.parallel;
  if (par.virtual_stages_per_pipeline_rank == 1 || par.pipeline_parallel > 1) return std::nullopt;
  return rule_error("virtual_stages_per_pipeline_rank",
                    "interleaved (virtual) pipeline stages need pipeline_model_parallel_size > 1",
                    "megatron/core/pipeline_parallel/schedules.py");
}

// Megatron-LM dev transformer_config.py __post_init__ (moe_n_hash_layers): hash-routed MoE
// layers (moe/router.py tid2eid) must all sit in the embedding's stage (the first chunk of
// the first pipeline rank), and do not combine with EP communication overlap. A dense model
// builds no router, so the field changes nothing there (an experts-scope row).
std::optional<Error> hash_routing_on_embedding_stage(NormalizedConfig& n) {
  const ModelConfig& m = n.config.model;
  if (m.moe_n_hash_layers == 0 || m.num_experts == 0) return std::nullopt;
  constexpr const char* kSource = "megatron/core/transformer/transformer_config.py (dev)";
  if (auto error = error_when(m.moe_n_hash_layers > m.num_layers, "moe_n_hash_layers",
                              "hash routing needs MoE layers: moe_n_hash_layers counts the first "
                              "decoder layers, which must exist",
                              kSource)) {
    return error;
  }
  const int first_stage_layers = n.stages.empty() ? m.num_layers : n.stages.front().num_layers;
  if (auto error = error_when(m.moe_n_hash_layers > first_stage_layers, "moe_n_hash_layers",
                              "all hash MoE layers must be in the same virtual pipeline stage as "
                              "the embedding, which has " +
                                  std::to_string(first_stage_layers) + " decoder layers",
                              kSource)) {
    return error;
  }
  return error_when(
      n.config.training.overlap_moe_expert_parallel_comm, "overlap_moe_expert_parallel_comm",
      "overlap_moe_expert_parallel_comm does not support moe_n_hash_layers > 0", kSource);
}

// Megatron-Bridge's Gemma4DenseProvider.provide() raises NotImplementedError ("currently
// supports PP=1 only") for any other pipeline size or a virtual stage; its layer is the one
// local_layer_spec marks. Only that launcher refuses it, so this is a warning.
std::optional<Error> gemma4_dense_builds_one_stage(NormalizedConfig& n) {
  const ParallelConfig& p = n.config.parallel;
  if (!n.config.model.local_layer_spec || p.pipeline_parallel == 1) return std::nullopt;
  policy_warning(n,
                 "Megatron-Bridge builds the Gemma 4 dense layer with pipeline parallelism 1 "
                 "only (Gemma4DenseProvider.provide() raises for PP " +
                     std::to_string(p.pipeline_parallel) + ")",
                 "Megatron-Bridge src/megatron/bridge/models/gemma/gemma4_provider.py");
  return std::nullopt;
}

// Megatron-Bridge's Step35DecoderLayer (stepfun/step35_provider.py) indexes layer_types with an
// MTP layer's number + num_layers + the stage's layer offset - 1: the MTP entries the provider
// appends are windowed, but any offset takes the index past the list, where the layer is built
// with full attention. After place_stages: the offset is the MTP stage's first layer.
std::optional<Error> mtp_attention_by_layer_index(NormalizedConfig& n) {
  if (n.config.model.mtp_layer_kind != MtpLayerKind::dense_by_layer_index) return std::nullopt;
  for (const StagePlacement& stage : n.stages) {
    if (stage.num_mtp_layers > 0 && stage.first_layer > 0) {
      for (LayerKind& kind : n.mtp_layer_kinds) kind = LayerKind::dense;
    }
  }
  return std::nullopt;
}

constexpr Check kPipelineLayoutChecks[] = {place_stages,
                                           interleaving_needs_pipeline,
                                           ep_overlap_requirements,
                                           hash_routing_on_embedding_stage,
                                           gemma4_dense_builds_one_stage,
                                           mtp_attention_by_layer_index};

}  // namespace

const std::span<const Check> pipeline_layout_checks{kPipelineLayoutChecks};

}  // namespace megamem::rules
