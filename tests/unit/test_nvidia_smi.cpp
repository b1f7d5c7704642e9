// nvidia-smi's GPU list (megamem/nvidia_smi.hpp): the forms nvidia-smi prints, the preset a
// name matches, and the messages for what it is not.
#include <catch2/catch.hpp>
#include <string>

#include "megamem/nvidia_smi.hpp"

using namespace megamem;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

const PresetCatalog& catalog() {
  const Expected<PresetCatalog>& presets = builtin_presets();
  REQUIRE(presets.has_value());
  return *presets;
}

}  // namespace

TEST_CASE("nvidia-smi --query-gpu=name,memory.total lines, with or without header and units") {
  Expected<std::vector<NvidiaSmiGpu>> gpus = parse_nvidia_smi_gpus(
      "name, memory.total [MiB]\r\nNVIDIA H100 80GB HBM3, 81559 MiB\nNVIDIA H100 80GB HBM3, "
      "81559 MiB\n\n");
  REQUIRE(gpus.has_value());
  REQUIRE(gpus->size() == 2);
  CHECK(gpus->front().name == "NVIDIA H100 80GB HBM3");
  CHECK(gpus->front().memory_mib == 81559);
  gpus = parse_nvidia_smi_gpus("NVIDIA A100-SXM4-40GB, 40960");  // noheader,nounits
  REQUIRE(gpus.has_value());
  CHECK(gpus->front().memory_mib == 40960);
}

TEST_CASE("what is not an nvidia-smi GPU list is refused with the line and the form expected") {
  for (const char* text : {"", "\n\n", "name, memory.total [MiB]\n"}) {
    const auto gpus = parse_nvidia_smi_gpus(text);
    REQUIRE_FALSE(gpus.has_value());
    CHECK_THAT(gpus.error().message, Contains("no GPU listed"));
  }
  auto gpus = parse_nvidia_smi_gpus("NVIDIA H100 80GB HBM3 81559 MiB");
  REQUIRE_FALSE(gpus.has_value());
  CHECK(gpus.error().field == "gpu_from_nvidia_smi");
  CHECK_THAT(gpus.error().message, Contains("line 1: no comma"));
  gpus = parse_nvidia_smi_gpus("NVIDIA H100, 81559 MiB\nNVIDIA H100, [N/A]");
  REQUIRE_FALSE(gpus.has_value());
  CHECK_THAT(gpus.error().message, Contains("line 2: memory.total is '[N/A]'"));
  for (const char* bad : {"GPU, -5 MiB", "GPU, 1e300", "GPU, nan", "GPU, 12x MiB", ", 100"}) {
    CHECK_FALSE(parse_nvidia_smi_gpus(bad).has_value());
  }
}

TEST_CASE("the GPU preset a name gives, with the memory nvidia-smi reports") {
  auto device = device_from_nvidia_smi("NVIDIA H100 80GB HBM3, 81559 MiB\n", catalog(), {});
  REQUIRE(device.has_value());
  CHECK(device->gpu_id == "h100-80gb");
  CHECK_THAT(device->device.capacity_gib, WithinAbs(81559.0 / 1024, 1e-12));
  CHECK(device->warnings.empty());
  // Two A100 presets: the one whose memory is nearest.
  device = device_from_nvidia_smi("NVIDIA A100-SXM4-40GB, 40960 MiB", catalog(), {});
  REQUIRE(device.has_value());
  CHECK(device->gpu_id == "a100-40gb");
  // Mixed GPUs: the smallest, said.
  device = device_from_nvidia_smi("NVIDIA H200, 143771 MiB\nNVIDIA H100 80GB HBM3, 81559 MiB",
                                  catalog(), {});
  REQUIRE(device.has_value());
  CHECK(device->gpu_id == "h100-80gb");
  REQUIRE(device->warnings.size() == 1);
  CHECK_THAT(device->warnings.front(), Contains("different GPUs"));
  // No preset: the fallback device with the reported name and memory, said.
  DeviceConfig fallback;
  fallback.name = "H100 80GB";
  device = device_from_nvidia_smi("NVIDIA L40S, 46068 MiB", catalog(), fallback);
  REQUIRE(device.has_value());
  CHECK(device->gpu_id.empty());
  CHECK(device->device.name == "NVIDIA L40S");
  CHECK_THAT(device->device.capacity_gib, WithinAbs(46068.0 / 1024, 1e-12));
  REQUIRE(device->warnings.size() == 1);
  CHECK_THAT(device->warnings.front(), Contains("bandwidths and TFLOP/s from H100 80GB"));
}
