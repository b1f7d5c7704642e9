// The launch-script reader's word expansion (launch_script.hpp): a raw word -> the words bash
// would pass, with the variables the paste defined. Supported: quotes and backslashes, $NAME,
// ${NAME}, ${NAME[@]} / ${NAME[*]} / ${NAME[i]}, ${NAME:-word} / ${NAME-word} / ${NAME:=word} /
// ${NAME:+word}, ${#NAME}, and $((...)) of integers, variables, + - * / % and parentheses.
// Field splitting of unquoted expansions on blanks, as bash does with the default IFS.
// Everything else (command substitution, other ${...} forms, an unset variable) reads as
// empty and adds a warning naming the line.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace megamem::formats {

struct ShellVariable {
  std::vector<std::string> values;  // a scalar is one value
  bool is_array = false;
  std::set<int> lines;                // the assignments that made it, and what fed them
  std::vector<std::string> warnings;  // what was not understood while making it
};
using ShellVariables = std::map<std::string, ShellVariable, std::less<>>;

// What an expansion used: the lines of the variables it read, and its warnings.
struct ExpansionTrace {
  std::set<int> lines;
  std::vector<std::string> warnings;
  std::size_t bytes = 0;  // of the words produced (runaway guard)
};

struct ExpandOptions {
  const ShellVariables& variables;
  int line = 0;       // the word's line, for warnings
  bool split = true;  // field-split unquoted expansions (false in assignments)
};

// The words `raw` expands to (none for an unquoted empty expansion).
std::vector<std::string> expand_word(std::string_view raw, const ExpandOptions& options,
                                     ExpansionTrace& trace);

// The word as one string (an assignment's value: no splitting, words joined by spaces).
std::string expand_to_string(std::string_view raw, const ExpandOptions& options,
                             ExpansionTrace& trace);

}  // namespace megamem::formats
