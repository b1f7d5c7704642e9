// libFuzzer harness: read_launch_script() and parse_megatron_launch() on arbitrary bytes (a
// pasted launch script: quotes, $(, ${, arrays, ifs in any mix).
//
// Besides "never crashes or hangs" (ASan, UBSan traps; the expansion budget), these must hold:
//   * a refusal names a field and says why;
//   * the lines it used are ascending, within the text, and the ignored count is not negative;
//   * every warning about the script names its line;
//   * the launcher's world size, when read, is at least one GPU.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "megamem/launch_script.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const megamem::Expected<megamem::LaunchScript> script = megamem::read_launch_script(text);
  if (!script) {
    if (script.error().field.empty() || script.error().message.empty()) __builtin_trap();
    return 0;
  }
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  const std::vector<int>& used = script->used_lines;
  if (used.empty() || !std::is_sorted(used.begin(), used.end())) __builtin_trap();
  if (used.front() < 1 || used.back() > lines || script->ignored_lines < 0) __builtin_trap();
  for (const std::string& warning : script->warnings) {
    if (warning.rfind("line ", 0) != 0) __builtin_trap();
  }
  if (script->world_size && *script->world_size < 1) __builtin_trap();
  const megamem::Expected<megamem::MegatronLaunch> parsed =
      megamem::parse_megatron_launch(text, {.default_world_size = 8});
  if (!parsed && (parsed.error().field.empty() || parsed.error().message.empty())) {
    __builtin_trap();
  }
  return 0;
}
