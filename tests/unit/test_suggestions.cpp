// Nearest valid configurations (suggest_valid_configs): every suggestion normalizes, none
// changes the model, the cheapest change comes first, and the uneven pipeline split, EP and
// GPU-count fixes are among them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "estimate_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/fields.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"
#include "megamem/suggestions.hpp"
#include "model_fixtures.hpp"

using namespace megamem;
using Catch::Matchers::Contains;

namespace {

// Every architecture field of the model (what a suggestion must never touch): each field of
// the registry's model group, as its share-link text, and the model's name.
bool same_model(const ModelConfig& a, const ModelConfig& b) {
  Config x, y;
  x.model = a;
  y.model = b;
  for (const ConfigField& field : config_fields()) {
    if (field.group != FieldGroup::model || field.link_key.empty()) continue;
    if (field_link_text(field, x) != field_link_text(field, y)) return false;
  }
  return a.name == b.name && a.moe_layer_pattern == b.moe_layer_pattern;
}

int pick(std::mt19937& rng, std::initializer_list<int> values) {
  std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
  return *(values.begin() + static_cast<std::ptrdiff_t>(d(rng)));
}

// A small model with a layout drawn at random, valid or not.
Config random_layout(std::mt19937& rng) {
  Config c = pick(rng, {0, 1}) ? fixtures::llama3_70b() : fixtures::qwen3_235b_a22b();
  c.model.num_layers = pick(rng, {5, 7, 8, 12, 13, 61});
  if (!c.model.moe_layer_pattern.empty()) c.model.moe_layer_pattern.clear();
  ParallelConfig& p = c.parallel;
  p.tensor_parallel = pick(rng, {1, 2, 3, 4, 8});
  p.pipeline_parallel = pick(rng, {1, 2, 3, 4, 8, 16});
  p.virtual_stages_per_pipeline_rank = pick(rng, {1, 1, 2, 3});
  p.context_parallel = pick(rng, {1, 1, 2, 3});
  p.expert_parallel = c.model.num_experts > 0 ? pick(rng, {1, 2, 6, 8, 16}) : 1;
  p.expert_tensor_parallel = pick(rng, {0, 1, 2});
  p.sequence_parallel = pick(rng, {0, 1, 1}) == 1;
  p.world_size = pick(rng, {8, 12, 24, 62, 64, 96, 128, 256});
  c.training.micro_batch_size = pick(rng, {1, 2});
  c.training.global_batch_size = pick(rng, {0, 16, 30, 64, 100});
  return c;
}

std::string error_field_of(const Config& c) {
  const Expected<NormalizedConfig> n = normalize(c);
  return n ? std::string("(valid)") : n.error().field;
}

bool offers(const std::vector<Suggestion>& suggestions, const std::string& field) {
  for (const Suggestion& s : suggestions) {
    if (s.field == field) return true;
  }
  return false;
}

// DeepSeek-V3 (61 layers) on 256 GPUs at PP 16 with this EP, split by Megatron's default
// (no layout, no uneven first or last stage): 61 layers do not divide over 16 stages.
Config deepseek_v3_pp16_on_256(int expert_parallel) {
  Config c = fixtures::deepseek_v3();
  c.parallel.world_size = 256;
  c.parallel.pipeline_parallel = 16;
  c.parallel.expert_parallel = expert_parallel;
  c.parallel.pipeline_layout.clear();
  c.parallel.decoder_first_pipeline_num_layers = 0;
  c.parallel.decoder_last_pipeline_num_layers = 0;
  return c;
}

}  // namespace

TEST_CASE("a valid configuration gets no suggestions") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  REQUIRE(normalize(c).has_value());
  CHECK(suggest_valid_configs(c).empty());
}

TEST_CASE("DeepSeek-V3 at PP 16 is offered an uneven split and a layout, first") {
  const Config c = deepseek_v3_pp16_on_256(8);
  REQUIRE(error_field_of(c) == "num_layers");
  const std::vector<Suggestion> s = suggest_valid_configs(c);
  REQUIRE(s.size() >= 2);
  CHECK(s[0].field == "decoder_first_pipeline_num_layers");
  CHECK(s[0].config.parallel.pipeline_parallel == 16);
  bool layout = false;
  for (const Suggestion& suggestion : s) {
    layout = layout || suggestion.field == "pipeline_model_parallel_layout";
  }
  CHECK(layout);
}

TEST_CASE("an expert-parallel size the world cannot hold gets EP and GPU-count fixes") {
  Config c = fixtures::qwen3_235b_a22b();
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 1;
  c.parallel.expert_parallel = 6;
  REQUIRE(error_field_of(c) == "expert_model_parallel_size");
  const std::vector<Suggestion> s = suggest_valid_configs(c);
  CHECK(offers(s, "expert_model_parallel_size"));
  c.parallel.expert_parallel = 8;
  c.parallel.world_size = 60;
  REQUIRE(error_field_of(c) == "expert_model_parallel_size");
  CHECK(offers(suggest_valid_configs(c), "world_size"));
}

// Issue #28 item 1: PP 16 x EP 32 needs 512 GPUs; the fixes that keep the user's 256 GPUs
// (EP 16 keeping PP 16, PP 8 keeping EP 32, each with the uneven split 61 layers need) come
// before any that changes the cluster.
TEST_CASE("DeepSeek-V3 on 256 GPUs at PP 16 x EP 32 is offered fixes that keep the 256 GPUs") {
  const Config c = deepseek_v3_pp16_on_256(32);
  REQUIRE(error_field_of(c) == "expert_model_parallel_size");
  const std::vector<Suggestion> s = suggest_valid_configs(c);
  REQUIRE(s.size() >= 3);
  bool ep16_pp16 = false, pp8_ep32 = false, gpus_changed = false;
  for (const Suggestion& suggestion : s) {
    const ParallelConfig& p = suggestion.config.parallel;
    CHECK(normalize(suggestion.config).has_value());
    if (p.world_size != 256) {
      gpus_changed = true;
      continue;
    }
    CHECK_FALSE(gpus_changed);  // every same-GPU fix first
    ep16_pp16 = ep16_pp16 || (p.expert_parallel == 16 && p.pipeline_parallel == 16);
    pp8_ep32 = pp8_ep32 || (p.pipeline_parallel == 8 && p.expert_parallel == 32);
  }
  CHECK(ep16_pp16);
  CHECK(pp8_ep32);
  CHECK(gpus_changed);  // the cluster change is still offered, after them
  CHECK_THAT(s[0].label, Contains("uneven pipeline: first stage"));
}

TEST_CASE("a GPU count TP x PP does not divide is offered the nearest GPU counts") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.parallel.world_size = 31;
  REQUIRE(error_field_of(c) == "world_size");
  const std::vector<Suggestion> s = suggest_valid_configs(c);
  REQUIRE_FALSE(s.empty());
  CHECK(s[0].label == "GPUs 32");
}

TEST_CASE("suggestions come cheapest first") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.parallel.tensor_parallel = 7;
  const std::vector<Suggestion> s = suggest_valid_configs(c);
  REQUIRE(s.size() >= 2);
  CHECK(s[0].label == "TP 8");  // back to the next TP that divides the heads
}

TEST_CASE("a changed layout that breaks the batch is repaired with the batch") {
  Config c = fixtures::llama3_70b();
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 8;
  c.parallel.pipeline_parallel = 8;
  c.parallel.virtual_stages_per_pipeline_rank = 3;  // 80 layers: 10 per rank, not 3 chunks
  c.training.global_batch_size = 8;
  for (const Suggestion& s : suggest_valid_configs(c)) {
    CHECK(normalize(s.config).has_value());
  }
}

TEST_CASE(
    "property: for 1,000 random invalid configurations every suggestion is valid and "
    "keeps the model") {
  std::mt19937 rng(20261123);
  int invalid = 0, with_suggestions = 0;
  while (invalid < 1000) {
    const Config c = random_layout(rng);
    if (normalize(c).has_value()) continue;
    ++invalid;
    const std::vector<Suggestion> s = suggest_valid_configs(c);
    if (!s.empty()) ++with_suggestions;

    for (const Suggestion& suggestion : s) {
      INFO(suggestion.label);
      CHECK(normalize(suggestion.config).has_value());
      CHECK(same_model(suggestion.config.model, c.model));
    }
  }
  // Most mistakes have a fix nearby (a few random models admit none, e.g. 3 TP ranks).
  CHECK(with_suggestions > 900);
}

TEST_CASE(
    "property: for 1,000 random invalid layouts of every model preset every suggestion is "
    "valid and keeps the model") {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  std::mt19937 rng(16);
  int invalid = 0, with_suggestions = 0;
  while (invalid < 1000) {
    Config c = random_layout(rng);
    std::uniform_int_distribution<std::size_t> model(0, catalog->models.size() - 1);
    c.model = catalog->models[model(rng)].model;
    c.parallel.expert_parallel = c.model.num_experts > 0 ? pick(rng, {1, 2, 8, 16, 32}) : 1;
    if (normalize(c).has_value()) continue;
    ++invalid;
    const std::vector<Suggestion> s = suggest_valid_configs(c);
    if (!s.empty()) ++with_suggestions;
    for (const Suggestion& suggestion : s) {
      INFO(c.model.name << ": " << suggestion.label);
      CHECK(normalize(suggestion.config).has_value());
      CHECK(same_model(suggestion.config.model, c.model));
    }
  }
  CHECK(with_suggestions > 900);
}

// Picking a model, a GPU or a GPU count on the page (valid_layout_for) lands on a valid
// layout of that model on those GPUs.
// Issue #28: at VPP 5 the uneven splits were repaired into the same 40-stage layout, and each
// was still listed under its own "uneven pipeline: ..." label: three links alike, named for a
// split none of them carries.
TEST_CASE("no two suggestions are the same configuration, and each carries what it names") {
  Config c = deepseek_v3_pp16_on_256(8);
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 4;
  c.parallel.pipeline_parallel = 8;
  c.parallel.expert_parallel = 1;
  c.parallel.virtual_stages_per_pipeline_rank = 5;
  c.parallel.sequence_parallel = true;  // MoE with TP (moe_layer.py)
  REQUIRE(error_field_of(c) == "num_layers");
  const std::vector<Suggestion> s = suggest_valid_configs(c);
  REQUIRE(s.size() >= 3);
  for (std::size_t i = 0; i < s.size(); ++i) {
    INFO(s[i].label);
    const ParallelConfig& p = s[i].config.parallel;
    if (s[i].label.find("uneven pipeline") != std::string::npos) {
      CHECK(p.decoder_first_pipeline_num_layers + p.decoder_last_pipeline_num_layers > 0);
    }
    for (std::size_t j = 0; j < i; ++j) {
      CHECK(encode_share_query({s[i].config, "", ""}) != encode_share_query({s[j].config, "", ""}));
    }
  }
}

// Issue #28 walk: GLM-4.5-Air (46 layers) stepped to PP 16 at VPP 2 got the uneven split
// 8 | 2 x 14 | 10, whose first rank held four times the layers of the others (and 150 GiB); a
// layout string spreads them within a layer per chunk.
TEST_CASE("with VPP a layout places the layers where an uneven split piles them on one rank") {
  Config c = deepseek_v3_pp16_on_256(1);
  c.model = fixtures::preset_model("glm-4.5-air");
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 4;
  c.parallel.sequence_parallel = true;
  c.parallel.virtual_stages_per_pipeline_rank = 2;
  c.training.global_batch_size = 128;
  REQUIRE(error_field_of(c) == "num_layers");
  const Expected<Suggestion> placed = valid_layout_for(c, "pipeline_model_parallel_size");
  REQUIRE(placed.has_value());
  const Expected<NormalizedConfig> n = normalize(placed->config);
  REQUIRE(n.has_value());
  CHECK(placed->config.parallel.pipeline_parallel == 16);
  std::vector<int> per_rank(16);
  for (const StagePlacement& stage : n->stages) {
    per_rank[static_cast<std::size_t>(stage.pp_rank)] += stage.num_layers;
  }
  const auto [fewest, most] = std::minmax_element(per_rank.begin(), per_rank.end());
  CHECK(*most - *fewest <= 2);
}

TEST_CASE("every model preset picked on the default recipe's layout gets a valid layout") {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  const Config base = testing::recipe_config_of("llama-3-70b-h100-64");
  for (const ModelPreset& preset : catalog->models) {
    for (const std::int64_t gpus : {8, 64, 96, 256}) {
      Config c = base;
      c.model = preset.model;
      c.parallel.world_size = gpus;
      const Expected<Suggestion> layout = valid_layout_for(c);
      INFO(preset.id << " on " << gpus << " GPUs");
      REQUIRE(layout.has_value());
      CHECK(normalize(layout->config).has_value());
      CHECK(same_model(layout->config.model, c.model));
      CHECK(layout->config.parallel.world_size == gpus);
    }
  }
}

TEST_CASE("a valid configuration keeps its layout when a model is picked") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  const Expected<Suggestion> layout = valid_layout_for(c);
  REQUIRE(layout.has_value());
  CHECK(layout->label.empty());
  CHECK(layout->config.parallel.tensor_parallel == c.parallel.tensor_parallel);
  CHECK(layout->config.parallel.pipeline_parallel == c.parallel.pipeline_parallel);
}

TEST_CASE("a layout that no longer divides keeps what still applies") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.parallel.world_size = 64;
  c.model.num_layers = 78;  // 78 layers on PP 4: an uneven split or another PP, TP stays
  REQUIRE_FALSE(normalize(c).has_value());
  const Expected<Suggestion> layout = valid_layout_for(c);
  REQUIRE(layout.has_value());
  CHECK_FALSE(layout->label.empty());
  CHECK(layout->config.parallel.tensor_parallel == 8);
  CHECK(layout->config.parallel.world_size == 64);
}

// A module the rules refuse is dropped from the list (DeepSeek-V4's attention refuses
// core_attn recompute and qkv_linear offload: deepseek_v4_hybrid_attention.py); a list of
// that module alone (selective's default) is offered no and full recompute instead.
TEST_CASE("a refused recompute or offload module is dropped from the list") {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  const RecipePreset* recipe = catalog->find_recipe("deepseek-v4-flash-gb200-64");
  REQUIRE(recipe != nullptr);
  Config c = recipe_config(*recipe)->config;
  c.training.recompute = RecomputeConfig{};
  c.training.offload = OffloadConfig{};
  REQUIRE(normalize(c).has_value());
  c.training.recompute.granularity = RecomputeGranularity::selective;
  REQUIRE(error_field_of(c) == "recompute_modules");
  std::vector<Suggestion> s = suggest_valid_configs(c);
  REQUIRE(s.size() == 2);
  CHECK(s[0].label == "recompute: none");
  CHECK(s[1].label == "full, uniform, 1 layer per group");
  c.training.recompute.modules = {RecomputeModule::core_attn, RecomputeModule::moe_act,
                                  RecomputeModule::mlp};
  s = suggest_valid_configs(c);
  REQUIRE_FALSE(s.empty());
  CHECK(s[0].label == "selective: moe_act, mlp");
  for (const Suggestion& suggestion : s) CHECK(normalize(suggestion.config).has_value());
  c.training.recompute = RecomputeConfig{};
  c.training.offload.fine_grained_activation_offloading = true;
  c.training.offload.offload_modules = {OffloadModule::qkv_linear, OffloadModule::moe_act};
  REQUIRE(error_field_of(c) == "offload_modules");
  s = suggest_valid_configs(c);
  REQUIRE_FALSE(s.empty());
  CHECK(s[0].label == "activation offload: moe_act");
  CHECK(s[0].config.training.offload.offload_modules == OffloadModules{OffloadModule::moe_act});
}
