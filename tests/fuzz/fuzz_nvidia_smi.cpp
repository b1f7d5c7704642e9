// libFuzzer harness: device_from_nvidia_smi() on arbitrary bytes (what a job script pipes
// from nvidia-smi). It must never crash, a refused text must name the field and say why, and
// an accepted one gives a positive, finite capacity.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "megamem/nvidia_smi.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const megamem::Expected<megamem::PresetCatalog>& catalog = megamem::builtin_presets();
  if (!catalog) __builtin_trap();
  const auto device = megamem::device_from_nvidia_smi(text, *catalog, megamem::DeviceConfig{});
  if (!device && (device.error().field.empty() || device.error().message.empty())) {
    __builtin_trap();
  }
  if (device && !(std::isfinite(device->device.capacity_gib) && device->device.capacity_gib > 0)) {
    __builtin_trap();
  }
  return 0;
}
