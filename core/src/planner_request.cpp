// plan_request_for() and plan_inputs(); see planner.hpp.
#include "megamem/planner.hpp"

namespace megamem {

PlanRequest plan_request_for(const Config& config) {
  PlanRequest request;
  request.base = config;
  request.base.optimizer.overlap_grad_reduce = true;
  return request;
}

Config plan_inputs(const Config& config, const PlannerSearchSpace& space) {
  Config inputs = plan_request_for(config).base;
  // Planner::config_for (planner.cpp) writes these for every candidate.
  const ParallelConfig defaults;
  ParallelConfig& p = inputs.parallel;
  p.tensor_parallel = defaults.tensor_parallel;
  p.pipeline_parallel = defaults.pipeline_parallel;
  p.virtual_stages_per_pipeline_rank = defaults.virtual_stages_per_pipeline_rank;
  p.context_parallel = defaults.context_parallel;
  p.expert_parallel = defaults.expert_parallel;
  p.expert_tensor_parallel = defaults.expert_tensor_parallel;
  p.sequence_parallel = defaults.sequence_parallel;
  p.decoder_first_pipeline_num_layers = defaults.decoder_first_pipeline_num_layers;
  p.decoder_last_pipeline_num_layers = defaults.decoder_last_pipeline_num_layers;
  p.account_for_embedding_in_pipeline_split = defaults.account_for_embedding_in_pipeline_split;
  p.account_for_loss_in_pipeline_split = defaults.account_for_loss_in_pipeline_split;
  p.pipeline_layout = defaults.pipeline_layout;
  p.microbatch_group_size_per_vp_stage = defaults.microbatch_group_size_per_vp_stage;
  inputs.training.micro_batch_size = TrainingConfig{}.micro_batch_size;
  // Planner::apply_row writes these when recompute or offload is searched. (An optimizer-
  // offload row also turns the precision-aware optimizer on; that field stays an input, so
  // such a candidate's plan_inputs differ from its request's there.)
  if (space.search_recompute) inputs.training.recompute = RecomputeConfig{};
  if (space.search_offload) {
    inputs.training.offload = OffloadConfig{};
    inputs.optimizer.optimizer_cpu_offload = OptimizerConfig{}.optimizer_cpu_offload;
    inputs.optimizer.optimizer_offload_fraction = OptimizerConfig{}.optimizer_offload_fraction;
  }
  return inputs;
}

}  // namespace megamem
