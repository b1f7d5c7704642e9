// Shared by the unit tests: a configuration that must normalize or estimate, failing the
// test with the core's error otherwise.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "megamem/estimate.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/planner.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"

namespace megamem::testing {

inline NormalizedConfig normalized(const Config& c) {
  auto n = normalize(c);
  INFO((n ? std::string() : n.error().field + ": " + n.error().message));
  REQUIRE(n.has_value());
  return n.value();
}

// The core's refusal of a configuration that must not normalize.
inline Error normalize_error(const Config& c) {
  auto n = normalize(c);
  REQUIRE_FALSE(n.has_value());
  return n.error();
}

inline Estimate run(const Config& c) {
  auto e = estimate(c);
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  return e.value();
}

// The configuration of a built-in recipe preset, which must exist and read.
inline Config recipe_config_of(const char* id) {
  const Expected<PresetCatalog>& presets = builtin_presets();
  REQUIRE(presets.has_value());
  const RecipePreset* recipe = presets->find_recipe(id);
  INFO(id);
  REQUIRE(recipe != nullptr);
  const Expected<SharedConfig> shared = recipe_config(*recipe);
  REQUIRE(shared.has_value());
  return shared->config;
}

// 4 layers, h 512, 8 heads, micro-batches of 4 x 1024 tokens, bf16, on 8 GPUs, with `extra`:
// the tiny GPT the tests of one module's tensors compare with and without the module.
inline Config tiny_gpt(const std::string& extra) {
  Expected<MegatronArgs> args = parse_megatron_args(
      "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 4 --global-batch-size 32 "
      "--vocab-size 50257 --bf16 " +
          extra,
      8);
  INFO((args ? std::string() : args.error().field + ": " + args.error().message));
  REQUIRE(args.has_value());
  return args->config;
}

// The planner's search for a new preset on 64 H100s (gbs 256, the card's 79.65 GiB), the
// acceptance check of each model family; fails the test with the error when it is refused.
inline PlanResult plan_on_64_h100(Config base) {
  PlanRequest r;
  r.base = std::move(base);
  r.base.training.global_batch_size = 256;
  r.base.device.capacity_gib = 79.65;
  Expected<PlanResult> result = plan(r);
  INFO((result ? std::string() : result.error().field + ": " + result.error().message));
  REQUIRE(result.has_value());
  return std::move(result).value();
}

}  // namespace megamem::testing
