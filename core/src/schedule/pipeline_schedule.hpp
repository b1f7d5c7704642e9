// The order of forward and backward passes one pipeline rank runs in a training step.
//
// Source: megatron/core/pipeline_parallel/schedules.py — forward_backward_no_pipelining,
// 1F1B without interleaving (warm-up p - r - 1), and the interleaved schedule
// (get_pp_rank_microbatches, get_schedule_table). With --overlap-moe-expert-parallel-comm
// the steady steps are combined_1f1b.py's: a forward and the backward after it run layer by
// layer together (combined_1f1b_schedule_for_no_pipelining, ..._for_interleaved_pipelining).
#pragma once

#include <cstdint>
#include <vector>

namespace megamem {

struct ScheduleOp {
  bool forward = true;
  std::int64_t microbatch = 0;
  int chunk = 0;
  // A forward that runs layer by layer with the backward that follows it (EP A2A overlap):
  // model_chunk_schedule_plan.py pairs forward layer i with backward layer L-1-i.
  bool with_next_backward = false;
  // Fine-grained offloading keeps this micro-batch's margin on the GPU from its forward to its
  // backward (timeline.hpp mark_offload_margins; set on both).
  bool keeps_offload_margin = false;
};

struct ScheduleShape {
  int pipeline_parallel = 1;
  int virtual_stages = 1;
  int pp_rank = 0;
  std::int64_t num_microbatches = 1;
  int microbatch_group_size = 1;  // interleaved only
  bool overlap_moe_expert_parallel_comm = false;
};

// Fills `ops` (cleared first; its buffer is reused, so a caller walking many ranks allocates
// it once).
void pipeline_schedule(const ScheduleShape& shape, std::vector<ScheduleOp>& ops);
// The same schedule in a vector of its own.
std::vector<ScheduleOp> pipeline_schedule(const ScheduleShape& shape);

// A smaller micro-batch count whose schedule reaches the same memory peak: the same
// warm-up, the same last (partial) group, and at least one full period of the steady
// state in between, which repeats identically for every further group.
std::int64_t equivalent_microbatches(const ScheduleShape& shape);

}  // namespace megamem
