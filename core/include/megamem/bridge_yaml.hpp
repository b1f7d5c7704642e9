// YAML text -> BridgeNode tree, with yaml-cpp (the event parser, so every value keeps its line
// and nothing is expanded behind the reader's back).
//
// What Megatron-Bridge's ConfigContainer.to_yaml() writes is plain block YAML: mappings,
// sequences and scalars, one document. Refused with an Error naming the line: YAML syntax errors
// (tabs for indentation among them, as yaml-cpp reports them), aliases (*name: to_yaml() never
// writes them, and expanding them is how a small file becomes a huge one), repeated keys, more
// than one document, nesting deeper than 64 levels, and texts over kMaxBridgeYamlBytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "megamem/bridge_config.hpp"
#include "megamem/expected.hpp"

namespace megamem {

inline constexpr std::size_t kMaxBridgeYamlBytes = std::size_t{16} << 20;

Expected<BridgeNode> parse_bridge_yaml(std::string_view text);

// A run_config.yaml's text -> the configuration it describes on world_size GPUs
// (parse_bridge_yaml, then import_bridge_config): what `--bridge-config` and the page's
// Megatron-Bridge box read. Errors name the key and the line; unknown keys are warnings.
Expected<BridgeImport> import_bridge_yaml(std::string_view text, std::int64_t world_size);

}  // namespace megamem
