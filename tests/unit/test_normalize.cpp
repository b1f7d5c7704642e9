// Invalid layouts give an Error naming the Megatron argument and the rule.
#include <catch2/catch.hpp>

#include "megamem/estimate.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

namespace {
Config valid() {
  Config c = fixtures::qwen3_235b_a22b();
  c.model.num_layers = 4;
  c.parallel.world_size = 16;
  c.parallel.tensor_parallel = 4;
  c.parallel.sequence_parallel = true;
  c.parallel.expert_parallel = 4;
  return c;
}
std::string error_field(const Config& c) {
  auto result = normalize(c);
  return result ? std::string("(valid)") : result.error().field;
}
}  // namespace

TEST_CASE("the fixture layout is valid and derives DP and expert-DP") {
  auto n = normalize(valid());
  REQUIRE(n.has_value());
  CHECK(n->data_parallel == 4);
  CHECK(n->expert_data_parallel == 1);
  CHECK(n->config.parallel.expert_tensor_parallel == 4);
  CHECK(n->sequence_parallel);
}

TEST_CASE("heads must divide by TP") {
  Config c = valid();
  c.parallel.tensor_parallel = 3;
  c.parallel.world_size = 48;
  CHECK(error_field(c) == "num_attention_heads");
}

TEST_CASE("query groups must be a multiple or a divisor of TP") {
  Config c = valid();
  c.model.num_query_groups = 16;
  c.parallel.tensor_parallel = 8;
  c.parallel.world_size = 32;
  c.parallel.expert_parallel = 1;
  CHECK(error_field(c) == "(valid)");
  c.model.num_query_groups = 4;
  CHECK(error_field(c) == "(valid)");  // fewer groups than TP ranks: KV replicated
  c.model.num_attention_heads = 48;
  c.model.num_query_groups = 12;
  c.parallel.tensor_parallel = 8;
  CHECK(error_field(c) == "num_query_groups");
}

TEST_CASE("experts must divide by EP") {
  Config c = valid();
  c.parallel.expert_parallel = 3;
  c.parallel.world_size = 48;
  CHECK(error_field(c) == "num_experts");
}

TEST_CASE("world size must divide by TP x CP x PP") {
  Config c = valid();
  c.parallel.world_size = 18;
  CHECK(error_field(c) == "world_size");
}

TEST_CASE("world size must divide by ETP x EP x PP") {
  Config c = valid();
  c.parallel.expert_parallel = 8;
  c.parallel.world_size = 20;
  c.parallel.tensor_parallel = 4;
  CHECK(error_field(c) == "expert_model_parallel_size");
}

TEST_CASE("MoE with TP needs sequence parallel") {
  Config c = valid();
  c.parallel.sequence_parallel = false;
  CHECK(error_field(c) == "sequence_parallel");
}

TEST_CASE("a billion GPUs is rejected with a message, not computed") {
  Config c = valid();
  c.parallel.world_size = 1'000'000'000;
  auto result = normalize(c);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().field == "world_size");
  CHECK_THAT(result.error().message, Catch::Matchers::Contains("1000000000"));
}

TEST_CASE("layers must split over pipeline stages") {
  Config c = valid();
  c.model.num_layers = 6;
  c.parallel.pipeline_parallel = 4;
  c.parallel.world_size = 64;
  CHECK(error_field(c) == "num_layers");
}

TEST_CASE("global batch must divide by micro-batch x DP") {
  Config c = valid();
  c.training.global_batch_size = 6;
  CHECK(error_field(c) == "global_batch_size");
}

TEST_CASE("zero or negative sizes name their field") {
  Config c = valid();
  c.model.hidden_size = 0;
  CHECK(error_field(c) == "hidden_size");
  c = valid();
  c.parallel.context_parallel = -2;
  CHECK(error_field(c) == "context_parallel_size");
}

TEST_CASE("sequence parallel is off at TP 1, and the vocabulary pads to 128 x TP") {
  Config c = valid();
  c.model.num_experts = 0;
  c.parallel.tensor_parallel = 1;
  c.parallel.expert_parallel = 1;
  c.model.vocab_size = 151'937;
  auto n = normalize(c);
  REQUIRE(n.has_value());
  CHECK_FALSE(n->sequence_parallel);
  CHECK(n->padded_vocab_size == 152'064);  // next multiple of 128
}

TEST_CASE("SwiGLU's default FFN is 2/3 of 4h rounded down to 64") {
  Config c = valid();
  c.model.ffn_hidden_size = 0;
  c.model.hidden_size = 4096;
  auto n = normalize(c);
  REQUIRE(n.has_value());
  CHECK(n->config.model.ffn_hidden_size == 10880);
}

TEST_CASE("selective recompute modules must fit the model") {
  Config c = valid();
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::moe_act};
  c.training.moe_grouped_gemm = false;
  CHECK(error_field(c) == "recompute_modules");
  c.training.moe_grouped_gemm = true;
  CHECK(error_field(c) == "(valid)");
  c.training.recompute.modules = {RecomputeModule::mla_up_proj};
  CHECK(error_field(c) == "recompute_modules");
}

TEST_CASE("legacy CPU offloading excludes pipeline parallelism and recompute") {
  Config c = valid();
  c.training.offload.cpu_offloading = true;
  c.training.offload.cpu_offloading_num_layers = 1;
  CHECK(error_field(c) == "(valid)");
  c.training.recompute.granularity = RecomputeGranularity::full;
  CHECK(error_field(c) == "cpu_offloading");
}
