// Per-rank parameters and static bytes (memory-model.md 3 and worked examples 9.2, 9.3).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>

#include "megamem/estimate.hpp"
#include "megamem/units.hpp"
#include "model_fixtures.hpp"

using namespace megamem;
using Catch::Matchers::WithinRel;

namespace {
Estimate run(const Config& config) {
  auto result = estimate(config);
  INFO((result ? std::string() : result.error().field + ": " + result.error().message));
  REQUIRE(result.has_value());
  return result.value();
}
std::int64_t params(const RankMemory& rank) { return rank.dense_params + rank.expert_params; }
// Weights + gradients + optimizer states: the worked examples leave out workspaces.
double model_state(const RankMemory& rank) {
  return static_cast<double>(rank.weight_bytes + rank.gradient_bytes + rank.optimizer_bytes);
}
constexpr double kPaddingTolerance = 1e-4;  // DDP padding is < 0.01% (memory-model.md 9)
}  // namespace

TEST_CASE("Llama-3-70B TP8 PP4: embedding and output stages hold 2.27 B parameters") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  const Estimate e = run(c);
  REQUIRE(e.ranks.size() == 4);
  CHECK(params(e.ranks[0]) == 2'271'543'296);
  CHECK(params(e.ranks[1]) == 2'139'422'720);
  CHECK(params(e.ranks[2]) == 2'139'422'720);
  CHECK(params(e.ranks[3]) == 2'271'551'488);
  // 6 + 12/2 bytes per parameter with DP = 2.
  CHECK_THAT(model_state(e.ranks[0]), WithinRel(27'258'519'552.0, kPaddingTolerance));
  CHECK_THAT(model_state(e.ranks[1]), WithinRel(25'673'072'640.0, kPaddingTolerance));
  CHECK_THAT(model_state(e.ranks[3]), WithinRel(27'258'617'856.0, kPaddingTolerance));
  CHECK(model_state(e.ranks[0]) >= 27'258'519'552.0);  // padding only ever adds
}

TEST_CASE("DeepSeek-V3 PP8 EP32 uneven: ranks 1-6 hold the static peak, not rank 0") {
  Config c = fixtures::deepseek_v3();
  c.parallel.world_size = 256;
  c.parallel.pipeline_parallel = 8;
  c.parallel.expert_parallel = 32;
  c.parallel.decoder_first_pipeline_num_layers = 8;
  c.parallel.decoder_last_pipeline_num_layers = 5;
  const Estimate e = run(c);
  REQUIRE(e.ranks.size() == 8);
  CHECK(e.ranks[0].dense_params == 3'842'113'536);
  CHECK(e.ranks[0].expert_params == 1'761'607'680);
  CHECK(e.ranks[3].dense_params == 1'863'974'912);
  CHECK(e.ranks[3].expert_params == 2'818'572'288);
  CHECK(e.ranks[7].dense_params == 3'354'128'384);
  CHECK(e.ranks[7].expert_params == 2'113'929'216);
  CHECK_THAT(model_state(e.ranks[0]), WithinRel(56'202'412'032.0, kPaddingTolerance));
  CHECK_THAT(model_state(e.ranks[3]), WithinRel(62'617'141'248.0, kPaddingTolerance));
  CHECK_THAT(model_state(e.ranks[7]), WithinRel(59'433'294'336.0, kPaddingTolerance));
  CHECK(e.limiting_pp_rank >= 1);
  CHECK(e.limiting_pp_rank <= 6);
}

TEST_CASE("Qwen3-235B TP4 PP4 EP8 uneven 23/24/24/23: expert state sharded over expert-DP 4") {
  Config c = fixtures::qwen3_235b_tp4_pp4_ep8();
  const Estimate e = run(c);
  CHECK(e.normalized.data_parallel == 8);
  CHECK(e.normalized.expert_data_parallel == 4);
  CHECK(e.normalized.padded_vocab_size == 152'064);
  CHECK(e.ranks[0].dense_params == 577'959'680);
  CHECK(e.ranks[0].expert_params == 6'945'767'424);
  CHECK(e.ranks[1].dense_params == 440'604'672);
  CHECK(e.ranks[1].expert_params == 7'247'757'312);
  CHECK(e.ranks[3].dense_params == 577'963'776);
  // 7.5 B per dense and 9 B per expert parameter: 62.26 GiB and 63.83 GiB.
  const double gib = 1024.0 * 1024.0 * 1024.0;
  CHECK_THAT(model_state(e.ranks[0]) / gib, WithinRel(62.26, 1e-3));
  CHECK_THAT(model_state(e.ranks[1]) / gib, WithinRel(63.83, 1e-3));
}

TEST_CASE("bytes per parameter follow the optimizer and precision table") {
  Config c = fixtures::llama3_70b();
  c.model.num_layers = 2;
  c.parallel.world_size = 4;
  auto per_param = [](const Config& config) {
    auto e = estimate(config);
    REQUIRE(e.has_value());
    const RankMemory& rank = e->ranks[0];
    const auto p = static_cast<double>(rank.dense_params);
    return std::array<double, 4>{static_cast<double>(rank.weight_bytes) / p,
                                 static_cast<double>(rank.gradient_bytes) / p,
                                 static_cast<double>(rank.optimizer_bytes) / p,
                                 static_cast<double>(rank.optimizer_step_bytes) / p};
  };
  SECTION("bf16, fp32 grads, distributed optimizer over DP 4: 2 + 4 + 12/4") {
    auto b = per_param(c);
    CHECK_THAT(b[0], WithinRel(2.0, 1e-4));
    CHECK_THAT(b[1], WithinRel(4.0, 1e-4));
    CHECK_THAT(b[2], WithinRel(3.0, 1e-4));
  }
  SECTION("bf16 without the distributed optimizer: 18") {
    c.optimizer.use_distributed_optimizer = false;
    auto b = per_param(c);
    CHECK(b[0] + b[1] + b[2] == Approx(18.0));
  }
  SECTION("fp16: 4 + 12/R, and the step's fp32 grad copy 4/R") {
    c.training.params_dtype = DType::fp16;
    auto b = per_param(c);
    CHECK_THAT(b[0] + b[1], WithinRel(4.0, 1e-4));
    CHECK_THAT(b[2], WithinRel(3.0, 1e-4));
    CHECK_THAT(b[3], WithinRel(1.0, 1e-4));
  }
  SECTION("fp32 params: 8 + 8/R") {
    c.training.params_dtype = DType::fp32;
    auto b = per_param(c);
    CHECK_THAT(b[0] + b[1], WithinRel(8.0, 1e-4));
    CHECK_THAT(b[2], WithinRel(2.0, 1e-4));
  }
  SECTION("grad reduce in bf16: 4 + 12/R, and the step's fp32 grad copy 4/R") {
    c.optimizer.grad_reduce_in_bf16 = true;
    auto b = per_param(c);
    CHECK_THAT(b[0] + b[1], WithinRel(4.0, 1e-4));
    CHECK_THAT(b[2], WithinRel(3.0, 1e-4));
    CHECK_THAT(b[3], WithinRel(1.0, 1e-4));
  }
  SECTION("precision-aware, fp32 masters under FP8 current scaling: the step copies bf16 grads") {
    c.optimizer.use_precision_aware_optimizer = true;
    c.optimizer.grad_reduce_in_bf16 = true;
    c.training.fp8_recipe = Fp8Recipe::tensorwise;
    auto b = per_param(c);
    CHECK_THAT(b[1], WithinRel(2.0, 1e-4));
    CHECK_THAT(b[3], WithinRel(1.0, 1e-4));
  }
  SECTION("fp32 grads: no copy in the step") {
    auto b = per_param(c);
    CHECK(b[3] == 0.0);
  }
  SECTION("precision-aware optimizer with param remainders: 6 + 10/R") {
    c.optimizer.use_precision_aware_optimizer = true;
    auto b = per_param(c);
    CHECK_THAT(b[0] + b[1], WithinRel(6.0, 1e-4));
    CHECK_THAT(b[2], WithinRel(2.5, 1e-4));
  }
  // optimizer_config.py: a non-delayed recipe on the optimizer config (Megatron-Bridge copies
  // tensorwise there also in BF16) keeps fp32 masters in Megatron-Core, no TE remainders, and
  // the step reads the bf16 grads through an fp32 copy.
  SECTION("precision-aware in a Bridge BF16 run: (4 + 2 + 2)/R and the step's copy 4/R") {
    c.optimizer.use_precision_aware_optimizer = true;
    c.optimizer.main_grads_dtype = DType::bf16;
    c.optimizer.grad_reduce_in_bf16 = true;
    c.optimizer.exp_avg_dtype = DType::bf16;
    c.optimizer.exp_avg_sq_dtype = DType::bf16;
    auto remainders = per_param(c);
    CHECK_THAT(remainders[2], WithinRel(6.0 / 4, 1e-4));  // (2 + 2 + 2)/R
    CHECK(remainders[3] == 0.0);                          // decoupled_grad: no copy
    c.optimizer.fp8_recipe = Fp8Recipe::tensorwise;
    auto masters = per_param(c);
    CHECK_THAT(masters[0] + masters[1], WithinRel(4.0, 1e-4));
    CHECK_THAT(masters[2], WithinRel(8.0 / 4, 1e-4));
    CHECK_THAT(masters[3], WithinRel(1.0, 1e-4));
  }
  SECTION("optimizer CPU offload of half the state: 2 + 4 + 0.5 * 12/R on the GPU") {
    c.optimizer.use_precision_aware_optimizer = true;
    c.optimizer.optimizer_cpu_offload = true;
    c.optimizer.optimizer_offload_fraction = 0.5;
    auto b = per_param(c);
    CHECK_THAT(b[2], WithinRel(1.5, 1e-4));
  }
  // Without the precision-aware optimizer the fp32 main params stay on the GPU and only the
  // offloaded share's moments leave (Bridge's Qwen3-30B-A3B study: 100 % offload saved
  // exactly the Adam moments, 15.3 GB, skills/nemo-mbridge-perf-cpu-offloading).
  SECTION("optimizer CPU offload of a quarter, plain optimizer: 2 + 4 + (4 + 0.75 * 8)/R") {
    c.optimizer.optimizer_cpu_offload = true;
    c.optimizer.optimizer_offload_fraction = 0.25;
    auto b = per_param(c);
    CHECK_THAT(b[2], WithinRel(10.0 / 4, 1e-4));
    auto e = estimate(c);
    REQUIRE(e.has_value());
    const auto p = static_cast<double>(e->ranks[0].dense_params);
    // The host keeps the quarter's fp32 param, moments and grad copies.
    CHECK_THAT(static_cast<double>(e->ranks[0].host_optimizer_bytes) / p,
               WithinRel(0.25 * 16.0 / 4, 1e-4));
  }
  SECTION("SGD keeps one momentum: 2 + 4 + 8/R") {
    c.optimizer.kind = OptimizerKind::sgd;
    auto b = per_param(c);
    CHECK_THAT(b[2], WithinRel(2.0, 1e-4));
  }
}

TEST_CASE("distributed optimizer pads each bucket to a multiple of lcm(DP, 128)") {
  Config c = fixtures::llama3_70b();
  c.model.num_layers = 1;
  c.model.vocab_size = 1000;
  c.model.make_vocab_size_divisible_by = 1;
  c.model.hidden_size = 64;
  c.model.num_attention_heads = 1;
  c.model.num_query_groups = 1;
  c.model.kv_channels = 64;
  c.model.ffn_hidden_size = 100;
  c.parallel.world_size = 3;
  const Estimate e = run(c);
  const RankMemory& rank = e.ranks[0];
  // Grad buffer elements = gradient bytes / 4: a multiple of lcm(3, 128) = 384.
  CHECK(rank.gradient_bytes % (4 * 384) == 0);
  CHECK(rank.gradient_bytes / 4 >= static_cast<std::uint64_t>(rank.dense_params));
}

TEST_CASE("routed experts are sharded over expert-DP even when EP x ETP = 1") {
  Config c = fixtures::qwen3_235b_a22b();
  c.model.num_layers = 2;
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 2;
  c.parallel.sequence_parallel = true;
  c.parallel.expert_tensor_parallel = 1;
  const Estimate e = run(c);
  CHECK(e.normalized.data_parallel == 4);
  CHECK(e.normalized.expert_data_parallel == 8);
  const RankMemory& rank = e.ranks[0];
  const double expert_optimizer = 12.0 * static_cast<double>(rank.expert_params) / 8.0;
  const double dense_optimizer = 12.0 * static_cast<double>(rank.dense_params) / 4.0;
  CHECK_THAT(static_cast<double>(rank.optimizer_bytes),
             WithinRel(expert_optimizer + dense_optimizer, 1e-4));
}

TEST_CASE("tied embeddings: one weight at PP 1, a full copy on the last stage at PP > 1") {
  Config c = fixtures::llama3_70b();
  c.model.num_layers = 4;
  c.model.untie_embeddings_and_output_weights = false;
  c.parallel.world_size = 2;
  c.parallel.tensor_parallel = 2;
  const std::int64_t vocab_matrix = 128'256 * 8192 / 2;
  const Estimate single = run(c);
  c.parallel.world_size = 4;
  c.parallel.pipeline_parallel = 2;
  const Estimate staged = run(c);
  CHECK(params(staged.ranks[0]) + params(staged.ranks[1]) ==
        params(single.ranks[0]) + vocab_matrix);
}

TEST_CASE("module tree adds up to the rank totals") {
  Config c = fixtures::deepseek_v3();
  c.parallel.world_size = 64;
  c.parallel.pipeline_parallel = 8;
  c.parallel.expert_parallel = 8;
  c.parallel.decoder_first_pipeline_num_layers = 8;
  c.parallel.decoder_last_pipeline_num_layers = 5;
  const Estimate e = run(c);
  for (const RankMemory& rank : e.ranks) {
    std::uint64_t weight = 0, gradient = 0, optimizer = 0;
    std::int64_t tree_params = 0;
    for (const ChunkMemory& chunk : rank.chunks) {
      weight += chunk.modules.weight_bytes;
      gradient += chunk.modules.gradient_bytes;
      optimizer += chunk.modules.optimizer_bytes;
      tree_params += chunk.modules.params;
    }
    CHECK(tree_params == params(rank));
    CHECK(weight == rank.weight_bytes);
    CHECK(gradient == rank.gradient_bytes);
    CHECK(optimizer == Approx(static_cast<double>(rank.optimizer_bytes)).epsilon(1e-9).margin(64));
  }
}

// Adam's moments (and TE FusedAdam's own masters) are created at the optimizer's first step
// (torch/optim/adam.py _init_group, transformer_engine/pytorch/optimizers/fused_adam.py
// initialize_state), so the first iteration's passes run without them.
TEST_CASE("the first iteration peaks without the state the first step creates") {
  Config c = fixtures::llama3_70b();
  c.model.num_layers = 2;
  c.parallel.world_size = 4;
  const auto lazy_per_param = [](const Config& config) {
    const Estimate e = run(config);
    const RankMemory& rank = e.ranks[0];
    CHECK(rank.first_iteration_peak_allocated_bytes ==
          std::max(rank.peak_allocated_bytes - rank.lazy_optimizer_bytes,
                   rank.static_bytes + rank.optimizer_step_bytes));
    return static_cast<double>(rank.lazy_optimizer_bytes) / static_cast<double>(rank.dense_params);
  };
  SECTION("distributed Adam over DP 4: moments 8/R, the fp32 masters made with the optimizer") {
    CHECK_THAT(lazy_per_param(c), WithinRel(8.0 / 4, 1e-3));
  }
  SECTION("TE FusedAdam with bf16 remainders makes them at its first step too: 10/R") {
    c.optimizer.use_precision_aware_optimizer = true;
    CHECK_THAT(lazy_per_param(c), WithinRel(10.0 / 4, 1e-3));
  }
  SECTION("half the state offloaded: the GPU optimizer's moments only, 0.5 * 8/R") {
    c.optimizer.optimizer_cpu_offload = true;
    c.optimizer.optimizer_offload_fraction = 0.5;
    CHECK_THAT(lazy_per_param(c), WithinRel(4.0 / 4, 1e-3));
  }
}

// A resume's checkpoint load (memory-model.md §5): the distributed optimizer's torch.empty
// scaffold and TE FusedAdam's own copy of the Adam moments coexist, dense group first, then the
// experts'; present then are the DDP buffers and the fp32 main shards.
TEST_CASE("a resume's checkpoint load holds the moments twice, the larger group last") {
  Config c = fixtures::qwen3_235b_tp4_pp4_ep8();
  c.optimizer.use_distributed_optimizer = true;
  const Estimate e = run(c);
  for (const RankMemory& rank : e.ranks) {
    INFO("rank " << rank.pp_rank);
    const std::uint64_t expert = rank.lazy_expert_optimizer_bytes;
    const std::uint64_t dense = rank.lazy_optimizer_bytes - expert;
    REQUIRE(expert > dense);  // the experts hold most parameters
    // Adam's moments are 8 bytes per parameter: the experts' shard over expert-DP.
    CHECK_THAT(static_cast<double>(expert),
               WithinRel(8.0 * static_cast<double>(rank.expert_params) /
                             static_cast<double>(e.normalized.expert_data_parallel),
                         2e-3));
    const std::uint64_t present =
        rank.weight_bytes + rank.gradient_bytes + rank.optimizer_bytes - rank.lazy_optimizer_bytes;
    CHECK(rank.resume_load_peak_bytes == present + dense + 2 * expert);
    CHECK(rank.resume_load_single_copy_bytes == present + dense + expert);
  }
  SECTION("not estimated where the load takes another path") {
    c.optimizer.use_distributed_optimizer = false;
    CHECK(run(c).ranks[0].resume_load_peak_bytes == 0);
  }
}

// Where the training step fits the card but the resume's load, with the allocator's reserve
// and the memory outside it, would not, the estimate says so.
TEST_CASE("a run that fits but cannot resume on its card is warned about") {
  Config c = fixtures::llama3_70b_tp4_pp8_resume_above_training();
  const auto resume_warnings = [](const Estimate& e) {
    return std::count_if(e.warnings.begin(), e.warnings.end(), [](const std::string& w) {
      return w.rfind("resuming from a checkpoint", 0) == 0;
    });
  };
  c.device.capacity_gib = 80.0;
  CHECK(resume_warnings(run(c)) == 0);  // the load fits too
  // A card between the training step's and the load's device totals.
  const Estimate at80 = run(c);
  const RankMemory& rank = at80.ranks[static_cast<std::size_t>(at80.limiting_pp_rank)];
  REQUIRE(rank.resume_load_peak_bytes > rank.peak_allocated_bytes);
  const double load_total = static_cast<double>(rank.resume_load_peak_bytes) *
                                static_cast<double>(rank.peak_reserved_bytes) /
                                static_cast<double>(rank.peak_allocated_bytes) +
                            static_cast<double>(rank.peak_total_bytes - rank.peak_reserved_bytes);
  c.device.capacity_gib = (to_gib(rank.peak_total_bytes) + to_gib(load_total)) / 2;
  const Estimate tight = run(c);
  REQUIRE(tight.verdict.status != FitStatus::does_not_fit);
  CHECK(resume_warnings(tight) == 1);
}
