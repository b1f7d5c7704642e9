// Rule book, micro-batch topic: the global batch in micro-batches, and the interleaved
// schedule's micro-batch groups.
#include "rule_book.hpp"

namespace megamem::rules {
namespace {

// megatron/core/num_microbatches_calculator.py: global batch = M x micro batch x DP.
std::optional<Error> global_batch_divides(NormalizedConfig& n) {
  TrainingConfig& train = n.config.training;
  const std::int64_t per_step = std::int64_t{train.micro_batch_size} * n.data_parallel;
  const std::int64_t global = train.global_batch_size > 0 ? train.global_batch_size : per_step;
  if (global % per_step != 0) {
    return rule_error("global_batch_size",
                      "global_batch_size " + str(global) +
                          " is not divisible by micro_batch_size x DP = " + str(per_step),
                      "megatron/core/num_microbatches_calculator.py");
  }
  n.num_microbatches = global / per_step;
  train.global_batch_size = global;
  return std::nullopt;
}

// schedules.py (forward_backward_pipelining_with_interleaving): the micro-batch group lies in
// [PP, M], and the last group is empty or at least PP long.
std::optional<Error> interleaved_groups_fit(NormalizedConfig& n) {
  ParallelConfig& par = n.config.parallel;
  if (par.microbatch_group_size_per_vp_stage == 0) {
    par.microbatch_group_size_per_vp_stage = par.pipeline_parallel;  // model_parallel_config.py
  }
  if (par.virtual_stages_per_pipeline_rank == 1) return std::nullopt;
  const char* source = "megatron/core/pipeline_parallel/schedules.py";
  const std::int64_t group = par.microbatch_group_size_per_vp_stage;
  const std::int64_t micro = n.num_microbatches;
  if (group < par.pipeline_parallel || group > micro) {
    return rule_error("global_batch_size",
                      "the interleaved schedule needs micro-batch groups of PP to M micro-batches: "
                      "group " +
                          str(group) + ", PP " + str(par.pipeline_parallel) + ", M " + str(micro) +
                          "; raise global_batch_size or set microbatch_group_size_per_vp_stage",
                      source);
  }
  const std::int64_t remainder = micro % group;
  if (remainder > 0 && remainder < par.pipeline_parallel) {
    return rule_error("microbatch_group_size_per_vp_stage",
                      "M " + str(micro) + " mod the micro-batch group " + str(group) + " is " +
                          str(remainder) + ", which must be 0 or at least PP " +
                          str(par.pipeline_parallel),
                      source);
  }
  return std::nullopt;
}

constexpr Check kMicroBatchesChecks[] = {global_batch_divides, interleaved_groups_fit};

}  // namespace

const std::span<const Check> micro_batches_checks{kMicroBatchesChecks};

}  // namespace megamem::rules
