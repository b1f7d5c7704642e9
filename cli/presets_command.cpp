// megamem presets [--json]: the models, GPUs and recipes compiled into this build.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "commands.hpp"
#include "megamem/presets.hpp"

namespace megamem::cli {

int run_presets(const std::vector<std::string>& args) {
  const Expected<ParsedOptions> options = parse_options(args, {}, {"--json"});
  if (!options) {
    print_error(options.error());
    return kExitUsage;
  }
  const Expected<PresetCatalog>& catalog = builtin_presets();
  if (!catalog) {
    print_error(catalog.error());
    return kExitError;
  }
  if (options->switches.count("--json")) {
    std::cout << presets_to_json(*catalog) << "\n";
    return kExitOk;
  }
  char line[256];
  std::cout << "models:\n";
  for (const ModelPreset& p : catalog->models) {
    std::snprintf(line, sizeof(line), "  %-20s %-20s %4d layers  %s params", p.id.c_str(),
                  p.name.c_str(), p.model.num_layers, p.published_params_text.c_str());
    std::cout << line;
    // Aliases are models of their own to a user (DeepSeek-V3.1 is DeepSeek-V3's tensors).
    for (std::size_t i = 0; i < p.aliases.size(); ++i) {
      std::cout << (i == 0 ? "  (also " : ", ") << p.aliases[i];
    }
    std::cout << (p.aliases.empty() ? "\n" : ")\n");
  }
  std::cout << "gpus:\n";
  for (const GpuPreset& p : catalog->gpus) {
    std::snprintf(line, sizeof(line), "  %-20s %-20s %7.2f GiB  %2d per node  %6.0f TFLOP/s\n",
                  p.id.c_str(), p.device.name.c_str(), p.device.capacity_gib,
                  p.device.gpus_per_node, p.device.peak_bf16_tflops);
    std::cout << line;
  }
  std::cout << "recipes:\n";
  for (const RecipePreset& p : catalog->recipes) {
    std::cout << "  " << p.id << "  " << p.name << "\n";
  }
  std::cout << "Sources: docs/presets.md, or `megamem presets --json`.\n";
  return kExitOk;
}

}  // namespace megamem::cli
