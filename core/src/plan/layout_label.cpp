// Layout labels; see layout_label.hpp.
#include "megamem/layout_label.hpp"

namespace megamem {
namespace {

std::string degree(const char* name, int value) { return name + std::to_string(value); }

}  // namespace

std::string layout_label(const ParallelConfig& p) {
  const int etp = p.expert_tensor_parallel > 0 ? p.expert_tensor_parallel : p.tensor_parallel;
  return degree("TP", p.tensor_parallel) + degree(" PP", p.pipeline_parallel) +
         degree(" VPP", p.virtual_stages_per_pipeline_rank) + degree(" CP", p.context_parallel) +
         degree(" EP", p.expert_parallel) + degree(" ETP", etp);
}

std::string layout_summary_label(const ParallelConfig& p) {
  std::string label = degree("TP", p.tensor_parallel) + degree(" PP", p.pipeline_parallel);
  if (p.virtual_stages_per_pipeline_rank > 1) {
    label += degree(" VPP", p.virtual_stages_per_pipeline_rank);
  }
  return label + degree(" EP", p.expert_parallel) + degree(" CP", p.context_parallel);
}

}  // namespace megamem
