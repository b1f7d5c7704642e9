// The share-link key table (docs/share-links.md "Every key", `megamem url keys`), written
// from the field registry so that a new field's key is documented the moment it has a row.
#include <cstdint>
#include <string>
#include <string_view>

#include "megamem/fields.hpp"
#include "megamem/share_link.hpp"
#include "number_text.hpp"

namespace megamem {
namespace {

// Bounds as the doc writes them: 2^22 and 10^9 rather than 4194304 and 1000000000.
std::string bound_text(double value) {
  if (value >= 1024.0) {
    for (int exponent = 10; exponent < 63; ++exponent) {
      if (value == static_cast<double>(std::int64_t{1} << exponent)) {
        return "2^" + std::to_string(exponent);
      }
    }
    double power = 1000.0;
    for (int exponent = 3; exponent < 19; ++exponent, power *= 10.0) {
      if (value == power) return "10^" + std::to_string(exponent);
    }
  }
  return shortest_double_text(value);
}

std::string choice_list(const ConfigField& field) {
  std::string out;
  for (const FieldChoice& choice : field.choices) {
    if (choice.link.empty()) continue;  // links do not accept it
    out += (out.empty() ? "" : ", ") + std::string(choice.link);
  }
  return out;
}

std::string values_text(const ConfigField& field) {
  switch (field.kind) {
    case FieldKind::integer:
      return "whole number " + bound_text(static_cast<double>(field.min_int)) + ".." +
             bound_text(static_cast<double>(field.max_int));
    case FieldKind::real:
      return "number " + bound_text(field.min_real) + ".." + bound_text(field.max_real);
    case FieldKind::boolean:
      return "1 or 0";
    case FieldKind::choice:
      return choice_list(field);
    case FieldKind::text:
      return "text (percent-encoded), at most " + std::to_string(field.max_int) + " characters";
    case FieldKind::module_list:
      return "comma-separated names: " + field.list_names();
    case FieldKind::pattern:
      return field.max_int > 1
                 ? "runs of values 0.." + std::to_string(field.max_int) + ": `0*2,4,128`"
                 : std::string("runs of 0/1: `0*3,1*58`");
  }
  return "";
}

}  // namespace

std::string share_link_keys_markdown() {
  std::string out =
      "| key | Config field | v1 default | values |\n"
      "|---|---|---|---|\n";
  for (const ConfigField& field : config_fields()) {
    if (field.link_key.empty()) continue;
    const std::string default_text =
        field.link_default.empty() ? "(empty)" : std::string(field.link_default);
    out += "| `" + std::string(field.link_key) + "` | `" + std::string(field.name) + "` | " +
           default_text + " | " + values_text(field) + " |\n";
  }
  return out;
}

}  // namespace megamem
