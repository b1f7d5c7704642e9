// Presets: published models, GPUs and training recipes, shipped inside the library.
//
// The JSON files under presets/ (models/, gpus/, recipes/) are embedded at build time
// (cmake/embed.cmake) and parsed here; builtin_presets() is the catalog every front end
// shows. Each entry has an `id` a person would type (`deepseek-v3`, `h100-80gb`), a display
// name, and the public source its numbers come from.
//
//   * A model preset holds ModelConfig fields under "model" (config.hpp names; enums as
//     lowercase words, --moe-layer-freq as an integer or Megatron's list expression) and the
//     published parameter count the unit tests check the estimator against.
//   * A GPU preset holds DeviceConfig fields under "device".
//   * A recipe names a model and a GPU preset, a GPU count and the share-link parameters
//     (docs/share-links.md) of a published run; share_link.hpp turns it into a Config.
//
// Unknown keys are errors (a typo in a preset must not silently fall back to a default).
// No I/O: load_presets() takes file texts; the embedded ones are compiled in.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/expected.hpp"

namespace megamem {

struct ModelPreset {
  std::string id;  // "qwen3-235b-a22b"
  std::string name;
  std::string source;                 // the model card or config.json the architecture is from
  std::vector<std::string> aliases;   // other ids that open this preset (renamed ids keep working)
  std::int64_t published_params = 0;  // without MTP layers
  std::int64_t published_mtp_params = 0;     // MTP layers, when published separately
  bool published_params_exact = false;       // exact count, or the model card's rounded figure
  double published_params_tolerance = 0.01;  // allowed relative gap of a rounded figure
  std::string published_params_text;         // as the source states it: "30.5B"
  std::string params_source;                 // where the published count is stated
  std::string notes;
  ModelConfig model;
};

struct GpuPreset {
  std::string id;  // "h100-80gb"
  std::string source;
  std::vector<std::string> aliases;
  std::string notes;
  DeviceConfig device;
};

struct RecipePreset {
  std::string id;  // "deepseek-v3-h800-2048"
  std::string name;
  std::string source;
  std::vector<std::string> aliases;
  std::string notes;
  std::string model_id;
  std::string gpu_id;
  std::int64_t gpus = 0;
  // Share-link parameters (docs/share-links.md) sorted by key, values as text.
  std::vector<std::pair<std::string, std::string>> settings;
};

struct PresetCatalog {
  std::vector<ModelPreset> models;  // sorted by id
  std::vector<GpuPreset> gpus;
  std::vector<RecipePreset> recipes;

  // Lookup by id or alias; nullptr when unknown.
  const ModelPreset* find_model(std::string_view id) const;
  const GpuPreset* find_gpu(std::string_view id) const;
  const RecipePreset* find_recipe(std::string_view id) const;
};

// One preset file: its path below presets/ ("models/deepseek-v3.json") and its text.
struct PresetFile {
  std::string path;
  std::string text;
};

// Parses preset files; the kind comes from the folder (models/, gpus/, recipes/). The Error
// names the file and the offending key. Ids must be unique across ids and aliases of a kind,
// and every recipe must name a model and a GPU preset that exist.
Expected<PresetCatalog> load_presets(const std::vector<PresetFile>& files);

// The presets compiled into this build (parsed once).
const Expected<PresetCatalog>& builtin_presets();

// The embedded files themselves (for tests and tools).
std::vector<PresetFile> builtin_preset_files();

// True for ids made of lowercase words joined by single hyphens ("llama-3.1-8b" allows dots
// inside a word between digits).
bool is_valid_preset_id(std::string_view id);

// The id a typed name stands for: ASCII lowercase, with '_' and ' ' as '-' ("H100",
// "Qwen3-30B-A3B", "llama_3_70b" as people write them). The catalog's lookups take it.
std::string canonical_preset_id(std::string_view name);

// The catalog as JSON: {"models": [...], "gpus": [...], "recipes": [...]}, each entry with
// its id, name, source and key numbers (`megamem presets --json`).
std::string presets_to_json(const PresetCatalog& catalog, int indent = 2);

}  // namespace megamem
