// Rule book, pipeline-layout topic: the layer placement (layer_placement.cpp holds the split
// rules of transformer_block.py and pipeline_parallel_layer_layout.py), computed once here
// and kept in NormalizedConfig::stages, and the virtual-pipeline degree.
#include "../layer_placement.hpp"
#include "rule_book.hpp"

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

// megatron/core/pipeline_parallel/schedules.py: interleaving needs several pipeline ranks.
std::optional<Error> interleaving_needs_pipeline(NormalizedConfig& n) {
  const ParallelConfig& par = n.config.parallel;
  if (par.virtual_stages_per_pipeline_rank == 1 || par.pipeline_parallel > 1) return std::nullopt;
  return rule_error("virtual_stages_per_pipeline_rank",
                    "interleaved (virtual) pipeline stages need pipeline_model_parallel_size > 1",
                    "megatron/core/pipeline_parallel/schedules.py");
}

constexpr Check kPipelineLayoutChecks[] = {place_stages, interleaving_needs_pipeline};

}  // namespace

const std::span<const Check> pipeline_layout_checks{kPipelineLayoutChecks};

}  // namespace megamem::rules
