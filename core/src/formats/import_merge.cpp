// The import-merge policy (import_merge.hpp), driven by the field registry.
#include "megamem/import_merge.hpp"

#include <string>

namespace megamem {
namespace {

// `into` with every field for which keep(field) holds taken from `kept`.
template <typename Keep>
Config keep_fields(Config into, Config kept, Keep keep) {
  for (const ConfigField& field : config_fields()) {
    if (keep(field)) copy_field(field, kept, into);
  }
  return into;
}

// The merged configuration's presets; a GPU that had a preset keeps it (the device stays).
SharedConfig detect_presets(const Config& merged, const SharedConfig& current) {
  SharedConfig shared = with_detected_presets(merged);
  if (!current.gpu_id.empty()) shared.gpu_id = current.gpu_id;
  return shared;
}

}  // namespace

bool megatron_flags_cannot_say(const ConfigField& field) {
  if (field.group == FieldGroup::device || field.group == FieldGroup::runtime) return true;
  // The other groups' fields without a Megatron flag are mostly spelt by a flag the parser
  // derives them from (cpu_offloading from --cpu-offloading-num-layers) or by Megatron's
  // default; only the environment's facts and megamem's own imbalance knob are not.
  return field.environment || field.name == "training.moe_imbalance_factor";
}

SharedConfig merge_hf_model(const SharedConfig& current, const ModelConfig& imported,
                            std::string_view fallback_name) {
  Config from_hf = current.config;
  from_hf.model = imported;
  const Config merged = keep_fields(current.config, from_hf, [](const ConfigField& field) {
    return field.group == FieldGroup::model;
  });
  SharedConfig shared = detect_presets(merged, current);
  if (shared.config.model.name.empty()) shared.config.model.name = std::string(fallback_name);
  return shared;
}

SharedConfig merge_megatron_flags(const SharedConfig& current, const Config& parsed) {
  // A dense model's flags leave the MoE-only settings out (ConfigField::moe_only), so they say
  // nothing of them either: a dense link's flags give back the same link (#28 item 13).
  const bool dense = parsed.model.num_experts == 0;
  const Config merged = keep_fields(parsed, current.config, [&](const ConfigField& field) {
    return megatron_flags_cannot_say(field) || (dense && field.moe_only);
  });
  return detect_presets(merged, current);
}

}  // namespace megamem
