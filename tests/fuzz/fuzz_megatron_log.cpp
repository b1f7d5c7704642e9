// libFuzzer harness: read_megatron_log() and log_config() on arbitrary bytes (a pasted
// training log). They must never crash, and a refused text must name the field and say why.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "megamem/megatron_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const megamem::Expected<megamem::MegatronLog> log = megamem::read_megatron_log(text);
  if (!log) {
    if (log.error().field.empty() || log.error().message.empty()) __builtin_trap();
    return 0;
  }
  const megamem::Expected<megamem::LogConfig> config = megamem::log_config(*log);
  if (!config && (config.error().field.empty() || config.error().message.empty())) {
    __builtin_trap();
  }
  return 0;
}
