// Properties that hold for every configuration (issue 4): more recompute never raises the
// activation peak, more TP never raises any rank's weights, and the timeline's maximum is
// the reported peak.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "megamem/estimate.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

namespace {
// A small random dense or MoE model and layout that normalize() accepts.
Config random_config(std::mt19937& rng) {
  auto pick = [&](std::initializer_list<int> values) {
    std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
    return *(values.begin() + static_cast<std::ptrdiff_t>(d(rng)));
  };
  Config c = fixtures::llama3_70b();
  c.model.num_layers = pick({4, 8, 12});
  c.model.hidden_size = pick({512, 1024});
  c.model.num_attention_heads = 8;
  c.model.num_query_groups = pick({2, 4, 8});
  c.model.kv_channels = 0;
  c.model.ffn_hidden_size = pick({1024, 2048});
  c.model.vocab_size = pick({1000, 32000});
  c.model.hidden_dropout = pick({0, 1}) * 0.1;
  if (pick({0, 1}) == 1) {
    c.model.num_experts = 8;
    c.model.moe_router_topk = 2;
    c.model.moe_ffn_hidden_size = 512;
    c.parallel.expert_parallel = pick({1, 2});
    c.parallel.expert_tensor_parallel = 1;
  }
  c.parallel.tensor_parallel = pick({1, 2});
  c.parallel.sequence_parallel = true;
  c.parallel.pipeline_parallel = pick({1, 2, 4});
  c.parallel.world_size = 8;
  c.training.seq_length = pick({512, 1024});
  c.training.micro_batch_size = pick({1, 2});
  c.training.global_batch_size = 16 * c.training.micro_batch_size;
  if (pick({0, 1}) == 1) c.training.attention_backend = AttentionBackend::unfused;
  c.optimizer.grad_reduce_in_bf16 = pick({0, 1}) == 1;
  return c;
}
}  // namespace

TEST_CASE("more recompute never raises the activation peak") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    Config c = random_config(rng);
    auto none = estimate(c);
    REQUIRE(none.has_value());
    c.training.recompute.granularity = RecomputeGranularity::selective;
    c.training.recompute.modules = {RecomputeModule::core_attn, RecomputeModule::mlp,
                                    RecomputeModule::moe};
    auto selective = estimate(c);
    c.training.recompute.granularity = RecomputeGranularity::full;
    auto full = estimate(c);
    REQUIRE(selective.has_value());
    REQUIRE(full.has_value());
    for (std::size_t r = 0; r < none->ranks.size(); ++r) {
      CHECK(selective->ranks[r].activation_bytes_per_microbatch <=
            none->ranks[r].activation_bytes_per_microbatch);
      CHECK(full->ranks[r].activation_bytes_per_microbatch <=
            selective->ranks[r].activation_bytes_per_microbatch);
      CHECK(selective->ranks[r].activation_peak_bytes <= none->ranks[r].activation_peak_bytes);
      CHECK(full->ranks[r].activation_peak_bytes <= none->ranks[r].activation_peak_bytes);
    }
  }
}

TEST_CASE("doubling TP never raises any rank's weights") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    Config c = random_config(rng);
    c.parallel.tensor_parallel = 1;
    c.parallel.expert_parallel = 1;
    auto narrow = estimate(c);
    REQUIRE(narrow.has_value());
    c.parallel.tensor_parallel = 2;
    c.parallel.expert_tensor_parallel = 2;
    auto wide = estimate(c);
    REQUIRE(wide.has_value());
    for (std::size_t r = 0; r < narrow->ranks.size(); ++r) {
      CHECK(wide->ranks[r].weight_bytes <= narrow->ranks[r].weight_bytes);
    }
  }
}

TEST_CASE("the timeline's maximum equals the reported peak") {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 60; ++trial) {
    auto e = estimate(random_config(rng));
    REQUIRE(e.has_value());
    for (const RankMemory& rank : e->ranks) {
      REQUIRE_FALSE(rank.timeline.empty());
      std::uint64_t highest = 0;
      for (const TimelineEvent& event : rank.timeline) {
        highest = std::max(highest, event.peak_during_bytes);
      }
      CHECK(highest == rank.peak_allocated_bytes);
      CHECK(rank.timeline.back().kind == TimelineEvent::Kind::optimizer_step);
      CHECK(rank.timeline.back().allocated_after_bytes == allocated_after_step_bytes(rank));
      CHECK(rank.static_bytes + rank.activation_peak_bytes + rank.transient_bytes ==
            rank.peak_allocated_bytes);
    }
  }
}

TEST_CASE("the shortened schedule reaches the same peak as the full one") {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 80; ++trial) {
    Config c = random_config(rng);
    std::uniform_int_distribution<int> batches(1, 40);
    c.training.global_batch_size = c.training.micro_batch_size * 8 * batches(rng);
    if (c.parallel.pipeline_parallel > 1 && trial % 2 == 0) {
      c.model.num_layers = 16;
      c.parallel.virtual_stages_per_pipeline_rank = 2;
    }
    EstimateOptions fast;
    fast.timeline = false;
    fast.module_tree = false;
    auto full = estimate(c);
    auto shortened = estimate(c, fast);
    if (!full.has_value()) continue;  // e.g. too few micro-batches for interleaving
    REQUIRE(shortened.has_value());
    for (std::size_t r = 0; r < full->ranks.size(); ++r) {
      CHECK(shortened->ranks[r].peak_allocated_bytes == full->ranks[r].peak_allocated_bytes);
      CHECK(shortened->ranks[r].activation_peak_bytes == full->ranks[r].activation_peak_bytes);
      CHECK(shortened->ranks[r].max_inflight_microbatches ==
            full->ranks[r].max_inflight_microbatches);
    }
  }
}

TEST_CASE("the optimizer step's fp32 grad copy is a phase of its own, never beside activations") {
  // optimizer.py _copy_model_grads_to_main_grads makes it; zero_grad frees it before the next
  // forward (megatron/training/training.py train_step).
  Config c = fixtures::llama3_70b();
  c.model.num_layers = 4;
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 8;
  c.optimizer.grad_reduce_in_bf16 = true;
  c.training.micro_batch_size = 8;
  c.training.global_batch_size = 64;
  auto with_activations = estimate(c);
  REQUIRE(with_activations.has_value());
  const RankMemory& busy = with_activations->ranks[0];
  REQUIRE(busy.optimizer_step_bytes > 0);
  REQUIRE(busy.activation_peak_bytes > busy.optimizer_step_bytes);
  CHECK(busy.peak_allocated_bytes ==
        busy.static_bytes + busy.activation_peak_bytes + busy.transient_bytes);
  CHECK(busy.peak_allocated_bytes - busy.static_bytes >= busy.activation_peak_bytes);

  c.training.seq_length = 16;  // activations far below the copy: the step is the peak
  c.model.max_position_embeddings = 16;
  auto quiet = estimate(c);
  REQUIRE(quiet.has_value());
  const RankMemory& rank = quiet->ranks[0];
  CHECK(rank.peak_allocated_bytes == allocated_after_step_bytes(rank));
  CHECK(rank.activation_peak_bytes == 0);
  CHECK(rank.transient_bytes == rank.optimizer_step_bytes);
}
