// libFuzzer harness: load_presets() on arbitrary bytes (one preset file's JSON).
//
// The first byte picks the folder, so the text is read as a model, GPU or recipe preset; the
// rest is the file's text. It must never crash (ASan, UBSan-style traps), and a refused file
// must name the file or key and say why (non-empty field and message).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "megamem/presets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static constexpr std::array<const char*, 3> kPaths = {"models/fuzz.json", "gpus/fuzz.json",
                                                        "recipes/fuzz.json"};
  const std::vector<megamem::PresetFile> files = {{
      .path = kPaths[data[0] % kPaths.size()],
      .text = std::string(reinterpret_cast<const char*>(data) + 1, size - 1),
  }};
  const megamem::Expected<megamem::PresetCatalog> catalog = megamem::load_presets(files);
  if (!catalog && (catalog.error().field.empty() || catalog.error().message.empty())) {
    __builtin_trap();
  }
  return 0;
}
