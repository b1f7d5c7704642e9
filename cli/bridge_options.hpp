// --bridge-config FILE: a Megatron-Bridge run_config.yaml as the configuration to start from
// (config_options.cpp calls this; bridge_config.hpp and bridge_yaml.hpp do the reading).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "megamem/expected.hpp"
#include "megamem/share_link.hpp"

namespace megamem::cli {

struct BridgeFileConfig {
  SharedConfig shared;
  std::vector<std::string> warnings;
};

// Reads and imports the file; Errors name the option, the key and the line.
Expected<BridgeFileConfig> config_from_bridge_file(const std::string& path,
                                                   std::int64_t world_size);

}  // namespace megamem::cli
