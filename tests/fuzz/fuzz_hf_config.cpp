// libFuzzer harness: import_hf_config() on arbitrary bytes (pasted config.json text).
// It must never crash, and a refused text must name the field and say why.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "megamem/hf_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const megamem::Expected<megamem::HfImport> imported = megamem::import_hf_config(text);
  if (!imported && (imported.error().field.empty() || imported.error().message.empty())) {
    __builtin_trap();
  }
  return 0;
}
