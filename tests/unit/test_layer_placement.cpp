// Layer placement over PP and VPP (memory-model.md 2.5).
#include <catch2/catch.hpp>

#include "megamem/estimate.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

namespace {
Config small_model(int layers) {
  Config c = fixtures::llama3_70b();
  c.model.num_layers = layers;
  c.model.hidden_size = 256;
  c.model.num_attention_heads = 8;
  c.model.num_query_groups = 8;
  c.model.kv_channels = 32;
  c.model.ffn_hidden_size = 512;
  c.model.vocab_size = 1024;
  return c;
}
std::vector<std::pair<int, int>> layers_of(const RankMemory& rank) {
  std::vector<std::pair<int, int>> out;
  for (const ChunkMemory& chunk : rank.chunks)
    out.emplace_back(chunk.first_layer, chunk.num_layers);
  return out;
}
using Layers = std::vector<std::pair<int, int>>;
}  // namespace

TEST_CASE("interleaved stages take layers round-robin over ranks (transformer_block.py example)") {
  Config c = small_model(8);
  c.parallel.world_size = 2;
  c.parallel.pipeline_parallel = 2;
  c.parallel.virtual_stages_per_pipeline_rank = 4;
  c.training.global_batch_size = 2;  // the interleaved schedule needs M >= PP
  auto e = estimate(c);
  REQUIRE(e.has_value());
  CHECK(layers_of(e->ranks[0]) == Layers{{0, 1}, {2, 1}, {4, 1}, {6, 1}});
  CHECK(layers_of(e->ranks[1]) == Layers{{1, 1}, {3, 1}, {5, 1}, {7, 1}});
  CHECK(e->ranks[0].chunks[0].has_embedding);
  CHECK(e->ranks[1].chunks[3].has_output_layer);
  CHECK_FALSE(e->ranks[1].chunks[0].has_output_layer);
}

TEST_CASE("uneven first and last stages split the rest evenly") {
  Config c = small_model(61);
  c.parallel.world_size = 8;
  c.parallel.pipeline_parallel = 8;
  c.parallel.decoder_first_pipeline_num_layers = 8;
  c.parallel.decoder_last_pipeline_num_layers = 5;
  auto e = estimate(c);
  REQUIRE(e.has_value());
  CHECK(layers_of(e->ranks[0]) == Layers{{0, 8}});
  CHECK(layers_of(e->ranks[1]) == Layers{{8, 8}});
  CHECK(layers_of(e->ranks[7]) == Layers{{56, 5}});
}

TEST_CASE("uneven stages whose middle layers do not divide are rejected") {
  Config c = small_model(60);
  c.parallel.world_size = 8;
  c.parallel.pipeline_parallel = 8;
  c.parallel.decoder_first_pipeline_num_layers = 8;
  c.parallel.decoder_last_pipeline_num_layers = 5;
  auto e = estimate(c);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().field == "decoder_first_pipeline_num_layers");
}

TEST_CASE("accounting for embedding and loss removes one layer from the end stages") {
  Config c = small_model(14);
  c.parallel.world_size = 4;
  c.parallel.pipeline_parallel = 4;
  c.parallel.account_for_embedding_in_pipeline_split = true;
  c.parallel.account_for_loss_in_pipeline_split = true;
  auto e = estimate(c);
  REQUIRE(e.has_value());
  CHECK(layers_of(e->ranks[0]) == Layers{{0, 3}});
  CHECK(layers_of(e->ranks[1]) == Layers{{3, 4}});
  CHECK(layers_of(e->ranks[3]) == Layers{{11, 3}});
}

TEST_CASE("a pipeline layout string places E, t, m and L stage by stage") {
  Config c = small_model(15);
  c.model.mtp_num_layers = 1;
  c.parallel.world_size = 4;
  c.parallel.pipeline_parallel = 4;
  c.parallel.pipeline_layout = "Et*3|(tt|)*6mL";
  c.training.global_batch_size = 4;
  auto e = estimate(c);
  REQUIRE(e.has_value());
  CHECK(e->normalized.config.parallel.virtual_stages_per_pipeline_rank == 2);
  CHECK(layers_of(e->ranks[0]) == Layers{{0, 3}, {9, 2}});
  CHECK(layers_of(e->ranks[3]) == Layers{{7, 2}, {15, 0}});
  CHECK(e->ranks[3].chunks[1].num_mtp_layers == 1);
  CHECK(e->ranks[3].chunks[1].has_output_layer);
}

TEST_CASE("shell escapes in a layout string are ignored") {
  Config c = small_model(15);
  c.parallel.world_size = 4;
  c.parallel.pipeline_parallel = 4;
  c.parallel.pipeline_layout = "Et*3\\|\\(tt\\|\\)*6L";
  c.training.global_batch_size = 4;
  auto e = estimate(c);
  REQUIRE(e.has_value());
  CHECK(layers_of(e->ranks[0]) == Layers{{0, 3}, {9, 2}});
}

TEST_CASE("a layout with the wrong number of decoder layers names the flag") {
  Config c = small_model(16);
  c.parallel.world_size = 4;
  c.parallel.pipeline_parallel = 4;
  c.parallel.pipeline_layout = "Et*3|(tt|)*6L";
  auto e = estimate(c);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().field == "pipeline_model_parallel_layout");
}

TEST_CASE("MTP sits on the last stage with an embedding copy when PP > 1") {
  Config c = small_model(4);
  c.model.mtp_num_layers = 1;
  c.parallel.world_size = 2;
  c.parallel.pipeline_parallel = 2;
  auto with_mtp = estimate(c);
  c.model.mtp_num_layers = 0;
  auto without = estimate(c);
  REQUIRE(with_mtp.has_value());
  REQUIRE(without.has_value());
  const std::int64_t embedding = 1024 * 256;  // vocab padded to 1024, hidden 256
  const std::int64_t mtp_layer = with_mtp->totals.mtp_params;
  CHECK(with_mtp->ranks[1].dense_params - without->ranks[1].dense_params == mtp_layer + embedding);
  CHECK(with_mtp->ranks[0].dense_params == without->ranks[0].dense_params);
}

TEST_CASE("a layout that would expand beyond 100,000 entries is refused before expanding") {
  Config c = small_model(16);
  c.parallel.world_size = 4;
  c.parallel.pipeline_parallel = 4;
  c.parallel.pipeline_layout = "E(" + std::string(4000, 't') + ")*99999L";
  auto e = estimate(c);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().field == "pipeline_model_parallel_layout");
  CHECK_THAT(e.error().message, Catch::Matchers::Contains("100000"));
  c.parallel.pipeline_layout = "Et*99999|L";
  e = estimate(c);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().field == "pipeline_model_parallel_layout");
}
