// Whole-model parameter totals against the published counts (memory-model.md 9.1).
#include <catch2/catch.hpp>

#include "megamem/estimate.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

namespace {
Estimate run(Config config) {
  auto result = estimate(config);
  INFO((result ? std::string() : result.error().field + ": " + result.error().message));
  REQUIRE(result.has_value());
  return result.value();
}
}  // namespace

TEST_CASE("Qwen3-235B-A22B has 235.09 B parameters, 22.19 B active") {
  Config c = fixtures::qwen3_235b_a22b();
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 8;
  c.parallel.sequence_parallel = true;
  c.parallel.expert_parallel = 8;
  c.parallel.expert_tensor_parallel = 1;
  const Estimate e = run(c);
  CHECK(e.totals.params == 235'093'634'560);
  CHECK(e.totals.active_params == 22'190'763'520);
  CHECK(e.totals.mtp_params == 0);
  CHECK(e.normalized.padded_vocab_size == 152'576);
  CHECK(e.totals.padded_params == 235'098'877'440);
}

TEST_CASE("DeepSeek-V3 has 671.03 B parameters plus an 11.61 B MTP layer") {
  Config c = fixtures::deepseek_v3();
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 8;
  c.parallel.sequence_parallel = true;
  c.parallel.expert_parallel = 8;
  c.parallel.expert_tensor_parallel = 1;
  const Estimate e = run(c);
  CHECK(e.totals.params == 671'026'404'352);
  CHECK(e.totals.active_params == 37'552'282'624);
  CHECK(e.totals.mtp_params == 11'610'067'968);
  CHECK(e.normalized.padded_vocab_size == 130'048);
  CHECK(e.totals.padded_params == 682'647'482'368);
}

TEST_CASE("Llama-3-70B has 70.55 B parameters") {
  Config c = fixtures::llama3_70b();
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 8;
  const Estimate e = run(c);
  CHECK(e.totals.params == 70'553'706'496);
  CHECK(e.totals.padded_params == 70'566'289'408);
}

TEST_CASE("MTP with a repeated layer counts one layer's weights") {
  Config c = fixtures::deepseek_v3();
  c.model.mtp_num_layers = 3;
  c.model.mtp_use_repeated_layer = true;
  c.parallel.world_size = 8;
  c.parallel.expert_parallel = 8;
  CHECK(run(c).totals.mtp_params == 11'610'067'968);
}
