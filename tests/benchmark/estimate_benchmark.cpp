// How long one estimate takes: DeepSeek-V3 on 1024 GPUs (PP16, EP64, 240 micro-batches),
// with and without the module tree and timeline the views need.
#include <benchmark/benchmark.h>

#include <string>

#include "megamem/estimate.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"
#include "megamem/what_if.hpp"
#include "model_fixtures.hpp"

namespace {

megamem::Config deepseek_v3_on_1024_gpus() {
  megamem::Config c = megamem::fixtures::deepseek_v3();
  c.parallel.world_size = 1024;
  c.parallel.pipeline_parallel = 16;
  c.parallel.expert_parallel = 64;
  c.parallel.decoder_first_pipeline_num_layers = 4;
  c.parallel.decoder_last_pipeline_num_layers = 1;
  c.training.global_batch_size = 15360;
  c.training.recompute.granularity = megamem::RecomputeGranularity::full;
  return c;
}

void full_estimate(benchmark::State& state) {
  const megamem::Config config = deepseek_v3_on_1024_gpus();
  for (auto _ : state) {
    auto result = megamem::estimate(config);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(full_estimate)->Unit(benchmark::kMicrosecond);

void estimate_without_tree_or_timeline(benchmark::State& state) {
  const megamem::Config config = deepseek_v3_on_1024_gpus();
  megamem::EstimateOptions options;
  options.module_tree = false;
  options.timeline = false;
  for (auto _ : state) {
    auto result = megamem::estimate(config, options);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(estimate_without_tree_or_timeline)->Unit(benchmark::kMicrosecond);

// A recipe's configuration, as the page opens its link.
megamem::Config recipe(const std::string& id) {
  const auto& catalog = megamem::builtin_presets();
  const megamem::RecipePreset* preset = catalog ? catalog->find_recipe(id) : nullptr;
  if (preset == nullptr) return {};
  auto shared = megamem::recipe_config(*preset);
  return shared ? shared.value().config : megamem::Config{};
}

// What the page computes for a configuration (its "full estimate"): the estimate with module
// tree and every timeline, then the what-if rows. The browser benchmark
// (tests/benchmark/browser_benchmark.mjs) times the same in the page.
void page_full_estimate(benchmark::State& state, const std::string& id) {
  const megamem::Config config = recipe(id);
  if (!megamem::estimate(config)) {
    state.SkipWithError("the recipe does not estimate");
    return;
  }
  for (auto _ : state) {
    auto result = megamem::estimate(config);
    auto rows = megamem::what_if_options(config);
    benchmark::DoNotOptimize(result);
    benchmark::DoNotOptimize(rows);
  }
}
BENCHMARK_CAPTURE(page_full_estimate, default_link, std::string("llama-3-70b-h100-64"))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(page_full_estimate, deepseek_v3_h100_1024, std::string("deepseek-v3-h100-1024"))
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
