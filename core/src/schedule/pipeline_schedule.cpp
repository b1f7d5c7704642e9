// Pipeline schedules; see pipeline_schedule.hpp.
#include "schedule/pipeline_schedule.hpp"

#include <algorithm>

namespace megamem {

namespace {

// forward_backward_no_pipelining: each micro-batch's backward follows its forward; with the
// EP overlap, combined_1f1b_schedule_for_no_pipelining runs the first forward alone, then
// each forward with the previous micro-batch's backward, then the last backward alone.
void no_pipelining(const ScheduleShape& shape, std::vector<ScheduleOp>& ops) {
  const std::int64_t m = shape.num_microbatches;
  if (shape.overlap_moe_expert_parallel_comm && m > 0) {
    ops.push_back({true, 0, 0});
    for (std::int64_t mb = 1; mb < m; ++mb) {
      ops.push_back({true, mb, 0, /*with_next_backward=*/true});
      ops.push_back({false, mb - 1, 0});
    }
    ops.push_back({false, m - 1, 0});
    return;
  }
  for (std::int64_t mb = 0; mb < m; ++mb) {
    ops.push_back({true, mb, 0});
    ops.push_back({false, mb, 0});
  }
}

}  // namespace

void pipeline_schedule(const ScheduleShape& shape, std::vector<ScheduleOp>& ops) {
  const std::int64_t m = shape.num_microbatches;
  const int p = shape.pipeline_parallel;
  const int v = shape.virtual_stages;
  ops.clear();
  ops.reserve(static_cast<std::size_t>(2 * m * v));
  if (p == 1) return no_pipelining(shape, ops);
  if (v == 1) {
    const std::int64_t warmup = std::min<std::int64_t>(p - shape.pp_rank - 1, m);
    for (std::int64_t mb = 0; mb < warmup; ++mb) ops.push_back({true, mb, 0});
    for (std::int64_t i = 0; i < m - warmup; ++i) {
      ops.push_back({true, warmup + i, 0});
      ops.push_back({false, i, 0});
    }
    for (std::int64_t mb = m - warmup; mb < m; ++mb) ops.push_back({false, mb, 0});
    return;
  }
  // get_schedule_table: groups of G micro-batches, all chunks of a group in turn.
  const std::int64_t group = shape.microbatch_group_size;
  std::vector<ScheduleOp> table;
  table.reserve(static_cast<std::size_t>(m * v));
  for (std::int64_t start = 0; start < m; start += group) {
    const std::int64_t end = (start + group >= m) ? m : start + group;
    for (int chunk = 0; chunk < v; ++chunk) {
      for (std::int64_t mb = start; mb < end; ++mb) table.push_back({true, mb, chunk});
    }
  }
  const std::int64_t total = m * v;
  std::int64_t warmup = 2 * std::int64_t{p - shape.pp_rank - 1} + std::int64_t{v - 1} * group;
  if (shape.overlap_moe_expert_parallel_comm) ++warmup;
  warmup = std::min(warmup, total);
  auto backward_of = [&](std::int64_t k) {
    ScheduleOp op = table[static_cast<std::size_t>(k)];
    op.forward = false;
    op.chunk = v - 1 - op.chunk;
    return op;
  };
  for (std::int64_t k = 0; k < warmup; ++k) ops.push_back(table[static_cast<std::size_t>(k)]);
  for (std::int64_t k = 0; k < total - warmup; ++k) {
    ops.push_back(table[static_cast<std::size_t>(warmup + k)]);
    // schedules.py: with EP A2A overlap one more forward warms up, and then each steady
    // forward runs with the backward after it (combined_1f1b_schedule_for_interleaved_...).
    ops.back().with_next_backward = shape.overlap_moe_expert_parallel_comm;
    ops.push_back(backward_of(k));
  }
  for (std::int64_t k = total - warmup; k < total; ++k) ops.push_back(backward_of(k));
}

std::vector<ScheduleOp> pipeline_schedule(const ScheduleShape& shape) {
  std::vector<ScheduleOp> ops;
  pipeline_schedule(shape, ops);
  return ops;
}

std::int64_t equivalent_microbatches(const ScheduleShape& shape) {
  const std::int64_t m = shape.num_microbatches;
  const std::int64_t p = shape.pipeline_parallel;
  if (p == 1) return std::min<std::int64_t>(m, 2);  // every micro-batch alike
  if (shape.virtual_stages == 1) {
    // 1F1B: warm-up p - r - 1, then identical steady steps of one chunk: the first reaches
    // the peak and the cool-down only frees, so one steady step is enough.
    return std::min<std::int64_t>(m, p - shape.pp_rank);
  }
  const std::int64_t group = shape.microbatch_group_size;
  const std::int64_t v = shape.virtual_stages;
  const std::int64_t warmup = 2 * (p - 1) + (v - 1) * group + 1;  // the largest, rank 0
  // Whole groups covering the warm-up plus three more periods, then M's own remainder.
  const std::int64_t groups = (warmup + group * v - 1) / (group * v) + 3;
  const std::int64_t reduced = groups * group + m % group;
  return reduced < m ? reduced : m;
}

}  // namespace megamem
