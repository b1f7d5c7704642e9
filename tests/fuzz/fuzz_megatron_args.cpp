// libFuzzer harness: parse_megatron_args() on arbitrary bytes (a pasted launch script).
//
// The first byte picks the world size (1..256), the rest is the command line. Besides "never
// crashes" (ASan, UBSan-style traps), two properties must hold:
//   * refused flags name the flag and say why (non-empty field and message);
//   * accepted flags write back canonically: to_megatron_args() of the result parses again
//     and writes the same flags a second time.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "megamem/megatron_args.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::int64_t world_size = std::int64_t{data[0]} + 1;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const megamem::Expected<megamem::MegatronArgs> parsed =
      megamem::parse_megatron_args(text, world_size);
  if (!parsed) {
    if (parsed.error().field.empty() || parsed.error().message.empty()) __builtin_trap();
    return 0;
  }
  const std::string flags = megamem::to_megatron_args(parsed->config);
  const megamem::Expected<megamem::MegatronArgs> again =
      megamem::parse_megatron_args(flags, world_size);
  if (!again) __builtin_trap();
  if (megamem::to_megatron_args(again->config) != flags) __builtin_trap();
  return 0;
}
