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
bool said_by_flags(const ConfigField& field) { return !megatron_flags_cannot_say(field); }

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
  CHECK(differing(merged.config, parsed, said_by_flags).empty());
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

TEST_CASE("flags cannot say exactly the device, runtime and two environment fields") {
  std::vector<std::string> outside_device_and_runtime;
  for (const ConfigField& field : config_fields()) {
    const bool machine = field.group == FieldGroup::device || field.group == FieldGroup::runtime;
    if (machine) CHECK(megatron_flags_cannot_say(field));
    if (!machine && megatron_flags_cannot_say(field)) {
      outside_device_and_runtime.emplace_back(field.name);
    }
  }
  CHECK(outside_device_and_runtime ==
        std::vector<std::string>{"training.moe_imbalance_factor", "training.flash_attn_available"});
}

}  // namespace megamem
