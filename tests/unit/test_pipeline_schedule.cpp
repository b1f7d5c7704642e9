// Pipeline schedules: in-flight micro-batches per rank (memory-model.md 6.1, 9.4).
#include <algorithm>
#include <catch2/catch.hpp>

#include "estimate_helpers.hpp"
#include "model_fixtures.hpp"
#include "schedule/pipeline_schedule.hpp"
#include "schedule/timeline.hpp"

using namespace megamem;

namespace {
struct InFlight {
  int total = 0;
  std::vector<int> per_chunk;
};
// Maximum outstanding chunk-forwards overall and per chunk.
InFlight max_in_flight(const ScheduleShape& shape) {
  InFlight max;
  max.per_chunk.assign(static_cast<std::size_t>(shape.virtual_stages), 0);
  std::vector<int> live(static_cast<std::size_t>(shape.virtual_stages), 0);
  int total = 0;
  for (const ScheduleOp& op : pipeline_schedule(shape)) {
    const auto chunk = static_cast<std::size_t>(op.chunk);
    if (op.forward) {
      ++live[chunk];
      ++total;
      max.total = std::max(max.total, total);
      max.per_chunk[chunk] = std::max(max.per_chunk[chunk], live[chunk]);
    } else {
      --live[chunk];
      --total;
    }
  }
  return max;
}
ScheduleShape shape(int p, int v, int rank, std::int64_t m, int group = 0) {
  ScheduleShape s;
  s.pipeline_parallel = p;
  s.virtual_stages = v;
  s.pp_rank = rank;
  s.num_microbatches = m;
  s.microbatch_group_size = group > 0 ? group : p;
  return s;
}
}  // namespace

TEST_CASE("1F1B keeps min(p - r, M) micro-batches in flight") {
  CHECK(max_in_flight(shape(4, 1, 0, 8)).total == 4);
  CHECK(max_in_flight(shape(4, 1, 1, 8)).total == 3);
  CHECK(max_in_flight(shape(4, 1, 2, 8)).total == 2);
  CHECK(max_in_flight(shape(4, 1, 3, 8)).total == 1);
  CHECK(max_in_flight(shape(4, 1, 0, 2)).total == 2);
  CHECK(max_in_flight(shape(4, 1, 2, 2)).total == 2);
  CHECK(max_in_flight(shape(4, 1, 3, 2)).total == 1);
}

TEST_CASE("without pipelining each micro-batch's backward follows its forward") {
  const auto ops = pipeline_schedule(shape(1, 1, 0, 5));
  REQUIRE(ops.size() == 10);
  CHECK(max_in_flight(shape(1, 1, 0, 5)).total == 1);
}

TEST_CASE("interleaved warm-up is 2(p - r - 1) + (v - 1)G: outstanding 11, 9, 7, 5") {
  const std::vector<std::vector<int>> per_chunk = {{8, 4}, {8, 4}, {7, 3}, {5, 1}};
  const int outstanding[] = {11, 9, 7, 5};
  for (int rank = 0; rank < 4; ++rank) {
    const InFlight max = max_in_flight(shape(4, 2, rank, 8));
    CHECK(max.total == outstanding[rank]);
    CHECK(max.per_chunk == per_chunk[static_cast<std::size_t>(rank)]);
  }
}

TEST_CASE("interleaved with four chunks: outstanding 19, 17, 15, 13") {
  const int outstanding[] = {19, 17, 15, 13};
  for (int rank = 0; rank < 4; ++rank) {
    CHECK(max_in_flight(shape(4, 4, rank, 8)).total == outstanding[rank]);
  }
  CHECK(max_in_flight(shape(4, 4, 0, 8)).per_chunk == std::vector<int>{8, 8, 4, 4});
}

TEST_CASE("every schedule runs each (micro-batch, chunk) forward and backward once") {
  for (int rank = 0; rank < 4; ++rank) {
    const auto ops = pipeline_schedule(shape(4, 3, rank, 12, 4));
    CHECK(ops.size() == 2u * 12u * 3u);
    CHECK(std::count_if(ops.begin(), ops.end(), [](const ScheduleOp& op) { return op.forward; }) ==
          36);
  }
}

// combined_1f1b.py: with --overlap-moe-expert-parallel-comm a forward runs with the backward
// after it. Without pipelining: F0, then (F1 B0), (F2 B1), ..., then the last backward alone.
// Interleaved: one more warm-up forward (schedules.py), then every steady forward combined.
TEST_CASE("the EP overlap's combined steps: no pipelining and interleaved") {
  ScheduleShape single = shape(1, 1, 0, 4);
  single.overlap_moe_expert_parallel_comm = true;
  const auto ops = pipeline_schedule(single);
  REQUIRE(ops.size() == 8);
  const bool forward[] = {true, true, false, true, false, true, false, false};
  const std::int64_t microbatch[] = {0, 1, 0, 2, 1, 3, 2, 3};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    CHECK(ops[i].forward == forward[i]);
    CHECK(ops[i].microbatch == microbatch[i]);
    CHECK(ops[i].with_next_backward == (i == 1 || i == 3 || i == 5));
  }
  ScheduleShape interleaved = shape(4, 2, 0, 8);
  interleaved.overlap_moe_expert_parallel_comm = true;
  const auto steps = pipeline_schedule(interleaved);
  // Warm-up 2(p - r - 1) + (v - 1)G + 1 = 11 forwards, then 16 - 11 combined steps.
  const auto warmup =
      std::find_if(steps.begin(), steps.end(), [](const ScheduleOp& op) { return !op.forward; });
  CHECK(warmup - steps.begin() == 12);  // 11 warm-up forwards and the first combined one
  CHECK(std::count_if(steps.begin(), steps.end(),
                      [](const ScheduleOp& op) { return op.with_next_backward; }) == 5);
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    if (steps[i].with_next_backward) CHECK_FALSE(steps[i + 1].forward);
  }
}

// The walk of a combined step, by hand: a chunk that saves 10 bytes, peaks 12 above the live
// activations in its forward, 5 in its backward and 13 in a combined step; static memory 100.
// Two micro-batches at PP 1 with the overlap: F0 (100 + 12), then F1 beside B0 (100 + 10 live
// + 13 = 123), then B1 (100 + 10 + 5). Without it the peak is B0's or B1's 115.
TEST_CASE("a combined step peaks at the live activations plus its own extra") {
  Config c = fixtures::qwen3_235b_a22b();
  c.model.num_layers = 4;
  c.parallel.world_size = 8;
  c.parallel.expert_parallel = 8;
  c.training.global_batch_size = 16;  // 2 micro-batches on each of the 8 DP ranks
  ChunkActivations chunk;
  chunk.saved_bytes = 10;
  chunk.forward_peak_extra_bytes = 12;
  chunk.backward_peak_extra_bytes = 5;
  chunk.combined_step_extra_bytes = 13;
  std::vector<ScheduleOp> schedule;
  const std::vector<ChunkActivations> chunks = {chunk};
  const RankPeak plain = simulate_rank(testing::normalized(c), 0, chunks, 100, nullptr, schedule);
  CHECK(plain.peak_allocated_bytes == 115);
  c.training.overlap_moe_expert_parallel_comm = true;
  const RankPeak combined =
      simulate_rank(testing::normalized(c), 0, chunks, 100, nullptr, schedule);
  CHECK(combined.peak_allocated_bytes == 123);
  CHECK(combined.activation_bytes == 10);
  CHECK(combined.transient_bytes == 13);
  // Two different chunks (interleaved): the larger extra, plus what the forward keeps beyond
  // what the backward frees.
  ChunkActivations smaller;
  smaller.saved_bytes = 6;
  smaller.combined_step_extra_bytes = 4;
  CHECK(combined_step_extra_bytes(chunk, smaller) == 13 + 4);
  CHECK(combined_step_extra_bytes(smaller, chunk) == 13);
}

namespace {
// The ops' indices that keep fine-grained offloading's margin.
std::vector<std::size_t> kept_ops(std::vector<ScheduleOp> ops, std::vector<bool> grouped) {
  mark_offload_margins(ops, [&](int chunk) { return grouped[static_cast<std::size_t>(chunk)]; });
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].keeps_offload_margin) kept.push_back(i);
  }
  return kept;
}
}  // namespace

TEST_CASE("offloading margins: the first grouped chunk to run backward, and each next one") {
  // An interleaved last stage whose chunk 1 is the loss alone (no offload groups): the first
  // chunk with groups to run backward is micro-batch 0's chunk 0, which keeps its margin
  // (post_warmup_callback); micro-batch 1's chunk 0 commits while micro-batch 0's is next.
  const std::vector<ScheduleOp> interleaved = {{true, 0, 0},  {true, 1, 0}, {true, 0, 1},
                                               {false, 0, 1}, {true, 1, 1}, {false, 1, 1},
                                               {false, 0, 0}, {false, 1, 0}};
  CHECK(kept_ops(interleaved, {true, false}) == std::vector<std::size_t>{0, 6});
  // Without pipelining each forward's chunk is the next to run backward
  // (should_bulk_offload), also in the EP overlap's combined steps, whose backward has
  // begun when the forward commits its groups.
  const std::vector<ScheduleOp> one_f_one_b = {
      {true, 0, 0}, {false, 0, 0}, {true, 1, 0}, {false, 1, 0}};
  CHECK(kept_ops(one_f_one_b, {true}) == std::vector<std::size_t>{0, 1, 2, 3});
  const std::vector<ScheduleOp> combined = {
      {true, 0, 0}, {true, 1, 0, true}, {false, 0, 0}, {false, 1, 0}};
  CHECK(kept_ops(combined, {true}) == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(kept_ops(combined, {false}).empty());
}
