// Presets: every embedded file parses, ids read as typed, model totals match the published
// counts, GPU presets carry their sources, recipes estimate, and broken files are refused
// with the file and key named.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "megamem/estimate.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"

using namespace megamem;

namespace {

const PresetCatalog& catalog() {
  const Expected<PresetCatalog>& presets = builtin_presets();
  INFO((presets ? std::string() : presets.error().field + ": " + presets.error().message));
  REQUIRE(presets.has_value());
  return *presets;
}

// The model alone on one GPU with link defaults: enough for whole-model totals.
Estimate estimate_model(const ModelConfig& model) {
  Config config = share_link_defaults();
  config.model = model;
  const Expected<Estimate> result = estimate(config, {false, false});
  INFO(model.name << ": "
                  << (result ? std::string()
                             : result.error().field + ": " + result.error().message));
  REQUIRE(result.has_value());
  return *result;
}

std::vector<std::string> ids_of(const std::vector<ModelPreset>& presets) {
  std::vector<std::string> ids;
  for (const auto& p : presets) ids.push_back(p.id);
  return ids;
}

Expected<PresetCatalog> load_one(const std::string& path, const std::string& text) {
  return load_presets({{path, text}});
}

const char* kTinyModel = R"json({"id": "tiny", "name": "Tiny", "source": "test",
  "published_params": 1000, "model": {"num_layers": 2, "hidden_size": 64,
  "num_attention_heads": 4, "vocab_size": 1000}})json";

}  // namespace

TEST_CASE("every embedded preset file parses") {
  const PresetCatalog& presets = catalog();
  CHECK(builtin_preset_files().size() ==
        presets.models.size() + presets.gpus.size() + presets.recipes.size());
  CHECK(presets.models.size() >= 13);
  CHECK(presets.gpus.size() >= 9);
  CHECK(presets.recipes.size() >= 4);
}

TEST_CASE("the issue's models, GPUs and recipes are presets") {
  const PresetCatalog& presets = catalog();
  for (const char* id : {"qwen3-235b-a22b", "deepseek-v3", "llama-3-70b", "qwen3-30b-a3b",
                         "qwen3-32b", "qwen3-8b", "llama-3.1-8b", "llama-3.1-405b", "mixtral-8x7b",
                         "mixtral-8x22b", "deepseek-v2-lite", "moonlight-16b-a3b", "kimi-k2"}) {
    INFO(id);
    CHECK(presets.find_model(id) != nullptr);
  }
  for (const char* id :
       {"a100-40gb", "a100-80gb", "h100-80gb", "h800", "h20", "h200", "b200", "gb200", "mi300x"}) {
    INFO(id);
    CHECK(presets.find_gpu(id) != nullptr);
  }
  CHECK(presets.find_recipe("deepseek-v3-h100-1024") != nullptr);
  // The technical report's DualPipe run gave way to Megatron-Bridge's recipe; its id stays.
  CHECK(presets.find_recipe("deepseek-v3-h800-2048") ==
        presets.find_recipe("deepseek-v3-h100-1024"));
  CHECK(presets.find_recipe("qwen3-235b-a22b-h100-256") != nullptr);
  CHECK(presets.find_recipe("qwen3-30b-a3b-rl-h100-8") != nullptr);
  // Recipes that moved to the run Bridge publishes keep their old ids.
  CHECK(presets.find_recipe("qwen3-next-80b-a3b-h100-32") ==
        presets.find_recipe("qwen3-next-80b-a3b-h100-128"));
  CHECK(presets.find_recipe("nemotron-nano-9b-v2-h100-2") ==
        presets.find_recipe("nemotron-nano-9b-v2-h100-8"));
}

TEST_CASE("preset ids are lowercase words joined by hyphens") {
  CHECK(is_valid_preset_id("qwen3-235b-a22b"));
  CHECK(is_valid_preset_id("llama-3.1-405b"));
  CHECK(is_valid_preset_id("h100-80gb"));
  CHECK_FALSE(is_valid_preset_id("Qwen3-8B"));
  CHECK_FALSE(is_valid_preset_id("qwen3_8b"));
  CHECK_FALSE(is_valid_preset_id("qwen3--8b"));
  CHECK_FALSE(is_valid_preset_id("-qwen3"));
  CHECK_FALSE(is_valid_preset_id("qwen3-"));
  CHECK_FALSE(is_valid_preset_id("llama-3.x"));
  CHECK_FALSE(is_valid_preset_id(""));
  const PresetCatalog& presets = catalog();
  for (const auto& p : presets.models) CHECK(is_valid_preset_id(p.id));
  for (const auto& p : presets.gpus) CHECK(is_valid_preset_id(p.id));
  for (const auto& p : presets.recipes) CHECK(is_valid_preset_id(p.id));
  const std::vector<std::string> ids = ids_of(presets.models);
  CHECK(std::is_sorted(ids.begin(), ids.end()));
}

TEST_CASE("aliases open the same preset") {
  const PresetCatalog& presets = catalog();
  REQUIRE(presets.find_gpu("h100") != nullptr);
  CHECK(presets.find_gpu("h100")->id == "h100-80gb");
  REQUIRE(presets.find_model("llama-3.1-70b") != nullptr);
  CHECK(presets.find_model("llama-3.1-70b")->id == "llama-3-70b");
  CHECK(presets.find_model("gpt-5") == nullptr);
}

TEST_CASE("preset names are found as people type them") {
  const PresetCatalog& presets = catalog();
  // Card and marketing spellings: capitals, underscores, spaces.
  REQUIRE(presets.find_gpu("H100") != nullptr);
  CHECK(presets.find_gpu("H100")->id == "h100-80gb");
  REQUIRE(presets.find_model("Qwen3-30B-A3B") != nullptr);
  CHECK(presets.find_model("Qwen3-30B-A3B")->id == "qwen3-30b-a3b");
  REQUIRE(presets.find_model("Llama_3_70B") != nullptr);
  CHECK(presets.find_model("Llama_3_70B")->id == "llama-3-70b");
  REQUIRE(presets.find_recipe("DeepSeek-V3 H100 1024") != nullptr);
  CHECK(presets.find_recipe("DeepSeek-V3 H100 1024")->id == "deepseek-v3-h100-1024");
  CHECK(canonical_preset_id("GB200_NVL72 x") == "gb200-nvl72-x");
  CHECK(presets.find_gpu("H100-") == nullptr);  // no trimming beyond the spelling
}

TEST_CASE("model presets match their published parameter totals") {
  for (const ModelPreset& preset : catalog().models) {
    INFO(preset.id << ": published " << preset.published_params_text);
    CHECK_FALSE(preset.source.empty());
    CHECK_FALSE(preset.params_source.empty());
    CHECK(preset.model.name == preset.name);
    const Estimate e = estimate_model(preset.model);
    if (preset.published_params_exact) {
      CHECK(e.totals.params == preset.published_params);
      CHECK(e.totals.mtp_params == preset.published_mtp_params);
    } else {
      const double relative = std::abs(static_cast<double>(e.totals.params) /
                                           static_cast<double>(preset.published_params) -
                                       1.0);
      INFO("computed " << e.totals.params);
      CHECK(preset.published_params_tolerance <= 0.015);
      CHECK(relative <= preset.published_params_tolerance);
    }
  }
}

TEST_CASE("the three reference models have their exact published totals") {
  const PresetCatalog& presets = catalog();
  CHECK(estimate_model(presets.find_model("qwen3-235b-a22b")->model).totals.params ==
        235'093'634'560);
  const Estimate v3 = estimate_model(presets.find_model("deepseek-v3")->model);
  CHECK(v3.totals.params == 671'026'404'352);
  CHECK(v3.totals.mtp_params == 11'610'067'968);
  CHECK(estimate_model(presets.find_model("llama-3-70b")->model).totals.params == 70'553'706'496);
}

TEST_CASE("Kimi-K2 has the parameters of its config.json tensors") {
  // Per layer: MLA 101,124,096 (q_a 7168x1536, q_a norm, q_b 1536x64x192, kv_a 7168x576,
  // kv_a norm, kv_b 512x64x256, o 8192x7168) + 2 norms; layer 0 a dense SwiGLU MLP of
  // 3x7168x18432; layers 1-60 384 experts and 1 shared expert of 3x7168x2048 plus a 384x7168
  // router; untied 163840x7168 embedding and output layer; final norm.
  const std::int64_t attention = 101'124'096 + 2 * 7168;
  const std::int64_t expert = 3LL * 7168 * 2048;
  const std::int64_t total = 61 * attention + 3LL * 7168 * 18432 +
                             60 * (385 * expert + 384LL * 7168) + 2LL * 163840 * 7168 + 7168;
  CHECK(total == 1'026'408'209'408);
  CHECK(estimate_model(catalog().find_model("kimi-k2")->model).totals.params == total);
}

TEST_CASE("DeepSeek-V3 follows Megatron's semantics for its architecture") {
  const ModelConfig& m = catalog().find_model("deepseek-v3")->model;
  CHECK(m.qk_layernorm);
  CHECK(m.multi_latent_attention);
  CHECK(m.moe_shared_expert_intermediate_size == m.moe_ffn_hidden_size);  // 1 shared expert
  CHECK(m.mtp_num_layers == 1);
  REQUIRE(m.moe_layer_pattern.size() == 61);
  CHECK(std::count(m.moe_layer_pattern.begin(), m.moe_layer_pattern.end(), 0) == 3);
  CHECK(m.moe_layer_pattern[2] == 0);
  CHECK(m.moe_layer_pattern[3] == 1);
}

TEST_CASE("Qwen3 presets use QK-norm, RMSNorm, SwiGLU, RoPE, no biases, untied embeddings") {
  for (const char* id : {"qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b"}) {
    INFO(id);
    const ModelConfig& m = catalog().find_model(id)->model;
    CHECK(m.qk_layernorm);
    CHECK(m.normalization == Normalization::rmsnorm);
    CHECK(m.activation == Activation::swiglu);
    CHECK(m.position_embedding == PositionEmbedding::rope);
    CHECK_FALSE(m.add_bias_linear);
    CHECK_FALSE(m.add_qkv_bias);
    CHECK(m.untie_embeddings_and_output_weights);
    CHECK(m.kv_channels == 128);
  }
}

TEST_CASE("GPU presets map onto DeviceConfig with sources") {
  const PresetCatalog& presets = catalog();
  for (const GpuPreset& gpu : presets.gpus) {
    INFO(gpu.id);
    CHECK_FALSE(gpu.source.empty());
    CHECK_FALSE(gpu.device.name.empty());
    CHECK(gpu.device.capacity_gib > 30.0);
    CHECK(gpu.device.peak_bf16_tflops > 100.0);
    CHECK(gpu.device.inter_node_bandwidth_gb_per_s > 0.0);
    CHECK(gpu.device.intra_node_bandwidth_gb_per_s > gpu.device.inter_node_bandwidth_gb_per_s);
    const bool ampere = gpu.id.rfind("a100", 0) == 0;
    CHECK(gpu.device.te_cublas_workspace_mib == (ampere ? 4.0 : 32.0));
  }
  const DeviceConfig& h100 = presets.find_gpu("h100-80gb")->device;
  CHECK(h100.capacity_gib == Approx(79.65));
  CHECK(h100.gpus_per_node == 8);
  CHECK(h100.intra_node_bandwidth_gb_per_s == 450.0);
  CHECK(h100.peak_bf16_tflops == 989.0);
  CHECK(presets.find_gpu("h800")->device.intra_node_bandwidth_gb_per_s == 200.0);
  CHECK(presets.find_gpu("gb200")->device.gpus_per_node == 72);
  // The page's build points GPU notes at docs/presets.md (core/CMakeLists.txt).
#ifndef __EMSCRIPTEN__
  CHECK(presets.find_gpu("mi300x")->notes.find("TE-ROCm") != std::string::npos);
#endif
}

TEST_CASE("every recipe estimates") {
  for (const RecipePreset& recipe : catalog().recipes) {
    INFO(recipe.id);
    CHECK_FALSE(recipe.source.empty());
    const Expected<SharedConfig> shared = recipe_config(recipe);
    INFO((shared ? std::string() : shared.error().field + ": " + shared.error().message));
    REQUIRE(shared.has_value());
    CHECK(shared->model_id == recipe.model_id);
    CHECK(shared->gpu_id == recipe.gpu_id);
    CHECK(shared->config.parallel.world_size == recipe.gpus);
    const Expected<Estimate> e = estimate(shared->config, {false, false});
    INFO((e ? std::string() : e.error().field + ": " + e.error().message));
    REQUIRE(e.has_value());
    CHECK(e->ranks.size() == static_cast<std::size_t>(shared->config.parallel.pipeline_parallel));
    // Every recipe is a run that trained: its device-level peak fits the card.
    const double capacity_bytes = shared->config.device.capacity_gib * 1024.0 * 1024.0 * 1024.0;
    for (const RankMemory& rank : e->ranks) {
      CHECK(static_cast<double>(rank.peak_total_bytes) < capacity_bytes);
    }
  }
}

TEST_CASE("the DeepSeek-V3 recipe is Megatron-Bridge's published Megatron-Core layout") {
  const Expected<SharedConfig> shared =
      recipe_config(*catalog().find_recipe("deepseek-v3-h100-1024"));
  REQUIRE(shared.has_value());
  const Config& c = shared->config;
  CHECK(c.parallel.world_size == 1024);
  CHECK(c.parallel.tensor_parallel == 2);
  CHECK(c.parallel.pipeline_parallel == 8);
  CHECK(c.parallel.virtual_stages_per_pipeline_rank == 4);
  CHECK(c.parallel.expert_parallel == 64);
  CHECK(c.optimizer.use_distributed_optimizer);
  CHECK(c.training.seq_length == 4096);
  CHECK(c.training.fp8_recipe == Fp8Recipe::none);
  CHECK(c.training.moe_token_dispatcher == TokenDispatcher::flex);
  CHECK(c.optimizer.exp_avg_dtype == DType::bf16);
  CHECK(c.device.name == "H100 80GB");
  // A run that trained fits.
  const Expected<Estimate> e = estimate(c);
  REQUIRE(e.has_value());
  CHECK(static_cast<double>(
            e->ranks[static_cast<std::size_t>(e->limiting_pp_rank)].peak_total_bytes) <=
        c.device.capacity_gib * 1024.0 * 1024.0 * 1024.0);
}

TEST_CASE("presets_to_json lists every preset with an id") {
  const PresetCatalog& presets = catalog();
  const std::string json = presets_to_json(presets, -1);
  CHECK(json.rfind("{\"gpus\":[", 0) == 0);
  for (const auto& p : presets.models)
    CHECK(json.find("\"id\":\"" + p.id + "\"") != std::string::npos);
  for (const auto& p : presets.recipes) {
    CHECK(json.find("\"id\":\"" + p.id + "\"") != std::string::npos);
  }
}

TEST_CASE("a model preset file parses its fields") {
  const auto loaded = load_one("models/tiny.json", kTinyModel);
  REQUIRE(loaded.has_value());
  REQUIRE(loaded->models.size() == 1);
  CHECK(loaded->models[0].model.num_layers == 2);
  CHECK(loaded->models[0].model.name == "Tiny");
  const auto pattern = load_one("models/tiny.json",
                                R"json({"id": "tiny", "name": "Tiny", "source": "s",
    "published_params": 1, "model": {"num_layers": 4, "moe_layer_freq": "([0]*1+[1]*3)"}})json");
  REQUIRE(pattern.has_value());
  CHECK(pattern->models[0].model.moe_layer_pattern == std::vector<std::uint8_t>{0, 1, 1, 1});
}

TEST_CASE("a broken preset file is refused naming the file and key") {
  const auto error_of = [](const std::string& path, const std::string& text) {
    const auto loaded = load_one(path, text);
    REQUIRE_FALSE(loaded.has_value());
    return loaded.error();
  };
  CHECK(error_of("models/tiny.json", "{").field == "presets/models/tiny.json");
  CHECK(error_of("models/tiny.json", "[1]").message == "is not a JSON object");
  const Error typo = error_of("models/tiny.json", R"json({"id": "tiny", "name": "T", "source": "s",
    "published_params": 1, "model": {"hiden_size": 64}})json");
  CHECK(typo.field == "presets/models/tiny.json: model.hiden_size");
  const Error type = error_of("models/tiny.json", R"json({"id": "tiny", "name": "T", "source": "s",
    "published_params": 1, "model": {"hidden_size": "64"}})json");
  CHECK(type.field == "presets/models/tiny.json: model.hidden_size");
  CHECK(type.message.find("integer") != std::string::npos);
  const Error choice =
      error_of("models/tiny.json", R"json({"id": "tiny", "name": "T", "source": "s",
    "published_params": 1, "model": {"activation": "relu"}})json");
  CHECK(choice.message.find("swiglu") != std::string::npos);
  CHECK(error_of("models/Tiny.json", R"json({"id": "Tiny", "name": "T", "source": "s",
    "published_params": 1, "model": {}})json")
            .field == "presets/models/Tiny.json: id");
  CHECK(error_of("models/other.json", kTinyModel).message == "the file must be named tiny.json");
  CHECK(error_of("models/tiny.json", R"json({"id": "tiny", "name": "T", "source": "s",
    "model": {}})json")
            .field == "presets/models/tiny.json: published_params");
  CHECK(error_of("widgets/tiny.json", kTinyModel).message.find("models/") != std::string::npos);
  const Error huge = error_of("models/tiny.json", R"json({"id": "tiny", "name": "T", "source": "s",
    "published_params": 1, "model": {"num_layers": 99999999999999999999}})json");
  CHECK(huge.field == "presets/models/tiny.json: model.num_layers");
}

TEST_CASE("presets refuse duplicate ids and recipes naming missing presets") {
  const auto twice = load_presets({{"models/tiny.json", kTinyModel},
                                   {"models/tiny-two.json",
                                    R"json({"id": "tiny-two", "aliases": ["tiny"], "name": "T",
                                        "source": "s", "published_params": 1, "model": {}})json"}});
  REQUIRE_FALSE(twice.has_value());
  CHECK(twice.error().message == "'tiny' is used by two presets");
  const auto dangling = load_presets(
      {{"models/tiny.json", kTinyModel},
       {"recipes/run.json", R"json({"id": "run", "name": "R", "source": "s", "model": "tiny",
                                "gpu": "h100-80gb", "gpus": 8, "settings": {"tp": 2}})json"}});
  REQUIRE_FALSE(dangling.has_value());
  CHECK(dangling.error().field == "presets/recipes/run.json: gpu");
  const auto misplaced = load_presets(
      {{"recipes/run.json", R"json({"id": "run", "name": "R", "source": "s", "model": "tiny",
                                "gpu": "g", "gpus": 8, "settings": {"gpus": 16}})json"}});
  REQUIRE_FALSE(misplaced.has_value());
  CHECK(misplaced.error().field == "presets/recipes/run.json: settings.gpus");
}

TEST_CASE("recipe settings become share-link text") {
  const auto loaded = load_presets(
      {{"models/tiny.json", kTinyModel},
       {"gpus/card.json", R"json({"id": "card", "name": "Card", "source": "s",
                              "device": {"capacity_gib": 40}})json"},
       {"recipes/run.json", R"json({"id": "run", "name": "R", "source": "s", "model": "tiny",
          "gpu": "card", "gpus": 8, "settings": {"tp": 2, "sp": true, "imbalance": 1.5,
          "recompute-modules": ["core_attn", "mlp"], "recompute": "selective"}})json"}});
  REQUIRE(loaded.has_value());
  const RecipePreset& recipe = loaded->recipes.at(0);
  const auto value_of = [&](const std::string& key) {
    for (const auto& [k, v] : recipe.settings) {
      if (k == key) return v;
    }
    return std::string("<missing>");
  };
  CHECK(value_of("tp") == "2");
  CHECK(value_of("sp") == "1");
  CHECK(value_of("imbalance") == "1.5");
  CHECK(value_of("recompute-modules") == "core_attn,mlp");
  CHECK(value_of("recompute") == "selective");
}
