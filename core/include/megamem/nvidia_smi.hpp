// The GPU a job runs on, from what `nvidia-smi --query-gpu=name,memory.total --format=csv`
// prints (with or without its header line, `noheader` and `nounits`): one line per GPU,
// "NVIDIA H100 80GB HBM3, 81559 MiB". A pre-flight check reads it from a file or a pipe, so
// megamem never calls the driver itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/expected.hpp"
#include "megamem/presets.hpp"

namespace megamem {

struct NvidiaSmiGpu {
  std::string name;       // "NVIDIA H100 80GB HBM3"
  double memory_mib = 0;  // memory.total as nvidia-smi reports it
};

// One entry per GPU line. Errors name the line and say which form is expected.
Expected<std::vector<NvidiaSmiGpu>> parse_nvidia_smi_gpus(std::string_view text);

struct DeviceFromNvidiaSmi {
  DeviceConfig device;
  std::string gpu_id;                 // the matching GPU preset, "" when none matched
  std::vector<std::string> warnings;  // mixed GPUs, unknown model
};

// The device to check against: the GPU preset whose family the name gives (the one whose
// memory is nearest to the reported size), else `fallback` renamed, with the capacity the
// smallest GPU listed reports (what a rank can count on).
Expected<DeviceFromNvidiaSmi> device_from_nvidia_smi(std::string_view text,
                                                     const PresetCatalog& catalog,
                                                     const DeviceConfig& fallback);

}  // namespace megamem
