// How long one estimate takes: DeepSeek-V3 on 1024 GPUs (PP16, EP64, 240 micro-batches),
// with and without the module tree and timeline the views need.
#include <benchmark/benchmark.h>

#include "megamem/estimate.hpp"
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

}  // namespace

BENCHMARK_MAIN();
