// Share links (docs/share-links.md): Config <-> "v=1&model=...&tp=4&...".
//
// The field registry (fields.hpp) lists every Config field once: its link key, its version-1
// default as text, how to read and write it, and the values it accepts. Encoding, decoding,
// the defaults, comparisons and recipes all walk its rows that have a link key, so a field
// cannot be encoded but not decoded, or decoded with a different default.
//
// Index:
//   [text]     percent-encoding, number parsing and formatting
//   [fields]   the registry rows links carry
//   [query]    splitting a link into parameters
//   [api]      encode, decode, apply, presets detection
#include "megamem/share_link.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "megamem/anchor_input.hpp"
#include "megamem/estimate.hpp"
#include "megamem/fields.hpp"
#include "number_text.hpp"

namespace megamem {
namespace {

// ---- [text] -------------------------------------------------------------------------------

constexpr std::size_t kMaxLinkChars = 65536;
constexpr std::int64_t kMaxLayersInPattern = std::int64_t{1} << 20;

// Query text is kept readable: letters, digits, -._~ (unreserved) and the sub-delimiters
// ,*:() that RFC 3986 allows in a query stay as they are; everything else is %XX.
bool plain_in_query(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == ',' || c == '*' || c == ':' || c == '(' ||
         c == ')';
}

std::string percent_encode(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    if (plain_in_query(c)) {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += hex[byte >> 4];
      out += hex[byte & 15];
    }
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// '+' is a space and %XX a byte (application/x-www-form-urlencoded, as browsers write it).
std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int high = hex_value(text[i + 1]);
      const int low = hex_value(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out += static_cast<char>(high * 16 + low);
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// A key as an error message may show it: printable ASCII, at most 40 characters.
std::string display_key(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (out.size() >= 40) {
      out += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += percent_encode(std::string_view(&c, 1));
    }
  }
  return out.empty() ? std::string("(empty)") : out;
}

// A value as an error message may show it.
std::string display_value(std::string_view value) {
  std::string shown = display_key(value);
  return shown == "(empty)" ? std::string("''") : "'" + shown + "'";
}

std::string format_real(double value) { return shortest_double_text(value); }

std::string format_number(double value) {
  // Bounds in messages: integers without a fraction, others shortest.
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<std::int64_t>(value));
  }
  return format_real(value);
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_real(std::string_view text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  for (const char c : text) {
    const bool allowed =
        (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
    if (!allowed) return std::nullopt;
  }
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(std::string_view text) {
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return false;
  return std::nullopt;
}

// ---- [fields] -----------------------------------------------------------------------------

// The registry's rows that links carry (fields.hpp), in link order.
using Field = ConfigField;
using Kind = FieldKind;

const std::vector<Field>& fields() {
  static const std::vector<Field> table = [] {
    std::vector<Field> rows;
    for (const ConfigField& field : config_fields()) {
      if (!field.link_key.empty()) rows.push_back(field);
    }
    return rows;
  }();
  return table;
}

const Field* find_field(std::string_view key) { return field_by_link_key(key); }

bool is_device_field(const Field& field) { return field.link_key.rfind("g.", 0) == 0; }
bool is_display_name(const Field& field) {
  return field.link_key == "m.name" || field.link_key == "g.name";
}

// The field's value as link text (before percent-encoding).
std::string format_field(const Field& field, const Config& config) {
  return field_link_text(field, config);
}

std::optional<Error> parse_list(const Field& field, std::string_view value, Config& config) {
  std::vector<std::string> items;
  if (!value.empty()) {
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = value.find(',', start);
      const std::string_view item = value.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      if (item.empty() || item.size() > 64) {
        return Error{std::string(field.link_key),
                     "expects comma-separated names, got " + display_value(value)};
      }
      for (const char c : item) {
        const bool allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        if (!allowed) {
          return Error{
              std::string(field.link_key),
              "expects names of lowercase letters, digits and '_', got " + display_value(item)};
        }
      }
      items.emplace_back(item);
      if (items.size() > 64) return Error{std::string(field.link_key), "lists more than 64 names"};
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  std::string unknown;
  if (!field.set_list(config, items, unknown)) {
    return Error{std::string(field.link_key), "unknown module " + display_value(unknown)};
  }
  return std::nullopt;
}

std::optional<Error> parse_pattern(const Field& field, std::string_view value, Config& config) {
  std::vector<std::uint8_t> pattern;
  const std::string key(field.link_key);
  std::size_t start = 0;
  while (!value.empty()) {
    const std::size_t comma = value.find(',', start);
    const std::string_view run = value.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    // A run is a value (0/1 for the layer patterns, up to the field's max_int) with an
    // optional *count.
    const std::size_t star = run.find('*');
    const std::string_view value_text = run.substr(0, star);
    const bool digits = !value_text.empty() && value_text.size() <= 3 &&
                        std::all_of(value_text.begin(), value_text.end(),
                                    [](char c) { return c >= '0' && c <= '9'; });
    const std::optional<std::int64_t> run_value = digits ? parse_integer(value_text) : std::nullopt;
    std::int64_t count = 1;
    if (!run_value || *run_value > field.max_int) {
      return Error{key, "expects runs like 0*3,1*58 of values 0.." + std::to_string(field.max_int) +
                            ", got " + display_value(run)};
    }
    if (star != std::string_view::npos) {
      const std::optional<std::int64_t> parsed = parse_integer(run.substr(star + 1));
      if (!parsed || *parsed < 1) {
        return Error{key, "expects runs like 0*3,1*58, got " + display_value(run)};
      }
      count = *parsed;
    }
    if (count > kMaxLayersInPattern - static_cast<std::int64_t>(pattern.size())) {
      return Error{key, "describes more than " + std::to_string(kMaxLayersInPattern) + " layers"};
    }
    pattern.insert(pattern.end(), static_cast<std::size_t>(count),
                   static_cast<std::uint8_t>(*run_value));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  *field.pattern(config) = std::move(pattern);
  return std::nullopt;
}

std::optional<Error> parse_integer_field(const Field& field, std::string_view value,
                                         Config& config) {
  const std::string key(field.link_key);
  const std::optional<std::int64_t> number = parse_integer(value);
  const bool digits_only = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  if (!number && !digits_only) {
    // A count (GPUs, TP, layers) says so: '-32' read as "a whole number" looks like one.
    const char* expected = field.min_int >= 1 ? "a positive whole number" : "a whole number";
    return Error{key, std::string("expects ") + expected + ", got " + display_value(value)};
  }
  if (!number || *number < field.min_int || *number > field.max_int) {
    return Error{key, "must be between " + std::to_string(field.min_int) + " and " +
                          std::to_string(field.max_int) + ", got " + display_value(value)};
  }
  field.set_int(config, *number);
  return std::nullopt;
}

// One of the field's link spellings (fields.hpp); "" marks a value links do not accept.
std::optional<Error> parse_choice(const Field& field, std::string_view value, Config& config) {
  std::string choices;
  for (std::size_t i = 0; i < field.choices.size(); ++i) {
    const std::string_view name = field.choices[i].link;
    if (name.empty()) continue;
    if (value == name) {
      field.set_int(config, static_cast<std::int64_t>(i));
      return std::nullopt;
    }
    choices += (choices.empty() ? "" : ", ") + std::string(name);
  }
  return Error{std::string(field.link_key),
               "expects one of " + choices + ", got " + display_value(value)};
}

// Reads one parameter's (decoded) value into the config.
std::optional<Error> parse_field(const Field& field, std::string_view value, Config& config) {
  const std::string key(field.link_key);
  switch (field.kind) {
    case Kind::integer:
      return parse_integer_field(field, value, config);
    case Kind::boolean: {
      const std::optional<bool> flag = parse_bool(value);
      if (!flag) return Error{key, "expects 1 or 0, got " + display_value(value)};
      field.set_int(config, *flag ? 1 : 0);
      return std::nullopt;
    }
    case Kind::choice:
      return parse_choice(field, value, config);
    case Kind::real: {
      const std::optional<double> number = parse_real(value);
      if (!number) return Error{key, "expects a number, got " + display_value(value)};
      if (!(*number >= field.min_real && *number <= field.max_real)) {
        return Error{key, "must be between " + format_number(field.min_real) + " and " +
                              format_number(field.max_real) + ", got " + display_value(value)};
      }
      field.set_real(config, *number);
      return std::nullopt;
    }
    case Kind::text: {
      if (value.size() > static_cast<std::size_t>(field.max_int)) {
        return Error{key, "is longer than " + std::to_string(field.max_int) + " characters"};
      }
      for (const char c : value) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          return Error{key, "contains a control character"};
        }
      }
      *field.text(config) = std::string(value);
      return std::nullopt;
    }
    case Kind::module_list:
      return parse_list(field, value, config);
    case Kind::pattern:
      return parse_pattern(field, value, config);
  }
  return Error{key, "cannot be read"};
}

// Edit distance, for "did you mean" hints on unknown keys.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The nearest candidate so far: `candidate` replaces `best` when fewer edits from `value`.
struct Nearest {
  std::string_view best;
  std::size_t distance;  // edits of `best`; a candidate must need fewer
  void consider(std::string_view value, std::string_view candidate) {
    const std::size_t d = edit_distance(value, candidate);
    if (d < distance) {
      distance = d;
      best = candidate;
    }
  }
};

Error unknown_parameter(std::string_view key) {
  std::string message = "unknown parameter";
  if (key.size() <= 40) {
    Nearest nearest{.best = {}, .distance = 3};
    for (const std::string_view candidate :
         {std::string_view("v"), std::string_view("model"), std::string_view("gpu")}) {
      nearest.consider(key, candidate);
    }
    for (const Field& field : fields()) nearest.consider(key, field.link_key);
    if (!nearest.best.empty()) message += " (did you mean '" + std::string(nearest.best) + "'?)";
  }
  return Error{display_key(key), message + "; docs/share-links.md lists them"};
}

// The preset id a shortened or mistyped one most likely means: the shortest id it begins
// ("nemotron-3-super-120" -> nemotron-3-super-120b-a12b), else the nearest within 3 edits; empty
// when none is close. Compared as the catalog looks ids up (canonical_preset_id).
template <class Preset>
std::string_view nearest_preset_id(std::string_view typed, const std::vector<Preset>& presets) {
  const std::string value = canonical_preset_id(typed);
  std::string_view shortest_extension;
  Nearest nearest{.best = {}, .distance = 4};
  for (const Preset& preset : presets) {
    const std::string_view id = preset.id;
    if (value.size() >= 3 && id.substr(0, value.size()) == value) {
      if (shortest_extension.empty() || id.size() < shortest_extension.size()) {
        shortest_extension = id;
      }
    } else if (value.size() <= 40) {
      nearest.consider(value, id);
    }
  }
  return shortest_extension.empty() ? nearest.best : shortest_extension;
}

// "<value> is not a <kind> preset", with the id it most likely means.
Error unknown_preset(const char* key, std::string_view value, const char* kind,
                     std::string_view nearest) {
  std::string message = display_value(value) + " is not a " + kind + " preset (";
  if (!nearest.empty()) message += "did you mean '" + std::string(nearest) + "'?; ";
  return Error{key, message + "`megamem presets` lists them)"};
}

// View settings (LinkView): the page's language, checked here and applied by the page; and the
// anchor's keys (anchor=, anchor-*), read by decode_link_anchor (anchor_input.hpp).
bool is_view_key(std::string_view key) { return key == "lang" || is_anchor_link_key(key); }

std::optional<Error> check_view_value(std::string_view key, std::string_view value) {
  if (key == "lang" && value != "en" && value != "zh") {
    return Error{"lang", "expects en or zh, got " + display_value(value)};
  }
  return std::nullopt;
}

// ---- [query] ------------------------------------------------------------------------------

// The query part of a link, a bare query, or a fragment.
Expected<std::string_view> query_of(std::string_view link) {
  while (!link.empty() && (link.front() == ' ' || link.front() == '\t' || link.front() == '\n' ||
                           link.front() == '\r')) {
    link.remove_prefix(1);
  }
  while (!link.empty() && (link.back() == ' ' || link.back() == '\t' || link.back() == '\n' ||
                           link.back() == '\r')) {
    link.remove_suffix(1);
  }
  if (link.size() > kMaxLinkChars) {
    return Error{"link", "is longer than " + std::to_string(kMaxLinkChars) + " characters"};
  }
  std::string_view query;
  if (const std::size_t question = link.find('?'); question != std::string_view::npos) {
    query = link.substr(question + 1);
    if (const std::size_t hash = query.find('#'); hash != std::string_view::npos) {
      query = query.substr(0, hash);
    }
  } else if (const std::size_t hash = link.find('#'); hash != std::string_view::npos) {
    query = link.substr(hash + 1);
  } else if (link.find("://") != std::string_view::npos) {
    return Error{"link", "has no '?' part with the configuration"};
  } else {
    query = link;
  }
  if (query.empty()) return Error{"link", "has no parameters (expected v=1&model=...)"};
  return query;
}

// The checksum c= of a link's configuration parameters (issue 28 item 11): a link cut inside
// a value ("seq=10240" sent as "seq=10") still parses, so new links carry four hex digits of
// FNV-1a over the decoded "key=value" pairs, sorted so that a tool reordering the query does
// not break it. Old links without c= stay readable; the anchor's nested link has its own.
std::string configuration_checksum(const LinkParameters& configuration) {
  std::vector<std::string> pairs;
  pairs.reserve(configuration.size());
  for (const auto& [key, value] : configuration) pairs.push_back(key + "=" + value);
  std::sort(pairs.begin(), pairs.end());
  std::uint32_t hash = 2166136261u;
  for (const std::string& pair : pairs) {
    for (const char c : pair + "&") hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  }
  constexpr char kHex[] = "0123456789abcdef";
  const std::uint32_t folded = (hash ^ (hash >> 16)) & 0xffffu;
  std::string out(4, '0');
  for (int i = 0; i < 4; ++i)
    out[static_cast<std::size_t>(3 - i)] = kHex[(folded >> (4 * i)) & 0xfu];
  return out;
}

// Why a link's c= does not match its configuration, naming the last setting (where a cut
// link ends).
Error checksum_mismatch(const LinkParameters& configuration) {
  std::string last;
  if (!configuration.empty()) {
    last = " (its last setting reads " +
           display_value(configuration.back().first + "=" + configuration.back().second) + ")";
  }
  return Error{"c",
               "is the checksum of the link's settings and does not match them: the link was "
               "cut short or edited after it was made" +
                   last + "; copy the whole link again, or drop c= to read it as it is"};
}

// ---- [api] --------------------------------------------------------------------------------

Config defaults_of_fields() {
  Config config;
  for (const Field& field : fields()) {
    // Defaults are trusted text from the table above; a bad one is a programming error the
    // unit tests catch (share_link_defaults round trip).
    (void)parse_field(field, field.link_default, config);
  }
  return config;
}

}  // namespace

Config share_link_defaults() {
  static const Config defaults = defaults_of_fields();
  return defaults;
}

std::vector<std::string> share_link_keys() {
  std::vector<std::string> keys = {"v", "c", "model", "gpu"};
  for (const Field& field : fields()) keys.emplace_back(field.link_key);
  return keys;
}

namespace {

// One "key=value" of a query, or why it cannot be read.
Expected<std::pair<std::string, std::string>> query_part(std::string_view part) {
  const std::size_t equals = part.find('=');
  const std::optional<std::string> key = percent_decode(part.substr(0, equals));
  if (!key) return Error{display_key(part.substr(0, equals)), "has malformed percent-encoding"};
  if (equals == std::string_view::npos) {
    return Error{display_key(*key), "has no value (expected " + display_key(*key) + "=...)"};
  }
  const std::optional<std::string> value = percent_decode(part.substr(equals + 1));
  if (!value) return Error{display_key(*key), "has malformed percent-encoding in its value"};
  return std::pair{*key, *value};
}

// The query's parameters; a part that cannot be read is left out and its error added.
LinkParameters query_parameters(std::string_view query, std::vector<Error>& errors) {
  LinkParameters parameters;
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start <= query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view part = query.substr(start, end - start);
    start = end + 1;
    if (!part.empty()) {  // "a=1&&b=2" and a trailing '&' are harmless
      Expected<std::pair<std::string, std::string>> parameter = query_part(part);
      if (!parameter) {
        errors.push_back(parameter.error());
      } else if (!seen.insert(parameter->first).second) {
        errors.push_back({display_key(parameter->first), "is given more than once"});
      } else {
        parameters.push_back(std::move(*parameter));
      }
    }
    if (end == query.size()) break;
  }
  return parameters;
}

}  // namespace

Expected<LinkParameters> parse_share_query(std::string_view query) {
  std::vector<Error> errors;
  LinkParameters parameters = query_parameters(query, errors);
  if (!errors.empty()) return errors.front();
  return parameters;
}

namespace {

// Applies each parameter it can read to `shared`; each one it cannot is left out and its
// error added. Presets first, wherever they appear, so m.* and g.* refine them.
void apply_parameters(SharedConfig& shared, const LinkParameters& parameters,
                      const PresetCatalog& catalog, std::vector<Error>& errors) {
  for (const auto& [key, value] : parameters) {
    if (key == "model") {
      if (const ModelPreset* preset = catalog.find_model(value)) {
        shared.config.model = preset->model;
        shared.model_id = preset->id;
      } else {
        errors.push_back(
            unknown_preset("model", value, "model", nearest_preset_id(value, catalog.models)));
      }
    } else if (key == "gpu") {
      if (const GpuPreset* preset = catalog.find_gpu(value)) {
        shared.config.device = preset->device;
        shared.gpu_id = preset->id;
      } else {
        errors.push_back(
            unknown_preset("gpu", value, "GPU", nearest_preset_id(value, catalog.gpus)));
      }
    }
  }
  for (const auto& [key, value] : parameters) {
    if (key == "model" || key == "gpu") continue;
    if (key == "v") {
      errors.push_back({"v", "the link version belongs at the start of a link"});
    } else if (const Field* field = find_field(key); !field) {
      errors.push_back(unknown_parameter(key));
    } else if (auto error = parse_field(*field, value, shared.config)) {
      errors.push_back(*error);
    }
  }
}

}  // namespace

Expected<SharedConfig> apply_share_parameters(SharedConfig shared,
                                              const LinkParameters& parameters) {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  if (!catalog) return catalog.error();
  std::vector<Error> errors;
  apply_parameters(shared, parameters, *catalog, errors);
  if (!errors.empty()) return errors.front();
  return shared;
}

namespace {

// The link's configuration parameters (view keys checked and left out, the checksum c= kept
// aside) and its version's errors; a version this build cannot read is fatal.
LinkParameters configuration_parameters(LinkParameters parameters, std::vector<Error>& errors,
                                        bool& unreadable, std::string& checksum) {
  LinkParameters rest;
  for (auto& [key, value] : parameters) {
    if (is_view_key(key)) {
      if (auto error = check_view_value(key, value)) errors.push_back(*error);
      continue;
    }
    if (key == "c") {
      checksum = value;
      continue;
    }
    if (key != "v") {
      rest.emplace_back(std::move(key), std::move(value));
      continue;
    }
    const std::optional<std::int64_t> version = parse_integer(value);
    if (!version || *version < 1) {
      errors.push_back(
          {"v", "expects the link version (a whole number from 1), got " + display_value(value)});
    } else if (*version > kShareLinkVersion) {
      errors.push_back({"v", "this link is format version " + std::to_string(*version) +
                                 "; this megamem reads versions up to " +
                                 std::to_string(kShareLinkVersion) + " (update megamem)"});
      unreadable = true;
    }
  }
  return rest;
}

// The link's model= names no preset.
bool names_unknown_model(const LinkParameters& parameters, const PresetCatalog& catalog) {
  return std::any_of(parameters.begin(), parameters.end(), [&](const auto& parameter) {
    return parameter.first == "model" && catalog.find_model(parameter.second) == nullptr;
  });
}

}  // namespace

PartialLink decode_share_link_partially(std::string_view link) {
  PartialLink out;
  const Expected<std::string_view> query = query_of(link);
  if (!query) {
    out.errors.push_back(query.error());
    out.shared = default_configuration();
    return out;
  }
  bool unreadable = false;
  std::string checksum;
  const LinkParameters rest = configuration_parameters(query_parameters(*query, out.errors),
                                                       out.errors, unreadable, checksum);
  const Expected<PresetCatalog>& catalog = builtin_presets();
  if (!catalog) out.errors.push_back(catalog.error());
  const std::size_t before = out.errors.size();
  // A link without v= is read as version 1, the first format.
  out.shared = SharedConfig{share_link_defaults(), "", ""};
  // An unknown model= leaves the default configuration's model under the rest of the link: on
  // no model at all (every size 0) the rest could only be refused ("num_layers must be at
  // least 1"), with no layout near it to suggest.
  if (catalog && names_unknown_model(rest, *catalog)) {
    SharedConfig fallback = default_configuration();
    out.shared.config.model = std::move(fallback.config.model);
    out.shared.model_id = std::move(fallback.model_id);
  }
  if (catalog && !unreadable) apply_parameters(out.shared, rest, *catalog, out.errors);
  // A GPU count that does not parse keeps the default configuration's, as an unknown model
  // keeps its model: version 1's one GPU would leave nearly every layout invalid (#28 item 11).
  if (std::any_of(out.errors.begin() + static_cast<std::ptrdiff_t>(before), out.errors.end(),
                  [](const Error& error) { return error.field == "gpus"; })) {
    out.shared.config.parallel.world_size = default_configuration().config.parallel.world_size;
  }
  // Nothing of the configuration read: the default one.
  if (unreadable || rest.size() <= out.errors.size() - before) {
    out.shared = default_configuration();
  }
  // First: a link cut short explains the values it broke ("tp=" cut to nothing), and the page
  // shows the first error with the others counted.
  if (!checksum.empty() && checksum != configuration_checksum(rest)) {
    out.errors.insert(out.errors.begin(), checksum_mismatch(rest));
  }
  return out;
}

Expected<SharedConfig> decode_share_link(std::string_view link) {
  PartialLink partial = decode_share_link_partially(link);
  if (!partial.errors.empty()) return partial.errors.front();
  return std::move(partial.shared);
}

SharedConfig default_configuration() {
  constexpr std::string_view kDefaultRecipe = "llama-3-70b-h100-64";
  const Expected<PresetCatalog>& catalog = builtin_presets();
  if (catalog) {
    if (const RecipePreset* recipe = catalog->find_recipe(kDefaultRecipe)) {
      Expected<SharedConfig> shared = recipe_config(*recipe);
      if (shared) return std::move(shared).value();
    }
  }
  return SharedConfig{share_link_defaults(), "", ""};
}

Expected<LinkView> decode_link_view(std::string_view link) {
  const Expected<std::string_view> query = query_of(link);
  if (!query) return query.error();
  const Expected<LinkParameters> parameters = parse_share_query(*query);
  if (!parameters) return parameters.error();
  LinkView view;
  for (const auto& [key, value] : *parameters) {
    if (key != "lang") continue;  // the anchor's keys are decode_link_anchor's
    if (auto error = check_view_value(key, value)) return *error;
    view.language = value;
  }
  return view;
}

Expected<LinkParameters> link_parameters(std::string_view link) {
  const Expected<std::string_view> query = query_of(link);
  if (!query) return query.error();
  return parse_share_query(*query);
}

std::string percent_encode_value(std::string_view text) { return percent_encode(text); }

std::string encode_link_view(const LinkView& view) {
  return view.language.empty() ? "" : "lang=" + view.language;
}

LinkParameters share_parameters(const SharedConfig& shared, bool include_defaults) {
  Config base = share_link_defaults();
  std::string model_id;
  std::string gpu_id;
  if (const Expected<PresetCatalog>& catalog = builtin_presets(); catalog) {
    if (const ModelPreset* preset = catalog->find_model(shared.model_id)) {
      base.model = preset->model;
      model_id = preset->id;
    }
    if (const GpuPreset* preset = catalog->find_gpu(shared.gpu_id)) {
      base.device = preset->device;
      gpu_id = preset->id;
    }
  }
  LinkParameters out;
  out.emplace_back("v", std::to_string(kShareLinkVersion));
  if (!model_id.empty()) out.emplace_back("model", model_id);
  if (!gpu_id.empty()) out.emplace_back("gpu", gpu_id);
  for (const Field& field : fields()) {
    std::string value = format_field(field, shared.config);
    if (include_defaults || value != format_field(field, base)) {
      out.emplace_back(std::string(field.link_key), std::move(value));
    }
  }
  // Nothing differs from share_link_defaults() and no preset is named: a link of v= alone
  // opens default_configuration() instead, so one field is written at its value to keep the
  // configuration this one (fuzz_share_link: "m.window-pattern=" re-encoded as "v=1").
  if (out.size() == 1) {
    const auto first = std::find_if(fields().begin(), fields().end(),
                                    [](const Field& f) { return !is_display_name(f); });
    if (first != fields().end()) {
      out.emplace_back(std::string(first->link_key), format_field(*first, shared.config));
    }
  }
  return out;
}

std::string encode_share_query(const SharedConfig& shared) {
  LinkParameters parameters = share_parameters(shared, false);
  // v= first, then the checksum of the rest (a link cut anywhere after it is detected).
  const LinkParameters configuration(parameters.begin() + 1, parameters.end());
  if (!configuration.empty()) {
    parameters.insert(parameters.begin() + 1, {"c", configuration_checksum(configuration)});
  }
  std::string query;
  for (const auto& [key, value] : parameters) {
    if (!query.empty()) query += '&';
    query += key + "=" + percent_encode(value);
  }
  return query;
}

std::string share_link(const SharedConfig& shared, std::string_view base_url) {
  return std::string(base_url) + "?" + encode_share_query(shared);
}

Expected<SharedConfig> recipe_config(const RecipePreset& recipe) {
  LinkParameters parameters = {
      {"model", recipe.model_id}, {"gpu", recipe.gpu_id}, {"gpus", std::to_string(recipe.gpus)}};
  parameters.insert(parameters.end(), recipe.settings.begin(), recipe.settings.end());
  Expected<SharedConfig> shared =
      apply_share_parameters(SharedConfig{share_link_defaults(), "", ""}, parameters);
  if (!shared) {
    return Error{"recipe " + recipe.id + ": " + shared.error().field, shared.error().message};
  }
  return shared;
}

std::vector<std::string> share_link_differences(const Config& a, const Config& b) {
  std::vector<std::string> keys;
  for (const Field& field : fields()) {
    if (is_display_name(field)) continue;
    if (format_field(field, a) != format_field(field, b)) keys.emplace_back(field.link_key);
  }
  return keys;
}

namespace {

// The configuration as Megatron resolves it (kv_channels 0 is hidden / heads, ...), so an import
// that leaves a derived size out equals the preset that spells it; as given when it does not
// normalize.
Config resolved(const Config& config) {
  Expected<NormalizedConfig> normalized = normalize(config);
  return normalized ? normalized->config : config;
}

// Config `config` matches a preset when putting the preset's section (`section`) in place of
// its own changes no field that `compared` selects (as resolved, with `resolve`).
template <typename Preset, typename Section, typename Compared, typename Resolve>
const Preset* detect_preset(const Config& config, const std::vector<Preset>& presets,
                            Section Config::*section, const Section Preset::*preset_section,
                            Compared compared, Resolve resolve) {
  const Config given = resolve(config);
  for (const Preset& preset : presets) {
    Config candidate = config;
    candidate.*section = preset.*preset_section;
    candidate = resolve(candidate);
    const bool same = std::all_of(fields().begin(), fields().end(), [&](const Field& field) {
      return !compared(field) || format_field(field, given) == format_field(field, candidate);
    });
    if (same) return &preset;
  }
  return nullptr;
}

// The preset's model, as it spells its architecture, with the run settings of `config`.
ModelConfig preset_model_with_run_settings(const ModelConfig& preset, const Config& config) {
  Config out = config;
  out.model = preset;
  for (const Field& field : fields()) {
    if (field.group != FieldGroup::model || is_architecture_field(field, config.model) ||
        is_display_name(field)) {
      continue;
    }
    if (field.kind == FieldKind::real) {
      field.set_real(out, field.get_real(config));
    } else if (field.kind == FieldKind::integer) {
      field.set_int(out, field.get_int(config));
    }
  }
  return out.model;
}

}  // namespace

SharedConfig with_detected_presets(const Config& config) {
  SharedConfig shared{config, "", ""};
  const Expected<PresetCatalog>& catalog = builtin_presets();
  if (!catalog) return shared;
  // The architecture decides the model preset, spelt as the preset spells it; the run's own
  // dropout, padding or position count stay as changes to it (#28 item 6), and the import's
  // name (a Bridge provider class, a checkpoint path) gives way to the preset's.
  const auto architecture = [&](const Field& field) {
    return is_architecture_field(field, config.model);
  };
  if (const ModelPreset* preset = detect_preset(config, catalog->models, &Config::model,
                                                &ModelPreset::model, architecture, resolved)) {
    shared.model_id = preset->id;
    shared.config.model = preset_model_with_run_settings(preset->model, config);
  }
  const auto device = [](const Field& field) {
    return is_device_field(field) && !is_display_name(field);
  };
  const auto as_given = [](const Config& given) { return given; };
  if (const GpuPreset* preset = detect_preset(config, catalog->gpus, &Config::device,
                                              &GpuPreset::device, device, as_given)) {
    shared.gpu_id = preset->id;
    if (shared.config.device.name.empty()) shared.config.device.name = preset->device.name;
  }
  return shared;
}

}  // namespace megamem
