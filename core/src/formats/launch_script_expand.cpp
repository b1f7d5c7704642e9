// Word expansion for the launch-script reader; see launch_script_expand.hpp. The rules are
// bash's "Shell Expansions" (GNU Bash manual 3.5: parameter expansion 3.5.3, arithmetic 3.5.5,
// word splitting 3.5.7), limited to what launch scripts use.
#include "formats/launch_script_expand.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>

#include "formats/launch_script_lex.hpp"

namespace megamem::formats {
namespace {

constexpr std::size_t npos = std::string_view::npos;
constexpr int kMaxDepth = 32;  // ${A:-${B:-...}} nesting

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

// The start of a construct for a warning, at most 40 characters.
std::string excerpt(std::string_view raw) {
  return raw.size() <= 40 ? std::string(raw) : std::string(raw.substr(0, 37)) + "...";
}

std::optional<long long> to_integer(std::string_view text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The words being built: unquoted expansions split on blanks, quotes keep empty words.
struct Fields {
  std::vector<std::string> done;
  std::string current;
  bool started = false;

  void literal(std::string_view text) {
    current.append(text);
    started = true;
  }
  void split(std::string_view text) {
    for (const char c : text) {
      if (!is_blank(c)) {
        literal(std::string_view(&c, 1));
      } else if (started) {
        done.push_back(std::move(current));
        current.clear();
        started = false;
      }
    }
  }
  void next_word() {
    done.push_back(std::move(current));
    current.clear();
    started = true;
  }
};

// A parameter's values; each_word for ${A[@]} (one word per element inside quotes).
struct Values {
  std::vector<std::string> items;
  bool each_word = false;
};

// "${NAME[@]}" alone in quotes gives no word for an empty array (as "$@" does).
bool is_whole_array(std::string_view inner) {
  if (inner.size() < 6 || inner.substr(0, 2) != "${" || inner.substr(inner.size() - 4) != "[@]}") {
    return false;
  }
  const std::string_view name = inner.substr(2, inner.size() - 6);
  return std::all_of(name.begin(), name.end(), is_name_char);
}

struct Walker {
  const ExpandOptions& options;
  ExpansionTrace& trace;
  int depth = 0;
  Fields fields;

  void warn(const std::string& what) {
    const std::string text = "line " + std::to_string(options.line) + ": " + what;
    if (std::find(trace.warnings.begin(), trace.warnings.end(), text) == trace.warnings.end()) {
      trace.warnings.push_back(text);
    }
  }
  const ShellVariable* lookup(std::string_view name);
  std::string nested(std::string_view raw);
  Values select(const ShellVariable* variable, std::string_view index, std::string_view body);
  Values length(std::string_view body);
  Values operation(const Values& values, bool is_set, std::string_view rest, std::string_view body);
  Values parameter(std::string_view body);
  Values arithmetic(std::string_view expression);
  void put(const Values& values, bool quoted);
  std::size_t dollar(std::string_view raw, std::size_t i, bool quoted);
  std::size_t double_quoted(std::string_view raw, std::size_t i);
  std::size_t backtick(std::string_view raw, std::size_t i);
  void walk(std::string_view raw);
};

// A variable of the paste; its lines and warnings join the trace.
const ShellVariable* Walker::lookup(std::string_view name) {
  const auto it = options.variables.find(name);
  if (it == options.variables.end()) return nullptr;
  trace.lines.insert(it->second.lines.begin(), it->second.lines.end());
  for (const std::string& warning : it->second.warnings) {
    if (std::find(trace.warnings.begin(), trace.warnings.end(), warning) == trace.warnings.end()) {
      trace.warnings.push_back(warning);
    }
  }
  return &it->second;
}

// A word inside a ${...} or $((...)), expanded to one string.
std::string Walker::nested(std::string_view raw) {
  if (depth >= kMaxDepth) {
    warn("expansions nested deeper than " + std::to_string(kMaxDepth) + "; read as empty");
    return {};
  }
  const ExpandOptions no_split{
      .variables = options.variables, .line = options.line, .split = false};
  Walker inner{.options = no_split, .trace = trace, .depth = depth + 1, .fields = {}};
  inner.walk(raw);
  if (inner.fields.started) inner.fields.done.push_back(std::move(inner.fields.current));
  return join(inner.fields.done);
}

Values Walker::select(const ShellVariable* variable, std::string_view index,
                      std::string_view body) {
  if (variable == nullptr) return {};
  if (index == "@" || index == "*") return {variable->values, index == "@"};
  const std::optional<long long> element = index.empty() ? 0 : to_integer(index);
  if (!element) {
    warn("${" + excerpt(body) + "}: only [@], [*] and a number index arrays; read as empty");
    return {};
  }
  if (*element < 0 || static_cast<std::size_t>(*element) >= variable->values.size()) return {};
  return {{variable->values[static_cast<std::size_t>(*element)]}};
}

// ${#NAME}: the value's length; ${#NAME[@]}: the array's size.
Values Walker::length(std::string_view body) {
  const bool count = body.size() > 3 && body.substr(body.size() - 3) == "[@]";
  const std::string_view name = count ? body.substr(0, body.size() - 3) : body;
  const ShellVariable* variable = lookup(name);
  if (variable == nullptr) {
    warn("$" + excerpt(name) + " is not set in the paste; read as empty");
    return {{"0"}};
  }
  const std::size_t n = count                      ? variable->values.size()
                        : variable->values.empty() ? 0
                                                   : variable->values[0].size();
  return {{std::to_string(n)}};
}

// The operator after the name: :- - := = :+ + (bash 3.5.3); others are not read.
Values Walker::operation(const Values& values, bool is_set, std::string_view rest,
                         std::string_view body) {
  // `rest` may be empty (`${}`) or a lone ':' (`${X:}`): no operator, nothing after it.
  const bool colon = !rest.empty() && rest[0] == ':';
  const std::size_t op_at = colon ? 1 : 0;
  const char op = rest.size() > op_at ? rest[op_at] : '\0';
  const std::string_view word = rest.size() > op_at ? rest.substr(op_at + 1) : std::string_view();
  const bool is_null = !is_set || (colon && join(values.items).empty());
  if (op == '-' || op == '=') return is_null ? Values{{nested(word)}} : values;
  if (op == '+') return is_null ? Values{} : Values{{nested(word)}};
  warn("${" + excerpt(body) + "} is not supported; read as empty");
  return {};
}

// The inside of ${...}, or the name after a bare $.
Values Walker::parameter(std::string_view body) {
  if (body.size() > 1 && body[0] == '#') return length(body.substr(1));
  std::size_t k = 0;
  if (!body.empty() && is_name_start(body[0])) {
    while (k < body.size() && is_name_char(body[k])) ++k;
  } else if (!body.empty() && (is_digit(body[0]) || std::strchr("@*#?$!-", body[0]) != nullptr)) {
    k = 1;
  }
  const std::string_view name = body.substr(0, k);
  std::string_view rest = body.substr(k);
  std::string_view index;
  if (!rest.empty() && rest[0] == '[') {
    const std::size_t close = rest.find(']');
    index = rest.substr(1, close == npos ? npos : close - 1);
    rest = close == npos ? std::string_view() : rest.substr(close + 1);
  }
  const ShellVariable* variable = name.empty() ? nullptr : lookup(name);
  const Values values = select(variable, index, body);
  if (!rest.empty() || name.empty()) return operation(values, variable != nullptr, rest, body);
  if (variable == nullptr) warn("$" + excerpt(name) + " is not set in the paste; read as empty");
  return values;
}

void Walker::put(const Values& values, bool quoted) {
  if (quoted && values.each_word) {
    for (std::size_t i = 0; i < values.items.size(); ++i) {
      if (i > 0) fields.next_word();
      fields.literal(values.items[i]);
    }
    return;
  }
  const std::string joined = join(values.items);
  if (quoted || !options.split) {
    fields.literal(joined);
  } else {
    fields.split(joined);
  }
}

// $((...)): integers, variables, + - * / % and parentheses, by precedence, left to right.
// Anything else (bash's other operators, overflow, division by zero) is not evaluated.
struct Arithmetic {
  std::string_view text;
  Walker& walker;
  std::size_t i = 0;
  int depth = 0;

  void blanks() {
    while (i < text.size() && is_blank(text[i])) ++i;
  }
  bool at_one_of(const char* ops) {
    blanks();
    return i < text.size() && std::strchr(ops, text[i]) != nullptr;
  }
  std::optional<long long> level(const char* ops, std::optional<long long> (Arithmetic::*next)());
  std::optional<long long> sum();
  std::optional<long long> product();
  std::optional<long long> unary();
  std::optional<long long> operand();
};

// One binary operation of $((...)), or nullopt where bash's result is not a plain integer
// (overflow, division by zero).
std::optional<long long> apply_arithmetic(char op, long long left, long long right) {
  long long out = 0;
  switch (op) {
    case '+':
      if (__builtin_add_overflow(left, right, &out)) return std::nullopt;
      return out;
    case '-':
      if (__builtin_sub_overflow(left, right, &out)) return std::nullopt;
      return out;
    case '*':
      if (__builtin_mul_overflow(left, right, &out)) return std::nullopt;
      return out;
    default:
      if (right == 0 || (left == std::numeric_limits<long long>::min() && right == -1)) {
        return std::nullopt;
      }
      return op == '/' ? left / right : left % right;
  }
}

// One precedence level: operands read by `next`, joined left to right by the operators `ops`.
std::optional<long long> Arithmetic::level(const char* ops,
                                           std::optional<long long> (Arithmetic::*next)()) {
  std::optional<long long> value = (this->*next)();
  while (value && at_one_of(ops)) {
    const char op = text[i++];
    const std::optional<long long> right = (this->*next)();
    if (!right) return std::nullopt;
    value = apply_arithmetic(op, *value, *right);
  }
  return value;
}

std::optional<long long> Arithmetic::sum() { return level("+-", &Arithmetic::product); }

std::optional<long long> Arithmetic::product() { return level("*/%", &Arithmetic::unary); }

std::optional<long long> Arithmetic::unary() {
  if (!at_one_of("+-")) return operand();
  if (++depth > kMaxDepth) return std::nullopt;
  const bool negate = text[i++] == '-';
  const std::optional<long long> value = unary();
  --depth;
  if (!value || (negate && *value == std::numeric_limits<long long>::min())) return std::nullopt;
  return negate ? -*value : *value;
}

// A number (decimal; bash reads a leading 0 as octal, so that is not evaluated), a variable
// of the paste, or a parenthesised sum.
std::optional<long long> Arithmetic::operand() {
  blanks();
  if (i < text.size() && text[i] == '(') {
    if (++depth > kMaxDepth) return std::nullopt;
    ++i;
    const std::optional<long long> value = sum();
    if (!at_one_of(")")) return std::nullopt;
    ++i;
    --depth;
    return value;
  }
  const std::size_t start = i;
  while (i < text.size() && is_name_char(text[i])) ++i;
  const std::string_view token = text.substr(start, i - start);
  if (token.empty()) return std::nullopt;
  if (is_digit(token[0])) {
    if (token.size() > 1 && token[0] == '0') return std::nullopt;
    return to_integer(token);
  }
  const ShellVariable* variable = walker.lookup(token);
  if (variable == nullptr || variable->values.empty()) return std::nullopt;
  return to_integer(variable->values[0]);
}

Values Walker::arithmetic(std::string_view expression) {
  const std::string text = nested(expression);
  Arithmetic parser{.text = text, .walker = *this, .i = 0, .depth = 0};
  const std::optional<long long> value = parser.sum();
  parser.blanks();
  if (!value || parser.i != text.size()) {
    warn("$((" + excerpt(expression) +
         ")) is not integer arithmetic on variables of the paste; read as empty");
    return {};
  }
  return {{std::to_string(*value)}};
}

// A $ at i: $NAME, ${...}, $((...)), $(...), a special parameter, or a plain '$'.
std::size_t Walker::dollar(std::string_view raw, std::size_t i, bool quoted) {
  const char c = i + 1 < raw.size() ? raw[i + 1] : '\0';
  if (c == '(' || c == '{') {
    const std::size_t end = skip_quoted(raw, i + 1);
    const std::size_t stop = end == npos ? raw.size() : end;
    const std::string_view whole = raw.substr(i, stop - i);
    if (c == '{') {
      put(parameter(whole.substr(2, whole.size() - (end == npos ? 2 : 3))), quoted);
    } else if (whole.size() >= 6 && whole.substr(0, 3) == "$((" &&
               whole.substr(whole.size() - 2) == "))") {
      put(arithmetic(whole.substr(3, whole.size() - 5)), quoted);
    } else {
      warn("command substitution " + excerpt(whole) + " is not run; read as empty");
    }
    return stop;
  }
  if (is_name_start(c)) {
    std::size_t k = i + 1;
    while (k < raw.size() && is_name_char(raw[k])) ++k;
    put(parameter(raw.substr(i + 1, k - i - 1)), quoted);
    return k;
  }
  if (c != '\0' && (is_digit(c) || std::strchr("@*#?$!-", c) != nullptr)) {
    put(parameter(raw.substr(i + 1, 1)), quoted);
    return i + 2;
  }
  fields.literal("$");
  return i + 1;
}

// "..." at i: backslash escapes only \" \\ \$ \` and newline; expansions are not split.
std::size_t Walker::double_quoted(std::string_view raw, std::size_t i) {
  const std::size_t end = skip_quoted(raw, i);
  const std::size_t stop = end == npos ? raw.size() : end - 1;
  if (!is_whole_array(raw.substr(i + 1, stop - i - 1))) fields.started = true;
  std::size_t j = i + 1;
  while (j < stop) {
    const char c = raw[j];
    if (c == '\\' && j + 1 < stop && std::strchr("\"\\$`\n", raw[j + 1]) != nullptr) {
      if (raw[j + 1] != '\n') fields.literal(raw.substr(j + 1, 1));
      j += 2;
    } else if (c == '$') {
      j = dollar(raw, j, true);
    } else if (c == '`') {
      j = std::min(backtick(raw, j), stop);
    } else {
      fields.literal(raw.substr(j, 1));
      ++j;
    }
  }
  return end == npos ? raw.size() : end;
}

// A `...` command substitution at i is not run: a warning; returns the index after it.
std::size_t Walker::backtick(std::string_view raw, std::size_t i) {
  const std::size_t end = skip_quoted(raw, i);
  warn("command substitution " + excerpt(raw.substr(i, end == npos ? npos : end - i)) +
       " is not run; read as empty");
  return end == npos ? raw.size() : end;
}

void Walker::walk(std::string_view raw) {
  std::size_t i = 0;
  while (i < raw.size()) {
    const char c = raw[i];
    if (c == '\'') {
      const std::size_t end = skip_quoted(raw, i);
      const std::size_t stop = end == npos ? raw.size() : end - 1;
      fields.literal(raw.substr(i + 1, stop - i - 1));
      i = end == npos ? raw.size() : end;
    } else if (c == '"') {
      i = double_quoted(raw, i);
    } else if (c == '\\') {
      if (i + 1 < raw.size() && raw[i + 1] != '\n') fields.literal(raw.substr(i + 1, 1));
      i += 2;
    } else if (c == '$') {
      i = dollar(raw, i, false);
    } else if (c == '`') {
      i = backtick(raw, i);
    } else {
      fields.literal(raw.substr(i, 1));
      ++i;
    }
  }
}

}  // namespace

std::vector<std::string> expand_word(std::string_view raw, const ExpandOptions& options,
                                     ExpansionTrace& trace) {
  Walker walker{.options = options, .trace = trace, .depth = 0, .fields = {}};
  walker.walk(raw);
  if (walker.fields.started) walker.fields.done.push_back(std::move(walker.fields.current));
  for (const std::string& word : walker.fields.done) trace.bytes += word.size() + sizeof word;
  return std::move(walker.fields.done);
}

std::string expand_to_string(std::string_view raw, const ExpandOptions& options,
                             ExpansionTrace& trace) {
  const ExpandOptions no_split{
      .variables = options.variables, .line = options.line, .split = false};
  return join(expand_word(raw, no_split, trace));
}

}  // namespace megamem::formats
