// Helpers of the HuggingFace config.json import tests: import a fixture, compare it with a
// preset, count its parameters.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "megamem/estimate.hpp"
#include "megamem/hf_config.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"

namespace megamem::hf_test {

inline HfImport import(const char* text) {
  const Expected<HfImport> result = import_hf_config(text);
  INFO((result ? std::string() : result.error().field + ": " + result.error().message));
  REQUIRE(result.has_value());
  return *result;
}

inline Error import_error(const std::string& text) {
  const Expected<HfImport> result = import_hf_config(text);
  REQUIRE_FALSE(result.has_value());
  return result.error();
}

inline ModelTotals model_totals(const ModelConfig& model) {
  Config config = share_link_defaults();
  config.model = model;
  const Expected<Estimate> e = estimate(config, {false, false});
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  return e->totals;
}

inline std::int64_t total_params(const ModelConfig& model) { return model_totals(model).params; }

// The imported model is the preset of that id, field for field (names aside).
inline void check_matches_preset(const ModelConfig& imported, const char* preset_id) {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  const ModelPreset* preset = catalog->find_model(preset_id);
  REQUIRE(preset != nullptr);
  Config a = share_link_defaults();
  Config b = a;
  a.model = imported;
  b.model = preset->model;
  const std::vector<std::string> differences = share_link_differences(a, b);
  INFO(preset_id << " differs in: " << Catch::Detail::stringify(differences));
  CHECK(differences.empty());
  CHECK(with_detected_presets(a).model_id == preset->id);
}

// Within 1% of a published, rounded count.
inline void check_near(std::int64_t params, double published) {
  INFO("computed " << params << ", published " << published);
  CHECK(std::abs(static_cast<double>(params) / published - 1.0) <= 0.01);
}

// Gemma 4's layer_types as config.json lists them: every `full_every`-th layer (1-based) full
// attention, the rest sliding, comma-separated for a JSON array.
inline std::string gemma4_layer_types(int layers, int full_every = 6) {
  std::string out;
  for (int i = 1; i <= layers; ++i) {
    out += std::string(i > 1 ? ", " : "") +
           (i % full_every == 0 ? "\"full_attention\"" : "\"sliding_attention\"");
  }
  return out;
}

}  // namespace megamem::hf_test
