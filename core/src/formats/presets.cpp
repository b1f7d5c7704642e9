// Preset files (presets/models, presets/gpus, presets/recipes) -> PresetCatalog.
//
// Every key is known: a misspelt field is an Error naming the file and the key, never a
// silent default. Numbers are range-checked before conversion; nothing here throws (JSON is
// parsed with exceptions off and every value's type is checked before it is read).
#include "megamem/presets.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "formats/megatron_expressions.hpp"
#include "formats/presets_embedded.hpp"
#include "megamem/fields.hpp"
#include "megamem/json_output.hpp"
#include "megamem/megatron_args.hpp"
#include "number_text.hpp"

namespace megamem {
namespace {

using json = nlohmann::json;

// A message, or nothing when the value was read.
using Problem = std::optional<std::string>;

std::string json_type(const json& value) { return value.type_name(); }

Problem read_integer(const json& value, std::int64_t& out, std::int64_t min_value,
                     std::int64_t max_value) {
  if (!value.is_number_integer()) return "expects an integer, got " + json_type(value);
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() > static_cast<std::uint64_t>(max_value)) {
    return "is out of range (at most " + std::to_string(max_value) + ")";
  }
  const std::int64_t number = value.get<std::int64_t>();
  if (number < min_value || number > max_value) {
    return "must be between " + std::to_string(min_value) + " and " + std::to_string(max_value) +
           ", got " + std::to_string(number);
  }
  out = number;
  return std::nullopt;
}

Problem read_real(const json& value, double& out, double min_value, double max_value) {
  if (!value.is_number()) return "expects a number, got " + json_type(value);
  const double number = value.get<double>();
  if (!(number >= min_value && number <= max_value)) {
    return "must be between " + std::to_string(min_value) + " and " + std::to_string(max_value);
  }
  out = number;
  return std::nullopt;
}

Problem read_real(const json& value, const ConfigField& field, Config& config) {
  double number = 0.0;
  if (Problem problem = read_real(value, number, field.min_real, field.max_real)) return problem;
  field.set_real(config, number);
  return std::nullopt;
}

Problem read_bool(const json& value, bool& out) {
  if (!value.is_boolean()) return "expects true or false, got " + json_type(value);
  out = value.get<bool>();
  return std::nullopt;
}

Problem read_text(const json& value, std::string& out) {
  if (!value.is_string()) return "expects a string, got " + json_type(value);
  out = value.get<std::string>();
  return std::nullopt;
}

// One of the field's JSON spellings (fields.hpp).
Problem read_choice(const json& value, const ConfigField& field, Config& config) {
  std::string names;
  for (const FieldChoice& choice : field.choices) {
    names += (names.empty() ? "" : ", ") + std::string(choice.json);
  }
  if (!value.is_string()) return "expects one of " + names + ", got " + json_type(value);
  const std::string text = value.get<std::string>();
  for (std::size_t i = 0; i < field.choices.size(); ++i) {
    if (text == field.choices[i].json) {
      field.set_int(config, static_cast<std::int64_t>(i));
      return std::nullopt;
    }
  }
  return "expects one of " + names + ", got '" + text + "'";
}

// A per-layer list field as a JSON array of integers in 0..the field's max_int.
Problem read_pattern(const json& value, const ConfigField& field, Config& config) {
  if (!value.is_array()) return "expects an array of integers, got " + json_type(value);
  std::vector<std::uint8_t> pattern;
  pattern.reserve(value.size());
  for (const json& item : value) {
    std::int64_t number = 0;
    if (Problem problem = read_integer(item, number, 0, field.max_int)) return problem;
    pattern.push_back(static_cast<std::uint8_t>(number));
  }
  *field.pattern(config) = std::move(pattern);
  return std::nullopt;
}

// A ModelConfig or DeviceConfig field by its config.hpp name (the registry's JSON key),
// within the registry's bounds.
Problem read_config_field(FieldGroup group, const std::string& key, const json& value,
                          Config& config) {
  const ConfigField* field = field_by_json_key(group, key);
  if (!field || key == "name") {
    return "is not a " + std::string(group == FieldGroup::model ? "Model" : "Device") +
           "Config field (config.hpp)";
  }
  switch (field->kind) {
    case FieldKind::integer: {
      std::int64_t number = 0;
      if (Problem problem = read_integer(value, number, field->min_int, field->max_int)) {
        return problem;
      }
      field->set_int(config, number);
      return std::nullopt;
    }
    case FieldKind::boolean: {
      bool flag = false;
      if (Problem problem = read_bool(value, flag)) return problem;
      field->set_int(config, flag ? 1 : 0);
      return std::nullopt;
    }
    case FieldKind::real:
      return read_real(value, *field, config);
    case FieldKind::choice:
      return read_choice(value, *field, config);
    case FieldKind::text: {  // the hybrid layer pattern
      std::string text;
      if (Problem problem = read_text(value, text)) return problem;
      if (static_cast<std::int64_t>(text.size()) > field->max_int) {
        return "is longer than " + std::to_string(field->max_int) + " characters";
      }
      *field->text(config) = std::move(text);
      return std::nullopt;
    }
    case FieldKind::pattern:  // a per-layer list of small integers (csa_compress_ratios)
      return read_pattern(value, *field, config);
    default:
      return "is not read from preset files";
  }
}

// The per-layer list expressions of a model preset, which need num_layers and so are parsed
// after the other fields.
struct LayerExpressions {
  std::string moe_layer_freq;         // --moe-layer-freq
  std::string window_attn_skip_freq;  // --window-attn-skip-freq
  std::string kda_layer_pattern;      // Kimi K3's KDA layers, a list expression of 0/1
};

// A Megatron-style list expression of one 0/1 entry per layer (Kimi K3's KDA layers).
Expected<std::vector<std::uint8_t>> parse_layer_bits(std::string_view value, int num_layers,
                                                     std::string_view field) {
  Expected<formats::PatternValue> list = formats::evaluate_pattern_expression(value, field);
  if (!list) return list.error();
  if (!list->is_list || static_cast<std::int64_t>(list->list.size()) != num_layers) {
    return Error{std::string(field),
                 "expects one 0/1 entry per layer (num_layers " + std::to_string(num_layers) + ")"};
  }
  std::vector<std::uint8_t> bits;
  for (const std::int64_t entry : list->list) {
    if (entry != 0 && entry != 1) return Error{std::string(field), "entries must be 0 or 1"};
    bits.push_back(static_cast<std::uint8_t>(entry));
  }
  return bits;
}

// ModelConfig fields. --moe-layer-freq and --window-attn-skip-freq may be an integer or a
// Megatron list expression; the expression is kept for later.
Problem read_model_field(const std::string& key, const json& value, ModelConfig& m,
                         LayerExpressions& expressions) {
  if (key == "moe_layer_freq" && value.is_string()) {
    expressions.moe_layer_freq = value.get<std::string>();
    return std::nullopt;
  }
  if (key == "window_attn_skip_freq" && value.is_string()) {
    expressions.window_attn_skip_freq = value.get<std::string>();
    return std::nullopt;
  }
  if (key == "kda_layer_pattern" && value.is_string()) {
    expressions.kda_layer_pattern = value.get<std::string>();
    return std::nullopt;
  }
  Config config;
  config.model = std::move(m);
  Problem problem = read_config_field(FieldGroup::model, key, value, config);
  m = std::move(config.model);
  return problem;
}

Problem read_device_field(const std::string& key, const json& value, DeviceConfig& d) {
  Config config;
  config.device = std::move(d);
  Problem problem = read_config_field(FieldGroup::device, key, value, config);
  d = std::move(config.device);
  return problem;
}

// Reads a list of strings (aliases).
Problem read_text_list(const json& value, std::vector<std::string>& out) {
  if (!value.is_array()) return "expects an array of strings, got " + json_type(value);
  for (const json& item : value) {
    if (!item.is_string()) return "expects an array of strings";
    out.push_back(item.get<std::string>());
  }
  return std::nullopt;
}

// A recipe setting's value as share-link text: numbers in decimal, booleans as 1/0,
// arrays of words joined by commas.
Problem setting_text(const json& value, std::string& out) {
  if (value.is_string()) {
    out = value.get<std::string>();
  } else if (value.is_boolean()) {
    out = value.get<bool>() ? "1" : "0";
  } else if (value.is_number_integer()) {
    out = value.is_number_unsigned() ? std::to_string(value.get<std::uint64_t>())
                                     : std::to_string(value.get<std::int64_t>());
  } else if (value.is_number_float()) {
    out = shortest_double_text(value.get<double>());
  } else if (value.is_array()) {
    out.clear();
    for (const json& item : value) {
      if (!item.is_string()) return "expects an array of strings";
      out += (out.empty() ? "" : ",") + item.get<std::string>();
    }
  } else {
    return "expects a string, number, boolean or array of strings, got " + json_type(value);
  }
  return std::nullopt;
}

Error file_error(const std::string& path, const std::string& key, const std::string& message) {
  return Error{"presets/" + path + (key.empty() ? "" : ": " + key), message};
}

// Where a preset file's common keys go: id, name, source, notes, aliases.
struct PresetIdentity {
  std::string* id;
  std::string* name;
  std::string* source;
  std::string* notes;
  std::vector<std::string>* aliases;
};

// Reads `key` when it is one of the common keys (its problem, if any, into *problem).
bool read_identity_key(const std::string& key, const json& value, const PresetIdentity& fields,
                       Problem& problem) {
  if (key == "aliases") {
    problem = read_text_list(value, *fields.aliases);
    return true;
  }
  const std::pair<const char*, std::string*> texts[] = {
      {"id", fields.id}, {"name", fields.name}, {"source", fields.source}, {"notes", fields.notes}};
  for (const auto& [name, target] : texts) {
    if (key == name) {
      problem = read_text(value, *target);
      return true;
    }
  }
  return false;
}

// Reads an object-valued key (`model`, `device`, `settings`) entry by entry through
// `read_entry`; a bad entry's problem is reported at "<key>.<entry>" (into *problem_key).
template <typename ReadEntry>
Problem read_object_key(const json& value, const char* expects, std::string& problem_key,
                        ReadEntry read_entry) {
  if (!value.is_object()) return std::string("expects an object of ") + expects;
  for (const auto& [entry, entry_value] : value.items()) {
    if (Problem problem = read_entry(entry, entry_value)) {
      problem_key += "." + entry;
      return problem;
    }
  }
  return std::nullopt;
}

// Reads every key of a preset file: the common ones (`identity`) here, the others through
// `read_key(key, value, problem_key)`, which names where a problem lies (the key by default).
template <typename ReadKey>
std::optional<Error> read_preset_keys(const std::string& path, const json& document,
                                      const PresetIdentity& identity, ReadKey read_key) {
  for (const auto& [key, value] : document.items()) {
    Problem problem;
    std::string problem_key = key;
    if (!read_identity_key(key, value, identity, problem)) {
      problem = read_key(key, value, problem_key);
    }
    if (problem) return file_error(path, problem_key, *problem);
  }
  return std::nullopt;
}

// The model preset's keys besides the common ones.
Problem read_model_preset_key(const std::string& key, const json& value, std::string& problem_key,
                              ModelPreset& preset, bool& has_model, LayerExpressions& expressions) {
  constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max();
  if (key == "params_source") return read_text(value, preset.params_source);
  if (key == "published_params") return read_integer(value, preset.published_params, 1, kMaxCount);
  if (key == "published_mtp_params") {
    return read_integer(value, preset.published_mtp_params, 0, kMaxCount);
  }
  if (key == "published_params_exact") return read_bool(value, preset.published_params_exact);
  if (key == "published_params_tolerance") {
    return read_real(value, preset.published_params_tolerance, 0.0, 0.05);
  }
  if (key == "published_params_text") return read_text(value, preset.published_params_text);
  if (key != "model") return "is not a model preset key";
  has_model = value.is_object();
  return read_object_key(value, "ModelConfig fields", problem_key,
                         [&](const std::string& field, const json& field_value) {
                           return read_model_field(field, field_value, preset.model, expressions);
                         });
}

Expected<ModelPreset> parse_model(const std::string& path, const json& document) {
  ModelPreset preset;
  bool has_model = false;
  LayerExpressions expressions;
  const PresetIdentity identity{&preset.id, &preset.name, &preset.source, &preset.notes,
                                &preset.aliases};
  if (std::optional<Error> error = read_preset_keys(
          path, document, identity,
          [&](const std::string& key, const json& value, std::string& problem_key) {
            return read_model_preset_key(key, value, problem_key, preset, has_model, expressions);
          })) {
    return *error;
  }
  if (!has_model) return file_error(path, "model", "is required");
  if (preset.published_params == 0) return file_error(path, "published_params", "is required");
  if (preset.source.empty()) return file_error(path, "source", "is required");
  if (!expressions.moe_layer_freq.empty()) {
    auto pattern = parse_moe_layer_freq(expressions.moe_layer_freq, preset.model.num_layers);
    if (!pattern) return file_error(path, "model.moe_layer_freq", pattern.error().message);
    preset.model.moe_layer_pattern = std::move(*pattern);
  }
  if (!expressions.window_attn_skip_freq.empty()) {
    auto pattern =
        parse_window_attn_pattern(expressions.window_attn_skip_freq, preset.model.num_layers);
    if (!pattern) return file_error(path, "model.window_attn_skip_freq", pattern.error().message);
    preset.model.window_attn_pattern = std::move(*pattern);
  }
  if (!expressions.kda_layer_pattern.empty()) {
    auto pattern = parse_layer_bits(expressions.kda_layer_pattern, preset.model.num_layers,
                                    "model.kda_layer_pattern");
    if (!pattern) return file_error(path, "model.kda_layer_pattern", pattern.error().message);
    preset.model.kda_layer_pattern = std::move(*pattern);
  }
  preset.model.name = preset.name;
  return preset;
}

Expected<GpuPreset> parse_gpu(const std::string& path, const json& document) {
  GpuPreset preset;
  bool has_device = false;
  // name is the device's
  const PresetIdentity identity{&preset.id, &preset.device.name, &preset.source, &preset.notes,
                                &preset.aliases};
  if (std::optional<Error> error = read_preset_keys(
          path, document, identity,
          [&](const std::string& key, const json& value, std::string& problem_key) -> Problem {
            if (key != "device") return "is not a GPU preset key";
            has_device = value.is_object();
            return read_object_key(value, "DeviceConfig fields", problem_key,
                                   [&](const std::string& field, const json& field_value) {
                                     return read_device_field(field, field_value, preset.device);
                                   });
          })) {
    return *error;
  }
  if (!has_device) return file_error(path, "device", "is required");
  if (preset.source.empty()) return file_error(path, "source", "is required");
  if (preset.device.name.empty()) return file_error(path, "name", "is required");
  return preset;
}

// The recipe's keys besides the common ones.
Problem read_recipe_key(const std::string& key, const json& value, std::string& problem_key,
                        RecipePreset& preset) {
  if (key == "model") return read_text(value, preset.model_id);
  if (key == "gpu") return read_text(value, preset.gpu_id);
  if (key == "gpus") return read_integer(value, preset.gpus, 1, std::int64_t{1} << 20);
  if (key != "settings") return "is not a recipe key";
  return read_object_key(value, "share-link parameters", problem_key,
                         [&](const std::string& name, const json& setting) -> Problem {
                           if (name == "v" || name == "model" || name == "gpu" || name == "gpus") {
                             return "belongs at the top level of the recipe, not in settings";
                           }
                           std::string text;
                           if (Problem problem = setting_text(setting, text)) return problem;
                           preset.settings.emplace_back(name, std::move(text));
                           return std::nullopt;
                         });
}

Expected<RecipePreset> parse_recipe(const std::string& path, const json& document) {
  RecipePreset preset;
  const PresetIdentity identity{&preset.id, &preset.name, &preset.source, &preset.notes,
                                &preset.aliases};
  if (std::optional<Error> error = read_preset_keys(
          path, document, identity,
          [&](const std::string& key, const json& value, std::string& problem_key) {
            return read_recipe_key(key, value, problem_key, preset);
          })) {
    return *error;
  }
  const std::pair<const char*, const std::string*> required[] = {{"model", &preset.model_id},
                                                                 {"gpu", &preset.gpu_id},
                                                                 {"source", &preset.source},
                                                                 {"name", &preset.name}};
  for (const auto& [name, text] : required) {
    if (text->empty()) return file_error(path, name, "is required");
  }
  if (preset.gpus == 0) return file_error(path, "gpus", "is required");
  return preset;
}

template <class Preset>
const Preset* find_by_id(const std::vector<Preset>& presets, std::string_view name) {
  const std::string id = canonical_preset_id(name);
  for (const Preset& preset : presets) {
    if (preset.id == id) return &preset;
  }
  for (const Preset& preset : presets) {
    for (const std::string& alias : preset.aliases) {
      if (alias == id) return &preset;
    }
  }
  return nullptr;
}

// Ids and aliases of one kind must be valid and unique; the file name must be the id.
template <class Preset>
std::optional<Error> check_ids(const std::vector<Preset>& presets,
                               const std::vector<std::string>& paths, const char* folder) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < presets.size(); ++i) {
    const Preset& preset = presets[i];
    if (!is_valid_preset_id(preset.id)) {
      return file_error(paths[i], "id",
                        "'" + preset.id + "' is not lowercase words joined by hyphens");
    }
    if (paths[i] != std::string(folder) + "/" + preset.id + ".json") {
      return file_error(paths[i], "id", "the file must be named " + preset.id + ".json");
    }
    std::vector<std::string> names = preset.aliases;
    names.push_back(preset.id);
    for (const std::string& name : names) {
      if (!is_valid_preset_id(name)) {
        return file_error(paths[i], "aliases", "'" + name + "' is not a valid id");
      }
      if (!seen.insert(name).second) {
        return file_error(paths[i], "id", "'" + name + "' is used by two presets");
      }
    }
  }
  return std::nullopt;
}

}  // namespace

const ModelPreset* PresetCatalog::find_model(std::string_view id) const {
  return find_by_id(models, id);
}
const GpuPreset* PresetCatalog::find_gpu(std::string_view id) const { return find_by_id(gpus, id); }
const RecipePreset* PresetCatalog::find_recipe(std::string_view id) const {
  return find_by_id(recipes, id);
}

std::string canonical_preset_id(std::string_view name) {
  std::string id(name);
  for (char& c : id) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '_' || c == ' ') c = '-';
  }
  return id;
}

bool is_valid_preset_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  char previous = '-';
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool lower = c >= 'a' && c <= 'z';
    const bool digit = c >= '0' && c <= '9';
    if (c == '-') {
      if (previous == '-' || i + 1 == id.size()) return false;
    } else if (c == '.') {
      // "llama-3.1-8b": a dot only between two digits.
      const bool between_digits = i > 0 && i + 1 < id.size() && id[i - 1] >= '0' &&
                                  id[i - 1] <= '9' && id[i + 1] >= '0' && id[i + 1] <= '9';
      if (!between_digits) return false;
    } else if (!lower && !digit) {
      return false;
    }
    previous = c;
  }
  return true;
}

Expected<PresetCatalog> load_presets(const std::vector<PresetFile>& files) {
  std::vector<std::pair<std::string, ModelPreset>> models;
  std::vector<std::pair<std::string, GpuPreset>> gpus;
  std::vector<std::pair<std::string, RecipePreset>> recipes;
  for (const PresetFile& file : files) {
    const json document = json::parse(file.text, nullptr, false);
    if (document.is_discarded()) return file_error(file.path, "", "is not valid JSON");
    if (!document.is_object()) return file_error(file.path, "", "is not a JSON object");
    const std::string_view path = file.path;
    if (path.rfind("models/", 0) == 0) {
      auto preset = parse_model(file.path, document);
      if (!preset) return preset.error();
      models.emplace_back(file.path, std::move(*preset));
    } else if (path.rfind("gpus/", 0) == 0) {
      auto preset = parse_gpu(file.path, document);
      if (!preset) return preset.error();
      gpus.emplace_back(file.path, std::move(*preset));
    } else if (path.rfind("recipes/", 0) == 0) {
      auto preset = parse_recipe(file.path, document);
      if (!preset) return preset.error();
      recipes.emplace_back(file.path, std::move(*preset));
    } else {
      return file_error(file.path, "", "is not under models/, gpus/ or recipes/");
    }
  }
  // In id order: "glm-4.5" before "glm-4.5-air", though "glm-4.5-air.json" sorts first.
  const auto by_id = [](const auto& a, const auto& b) { return a.second.id < b.second.id; };
  std::sort(models.begin(), models.end(), by_id);
  std::sort(gpus.begin(), gpus.end(), by_id);
  std::sort(recipes.begin(), recipes.end(), by_id);

  PresetCatalog catalog;
  std::vector<std::string> model_paths, gpu_paths, recipe_paths;
  for (auto& [path, preset] : models) {
    model_paths.push_back(path);
    catalog.models.push_back(std::move(preset));
  }
  for (auto& [path, preset] : gpus) {
    gpu_paths.push_back(path);
    catalog.gpus.push_back(std::move(preset));
  }
  for (auto& [path, preset] : recipes) {
    recipe_paths.push_back(path);
    catalog.recipes.push_back(std::move(preset));
  }
  if (auto error = check_ids(catalog.models, model_paths, "models")) return *error;
  if (auto error = check_ids(catalog.gpus, gpu_paths, "gpus")) return *error;
  if (auto error = check_ids(catalog.recipes, recipe_paths, "recipes")) return *error;
  for (std::size_t i = 0; i < catalog.recipes.size(); ++i) {
    const RecipePreset& recipe = catalog.recipes[i];
    if (!catalog.find_model(recipe.model_id)) {
      return file_error(recipe_paths[i], "model",
                        "'" + recipe.model_id + "' is not a model preset");
    }
    if (!catalog.find_gpu(recipe.gpu_id)) {
      return file_error(recipe_paths[i], "gpu", "'" + recipe.gpu_id + "' is not a GPU preset");
    }
  }
  return catalog;
}

std::vector<PresetFile> builtin_preset_files() {
  std::vector<PresetFile> files;
  files.reserve(embedded::kPresetFiles_count);
  for (std::size_t i = 0; i < embedded::kPresetFiles_count; ++i) {
    files.push_back({embedded::kPresetFiles[i].path, embedded::kPresetFiles[i].text});
  }
  return files;
}

const Expected<PresetCatalog>& builtin_presets() {
  static const Expected<PresetCatalog> catalog = load_presets(builtin_preset_files());
  return catalog;
}

namespace {

// A preset's configuration section as the config JSON writes it (the field registry's keys), so
// `megamem presets --json` lists every field and cannot drift from the registry.
template <typename Section>
json preset_section(const Section& section, Section Config::*member, FieldGroup group) {
  Config config;
  config.*member = section;
  return config_json(config)[std::string(field_group_name(group))];
}

json model_preset_json(const ModelPreset& p) {
  json node = preset_section(p.model, &Config::model, FieldGroup::model);
  node.update({{"id", p.id},
               {"name", p.name},
               {"aliases", p.aliases},
               {"source", p.source},
               {"published_params", p.published_params},
               {"published_mtp_params", p.published_mtp_params},
               {"published_params_exact", p.published_params_exact},
               {"published_params_text", p.published_params_text},
               {"published_params_tolerance", p.published_params_tolerance}});
  return node;
}

json gpu_preset_json(const GpuPreset& p) {
  json node = preset_section(p.device, &Config::device, FieldGroup::device);
  node.update({{"id", p.id}, {"aliases", p.aliases}, {"source", p.source}});
  return node;
}

}  // namespace

std::string presets_to_json(const PresetCatalog& catalog, int indent) {
  json models = json::array();
  for (const ModelPreset& p : catalog.models) models.push_back(model_preset_json(p));
  json gpus = json::array();
  for (const GpuPreset& p : catalog.gpus) gpus.push_back(gpu_preset_json(p));
  json recipes = json::array();
  for (const RecipePreset& p : catalog.recipes) {
    json settings = json::object();
    for (const auto& [key, value] : p.settings) settings[key] = value;
    recipes.push_back({{"id", p.id},
                       {"name", p.name},
                       {"source", p.source},
                       {"model", p.model_id},
                       {"gpu", p.gpu_id},
                       {"gpus", p.gpus},
                       {"settings", std::move(settings)}});
  }
  const json document = {
      {"models", std::move(models)}, {"gpus", std::move(gpus)}, {"recipes", std::move(recipes)}};
  return document.dump(indent < 0 ? -1 : indent);
}

}  // namespace megamem
