// The field registry: one row per Config field (config.hpp), the one home of everything the
// front ends and formats say about a field.
//
// A row holds the field's accessors, its share-link key and frozen link-version-1 default,
// its bounds and enum spellings, the Megatron flag that carries it, its config-JSON key, and
// the settings page's label, help line and tooltip. From the rows come the share-link codec
// (share_link.cpp), the one-to-one Megatron flags read (megatron_args.cpp) and written
// (megatron_args_writer.cpp), preset model fields (presets.cpp), the config JSON
// (json_output.cpp), the page's input rows and error-to-row map (web/inputs_panel.cpp) and
// the tests' field lists. Adding a field is one row here (plus the importer that reads a
// multi-flag spelling, if any).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/config.hpp"

namespace megamem {

enum class FieldKind {
  integer,      // int or int64 (get_int / set_int)
  real,         // double (get_real / set_real)
  boolean,      // bool (get_int / set_int as 0/1)
  choice,       // enum (get_int / set_int as the enumerator index; spellings in choices)
  text,         // std::string (text)
  module_list,  // --recompute-modules / --offload-modules names (list)
  pattern,      // --moe-layer-freq's 0/1 layer pattern (pattern)
};

// The Config struct a field lives in; also its group in the config JSON.
enum class FieldGroup { model, parallel, training, optimizer, runtime, device };

// Which part of the architecture reads an architecture field (field_not_applicable says when
// that part is absent): always, or only attention without / with multi-latent attention,
// experts, shared experts, the integer MoE frequency, Mamba layers, Gated DeltaNet layers,
// multi-token prediction, a sliding window.
enum class FieldScope {
  always,
  gqa,
  mla,
  dsa,
  experts,
  shared_experts,
  moe_frequency,
  mamba,
  gated_deltanet,
  kimi_delta_attention,
  mtp,
  sliding_window,
};

// How the Megatron flag carries the field: a value, or its presence (store_true) or absence
// (store_false, e.g. --no-masked-softmax-fusion clears masked_softmax_fusion).
enum class FlagForm { none, value, store_true, store_false };

// How many words a Megatron flag takes (arguments.py: store_true/store_false flags none,
// nargs='+' flags a list), which splitting a command line into flags needs.
enum class FlagArity { none, one, list };

// Another flag the importer reads into a field: a legacy or alternative spelling
// (--checkpoint-activations), a flag that says part of the value (--squared-relu), or one a
// rule on the field reads (--no-overlap-p2p-communication with the interleaved schedule).
struct FlagSpelling {
  std::string_view name;
  FlagArity arity = FlagArity::one;
};

// One enumerator's spellings, in enumerator order.
struct FieldChoice {
  std::string_view link;      // share-link text; "" = links do not accept it
  std::string_view json;      // config JSON and preset files
  std::string_view megatron;  // the flag's value; "" = the flag has no such choice
  std::string_view label;     // settings page
};

// A Megatron flag with its values, as the writer emits it ("--fp8-format", {"hybrid"}).
struct MegatronFlag {
  std::string name;
  std::vector<std::string> values;
};

struct ConfigField {
  std::string_view name;  // config.hpp path: "training.deterministic_mode"
  FieldGroup group = FieldGroup::model;
  FieldKind kind = FieldKind::integer;
  FieldScope scope = FieldScope::always;  // architecture fields: the part that reads it

  // Share link: key ("" = links do not carry the field) and version 1's default as text.
  std::string_view link_key;
  std::string_view link_default;

  // Bounds for links and presets (integer and boolean, choice index; text: length limit).
  std::int64_t min_int = 0;
  std::int64_t max_int = 0;
  double min_real = 0.0;
  double max_real = 0.0;
  bool wide = false;  // an int64 member (integer kind)
  std::vector<FieldChoice> choices;

  // Megatron: the flag, how it carries the field, and the smallest value it accepts
  // (reals: flag_min..flag_max).
  std::string_view flag;
  FlagForm flag_form = FlagForm::none;
  double flag_min = 1.0;
  double flag_max = 0.0;
  bool flag_always = false;  // written even at its default (flags Megatron requires)
  // Read only by MoE layers (the --moe-* training flags): not written for a dense model.
  bool moe_only = false;
  // A model row that is a setting of the run, not of the architecture (dropout, vocabulary
  // padding, the position table's length): an import is named by the preset whose
  // architecture it has, whatever these say (is_architecture_field).
  bool run_setting = false;
  // A fact of the machine's software, not of the run (flash-attn installed, Transformer
  // Engine's release): no Megatron flag says it, so flags and launch scripts keep it, and an
  // anchor measured where it is unknown takes the target's (anchor.cpp, import_merge.cpp).
  bool environment = false;
  // Read by code in megatron_args.cpp (aliases, several flags, derived values), not by the
  // one-to-one loop.
  bool read_by_importer = false;
  FlagArity flag_arity = FlagArity::one;  // the words `flag` takes
  std::vector<FlagSpelling> other_flags;  // further flags megatron_args.cpp reads into it
  // Multi-flag fields: the flags that say this field's value (instead of flag_form).
  void (*write_flags)(const Config&, std::vector<MegatronFlag>&) = nullptr;
  // Megatron uses `flag` only when another flag is given ("" = always), with this value
  // ("" = any): --recompute-method means nothing without full recompute. Megatron's argument
  // dump prints such a flag's default regardless, and the dump reader leaves it out then.
  std::string_view flag_needs;
  std::string_view flag_needs_value;
  // Megatron-Bridge: the ConfigContainer field `flag` sets, where it is not
  // model.<the flag's destination> (recipe overrides, bridge_overrides.cpp).
  std::string_view bridge_field;

  // Config JSON key within its group ("" = not in the JSON).
  std::string_view json_key;

  // Settings page: label, the Megatron flag as shown, a one-sentence effect on memory, and
  // the input's lower bound, upper bound (integer sliders, reals), step, and number format
  // (text fields: the placeholder).
  std::string_view label;
  std::string_view flag_help;
  std::string_view tooltip;
  double ui_min = 0.0;
  double ui_max = 0.0;
  double ui_step = 1.0;
  std::string_view ui_format;

  // Accessors (which are set depends on kind).
  std::int64_t (*get_int)(const Config&) = nullptr;
  void (*set_int)(Config&, std::int64_t) = nullptr;
  double (*get_real)(const Config&) = nullptr;
  void (*set_real)(Config&, double) = nullptr;
  std::string* (*text)(Config&) = nullptr;
  // module_list: the set's names in table order; set_list returns false and names the first
  // name the set does not know in `unknown` (modules.hpp is the one names table).
  std::vector<std::string> (*get_list)(const Config&) = nullptr;
  bool (*set_list)(Config&, const std::vector<std::string>&, std::string& unknown) = nullptr;
  std::string (*list_names)() = nullptr;  // every name the set knows, ", "-separated
  std::vector<std::uint8_t>* (*pattern)(Config&) = nullptr;
};

// Every Config field, in share-link order (docs/share-links.md); fields without a link key
// follow their neighbours.
const std::vector<ConfigField>& config_fields();

// Copies one field's value from `from` into `to` (non-const: the text and pattern accessors
// hand out the member itself).
void copy_field(const ConfigField& field, Config& from, Config& to);

// A Megatron-LM flag that changes what is allocated but has no Config field: accepted, and
// listed in MegatronArgs::unmodeled_flags so front ends say the estimate leaves it out.
struct UnmodeledFlag {
  std::string_view flag;    // with its leading "--"
  std::string_view reason;  // what it allocates that the estimate leaves out
};

// Every such flag (field_registry.cpp, beside the rows of the flags that are modeled).
std::span<const UnmodeledFlag> unmodeled_megatron_flags();

// A row whose Megatron-Bridge field no Megatron-LM flag carries (the Gemma soft-caps,
// DeepSeek-V4's sizes, Kimi K3's sizes and KDA layers): the Bridge import reads it from its
// field and the overrides write it there. A real, integer, boolean or pattern row; a pattern's
// Bridge field lists the marked layers' 1-based numbers (kimi_kda_layers).
inline bool is_bridge_only_field(const ConfigField& field) {
  return field.flag.empty() && !field.bridge_field.empty() &&
         (field.kind == FieldKind::real || field.kind == FieldKind::integer ||
          field.kind == FieldKind::boolean || field.kind == FieldKind::pattern);
}
// A real or integer row's value as a number (an integer row's as a whole number); a pattern
// row's Bridge text is its layer numbers (bridge_overrides.cpp).
inline double bridge_only_value(const ConfigField& field, const Config& config) {
  return field.kind == FieldKind::real ? field.get_real(config)
                                       : static_cast<double>(field.get_int(config));
}

// A field of the model's architecture: a model row but the display name and the run settings;
// the position table's length counts where it sizes a learned position embedding. An import
// whose architecture fields equal a preset's is that preset (share_link.hpp
// with_detected_presets).
bool is_architecture_field(const ConfigField& field, const ModelConfig& model);

// The row with this share-link key, config.hpp path or (group, JSON key); nullptr if none.
const ConfigField* field_by_link_key(std::string_view key);
const ConfigField* field_by_name(std::string_view name);
const ConfigField* field_by_json_key(FieldGroup group, std::string_view key);

// The group's name in the config JSON ("model", "parallel", ...).
std::string_view field_group_name(FieldGroup group);

// The field's value as share-link text (before percent-encoding); "?" for an enum value
// outside its spellings.
std::string field_link_text(const ConfigField& field, const Config& config);

// The Megatron flags that say this field's value (none at Megatron's default).
void append_megatron_flags(const ConfigField& field, const Config& config,
                           std::vector<MegatronFlag>& flags);

// Why the field means nothing for this model, one sentence ("" when it applies): query groups
// and kv channels under multi-latent attention, the MLA ranks without it, router and expert
// sizes for a dense model, Mamba or Gated DeltaNet sizes without such layers, and so on. Only
// architecture fields can fail to apply (core/src/modules/field_applicability.cpp cites the
// Megatron-Core files).
std::string_view field_not_applicable(const ConfigField& field, const ModelConfig& model);

// The Megatron-LM / Transformer Engine file whose rule the field follows: the module that
// reads an architecture field (by its scope), else where the setting is defined and checked
// (arguments.py, parallel_state.py, optimizer_config.py, ...). For explanations to people and
// agents (megamem mcp explain_field); the rules themselves cite their sources in core/src.
std::string_view field_source(const ConfigField& field);

}  // namespace megamem
