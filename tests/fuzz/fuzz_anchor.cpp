// libFuzzer harness: the anchor decoders (anchor_input.hpp) on arbitrary bytes. The first byte
// picks the input (odd, as the seed logs' '#' and '[' are: the rest is a log): a pasted training
// log (anchor_from_log, Megatron-LM or Megatron-Bridge memory reports), or newline-separated
// typed-in fields (flags, world size, peak, static, reserved, rank; anchor_from_typed and
// parse_byte_size). They must never crash, and a refused input must name the field and say why.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/anchor_input.hpp"

namespace {

template <class T>
void check_refusal(const megamem::Expected<T>& result) {
  if (!result && (result.error().field.empty() || result.error().message.empty())) {
    __builtin_trap();
  }
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 1) {
    check_refusal(megamem::anchor_from_log(text, "fuzz.log"));
    return 0;
  }
  const std::vector<std::string> fields = lines_of(text);
  const auto field = [&](std::size_t i) { return i < fields.size() ? fields[i] : std::string(); };
  megamem::TypedAnchor typed;
  typed.megatron_args = field(0);
  typed.world_size = field(1);
  typed.peak_allocated = field(2);
  typed.static_allocated = field(3);
  typed.max_reserved = field(4);
  typed.global_rank = field(5);
  check_refusal(megamem::parse_byte_size("anchor_peak_bytes", typed.peak_allocated));
  check_refusal(megamem::anchor_from_typed(typed));
  return 0;
}
