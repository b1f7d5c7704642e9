// libFuzzer harness: run_validation() on arbitrary bytes (a validation cases file such as
// ../shared/validation/megatron-ci.json). It must never crash (ASan, UBSan-style traps); a
// refused file must say why, and an accepted one must render as Markdown and JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "megamem/validation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const megamem::Expected<megamem::ValidationReport> report = megamem::run_validation(text);
  if (!report) {
    if (report.error().message.empty()) __builtin_trap();
    return 0;
  }
  if (megamem::validation_report_markdown(*report, "fuzz.json").empty()) __builtin_trap();
  if (megamem::validation_report_json(*report).empty()) __builtin_trap();
  return 0;
}
