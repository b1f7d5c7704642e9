// nvidia-smi's GPU list as a device; see megamem/nvidia_smi.hpp.
#include "megamem/nvidia_smi.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace megamem {
namespace {

constexpr const char* kField = "gpu_from_nvidia_smi";
constexpr const char* kExpected =
    "expected nvidia-smi --query-gpu=name,memory.total --format=csv output, one "
    "\"<name>, <MiB> MiB\" line per GPU";
constexpr double kMaxMemoryMib = 1e8;  // 95 TiB: more than any GPU, less than garbage

std::string_view trimmed(std::string_view text) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Error line_error(std::size_t line, const std::string& what) {
  return Error{kField, "line " + std::to_string(line) + ": " + what + "; " + kExpected};
}

// "81559 MiB" or "81559" (nounits) as MiB.
Expected<double> memory_mib(std::string_view value, std::size_t line) {
  std::string number(trimmed(value));
  const std::string lower = lowercase(number);
  if (lower.size() > 3 && lower.compare(lower.size() - 3, 3, "mib") == 0) {
    number = std::string(trimmed(std::string_view(number).substr(0, number.size() - 3)));
  }
  if (number.empty() || number.front() == '[') {
    return line_error(line, "memory.total is '" + std::string(trimmed(value)) + "'");
  }
  char* end = nullptr;
  const double mib = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(mib) || mib <= 0 ||
      mib > kMaxMemoryMib) {
    return line_error(
        line, "memory.total '" + std::string(trimmed(value)) + "' is not a positive number of MiB");
  }
  return mib;
}

bool header_line(std::string_view line) {
  const std::string lower = lowercase(line);
  return lower.rfind("name", 0) == 0 && lower.find("memory.total") != std::string::npos;
}

// Words of a GPU name: "NVIDIA A100-SXM4-80GB" -> nvidia, a100, sxm4, 80gb.
std::vector<std::string> name_words(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : lowercase(name)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += c;
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// The GPU family a preset stands for: its id up to the first '-' ("h100-80gb" -> h100), and
// its aliases.
bool preset_matches(const GpuPreset& preset, const std::vector<std::string>& words) {
  const auto has = [&](std::string_view family) {
    return std::find(words.begin(), words.end(), lowercase(family)) != words.end();
  };
  if (has(std::string_view(preset.id).substr(0, preset.id.find('-')))) return true;
  return std::any_of(preset.aliases.begin(), preset.aliases.end(), has);
}

const GpuPreset* matching_preset(const PresetCatalog& catalog, const NvidiaSmiGpu& gpu) {
  const std::vector<std::string> words = name_words(gpu.name);
  const GpuPreset* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const GpuPreset& preset : catalog.gpus) {
    if (!preset_matches(preset, words)) continue;
    const double distance = std::abs(preset.device.capacity_gib * 1024.0 - gpu.memory_mib);
    if (distance < best_distance) best = &preset, best_distance = distance;
  }
  return best;
}

}  // namespace

Expected<std::vector<NvidiaSmiGpu>> parse_nvidia_smi_gpus(std::string_view text) {
  std::vector<NvidiaSmiGpu> gpus;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = trimmed(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
    ++line_number;
    if (line.empty() || (gpus.empty() && header_line(line))) continue;
    const std::size_t comma = line.rfind(',');
    if (comma == std::string_view::npos) return line_error(line_number, "no comma");
    const std::string_view name = trimmed(line.substr(0, comma));
    if (name.empty()) return line_error(line_number, "no GPU name");
    Expected<double> mib = memory_mib(line.substr(comma + 1), line_number);
    if (!mib) return mib.error();
    gpus.push_back({std::string(name), *mib});
  }
  if (gpus.empty()) return Error{kField, std::string("no GPU listed; ") + kExpected};
  return gpus;
}

Expected<DeviceFromNvidiaSmi> device_from_nvidia_smi(std::string_view text,
                                                     const PresetCatalog& catalog,
                                                     const DeviceConfig& fallback) {
  Expected<std::vector<NvidiaSmiGpu>> gpus = parse_nvidia_smi_gpus(text);
  if (!gpus) return gpus.error();
  const auto smallest = std::min_element(
      gpus->begin(), gpus->end(),
      [](const NvidiaSmiGpu& a, const NvidiaSmiGpu& b) { return a.memory_mib < b.memory_mib; });
  DeviceFromNvidiaSmi out;
  const bool mixed = std::any_of(gpus->begin(), gpus->end(), [&](const NvidiaSmiGpu& gpu) {
    return gpu.name != smallest->name || gpu.memory_mib != smallest->memory_mib;
  });
  if (mixed) {
    out.warnings.push_back("nvidia-smi lists different GPUs; checking against the smallest, " +
                           smallest->name);
  }
  if (const GpuPreset* preset = matching_preset(catalog, *smallest)) {
    out.device = preset->device;
    out.gpu_id = preset->id;
  } else {
    out.device = fallback;
    out.device.name = smallest->name;
    out.warnings.push_back("no GPU preset matches '" + smallest->name +
                           "': its memory comes from nvidia-smi, its bandwidths and TFLOP/s "
                           "from " +
                           (fallback.name.empty() ? "the default GPU" : fallback.name));
  }
  out.device.capacity_gib = smallest->memory_mib / 1024.0;
  return out;
}

}  // namespace megamem
