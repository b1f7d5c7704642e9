// How long a full layout search takes (planner.hpp, default search space): the budget
// is 10^5 candidates in under 1 s natively (and 3 s in the browser, where wasm runs this
// code about 1.5-2.5x slower). Each benchmark reports the candidates it searched and their
// rate, and how many schedule simulations and estimate() calls the search needed.
#include <benchmark/benchmark.h>

#include "megamem/planner.hpp"
#include "model_fixtures.hpp"

namespace {

megamem::PlanRequest request(megamem::Config model, std::int64_t gpus, std::int64_t batch) {
  megamem::PlanRequest r;
  r.base = std::move(model);
  r.base.parallel.world_size = gpus;
  r.base.training.global_batch_size = batch;
  r.base.training.moe_grouped_gemm = r.base.model.num_experts > 0;
  r.base.optimizer.overlap_grad_reduce = true;
  r.base.device.name = "H100 80GB";
  r.base.device.capacity_gib = 79.65;
  return r;
}

// The page's way: a PlanSearch advanced `step` candidates at a time (web/planning.cpp).
megamem::Expected<megamem::PlanResult> in_steps(const megamem::PlanRequest& r, std::int64_t step) {
  megamem::PlanSearch search(r);
  while (!search.advance(step)) {
  }
  return search.take_result();
}

// plan() in one go (step 0), or in steps of `step` candidates, to show that the steps cost no
// more.
void run(benchmark::State& state, const megamem::PlanRequest& r, std::int64_t step = 0) {
  megamem::PlanStats stats;
  for (auto _ : state) {
    auto result = step > 0 ? in_steps(r, step) : megamem::plan(r);
    if (!result) {
      state.SkipWithError(result.error().message.c_str());
      return;
    }
    stats = result->stats;
    benchmark::DoNotOptimize(result);
  }
  const auto candidates = static_cast<double>(stats.candidates);
  state.counters["candidates"] = candidates;
  state.counters["candidates_per_s"] =
      benchmark::Counter(candidates, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["fitting"] = static_cast<double>(stats.fitting);
  state.counters["simulations"] = static_cast<double>(stats.memory_evaluations);
  state.counters["estimates"] = static_cast<double>(stats.estimates);
}

void plan_llama3_70b_on_1024_gpus(benchmark::State& state) {
  run(state, request(megamem::fixtures::llama3_70b(), 1024, 8192));
}
BENCHMARK(plan_llama3_70b_on_1024_gpus)->Unit(benchmark::kMillisecond);

void plan_qwen3_235b_on_64_gpus(benchmark::State& state) {
  run(state, request(megamem::fixtures::qwen3_235b_a22b(), 64, 512));
}
BENCHMARK(plan_qwen3_235b_on_64_gpus)->Unit(benchmark::kMillisecond);

void plan_qwen3_235b_on_256_gpus(benchmark::State& state) {
  run(state, request(megamem::fixtures::qwen3_235b_a22b(), 256, 2048));
}
BENCHMARK(plan_qwen3_235b_on_256_gpus)->Unit(benchmark::kMillisecond);

void plan_deepseek_v3_on_256_gpus(benchmark::State& state) {
  run(state, request(megamem::fixtures::deepseek_v3(), 256, 2048));
}
BENCHMARK(plan_deepseek_v3_on_256_gpus)->Unit(benchmark::kMillisecond);

void plan_deepseek_v3_on_1024_gpus(benchmark::State& state) {
  run(state, request(megamem::fixtures::deepseek_v3(), 1024, 8192));
}
BENCHMARK(plan_deepseek_v3_on_1024_gpus)->Unit(benchmark::kMillisecond);

void plan_deepseek_v3_on_1024_gpus_in_steps(benchmark::State& state) {
  run(state, request(megamem::fixtures::deepseek_v3(), 1024, 8192), 256);
}
BENCHMARK(plan_deepseek_v3_on_1024_gpus_in_steps)->Unit(benchmark::kMillisecond);

void plan_llama3_70b_on_1024_gpus_in_steps(benchmark::State& state) {
  run(state, request(megamem::fixtures::llama3_70b(), 1024, 8192), 256);
}
BENCHMARK(plan_llama3_70b_on_1024_gpus_in_steps)->Unit(benchmark::kMillisecond);

}  // namespace
