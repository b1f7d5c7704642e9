#include "config_options.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bridge_options.hpp"
#include "commands.hpp"
#include "megamem/hf_config.hpp"
#include "megamem/import_merge.hpp"
#include "megamem/launch_script.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/presets.hpp"

namespace megamem::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultBaseUrl = "http://localhost:8080/";  // scripts/serve.sh

// Share-link keys the CLI takes as options of the same name (--tp is tp=).
const std::vector<std::string>& shortcut_keys() {
  static const std::vector<std::string> keys = {"tp",
                                                "pp",
                                                "vpp",
                                                "cp",
                                                "ep",
                                                "etp",
                                                "mbs",
                                                "gbs",
                                                "seq",
                                                "recompute",
                                                "recompute-method",
                                                "recompute-layers",
                                                "dtype",
                                                "fp8"};
  return keys;
}

std::optional<std::string> value_of(const ParsedOptions& options, const std::string& name) {
  const auto it = options.values.find(name);
  if (it == options.values.end()) return std::nullopt;
  return it->second;
}

Expected<std::string> read_text_file(const std::string& option, const std::string& path) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) return Error{option, "cannot read '" + path + "': " + error.message()};
  if (size > (std::uintmax_t{16} << 20)) return Error{option, "'" + path + "' is over 16 MiB"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{option, "cannot read '" + path + "'"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "models/Qwen3-8B/config.json" -> "Qwen3-8B"; "qwen3-8b.json" -> "qwen3-8b".
std::string name_from_path(const std::string& path) {
  const fs::path file(path);
  if (file.stem() == "config" && file.has_parent_path() && !file.parent_path().filename().empty()) {
    return file.parent_path().filename().string();
  }
  return file.stem().string();
}

// One option's contribution: the parameter(s) it sets and the name to blame on error.
struct Change {
  std::string option;
  std::string key;
  std::string value;
};

// At most one whole-configuration source, and one model source.
std::optional<Error> check_sources(const ParsedOptions& options) {
  const bool flags = value_of(options, "--megatron-args").has_value() ||
                     value_of(options, "--bridge-config").has_value();
  const bool preset = value_of(options, "--preset").has_value();
  const bool hf_config = value_of(options, "--hf-config").has_value();
  std::vector<std::string> starts;
  for (const char* source : {"--recipe", "--url", "--megatron-args", "--bridge-config"}) {
    if (value_of(options, source)) starts.emplace_back(source);
  }
  if (starts.size() > 1) {
    return Error{starts[1], starts[0] + " and " + starts[1] +
                                " each give a whole configuration; use one of them"};
  }
  if (preset && hf_config) {
    return Error{"--hf-config", "--preset and --hf-config both give the model; use one"};
  }
  if (flags && (preset || hf_config)) {
    return Error{preset ? "--preset" : "--hf-config",
                 "the Megatron flags already define the model; drop one of them"};
  }
  return std::nullopt;
}

// --gpus / --world-size (the same setting) and --vocab-size.
struct Sizes {
  std::optional<std::int64_t> world_size;
  std::optional<std::int64_t> vocab_size;
};

Expected<Sizes> read_sizes(const ParsedOptions& options) {
  Sizes sizes;
  for (const char* option : {"--gpus", "--world-size"}) {
    if (const auto text = value_of(options, option)) {
      const Expected<std::int64_t> parsed = positive_integer(option, *text);
      if (!parsed) return parsed.error();
      if (sizes.world_size && *sizes.world_size != *parsed) {
        return Error{"--world-size", "differs from --gpus (they are the same setting)"};
      }
      sizes.world_size = *parsed;
    }
  }
  if (const auto text = value_of(options, "--vocab-size")) {
    const Expected<std::int64_t> parsed = positive_integer("--vocab-size", *text);
    if (!parsed) return parsed.error();
    sizes.vocab_size = *parsed;
  }
  return sizes;
}

Expected<SharedConfig> recipe_by_id(const std::string& recipe_id) {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  if (!catalog) return catalog.error();
  const RecipePreset* recipe = catalog->find_recipe(recipe_id);
  if (!recipe) {
    return Error{"--recipe", "'" + recipe_id + "' is not a recipe (`megamem presets` lists them)"};
  }
  return recipe_config(*recipe);
}

// --megatron-args: flags or a whole launch script (launch_script.hpp), given inline or as
// @FILE. The world size is --world-size, else the script's launcher (torchrun).
Expected<SharedConfig> megatron_launch_config(const std::string& value, const Sizes& sizes,
                                              std::vector<std::string>& warnings) {
  Expected<std::string> text = value;
  if (value.rfind('@', 0) == 0) text = read_text_file("--megatron-args", value.substr(1));
  if (!text) return text.error();
  const Expected<MegatronLaunch> parsed = parse_megatron_launch(
      *text,
      {.world_size = sizes.world_size.value_or(0), .vocab_size = sizes.vocab_size.value_or(0)});
  if (!parsed) {
    if (parsed.error().field == "world_size") {
      return Error{"--world-size",
                   "is required (the number of GPUs; the flags' launcher does not say it)"};
    }
    return parsed.error();
  }
  const LaunchScript& script = parsed->script;
  if (!script.program.empty() || script.used_lines.size() > 1 || script.ignored_lines > 0) {
    warnings.push_back("note: --megatron-args: " + used_lines_text(script) +
                       (script.program.empty() ? "" : " (the " + script.program + " command)"));
  }
  warnings.insert(warnings.end(), script.warnings.begin(), script.warnings.end());
  for (const std::string& flag : parsed->args.unknown_flags) {
    warnings.push_back(flag + " is not a Megatron-LM flag; ignored");
  }
  for (const std::string& flag : parsed->args.unmodeled_flags) {
    warnings.push_back(flag + " changes memory but is not modeled; the estimate leaves it out");
  }
  warnings.insert(warnings.end(), parsed->args.warnings.begin(), parsed->args.warnings.end());
  return merge_megatron_flags(SharedConfig{share_link_defaults(), "", ""}, parsed->args.config);
}

// The whole-configuration source: a recipe, a link, Megatron flags, or link v1's defaults.
Expected<ConfigFromOptions> start_config(const ParsedOptions& options, const Sizes& sizes) {
  ConfigFromOptions out;
  out.shared = SharedConfig{share_link_defaults(), "", ""};
  if (const auto recipe_id = value_of(options, "--recipe")) {
    Expected<SharedConfig> shared = recipe_by_id(*recipe_id);
    if (!shared) return shared.error();
    out.shared = std::move(*shared);
  } else if (const auto url = value_of(options, "--url")) {
    Expected<SharedConfig> shared = decode_share_link(*url);
    if (!shared) return Error{"--url: " + shared.error().field, shared.error().message};
    out.shared = std::move(*shared);
  } else if (const auto flags = value_of(options, "--megatron-args")) {
    Expected<SharedConfig> shared = megatron_launch_config(*flags, sizes, out.warnings);
    if (!shared) return shared.error();
    out.shared = std::move(*shared);
  } else if (const auto bridge = value_of(options, "--bridge-config")) {
    // A Megatron-Bridge run_config.yaml (bridge_options.hpp); it does not hold the world size.
    if (!sizes.world_size) return Error{"--world-size", "is required (the number of GPUs)"};
    Expected<BridgeFileConfig> imported = config_from_bridge_file(*bridge, *sizes.world_size);
    if (!imported) return imported.error();
    out.shared = std::move(imported.value().shared);
    out.warnings = std::move(imported.value().warnings);
  }
  return out;
}

// The model from a Hugging Face config.json, keeping the rest of the configuration.
std::optional<Error> apply_hf_config(const std::string& path, ConfigFromOptions& out) {
  const Expected<std::string> text = read_text_file("--hf-config", path);
  if (!text) return text.error();
  const Expected<HfImport> imported = import_hf_config(*text);
  if (!imported) return Error{"--hf-config: " + imported.error().field, imported.error().message};
  for (const std::string& note : imported->notes) out.warnings.push_back("note: " + note);
  out.shared = merge_hf_model(out.shared, imported->model, name_from_path(path));
  return std::nullopt;
}

// Everything else is a share-link parameter, applied in this order.
Expected<std::vector<Change>> option_changes(const ParsedOptions& options, const Sizes& sizes) {
  const bool flags = value_of(options, "--megatron-args").has_value();
  std::vector<Change> changes;
  if (const auto preset = value_of(options, "--preset")) {
    changes.push_back({"--preset", "model", *preset});
  }
  if (const auto gpu = value_of(options, "--gpu")) changes.push_back({"--gpu", "gpu", *gpu});
  if (sizes.world_size && !flags) {
    changes.push_back({"--gpus", "gpus", std::to_string(*sizes.world_size)});
  }
  if (sizes.vocab_size && !flags) {
    changes.push_back({"--vocab-size", "m.vocab", std::to_string(*sizes.vocab_size)});
  }
  for (const std::string& key : shortcut_keys()) {
    if (const auto value = value_of(options, "--" + key))
      changes.push_back({"--" + key, key, *value});
  }
  for (const auto& [on, off, key] : {std::tuple<const char*, const char*, const char*>{
                                         "--dist-opt", "--no-dist-opt", "dist-opt"},
                                     {"--sp", "--no-sp", "sp"}}) {
    const bool yes = options.switches.count(on) > 0;
    const bool no = options.switches.count(off) > 0;
    if (yes && no) return Error{off, std::string("contradicts ") + on};
    if (yes || no) changes.push_back({yes ? on : off, key, yes ? "1" : "0"});
  }
  if (const auto set = value_of(options, "--set")) {
    const Expected<LinkParameters> parameters = parse_share_query(*set);
    if (!parameters) return Error{"--set " + parameters.error().field, parameters.error().message};
    for (const auto& [key, value] : *parameters) changes.push_back({"--set " + key, key, value});
  }
  return changes;
}

}  // namespace

const std::set<std::string>& config_value_options() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out = {"--recipe",     "--url", "--megatron-args", "--preset",
                                 "--hf-config",  "--gpu", "--gpus",          "--world-size",
                                 "--vocab-size", "--set", "--base-url",      "--bridge-config"};
    for (const std::string& key : shortcut_keys()) out.insert("--" + key);
    return out;
  }();
  return names;
}

const std::set<std::string>& config_switch_options() {
  static const std::set<std::string> names = {"--dist-opt", "--no-dist-opt", "--sp", "--no-sp"};
  return names;
}

std::string base_url(const ParsedOptions& options) {
  if (const auto given = value_of(options, "--base-url")) return *given;
  if (const char* env = std::getenv("MEGAMEM_BASE_URL"); env && *env) return env;
  return kDefaultBaseUrl;
}

Expected<ConfigFromOptions> config_from_options(const ParsedOptions& options) {
  if (std::optional<Error> error = check_sources(options)) return *error;
  const Expected<Sizes> sizes = read_sizes(options);
  if (!sizes) return sizes.error();
  Expected<ConfigFromOptions> started = start_config(options, *sizes);
  if (!started) return started.error();
  ConfigFromOptions out = std::move(started).value();
  if (const auto hf_config = value_of(options, "--hf-config")) {
    if (std::optional<Error> error = apply_hf_config(*hf_config, out)) return *error;
  }
  const Expected<std::vector<Change>> changes = option_changes(options, *sizes);
  if (!changes) return changes.error();
  for (const Change& change : *changes) {
    Expected<SharedConfig> applied =
        apply_share_parameters(std::move(out.shared), {{change.key, change.value}});
    if (!applied) return Error{change.option, applied.error().message};
    out.shared = std::move(applied).value();
  }
  return out;
}

std::optional<Error> missing_model(const ParsedOptions& options) {
  for (const char* source :
       {"--megatron-args", "--preset", "--recipe", "--url", "--hf-config", "--bridge-config"}) {
    if (options.values.count(source)) return std::nullopt;
  }
  return Error{"--preset",
               "a model is required: --preset, --recipe, --url, --hf-config, --megatron-args or "
               "--bridge-config (`megamem presets` lists the presets)"};
}

int report_config(const Expected<ConfigFromOptions>& built) {
  if (!built) {
    print_error(built.error());
    const std::string& message = built.error().message;
    const bool usage =
        message.rfind("expects a positive integer", 0) == 0 || message.rfind("is required", 0) == 0;
    return usage ? kExitUsage : kExitError;
  }
  for (const std::string& warning : built->warnings) {
    std::cerr << "megamem: warning: " << warning << "\n";
  }
  return kExitOk;
}

}  // namespace megamem::cli
