// The launch-script lexer; see launch_script_lex.hpp. The splitting follows bash's
// "Shell Operation" and "Quoting" rules (the GNU Bash manual, sections 3.1.1 and 3.1.2).
#include "formats/launch_script_lex.hpp"

#include <algorithm>
#include <string>

namespace megamem::formats {
namespace {

constexpr int kMaxNesting = 64;  // quotes inside $( inside "..." ...; real scripts nest 2-3 deep
constexpr std::size_t npos = std::string_view::npos;

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

// "..." from the opening quote at `at`: backslash escapes, nested $( ${ and backticks.
std::size_t skip_double_quoted(std::string_view raw, std::size_t at, int depth) {
  std::size_t j = at + 1;
  while (j < raw.size()) {
    const char c = raw[j];
    if (c == '"') return j + 1;
    if (c == '\\') {
      j += 2;
    } else if (c == '$' && j + 1 < raw.size() && (raw[j + 1] == '(' || raw[j + 1] == '{')) {
      j = skip_quoted(raw, j + 1, depth + 1);
      if (j == npos) return npos;
    } else if (c == '`') {
      j = skip_quoted(raw, j, depth + 1);
      if (j == npos) return npos;
    } else {
      ++j;
    }
  }
  return npos;
}

// `(`...`)` or `{`...`}` from the opening bracket at `at`, quotes inside skipped whole.
std::size_t skip_bracketed(std::string_view raw, std::size_t at, int depth) {
  const char open = raw[at];
  const char close = open == '(' ? ')' : '}';
  int level = 0;
  std::size_t j = at;
  while (j < raw.size()) {
    const char c = raw[j];
    if (c == open) {
      ++level;
    } else if (c == close && --level == 0) {
      return j + 1;
    }
    if (c == '\'' || c == '"' || c == '`') {
      j = skip_quoted(raw, j, depth + 1);
      if (j == npos) return npos;
      continue;
    }
    j += c == '\\' ? 2 : 1;
  }
  return npos;
}

// The lexer's state: the current word and the tokens so far.
struct Lexer {
  std::string_view text;
  LexedScript out;
  std::size_t i = 0;
  int line = 1;
  std::string word;
  int word_line = 0;
  bool in_word = false;
  bool in_array = false;

  void push(TokenKind kind, std::string token_text, int at_line) {
    if (kind != TokenKind::separator || token_text != "\n") out.code_lines.insert(at_line);
    out.tokens.push_back(Token{.kind = kind, .text = std::move(token_text), .line = at_line});
  }
  void end_word() {
    if (in_word) push(TokenKind::word, std::move(word), word_line);
    word.clear();
    in_word = false;
  }
  void append(std::string_view raw) {
    if (!in_word) word_line = line;
    in_word = true;
    word.append(raw);
    line += static_cast<int>(std::count(raw.begin(), raw.end(), '\n'));
  }
  // `n` characters of an operator starting at i; ends the word first.
  void push_operator(TokenKind kind, std::size_t n) {
    end_word();
    push(kind, std::string(text.substr(i, n)), line);
    i += n;
  }
  bool at(std::size_t k, char c) const { return k < text.size() && text[k] == c; }

  Expected<bool> quoted_or_expansion();
  void bracket(char c);
  void redirect();
  void operator_char(char c);
  Expected<LexedScript> run();
};

// A quote, $( ${ or backtick at i: appended whole to the word. False when i starts none.
Expected<bool> Lexer::quoted_or_expansion() {
  const char c = text[i];
  std::size_t start = i;
  if (c == '$' && (at(i + 1, '(') || at(i + 1, '{'))) {
    start = i + 1;
  } else if (c != '\'' && c != '"' && c != '`') {
    return false;
  }
  const std::size_t end = skip_quoted(text, start);
  if (end == npos) {
    return Error{"megatron_args", "line " + std::to_string(line) + ": unterminated " +
                                      std::string(text.substr(i, start - i + 1)) +
                                      " (or nested deeper than " + std::to_string(kMaxNesting) +
                                      ")"};
  }
  append(text.substr(i, end - i));
  i = end;
  return true;
}

// '(' opens an array right after NAME= or NAME+=; inside a word or right after a flag it is
// a Python expression bash would refuse unquoted but people paste (--moe-layer-freq
// ([0]*1+[1]*3)), kept whole in the word; else it is a subshell or function bracket.
void Lexer::bracket(char c) {
  std::string_view name, value;
  bool append_to = false;
  const bool after_flag = !in_word && !out.tokens.empty() &&
                          out.tokens.back().kind == TokenKind::word &&
                          out.tokens.back().text.rfind("--", 0) == 0;
  const bool assignment = in_word && split_assignment(word, &name, &append_to, &value);
  const std::size_t end = c == '(' ? skip_quoted(text, i) : npos;
  if (end != npos && !assignment && (in_word || after_flag)) {
    append(text.substr(i, end - i));
    i = end;
  } else if (c == '(' && !in_array && assignment && value.empty()) {
    push(TokenKind::array_open, std::move(word), word_line);
    word.clear();
    in_word = false;
    in_array = true;
    ++i;
  } else if (c == ')' && in_array) {
    push_operator(TokenKind::array_close, 1);
    in_array = false;
  } else {
    push_operator(TokenKind::separator, 1);
  }
}

// <, >, >>, 2>&1, &>: a file descriptor number before it belongs to the redirect.
void Lexer::redirect() {
  if (in_word &&
      std::all_of(word.begin(), word.end(), [](char d) { return d >= '0' && d <= '9'; })) {
    word.clear();
    in_word = false;
  }
  std::size_t n = 0;
  while (at(i + n, '<') || at(i + n, '>') || at(i + n, '&')) ++n;
  push_operator(TokenKind::redirect, n);
}

void Lexer::operator_char(char c) {
  if (c == '\n') {
    end_word();
    if (!in_array) push(TokenKind::separator, "\n", line);
    ++line;
    ++i;
  } else if (c == '(' || c == ')') {
    bracket(c);
  } else if (c == '<' || c == '>' || (c == '&' && at(i + 1, '>'))) {
    redirect();
  } else {  // ; & |, doubled or not
    push_operator(TokenKind::separator, at(i + 1, c) ? 2 : 1);
  }
}

Expected<LexedScript> Lexer::run() {
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\\' && at(i + 1, '\n')) {
      i += 2;  // line continuation
      ++line;
    } else if (c == '\\' && at(i + 1, '\r') && at(i + 2, '\n')) {
      i += 3;
      ++line;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      end_word();
      ++i;
    } else if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;  // a comment, to the end of the line
    } else if (c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' ||
               c == '>') {
      operator_char(c);
    } else if (c == '\\') {
      append(text.substr(i, 2));
      i += 2;
    } else {
      const Expected<bool> quoted = quoted_or_expansion();
      if (!quoted) return quoted.error();
      if (!*quoted) append(text.substr(i++, 1));
    }
  }
  end_word();
  return std::move(out);
}

}  // namespace

std::size_t skip_quoted(std::string_view raw, std::size_t at, int depth) {
  if (depth > kMaxNesting || at >= raw.size()) return npos;
  switch (raw[at]) {
    case '\'': {
      const std::size_t close = raw.find('\'', at + 1);
      return close == npos ? npos : close + 1;
    }
    case '`': {
      for (std::size_t j = at + 1; j < raw.size(); j += raw[j] == '\\' ? 2 : 1) {
        if (raw[j] == '`') return j + 1;
      }
      return npos;
    }
    case '"':
      return skip_double_quoted(raw, at, depth);
    case '(':
    case '{':
      return skip_bracketed(raw, at, depth);
    default:
      return npos;
  }
}

bool split_assignment(std::string_view raw, std::string_view* name, bool* append,
                      std::string_view* value) {
  if (raw.empty() || !is_name_start(raw[0])) return false;
  std::size_t k = 1;
  while (k < raw.size() && is_name_char(raw[k])) ++k;
  *append = raw.substr(k, 2) == "+=";
  if (!*append && raw.substr(k, 1) != "=") return false;
  *name = raw.substr(0, k);
  *value = raw.substr(k + (*append ? 2 : 1));
  return true;
}

Expected<LexedScript> lex_launch_script(std::string_view text) {
  Lexer lexer;
  lexer.text = text;
  return lexer.run();
}

}  // namespace megamem::formats
