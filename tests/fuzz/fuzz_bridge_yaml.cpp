// libFuzzer harness: parse_bridge_yaml() + import_bridge_config(), and the same bytes as
// Bridge overrides, on arbitrary input (a pasted run_config.yaml). They must never crash, and
// a refused text must name the field or line and say why.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "megamem/bridge_config.hpp"
#include "megamem/bridge_yaml.hpp"

namespace {

void import_tree(const megamem::Expected<megamem::BridgeNode>& tree) {
  if (!tree) {
    if (tree.error().field.empty() || tree.error().message.empty()) __builtin_trap();
    return;
  }
  const auto imported = megamem::import_bridge_config(*tree, 8);
  if (!imported && (imported.error().field.empty() || imported.error().message.empty())) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  import_tree(megamem::parse_bridge_yaml(text));
  import_tree(megamem::parse_bridge_overrides(text));
  return 0;
}
