// The field registry (fields.hpp): every row is complete and unique, and the formats built
// from it (config JSON, Megatron flags) carry each field it says they carry.
#include <catch2/catch.hpp>
#include <cstddef>
#include <set>
#include <string>
#include <utility>

#include "formats/megatron_flag_names.hpp"
#include "megamem/fields.hpp"
#include "megamem/json_output.hpp"
#include "megamem/megatron_args.hpp"

using namespace megamem;

namespace {

// Counts an aggregate's members: the most braces of "anything" it can be built from.
struct AnyValue {
  template <class T>
  operator T() const;  // NOLINT: only used in unevaluated aggregate initialization
};
template <class T, std::size_t... I>
constexpr bool builds_from(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyValue{})...}; };
}
template <class T, std::size_t N = 0>
constexpr std::size_t member_count() {
  if constexpr (builds_from<T>(std::make_index_sequence<N + 1>())) {
    return member_count<T, N + 1>();
  } else {
    return N;
  }
}

std::size_t rows_in(FieldGroup group) {
  std::size_t rows = 0;
  for (const ConfigField& field : config_fields()) rows += field.group == group ? 1 : 0;
  return rows;
}

bool has_accessors(const ConfigField& field) {
  switch (field.kind) {
    case FieldKind::integer:
    case FieldKind::boolean:
    case FieldKind::choice:
      return field.get_int && field.set_int;
    case FieldKind::real:
      return field.get_real && field.set_real;
    case FieldKind::text:
      return field.text != nullptr;
    case FieldKind::module_list:
      return field.get_list && field.set_list;
    case FieldKind::pattern:
      return field.pattern != nullptr;
  }
  return false;
}

// A value other than Config{}'s that the field's Megatron flag can say.
void change(const ConfigField& field, Config& config) {
  switch (field.kind) {
    case FieldKind::integer:
      field.set_int(config, field.get_int(config) == 0 ? 4 : field.get_int(config) * 2);
      break;
    case FieldKind::boolean:
      field.set_int(config, field.get_int(config) ? 0 : 1);
      break;
    case FieldKind::choice:
      for (std::size_t i = 0; i < field.choices.size(); ++i) {
        const auto index = static_cast<std::int64_t>(i);
        if (!field.choices[i].megatron.empty() && index != field.get_int(config)) {
          field.set_int(config, index);
          break;
        }
      }
      break;
    case FieldKind::real:
      field.set_real(config, field.get_real(config) > 0.5 ? 0.25 : 0.75);
      break;
    default:
      break;
  }
}

}  // namespace

TEST_CASE("every registry row is complete and named once") {
  std::set<std::string> names;
  std::set<std::string> keys;
  std::set<std::pair<FieldGroup, std::string>> json_keys;
  for (const ConfigField& field : config_fields()) {
    INFO(field.name);
    CHECK(has_accessors(field));
    CHECK(names.insert(std::string(field.name)).second);
    if (!field.link_key.empty()) CHECK(keys.insert(std::string(field.link_key)).second);
    if (!field.json_key.empty()) {
      CHECK(json_keys.insert({field.group, std::string(field.json_key)}).second);
    }
    if (field.kind == FieldKind::choice) CHECK_FALSE(field.choices.empty());
    // A row the page shows says which flag it is and what it does to memory.
    if (!field.label.empty()) {
      CHECK_FALSE(field.flag_help.empty());
      CHECK_FALSE(field.tooltip.empty());
    }
  }
  CHECK(names.size() > 100);
}

TEST_CASE("the registry has a row for every member of every Config struct") {
  CHECK(rows_in(FieldGroup::model) == member_count<ModelConfig>());
  // ParallelConfig's fsdp member is a struct of its own.
  CHECK(rows_in(FieldGroup::parallel) ==
        member_count<ParallelConfig>() - 1 + member_count<FsdpConfig>());
  CHECK(rows_in(FieldGroup::optimizer) == member_count<OptimizerConfig>());
  CHECK(rows_in(FieldGroup::runtime) == member_count<RuntimeOverheadConfig>());
  CHECK(rows_in(FieldGroup::device) == member_count<DeviceConfig>());
  // TrainingConfig's recompute and offload members are structs of their own.
  CHECK(rows_in(FieldGroup::training) == member_count<TrainingConfig>() - 2 +
                                             member_count<RecomputeConfig>() +
                                             member_count<OffloadConfig>());
  CHECK(member_count<Config>() == 6);
}

TEST_CASE("the config JSON carries every field") {
  const std::string json = config_to_json(Config{}, -1);
  for (const ConfigField& field : config_fields()) {
    INFO(field.name);
    REQUIRE_FALSE(field.json_key.empty());
    CHECK(json.find("\"" + std::string(field.json_key) + "\":") != std::string::npos);
  }
}

TEST_CASE("every one-to-one Megatron flag is written and read back") {
  for (const ConfigField& field : config_fields()) {
    if (field.flag_form == FlagForm::none || field.read_by_importer || field.write_flags) {
      continue;
    }
    INFO(field.name << " " << field.flag);
    Config config;
    config.model.num_layers = 4;
    config.model.hidden_size = 64;
    config.model.num_attention_heads = 4;
    config.model.num_experts = 8;
    config.training.seq_length = 4;
    config.model.position_embedding = PositionEmbedding::rope;
    config.optimizer.use_distributed_optimizer = true;
    config.optimizer.use_precision_aware_optimizer = true;
    config.training.params_dtype = DType::bf16;
    config.training.fp8_recipe = Fp8Recipe::delayed;
    const std::string before = field_link_text(field, config);
    change(field, config);
    if (field_link_text(field, config) == before) continue;  // no other value has a flag
    const std::string flags = to_megatron_args(config);
    const bool at_megatron_default = field_link_text(field, config) == field_link_text(field, {});
    CHECK((flags.find(std::string(field.flag)) != std::string::npos) != at_megatron_default);
    const Expected<MegatronArgs> parsed = parse_megatron_args(flags, 4, 1000);
    INFO(flags << (parsed ? std::string() : " -> " + parsed.error().message));
    CHECK(parsed.has_value());
    if (parsed) CHECK(field_link_text(field, parsed->config) == field_link_text(field, config));
  }
}

// One flag table (issue #24): the flags the importer reads, with the words each takes, are the
// registry's rows and their other spellings. Each is a flag of Megatron-LM's argument parser
// (megatron_flag_names.cpp, from arguments.py), and each names one arity: a spelling read into
// two fields would have two.
TEST_CASE("every flag the registry reads is a Megatron-LM flag with one arity") {
  std::set<std::pair<std::string, FlagArity>> seen;
  std::set<std::string> names;
  for (const ConfigField& field : config_fields()) {
    std::vector<FlagSpelling> spellings = field.other_flags;
    if (!field.flag.empty()) spellings.push_back({field.flag, field.flag_arity});
    for (const FlagSpelling& spelling : spellings) {
      INFO(field.name << ": " << spelling.name);
      CHECK(spelling.name.rfind("--", 0) == 0);
      // Earlier releases' flags the generated table's tree (d98e8a6) no longer has: a run of
      // those releases still sets them.
      const bool earlier_release =
          spelling.name == "--hybrid-attention-ratio" || spelling.name == "--hybrid-mlp-ratio";
      CHECK((formats::is_megatron_flag(spelling.name.substr(2)) || earlier_release));
      seen.insert({std::string(spelling.name), spelling.arity});
      names.insert(std::string(spelling.name));
    }
  }
  CHECK(seen.size() == names.size());
  // Arity follows argparse: switches take no word, nargs='+' flags a list.
  const std::pair<std::string, FlagArity> expected[] = {
      {"--swiglu", FlagArity::none},
      {"--recompute-modules", FlagArity::list},
      {"--sequence-parallel", FlagArity::none},
      {"--tensor-model-parallel-size", FlagArity::one},
      {"--checkpoint-activations", FlagArity::none},
      {"--cuda-graph-scope", FlagArity::list}};
  for (const auto& flag : expected) CHECK(seen.count(flag) == 1);
}

TEST_CASE(
    "each unmodeled Megatron flag is a flag of Megatron-LM that no row reads, with a reason") {
  std::set<std::string_view> seen;
  for (const UnmodeledFlag& unmodeled : unmodeled_megatron_flags()) {
    INFO(unmodeled.flag);
    CHECK(formats::is_megatron_flag(unmodeled.flag.substr(2)));
    CHECK_FALSE(unmodeled.reason.empty());
    CHECK(seen.insert(unmodeled.flag).second);
    for (const ConfigField& field : config_fields()) {
      CHECK(field.flag != unmodeled.flag);
      for (const FlagSpelling& spelling : field.other_flags) CHECK(spelling.name != unmodeled.flag);
    }
  }
  CHECK(seen.count("--use-nccl-ub") == 1);
}
