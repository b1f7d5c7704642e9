#include "bridge_options.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "megamem/bridge_config.hpp"
#include "megamem/bridge_yaml.hpp"

namespace megamem::cli {

Expected<BridgeFileConfig> config_from_bridge_file(const std::string& path,
                                                   std::int64_t world_size) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) return Error{"--bridge-config", "cannot read '" + path + "': " + error.message()};
  if (size > kMaxBridgeYamlBytes) {
    return Error{"--bridge-config",
                 "'" + path + "' is over " + std::to_string(kMaxBridgeYamlBytes >> 20) + " MiB"};
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const Expected<BridgeImport> imported = import_bridge_yaml(text.str(), world_size);
  if (!imported) {
    return Error{"--bridge-config: " + imported.error().field, imported.error().message};
  }
  BridgeFileConfig out{with_detected_presets(imported->args.config), imported->warnings};
  if (out.shared.config.model.name.empty()) {
    out.shared.config.model.name = imported->args.config.model.name;
  }
  return out;
}

}  // namespace megamem::cli
