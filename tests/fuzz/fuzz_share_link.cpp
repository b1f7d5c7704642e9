// libFuzzer harness: decode_share_link() on arbitrary bytes.
//
// Besides "never crashes" (ASan, UBSan-style traps), two properties must hold:
//   * a refused link names the parameter and says why (non-empty field and message);
//   * a decoded link re-encodes canonically: encode(decode(x)) decodes to the same
//     configuration and encodes to the same text again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "megamem/share_link.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const megamem::Expected<megamem::SharedConfig> decoded = megamem::decode_share_link(text);
  if (!decoded) {
    if (decoded.error().field.empty() || decoded.error().message.empty()) __builtin_trap();
    return 0;
  }
  const std::string query = megamem::encode_share_query(*decoded);
  const megamem::Expected<megamem::SharedConfig> again = megamem::decode_share_link(query);
  if (!again) __builtin_trap();
  if (!megamem::share_link_differences(again->config, decoded->config).empty()) __builtin_trap();
  if (again->model_id != decoded->model_id || again->gpu_id != decoded->gpu_id) __builtin_trap();
  if (megamem::encode_share_query(*again) != query) __builtin_trap();
  return 0;
}
