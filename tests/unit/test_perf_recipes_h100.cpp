// Megatron-Bridge's H100 performance recipe for gpt-oss-120b
// (src/megatron/bridge/perf_recipes/gpt_oss/h100/gpt_oss.py, commit 067f987) as megamem reads
// it: the layer placement and parameter shares each rank holds, counted by hand, and the
// settings Bridge's helpers change under the recipe (_benchmark_common).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "estimate_helpers.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"

using namespace megamem;

namespace {

Config recipe(const std::string& id) {
  const Expected<PresetCatalog>& presets = builtin_presets();
  REQUIRE(presets.has_value());
  const RecipePreset* found = presets->find_recipe(id);
  REQUIRE(found != nullptr);
  const Expected<SharedConfig> shared = recipe_config(*found);
  REQUIRE(shared.has_value());
  return shared->config;
}

// (first decoder layer, decoder layers) of each of a rank's chunks.
using Layers = std::vector<std::pair<int, int>>;
Layers layers_of(const RankMemory& rank) {
  Layers out;
  for (const ChunkMemory& chunk : rank.chunks)
    out.emplace_back(chunk.first_layer, chunk.num_layers);
  return out;
}

}  // namespace

TEST_CASE("gpt-oss-120b's H100 recipe: 9 layers a stage, 16 experts a rank, BF16 reduce") {
  // gpt_oss.py: PP 4, EP 8, TP 1 over the base recipe's TP 2 / EP 16; _benchmark_common turns
  // grad_reduce_in_fp32 off and picks TE's fused cross entropy over the base's native one.
  const Config c = recipe("gpt-oss-120b-h100-64");
  CHECK(c.parallel.tensor_parallel == 1);
  CHECK(c.training.moe_router_force_load_balancing);
  CHECK(c.optimizer.grad_reduce_in_bf16);
  CHECK(c.training.cross_entropy == CrossEntropyImpl::te_fused);
  const Estimate e = testing::run(c);
  CHECK(e.normalized.data_parallel == 16);
  CHECK(e.normalized.expert_data_parallel == 2);
  REQUIRE(e.ranks.size() == 4);
  for (int rank = 0; rank < 4; ++rank) {
    CHECK(layers_of(e.ranks[static_cast<std::size_t>(rank)]) == Layers{{9 * rank, 9}});
  }
  // 128 / EP 8 = 16 experts, each fc1 [2 x 2880, 2880] and fc2 [2880, 2880] with biases:
  // 3 x 2880^2 + 3 x 2880 = 24,891,840, over 9 layers.
  CHECK(e.ranks[1].expert_params == std::int64_t{9} * 16 * 24'891'840);
  CHECK(e.verdict.status == FitStatus::fits);
}
