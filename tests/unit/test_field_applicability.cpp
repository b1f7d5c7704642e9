// The settings page's guards against a misleading edit (issue 16 items 5 and 6), in the core:
// which architecture fields do not apply to a model (field_not_applicable), and the values
// the -/+ buttons of TP, PP, VPP, CP, EP and ETP step to (step_parallel_size).
#include <catch2/catch.hpp>

#include "megamem/estimate.hpp"
#include "megamem/fields.hpp"
#include "megamem/modules.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"
#include "megamem/suggestions.hpp"
#include "model_fixtures.hpp"

using namespace megamem;
using Catch::Matchers::Contains;

namespace {

std::string_view why_not(std::string_view link_key, const ModelConfig& model) {
  const ConfigField* field = field_by_link_key(link_key);
  REQUIRE(field != nullptr);
  return field_not_applicable(*field, model);
}

// The default page's recipe with this model, on a valid layout of its 64 GPUs.
Config on_64_gpus(const ModelConfig& model) {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  const Expected<SharedConfig> base = recipe_config(*catalog->find_recipe("llama-3-70b-h100-64"));
  Config c = base->config;
  c.model = model;
  const Expected<Suggestion> layout = valid_layout_for(c);
  REQUIRE(layout.has_value());
  return layout->config;
}

// The field set to another value the registry accepts (integers: doubled, or 2; booleans
// flipped); false for kinds that are not numbers.
bool change_value(const ConfigField& field, Config& c) {
  if (field.kind == FieldKind::boolean) {
    field.set_int(c, field.get_int(c) != 0 ? 0 : 1);
    return true;
  }
  if (field.kind != FieldKind::integer) return false;
  const std::int64_t value = field.get_int(c);
  field.set_int(c, value > 0 ? value * 2 : 2);
  return true;
}

}  // namespace

TEST_CASE("query groups and kv channels do not apply under MLA, the MLA ranks do not under GQA") {
  const ModelConfig mla = fixtures::preset_model("deepseek-v3");
  const ModelConfig gqa = fixtures::preset_model("llama-3-70b");
  for (const char* key : {"m.groups", "m.kv-ch"}) {
    CHECK_THAT(std::string(why_not(key, mla)), Contains("multi-latent attention"));
    CHECK(why_not(key, gqa).empty());
  }
  for (const char* key : {"m.q-lora", "m.kv-lora", "m.qk-dim", "m.qk-pos-dim", "m.v-dim"}) {
    CHECK(why_not(key, mla).empty());
    CHECK_THAT(std::string(why_not(key, gqa)), Contains("--multi-latent-attention"));
  }
  CHECK(why_not("m.mla", gqa).empty());
  CHECK(why_not("m.heads", mla).empty());
}

TEST_CASE("MoE fields do not apply to a dense model, hybrid and GDN fields need such layers") {
  const ModelConfig dense = fixtures::preset_model("llama-3-70b");
  const ModelConfig moe = fixtures::preset_model("qwen3-235b-a22b");
  for (const char* key : {"m.topk", "m.moe-ffn", "m.shared", "m.shared-gate", "m.latent",
                          "m.expert-bias", "m.moe-freq"}) {
    CHECK_THAT(std::string(why_not(key, dense)), Contains("dense"));
  }
  CHECK(why_not("m.topk", moe).empty());
  CHECK(why_not("m.experts", dense).empty());  // the field that turns MoE on
  // Qwen3-235B has no shared experts: their gate does not apply, their size does.
  CHECK_THAT(std::string(why_not("m.shared-gate", moe)), Contains("shared experts"));
  CHECK(why_not("m.shared", moe).empty());
  // DeepSeek-V3's per-layer pattern (3 dense layers first) replaces the frequency.
  CHECK_THAT(std::string(why_not("m.moe-freq", fixtures::preset_model("deepseek-v3"))),
             Contains("pattern"));

  const ModelConfig nemotron = fixtures::preset_model("nemotron-nano-9b-v2");
  const ModelConfig next = fixtures::preset_model("qwen3-next-80b-a3b");
  for (const char* key : {"m.mamba-state", "m.mamba-head", "m.mamba-groups", "m.mamba-heads"}) {
    CHECK(why_not(key, nemotron).empty());
    CHECK_THAT(std::string(why_not(key, dense)), Contains("Mamba"));
  }
  for (const char* key : {"m.la-conv", "m.la-kdim", "m.la-vdim", "m.la-kheads", "m.la-vheads"}) {
    CHECK(why_not(key, next).empty());
    CHECK_THAT(std::string(why_not(key, dense)), Contains("Gated DeltaNet"));
  }
  CHECK_THAT(std::string(why_not("m.mtp-repeat", dense)), Contains("multi-token"));
  CHECK(why_not("m.mtp-repeat", fixtures::preset_model("deepseek-v3")).empty());
  CHECK_THAT(std::string(why_not("m.window-skip", dense)), Contains("window"));
  CHECK(why_not("m.window-skip", fixtures::preset_model("gpt-oss-120b")).empty());
}

TEST_CASE("only architecture fields can fail to apply") {
  Config empty;  // no layers, no heads, no experts: the most fields that could not apply
  empty.model.num_experts = 0;
  for (const ConfigField& field : config_fields()) {
    if (field.group == FieldGroup::model) continue;
    INFO(field.name);
    CHECK(field_not_applicable(field, empty.model).empty());
  }
}

// The test that the table says the truth: for every preset, a field said not to apply can
// take another value and neither the rules nor the memory notice.
TEST_CASE("property: changing a field that does not apply changes no preset's estimate") {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  int changed_fields = 0;
  for (const ModelPreset& preset : catalog->models) {
    const Config base = on_64_gpus(preset.model);
    const Expected<Estimate> before = estimate(base, {.module_tree = false, .timeline = false});
    REQUIRE(before.has_value());
    for (const ConfigField& field : config_fields()) {
      if (field_not_applicable(field, base.model).empty()) continue;
      Config changed = base;
      if (!change_value(field, changed)) continue;
      ++changed_fields;
      INFO(preset.id << ": " << field.name << " " << field_link_text(field, changed));
      const Expected<Estimate> after = estimate(changed, {.module_tree = false, .timeline = false});
      REQUIRE(after.has_value());
      CHECK(after->totals.padded_params == before->totals.padded_params);
      CHECK(after->ranks[static_cast<std::size_t>(after->limiting_pp_rank)].peak_total_bytes ==
            before->ranks[static_cast<std::size_t>(before->limiting_pp_rank)].peak_total_bytes);
    }
  }
  CHECK(changed_fields > 100);
}

TEST_CASE("+ on TP steps to the next size that divides, never to TP 9") {
  Config c = fixtures::llama3_70b_tp8_pp4();  // 64 GPUs, 64 heads, 8 query groups
  c.parallel.pipeline_parallel = 1;
  c.training.global_batch_size = 512;
  REQUIRE(normalize(c).has_value());
  CHECK(step_parallel_size(c, "tensor_model_parallel_size", +1) == 16);
  CHECK(step_parallel_size(c, "tensor_model_parallel_size", -1) == 4);
  // PP on 80 layers and 64 GPUs at TP 8: 8 GPUs per TP group, so PP 1, 2, 4, 8 fit.
  c.parallel.pipeline_parallel = 2;
  CHECK(step_parallel_size(c, "pipeline_model_parallel_size", +1) == 4);
  CHECK(step_parallel_size(c, "pipeline_model_parallel_size", -1) == 1);
  c.parallel.pipeline_parallel = 8;
  CHECK(step_parallel_size(c, "pipeline_model_parallel_size", +1) == std::nullopt);
  // Not a parallel size, or no direction.
  CHECK(step_parallel_size(c, "num_layers", +1) == std::nullopt);
  CHECK(step_parallel_size(c, "tensor_model_parallel_size", 0) == std::nullopt);
}

TEST_CASE("EP steps through divisors of the experts, ETP 0 steps from TP's value") {
  Config c = fixtures::qwen3_235b_tp4_pp4_ep8();  // 128 GPUs, 128 experts
  REQUIRE(normalize(c).has_value());
  const std::optional<std::int64_t> up = step_parallel_size(c, "expert_model_parallel_size", +1);
  REQUIRE(up.has_value());
  CHECK(*up > 8);
  CHECK(128 % *up == 0);
  CHECK(step_parallel_size(c, "expert_model_parallel_size", -1) == 4);
  c.parallel.expert_tensor_parallel = 0;  // = TP 4
  const std::optional<std::int64_t> etp = step_parallel_size(c, "expert_tensor_parallel_size", -1);
  REQUIRE(etp.has_value());
  CHECK(*etp < 4);
}

TEST_CASE("property: every step of a parallel size lands where its own rules hold") {
  const char* sizes[] = {"tensor_model_parallel_size",       "pipeline_model_parallel_size",
                         "virtual_stages_per_pipeline_rank", "context_parallel_size",
                         "expert_model_parallel_size",       "expert_tensor_parallel_size"};
  for (const Config& base : {fixtures::llama3_70b_tp8_pp4(), fixtures::qwen3_235b_tp4_pp4_ep8(),
                             on_64_gpus(fixtures::preset_model("deepseek-v3"))}) {
    REQUIRE(normalize(base).has_value());
    for (const char* size : sizes) {
      for (const int direction : {-1, +1}) {
        const std::optional<std::int64_t> value = step_parallel_size(base, size, direction);
        if (!value) continue;
        Config stepped = base;
        const ConfigField* field = nullptr;
        for (const ConfigField& f : config_fields()) {
          if (f.json_key == size) field = &f;
        }
        REQUIRE(field != nullptr);
        field->set_int(stepped, *value);
        INFO(base.model.name << ": " << size << " " << direction << " -> " << *value);
        const Expected<NormalizedConfig> n = normalize(stepped);
        // Valid, or wrong only in what the size does not decide (the batch, or the uneven
        // split the base set), never in what the size must divide.
        const std::string wrong = n ? "" : n.error().field;
        for (const char* divided : {"num_attention_heads", "num_query_groups", "ffn_hidden_size",
                                    "num_experts", "moe_ffn_hidden_size", "world_size",
                                    "num_layers", "pipeline_model_parallel_layout"}) {
          CHECK(wrong != divided);
        }
        CHECK(wrong != size);
      }
    }
  }
}

// Issue #28 item 2: the page steps PP and VPP from a layout it generated as if there were none
// (inputs_panel.cpp), then places the layers keeping the stepped size (keep_layout_valid).
// DeepSeek-V3 picked on 64 GPUs at PP 8 x VPP 5: + on PP did nothing, since no PP above 8
// places 61 layers at VPP 5.
TEST_CASE("property: a PP or VPP step from a generated layout lands on a layout that keeps it") {
  Config base = on_64_gpus(fixtures::preset_model("deepseek-v3"));
  REQUIRE(base.parallel.virtual_stages_per_pipeline_rank == 5);
  REQUIRE_FALSE(base.parallel.pipeline_layout.empty());
  base.parallel.pipeline_layout.clear();
  CHECK(step_parallel_size(base, "pipeline_model_parallel_size", +1) == 16);
  int steps = 0;
  for (const char* size : {"pipeline_model_parallel_size", "virtual_stages_per_pipeline_rank"}) {
    const bool pp = std::string_view(size) == "pipeline_model_parallel_size";
    for (const int direction : {-1, +1}) {
      const std::optional<std::int64_t> value = step_parallel_size(base, size, direction);
      if (!value) continue;
      ++steps;
      Config stepped = base;
      (pp ? stepped.parallel.pipeline_parallel
          : stepped.parallel.virtual_stages_per_pipeline_rank) = static_cast<int>(*value);
      INFO(size << " " << direction << " -> " << *value);
      const Expected<Suggestion> placed = valid_layout_for(stepped, size);
      REQUIRE(placed.has_value());
      const ParallelConfig& p = placed->config.parallel;
      CHECK((pp ? p.pipeline_parallel : p.virtual_stages_per_pipeline_rank) == *value);
      CHECK(p.world_size == base.parallel.world_size);
      CHECK(normalize(placed->config).has_value());
      if (pp && *value == 16) CHECK(p.virtual_stages_per_pipeline_rank < 5);
    }
  }
  CHECK(steps >= 3);
}

// The page's recompute and offload checkboxes (issue 24: the module lists come from the core):
// only modules that act on the model, so a ticked box never does nothing.
TEST_CASE("recompute and offload module choices follow the model's layers") {
  const ModelConfig dense = fixtures::preset_model("llama-3-70b");
  const ModelConfig mla_moe = fixtures::preset_model("deepseek-v3");
  const ModelConfig gdn = fixtures::preset_model("qwen3-next-80b-a3b");
  const RecomputeModules dense_choices = recompute_module_choices(dense);
  CHECK(module_name_list(dense_choices) ==
        std::vector<std::string>{"core_attn", "layernorm", "mlp"});
  const RecomputeModules mla_choices = recompute_module_choices(mla_moe);
  CHECK(mla_choices.contains({RecomputeModule::moe, RecomputeModule::moe_act,
                              RecomputeModule::shared_experts, RecomputeModule::mla_up_proj}));
  CHECK_FALSE(mla_choices.has(RecomputeModule::gdn_norm_out));
  CHECK(recompute_module_choices(gdn).has(RecomputeModule::gdn_norm_out));
  CHECK(recompute_modules_of_absent_layers(dense).has(RecomputeModule::gdn_norm_out));
  CHECK_FALSE(recompute_modules_of_absent_layers(gdn).has(RecomputeModule::gdn_norm_out));
  CHECK_FALSE(offload_module_choices(dense).has(OffloadModule::expert_fc1));
  CHECK(offload_module_choices(mla_moe).has(OffloadModule::expert_fc1));
  CHECK_FALSE(offload_module_choices(mla_moe).has(OffloadModule::gdp_qkv));
}
