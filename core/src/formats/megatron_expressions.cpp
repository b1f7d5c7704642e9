// Evaluators for the expression languages inside Megatron-LM flag values (see the header).
// Both follow the Python code they mirror, including its quirks, so a value Megatron accepts
// means the same here and a value Megatron rejects is an Error.
#include "formats/megatron_expressions.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace megamem::formats {
namespace {

// Longest list an expression may build: far above any layer count, low enough that a typo
// such as "[0]*99999999999" cannot exhaust memory.
constexpr std::int64_t kMaxPatternLength = 1 << 20;

// Recursive-descent parser for Python expressions over ints and int lists:
//   expr := term ('+' term)*      term := atom ('*' atom)*
//   atom := integer | '[' [expr (',' expr)* [',']] ']' | '(' expr ')'
class PatternParser {
 public:
  PatternParser(std::string_view text, std::string_view field) : text_(text), field_(field) {}

  Expected<PatternValue> parse() {
    std::optional<PatternValue> value = parse_expr();
    if (!error_ && pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    if (error_) return *error_;
    return std::move(*value);
  }

 private:
  using Parse = std::optional<PatternValue> (PatternParser::*)();
  using Combine = std::optional<PatternValue> (PatternParser::*)(PatternValue, PatternValue);

  // operand (op operand)*, folded from the left with `combine` (Python's left associativity).
  std::optional<PatternValue> parse_chain(char op, Parse operand, Combine combine) {
    std::optional<PatternValue> left = (this->*operand)();
    while (left && peek() == op) {
      ++pos_;
      std::optional<PatternValue> right = (this->*operand)();
      if (!right) return std::nullopt;
      left = (this->*combine)(std::move(*left), std::move(*right));
    }
    return left;
  }

  std::optional<PatternValue> parse_expr() {
    return parse_chain('+', &PatternParser::parse_term, &PatternParser::add);
  }

  std::optional<PatternValue> parse_term() {
    return parse_chain('*', &PatternParser::parse_atom, &PatternParser::multiply);
  }

  std::optional<PatternValue> parse_atom() {
    const char c = peek();
    if (c >= '0' && c <= '9') return parse_integer();
    if (c == '[') return parse_list();
    if (c == '(') {
      ++pos_;
      std::optional<PatternValue> inner = parse_expr();
      if (!inner) return std::nullopt;
      if (peek() == ',') {
        // Python makes "(a, b)" a tuple; Megatron's moe_freq_type then rejects it as neither
        // an int nor a list (megatron/core/models/gpt/gpt_layer_specs.py).
        return fail("a tuple is not a list; use [...]");
      }
      if (!expect(')')) return std::nullopt;
      return inner;
    }
    if (c == '\0') return fail("expression ends early");
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  std::optional<PatternValue> parse_integer() {
    std::int64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      value = value * 10 + (text_[pos_] - '0');
      if (value > kMaxPatternLength * 1024) return fail("number too large");
      ++pos_;
    }
    return PatternValue{.is_list = false, .integer = value, .list = {}};
  }

  std::optional<PatternValue> parse_list() {
    ++pos_;  // '['
    PatternValue list{.is_list = true, .integer = 0, .list = {}};
    while (peek() != ']') {
      std::optional<PatternValue> element = parse_expr();
      if (!element) return std::nullopt;
      if (element->is_list) return fail("nested lists are not a layer pattern");
      list.list.push_back(element->integer);
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ']') {
        return fail("expected ',' or ']'");
      }
    }
    ++pos_;  // ']'
    return list;
  }

  std::optional<PatternValue> add(PatternValue left, PatternValue right) {
    if (left.is_list != right.is_list) return fail("cannot add a list and an integer");
    if (!left.is_list) {
      left.integer += right.integer;
      return left;
    }
    if (static_cast<std::int64_t>(left.list.size() + right.list.size()) > kMaxPatternLength) {
      return fail("pattern too long");
    }
    left.list.insert(left.list.end(), right.list.begin(), right.list.end());
    return left;
  }

  std::optional<PatternValue> multiply(PatternValue left, PatternValue right) {
    if (left.is_list && right.is_list) return fail("cannot multiply two lists");
    if (!left.is_list && !right.is_list) {
      if (left.integer != 0 && right.integer > kMaxPatternLength * 1024 / left.integer) {
        return fail("number too large");
      }
      left.integer *= right.integer;
      return left;
    }
    // Python repeats a list n times for list*n and n*list.
    PatternValue& list = left.is_list ? left : right;
    const std::int64_t times = left.is_list ? right.integer : left.integer;
    if (times > 0 && static_cast<std::int64_t>(list.list.size()) * times > kMaxPatternLength) {
      return fail("pattern too long");
    }
    PatternValue repeated{.is_list = true, .integer = 0, .list = {}};
    for (std::int64_t i = 0; i < times; ++i) {
      repeated.list.insert(repeated.list.end(), list.list.begin(), list.list.end());
    }
    return repeated;
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  bool expect(char c) {
    if (peek() == c) {
      ++pos_;
      return true;
    }
    fail(std::string("expected '") + c + "'");
    return false;
  }

  std::nullopt_t fail(std::string message) {
    if (!error_) {
      error_ =
          Error{std::string(field_), "invalid pattern \"" + std::string(text_) + "\": " + message +
                                         " (at character " + std::to_string(pos_ + 1) + ")"};
    }
    return std::nullopt;
  }

  std::string_view text_;
  std::string_view field_;
  std::size_t pos_ = 0;
  std::optional<Error> error_;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads the decimal digits at text[pos...]; returns how many (0 = none).
std::size_t digits_at(const std::string& text, std::size_t pos) {
  std::size_t end = pos;
  while (end < text.size() && is_digit(text[end])) ++end;
  return end - pos;
}

// re.sub(r'\(([^)]+)\)\*(\d+)', group1 * n, text): unrolls "(...)*n" without nesting.
std::optional<std::string> unroll_parentheses(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == '(') {
      const std::size_t close = text.find(')', pos + 1);
      if (close != std::string::npos && close > pos + 1 && close + 1 < text.size() &&
          text[close + 1] == '*') {
        const std::size_t count_digits = digits_at(text, close + 2);
        if (count_digits > 0) {
          if (count_digits > 6) return std::nullopt;
          const int times = std::stoi(text.substr(close + 2, count_digits));
          const std::string body = text.substr(pos + 1, close - pos - 1);
          for (int i = 0; i < times; ++i) out += body;
          pos = close + 2 + count_digits;
          continue;
        }
      }
    }
    out += text[pos];
    ++pos;
  }
  return out;
}

// re.sub(r'(.)\*(\d+)', group1 * n, text): unrolls "x*n".
std::optional<std::string> unroll_characters(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (pos + 1 < text.size() && text[pos] != '\n' && text[pos + 1] == '*') {
      const std::size_t count_digits = digits_at(text, pos + 2);
      if (count_digits > 0) {
        if (count_digits > 6) return std::nullopt;
        const int times = std::stoi(text.substr(pos + 2, count_digits));
        out.append(static_cast<std::size_t>(times), text[pos]);
        pos += 2 + count_digits;
        continue;
      }
    }
    out += text[pos];
    ++pos;
  }
  return out;
}

}  // namespace

Expected<PatternValue> evaluate_pattern_expression(std::string_view text, std::string_view field) {
  // megatron/training/arguments.py, _eval_pattern: only , digits [ ] ( ) + * are allowed
  // (no spaces), so anything else is refused before evaluation.
  for (const char c : text) {
    if (!(is_digit(c) || c == ',' || c == '[' || c == ']' || c == '(' || c == ')' || c == '+' ||
          c == '*')) {
      return Error{std::string(field),
                   "invalid pattern \"" + std::string(text) + "\": only digits and , [ ] ( ) + * " +
                       "are allowed (megatron/training/arguments.py, _eval_pattern)"};
    }
  }
  return PatternParser(text, field).parse();
}

Expected<std::vector<std::string>> expand_pipeline_layout(std::string_view layout,
                                                          std::string_view field) {
  std::string text;
  for (const char c : layout) {
    if (c != ',') text += c;  // "remove purely cosmetic commas"
  }
  std::optional<std::string> expanded = unroll_parentheses(text);
  if (expanded) expanded = unroll_characters(*expanded);
  if (!expanded || expanded->size() > static_cast<std::size_t>(kMaxPatternLength)) {
    return Error{std::string(field), "layout \"" + std::string(layout) + "\" expands too far"};
  }
  std::vector<std::string> stages(1);
  for (const char c : *expanded) {
    if (c == '|') {
      stages.emplace_back();
    } else if (c == 'E' || c == 'L' || c == 't' || c == 'm') {
      stages.back() += c;
    } else {
      return Error{std::string(field),
                   "layout \"" + std::string(layout) + "\": invalid layer character '" +
                       std::string(1, c) +
                       "'; known: E (embedding), L (loss), t (decoder layer), " + "m (MTP layer)"};
    }
  }
  return stages;
}

}  // namespace megamem::formats
