// Megatron-Bridge's H100 performance recipes for gpt-oss-120b, Kimi-K2, GLM-5.1 and
// Nemotron-3-Super
// (src/megatron/bridge/perf_recipes/{gpt_oss,kimi,glm_moe_dsa}/h100/, commit 067f987) as
// megamem reads them: the layer placement and parameter shares each rank holds, counted by
// hand, and the settings Bridge's helpers change under the recipe (_benchmark_common).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "estimate_helpers.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"

using namespace megamem;

namespace {

// (first decoder layer, decoder layers) of each of a rank's chunks.
using Layers = std::vector<std::pair<int, int>>;
Layers layers_of(const RankMemory& rank) {
  Layers out;
  for (const ChunkMemory& chunk : rank.chunks)
    out.emplace_back(chunk.first_layer, chunk.num_layers);
  return out;
}

// The first module named `name` in a depth-first walk of `root`'s children.
const ModuleMemory* find_module(const ModuleMemory& root, const std::string& name) {
  for (const ModuleMemory& child : root.children) {
    if (child.name == name) return &child;
    if (const ModuleMemory* found = find_module(child, name)) return found;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("gpt-oss-120b's H100 recipe: 9 layers a stage, 16 experts a rank, BF16 reduce") {
  // gpt_oss.py: PP 4, EP 8, TP 1 over the base recipe's TP 2 / EP 16; _benchmark_common turns
  // grad_reduce_in_fp32 off and picks TE's fused cross entropy over the base's native one.
  const Config c = testing::recipe_config_of("gpt-oss-120b-h100-64");
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

TEST_CASE("Kimi-K2's H100 recipe: layout Et|(tt|)*30L and Muon's layer-wise optimizer") {
  const Config c = testing::recipe_config_of("kimi-k2-h100-1024");
  // The base recipe's optimizer 'dist_muon' with DDP's distributed optimizer off is
  // Megatron-Core's layer-wise distributed optimizer (optimizer/__init__.py
  // _get_megatron_emerging_optimizer); arguments.py builds it from these two flags.
  CHECK(c.optimizer.kind == OptimizerKind::muon);
  CHECK(c.optimizer.use_distributed_optimizer);
  const std::string flags = to_megatron_args(c);
  CHECK(flags.find("--use-distributed-optimizer --optimizer muon") != std::string::npos);
  // _benchmark_common turns off the fp32 reduce _apply_kimi_k2_optimizer set for Muon.
  CHECK(c.optimizer.grad_reduce_in_bf16);
  const Estimate e = testing::run(c);
  CHECK(e.normalized.data_parallel == 8);
  CHECK(e.normalized.expert_data_parallel == 1);
  REQUIRE(e.ranks.size() == 16);
  // Virtual stage v = chunk x 16 + rank: stage 0 is E and layer 0, stage k in 1..30 layers
  // 2k - 1 and 2k, stage 31 the loss alone.
  CHECK(layers_of(e.ranks[0]) == Layers{{0, 1}, {31, 2}});
  CHECK(e.ranks[0].chunks[0].has_embedding);
  CHECK(layers_of(e.ranks[15]) == Layers{{29, 2}, {61, 0}});
  CHECK(e.ranks[15].chunks[1].has_output_layer);
  // Rank 1: layers 1-2 and 33-34, all MoE, 384 / EP 64 = 6 experts of 3 x 7168 x 2048.
  CHECK(e.ranks[1].expert_params == std::int64_t{4} * 6 * 3 * 7168 * 2048);
  CHECK(e.verdict.status == FitStatus::fits);
}

TEST_CASE("GLM-5.1's H100 recipe: DP 1 under CP 32, MTP and an embedding copy last") {
  const Config c = testing::recipe_config_of("glm-5-h100-416");
  CHECK(c.model.mtp_num_layers == 1);
  CHECK_FALSE(c.optimizer.grad_reduce_in_bf16);  // the recipe restores grad_reduce_in_fp32
  const Estimate e = testing::run(c);
  CHECK(e.normalized.data_parallel == 1);
  CHECK(e.normalized.expert_data_parallel == 1);
  REQUIRE(e.ranks.size() == 13);
  // No layout: 78 layers, 3 a virtual stage; the embedding first, MTP and the loss last.
  CHECK(layers_of(e.ranks[0]) == Layers{{0, 3}, {39, 3}});
  CHECK(e.ranks[0].chunks[0].has_embedding);
  const ChunkMemory& last = e.ranks[12].chunks[1];
  CHECK(layers_of(e.ranks[12]) == Layers{{36, 3}, {75, 3}});
  CHECK(last.has_output_layer);
  CHECK(last.num_mtp_layers == 1);
  // The MTP stage builds its own word embedding (gpt_model.py: pre_process or mtp_process)
  // beside the output layer, both 154,880 x 6144; 6 decoder and 1 MTP MoE layers of 8 experts
  // of 3 x 6144 x 2048.
  const ModuleMemory* embedding = find_module(last.modules, "embedding");
  const ModuleMemory* output = find_module(last.modules, "output_layer");
  REQUIRE(embedding != nullptr);
  REQUIRE(output != nullptr);
  CHECK(embedding->params == std::int64_t{154'880} * 6144);
  CHECK(output->params == std::int64_t{154'880} * 6144);
  CHECK(e.ranks[12].expert_params == std::int64_t{7} * 8 * 3 * 6144 * 2048);
  // The distributed optimizer shards dense parameters over DP x CP = 32 and experts over
  // expert-DP = 1: fp32 master and two Adam moments, 12 bytes a parameter.
  const ModuleMemory* attention = find_module(last.modules, "self_attention");
  const ModuleMemory* experts = find_module(last.modules, "experts");
  REQUIRE(attention != nullptr);
  REQUIRE(experts != nullptr);
  CHECK(attention->optimizer_bytes == static_cast<std::uint64_t>(attention->params) * 12 / 32);
  CHECK(experts->optimizer_bytes == static_cast<std::uint64_t>(experts->params) * 12);
}

TEST_CASE("GLM-5.2's H100 recipe: empty virtual stages keep the index-sharing groups whole") {
  // glm52_sft_416gpu_h100_bf16_config: GLM-5.1's settings on GLM-5.2 (IndexCache, 1 indexer in
  // 4 layers) with a layout whose stages are the four-layer groups (layers 2-5, 6-9, ...).
  const Config c = testing::recipe_config_of("glm-5.2-h100-416");
  CHECK(c.model.dsa_indexer_topk_freq == 4);
  CHECK(c.model.dsa_indexer_skip_topk_offset == 3);
  const Estimate e = testing::run(c);
  REQUIRE(e.ranks.size() == 13);
  // Virtual stage v sits on pipeline rank v mod 13 (chunk v / 13); an empty stage starts where
  // the next one does.
  CHECK(layers_of(e.ranks[0]) == Layers{{0, 1}, {34, 4}});
  CHECK(e.ranks[0].chunks[0].has_embedding);
  CHECK(layers_of(e.ranks[1]) == Layers{{1, 1}, {38, 4}});
  CHECK(layers_of(e.ranks[2]) == Layers{{2, 0}, {42, 4}});
  CHECK(layers_of(e.ranks[5]) == Layers{{10, 4}, {50, 4}});
  CHECK(layers_of(e.ranks[12]) == Layers{{34, 0}, {74, 4}});
  CHECK(e.ranks[12].chunks[1].has_output_layer);
  CHECK(e.ranks[12].chunks[1].num_mtp_layers == 1);
  // Ranks 2 and 5 hold the same MoE layer kind: the 8-layer rank twice the expert weights of
  // the 4-layer one (8 experts of 3 x 6144 x 2048 a layer at EP 32).
  CHECK(e.ranks[2].expert_params == std::int64_t{4} * 8 * 3 * 6144 * 2048);
  CHECK(e.ranks[5].expert_params == 2 * e.ranks[2].expert_params);
  CHECK(e.verdict.status == FitStatus::fits);
}

TEST_CASE("Nemotron-3-Super's H100 recipe: one shared MTP layer run at two depths") {
  // hybrid_provider.py finalize: with mtp_use_repeated_layer the '*E' MTP pattern is appended
  // once per depth (mtp_num_layers = 2), and multi_token_prediction.py builds one layer that
  // every depth runs. 88 layers, no pipes: 44 a stage (select_pipeline_segment).
  Config c = testing::recipe_config_of("nemotron-3-super-h100-64");
  CHECK(c.model.mtp_num_layers == 2);
  CHECK(c.model.mtp_use_repeated_layer);
  const Estimate shared = testing::run(c);
  REQUIRE(shared.ranks.size() == 2);
  CHECK(layers_of(shared.ranks[0]) == Layers{{0, 44}});
  CHECK(layers_of(shared.ranks[1]) == Layers{{44, 44}});
  CHECK(shared.verdict.status == FitStatus::fits);
  // Without the shared layer each depth has its own '*E' pair. By hand, per EP-32 rank: the
  // eh_proj 2 x 4096 x 4096, enorm, hnorm and final norm 3 x 4096, attention 4096 x (32 + 2 x
  // 2) x 128 + 4096 x 4096 and its norm 4096, the router 512 x 4096, the latent projections
  // 2 x 4096 x 1024, the shared expert 2 x 4096 x 5376 and the pre-MLP norm 4096: 123,752,448
  // dense; 16 of the 512 experts of 2 x 1024 x 2688: 88,080,384.
  c.model.mtp_use_repeated_layer = false;
  const Estimate own = testing::run(c);
  CHECK(own.ranks[1].dense_params - shared.ranks[1].dense_params == 123'752'448);
  CHECK(own.ranks[1].expert_params - shared.ranks[1].expert_params == 88'080'384);
  // Both depths run forward either way: the same activations.
  CHECK(own.ranks[1].activation_bytes_per_microbatch ==
        shared.ranks[1].activation_bytes_per_microbatch);
}
