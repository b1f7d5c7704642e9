// The launch-script reader's lexer (launch_script.hpp): text -> words and operators with their
// line numbers, as bash splits them (comments, backslash continuations, quotes spanning lines,
// `$(...)`, `${...}` and backticks kept inside their word, `NAME=(` opening an array).
// Words keep their raw text (quotes included); launch_script_expand.hpp expands them.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/expected.hpp"

namespace megamem::formats {

enum class TokenKind {
  word,         // raw text, quotes and expansions as written
  separator,    // "\n" ";" ";;" "&&" "||" "|" "&" "(" ")"
  array_open,   // text is "NAME=" or "NAME+=" written right before '('
  array_close,  // the ')' of an array
  redirect,     // "<", ">", "2>&" ...: the next word is its target
};

struct Token {
  TokenKind kind = TokenKind::word;
  std::string text;
  int line = 0;  // 1-based line the token starts on
};

struct LexedScript {
  std::vector<Token> tokens;
  std::set<int> code_lines;  // lines holding a token other than a newline
};

// Errors (field "megatron_args") name the line of an unterminated quote or `$(`, or of
// nesting deeper than bash scripts go.
Expected<LexedScript> lex_launch_script(std::string_view text);

// The index just past the end of the quote or expansion starting at `at` in `raw`: a '...' or
// "..." quote, `(`...`)` (at the '('), `{`...`}` (at the '{') or a `...` backtick; npos when
// it does not end. Used again by the expander on words the lexer already checked.
std::size_t skip_quoted(std::string_view raw, std::size_t at, int depth = 0);

// True for NAME=... or NAME+=... (a shell variable assignment); sets the parts.
bool split_assignment(std::string_view raw, std::string_view* name, bool* append,
                      std::string_view* value);

}  // namespace megamem::formats
