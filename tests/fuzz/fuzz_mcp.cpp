// libFuzzer harness: megamem mcp's message handling (cli/mcp_command.cpp mcp_respond) on
// arbitrary bytes as one stdio line. It must never crash, and every request gets a JSON-RPC
// 2.0 response object with a result or an error.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "commands.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  if (line.find('\n') != std::string_view::npos) return 0;  // the transport splits lines
  const std::optional<std::string> response = megamem::cli::mcp_respond(line);
  if (!response) return 0;
  const nlohmann::json parsed = nlohmann::json::parse(*response, nullptr, false);
  if (parsed.is_discarded() || parsed.value("jsonrpc", "") != "2.0" ||
      (!parsed.contains("result") && !parsed.contains("error"))) {
    __builtin_trap();
  }
  return 0;
}
