// The import-merge policy (import_merge.hpp): what an HF config.json and Megatron flags set,
// what they keep, and that both re-detect presets. One TEST_CASE per rule.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "megamem/fields.hpp"
#include "megamem/import_merge.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"

namespace megamem {
namespace {

const PresetCatalog& catalog() {
  REQUIRE(builtin_presets().has_value());
  return *builtin_presets();
}

const ModelPreset& model_preset(const char* id) {
  const ModelPreset* preset = catalog().find_model(id);
  REQUIRE(preset != nullptr);
  return *preset;
}

// Llama-3-70B on H200 with a layout, numerics, runtime and environment off their defaults.
SharedConfig current_config() {
  Config config = share_link_defaults();
  config.model = model_preset("llama-3-70b").model;
  config.device = catalog().find_gpu("h200")->device;
  config.parallel.world_size = 64;
  config.parallel.tensor_parallel = 8;
  config.parallel.pipeline_parallel = 4;
  config.training.seq_length = 8192;
  config.training.fp8_recipe = Fp8Recipe::delayed;
  config.training.flash_attn_available = false;
  config.training.moe_imbalance_factor = 1.25;
  config.runtime.cuda_context_gib = 1.5;
  config.runtime.expandable_segments = true;
  SharedConfig shared = with_detected_presets(config);
  REQUIRE(shared.model_id == "llama-3-70b");
  REQUIRE(shared.gpu_id == "h200");
  return shared;
}

// The registry fields (display names excluded) whose link text differs between a and b, of
// the fields `in` selects.
template <typename In>
std::vector<std::string> differing(const Config& a, const Config& b, In in) {
  std::vector<std::string> names;
  for (const ConfigField& field : config_fields()) {
    if (!in(field) || field.kind == FieldKind::text) continue;
    if (field_link_text(field, a) != field_link_text(field, b)) names.emplace_back(field.name);
  }
  return names;
}

bool in_model(const ConfigField& field) { return field.group == FieldGroup::model; }
bool outside_model(const ConfigField& field) { return field.group != FieldGroup::model; }
// What flags of a dense model say: not the MoE-only settings, which they leave out.
bool said_by_dense_flags(const ConfigField& field) {
  return !megatron_flags_cannot_say(field) && !field.moe_only;
}

// Qwen3-8B's flags on 16 GPUs, as the flags import would parse them.
Config qwen_flags_config() {
  Config written = share_link_defaults();
  written.model = model_preset("qwen3-8b").model;
  written.parallel.world_size = 16;
  written.parallel.tensor_parallel = 2;
  written.training.seq_length = 4096;
  const Expected<MegatronArgs> parsed = parse_megatron_args(to_megatron_args(written), 16);
  REQUIRE(parsed.has_value());
  return parsed->config;
}

}  // namespace

TEST_CASE("an HF config.json sets every model field") {
  const ModelConfig& imported = model_preset("qwen3-30b-a3b").model;
  const SharedConfig merged = merge_hf_model(current_config(), imported, "imported qwen3_moe");
  Config expected = merged.config;
  expected.model = imported;
  CHECK(differing(merged.config, expected, in_model).empty());
}

TEST_CASE("an HF config.json keeps layout, training, optimizer, runtime and GPU") {
  const SharedConfig current = current_config();
  const SharedConfig merged =
      merge_hf_model(current, model_preset("qwen3-30b-a3b").model, "imported qwen3_moe");
  CHECK(differing(merged.config, current.config, outside_model).empty());
  CHECK(merged.config.device.name == current.config.device.name);
  CHECK(merged.gpu_id == "h200");
}

TEST_CASE("an HF model that matches no preset gets the fallback name and no model preset") {
  ModelConfig imported = model_preset("qwen3-8b").model;
  imported.name.clear();
  imported.num_layers += 2;
  const SharedConfig merged = merge_hf_model(current_config(), imported, "imported qwen3");
  CHECK(merged.model_id.empty());
  CHECK(merged.config.model.name == "imported qwen3");
}

TEST_CASE("an HF model equal to a preset's architecture takes the preset's id and name") {
  ModelConfig imported = model_preset("qwen3-8b").model;
  imported.name.clear();
  const SharedConfig merged = merge_hf_model(current_config(), imported, "imported qwen3");
  CHECK(merged.model_id == "qwen3-8b");
  CHECK(merged.config.model.name == model_preset("qwen3-8b").model.name);
}

TEST_CASE("Megatron flags set every field a flag can say, the world size included") {
  const Config parsed = qwen_flags_config();
  const SharedConfig merged = merge_megatron_flags(current_config(), parsed);
  CHECK(differing(merged.config, parsed, said_by_dense_flags).empty());
  CHECK(merged.config.parallel.world_size == 16);
  CHECK(merged.config.training.fp8_recipe == Fp8Recipe::none);  // no --fp8-format: off
}

TEST_CASE("Megatron flags keep the GPU, the runtime overheads and the environment") {
  const SharedConfig current = current_config();
  const SharedConfig merged = merge_megatron_flags(current, qwen_flags_config());
  const auto kept = [](const ConfigField& field) { return megatron_flags_cannot_say(field); };
  CHECK(differing(merged.config, current.config, kept).empty());
  CHECK(merged.config.training.flash_attn_available == false);
  CHECK(merged.config.training.moe_imbalance_factor == 1.25);
  CHECK(merged.config.runtime.expandable_segments);
  CHECK(merged.gpu_id == "h200");
}

TEST_CASE("Megatron flags re-detect the model preset and drop the old model's name") {
  const SharedConfig merged = merge_megatron_flags(current_config(), qwen_flags_config());
  CHECK(merged.model_id == "qwen3-8b");
  CHECK(merged.config.model.name == model_preset("qwen3-8b").model.name);
}

TEST_CASE("Megatron flags detect the GPU preset when the current GPU had none") {
  SharedConfig current = current_config();
  current.gpu_id.clear();
  const SharedConfig merged = merge_megatron_flags(current, qwen_flags_config());
  CHECK(merged.gpu_id == "h200");
}

TEST_CASE("a dense model's flags keep the MoE-only settings") {
  SharedConfig current = current_config();
  current.config.training.moe_token_dispatcher = TokenDispatcher::flex;
  current.config.training.moe_grouped_gemm = true;
  const SharedConfig merged = merge_megatron_flags(current, qwen_flags_config());
  CHECK(merged.config.training.moe_token_dispatcher == TokenDispatcher::flex);
  CHECK(merged.config.training.moe_grouped_gemm);
}

// A model Megatron-LM's flags can spell: no model row without a flag is set (the Gemma soft-caps
// and sandwich norms are Megatron-Bridge's alone).
bool flags_can_say(const ModelConfig& model) {
  Config with;
  with.model = model;
  const Config plain;
  for (const ConfigField& field : config_fields()) {
    if (field.group != FieldGroup::model || !field.flag.empty() || field.name == "model.name") {
      continue;
    }
    if (field_link_text(field, with) != field_link_text(field, plain)) return false;
  }
  return true;
}

// Issue 28 item 13: a dense link -> its Megatron flags (no MoE flags) -> a link is the same
// link, for every dense preset flags can spell, as `megamem url encode --megatron-args` builds
// it (TP 2: at TP 1 Megatron turns sequence parallelism off, and the flags say so).
TEST_CASE("a dense preset's link, through its flags, gives the same link") {
  int presets = 0;
  for (const ModelPreset& preset : catalog().models) {
    if (preset.model.num_experts > 0 || !flags_can_say(preset.model)) continue;
    ++presets;
    const std::string query = "v=1&model=" + preset.id + "&gpus=8&tp=2";
    const Expected<SharedConfig> linked = decode_share_link(query);
    REQUIRE(linked.has_value());
    const std::string flags = to_megatron_args(linked->config);
    INFO(preset.id << ": " << flags);
    CHECK(flags.find("--moe-") == std::string::npos);
    const Expected<MegatronArgs> parsed = parse_megatron_args(flags, 8);
    REQUIRE(parsed.has_value());
    const SharedConfig back =
        merge_megatron_flags(SharedConfig{share_link_defaults(), "", ""}, parsed->config);
    CHECK(encode_share_query(back) == encode_share_query(*linked));
  }
  CHECK(presets >= 8);
}

// Issue 28 item 6: a launch script's dropout, padding or position count are the run's.
TEST_CASE("flags of a preset's architecture with other run settings name the preset") {
  Config run = qwen_flags_config();
  run.model.hidden_dropout = 0.1;
  run.model.attention_dropout = 0.1;
  run.model.max_position_embeddings = 131072;
  run.model.make_vocab_size_divisible_by = 1;
  const SharedConfig merged = merge_megatron_flags(current_config(), run);
  CHECK(merged.model_id == "qwen3-8b");
  CHECK(merged.config.model.name == model_preset("qwen3-8b").model.name);
  CHECK(merged.config.model.hidden_dropout == 0.1);  // kept, as a change to the preset
  CHECK(encode_share_query(merged).find("m.hdrop=0.1") != std::string::npos);
}

TEST_CASE("the position count is architecture only where it sizes a learned table") {
  const ConfigField* max_positions = field_by_name("model.max_position_embeddings");
  REQUIRE(max_positions != nullptr);
  ModelConfig model = model_preset("qwen3-8b").model;
  CHECK_FALSE(is_architecture_field(*max_positions, model));
  model.position_embedding = PositionEmbedding::learned_absolute;
  CHECK(is_architecture_field(*max_positions, model));
  CHECK_FALSE(is_architecture_field(*field_by_name("model.hidden_dropout"), model));
  CHECK(is_architecture_field(*field_by_name("model.num_layers"), model));
  CHECK_FALSE(is_architecture_field(*field_by_name("model.name"), model));
}

TEST_CASE("an import's own name gives way to the preset its architecture equals") {
  Config bridge = qwen_flags_config();
  bridge.model.name = "Qwen3ModelProvider";  // a Bridge provider class
  const SharedConfig detected = with_detected_presets(bridge);
  CHECK(detected.model_id == "qwen3-8b");
  CHECK(detected.config.model.name == model_preset("qwen3-8b").model.name);
}

TEST_CASE("flags cannot say exactly the device, runtime, two environment fields and a knob") {
  std::vector<std::string> outside_device_and_runtime;
  for (const ConfigField& field : config_fields()) {
    const bool machine = field.group == FieldGroup::device || field.group == FieldGroup::runtime;
    if (machine) CHECK(megatron_flags_cannot_say(field));
    if (!machine && megatron_flags_cannot_say(field)) {
      outside_device_and_runtime.emplace_back(field.name);
    }
  }
  CHECK(outside_device_and_runtime ==
        std::vector<std::string>{"training.moe_imbalance_factor", "training.flash_attn_available",
                                 "training.te_norm_saves_input_view"});
}

}  // namespace megamem
