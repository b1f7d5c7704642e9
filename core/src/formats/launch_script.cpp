// The launch-script reader (launch_script.hpp): runs the paste's assignments and `if`s in
// order, without running any command, and keeps the command that passes the most Megatron-LM
// flags.
//
// Index:
//   [SECTION] Commands: tokens grouped by separators
//   [SECTION] Interpreter: assignments, if/elif/else/fi, candidate commands
//   [SECTION] The chosen command: program, arguments, launcher's world size
//   [SECTION] read_launch_script, used_lines_text, parse_megatron_launch
#include "megamem/launch_script.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "formats/launch_script_expand.hpp"
#include "formats/launch_script_lex.hpp"
#include "formats/megatron_flag_names.hpp"

namespace megamem {
namespace {

using formats::ExpandOptions;
using formats::ExpansionTrace;
using formats::ShellVariable;
using formats::Token;
using formats::TokenKind;

// A runaway guard: `A+=("${A[@]}" "${A[@]}")` doubles A on every line.
constexpr std::size_t kMaxExpandedBytes = std::size_t{64} << 20;

std::string at_line(int line, const std::string& what) {
  return "line " + std::to_string(line) + ": " + what;
}

// The N of a "line N: ..." warning (after every numbered one when it has none).
int line_of(const std::string& warning) {
  int line = 0;
  if (warning.rfind("line ", 0) != 0) return std::numeric_limits<int>::max();
  std::from_chars(warning.data() + 5, warning.data() + warning.size(), line);
  return line;
}

void add_unique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const std::string& text : from) {
    if (std::find(to.begin(), to.end(), text) == to.end()) to.push_back(text);
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Commands: tokens grouped by separators
// ---------------------------------------------------------------------------------------------

struct Command {
  std::vector<Token> items;  // words, array brackets and redirects
  std::string joined_by;     // the separator before it ("&&", "||", "\n", ...)
  int first_line = 0;
  int last_line = 0;
  std::vector<std::pair<int, int>> merged_spans;  // [first, last] of flag lines merged in
};

bool is_assignment_word(const Token& token) {
  std::string_view name, value;
  bool append = false;
  return token.kind == TokenKind::word &&
         formats::split_assignment(token.text, &name, &append, &value);
}

// A line that starts with a flag continues the command above it when that command was not an
// assignment: people paste one flag per line without backslashes.
bool continues(const Command& previous, const Command& next) {
  if (previous.items.empty() || next.items.empty() || next.joined_by != "\n") return false;
  const Token& first = next.items.front();
  const Token& above = previous.items.front();
  return first.kind == TokenKind::word && first.text.size() > 1 && first.text[0] == '-' &&
         above.kind == TokenKind::word && !is_assignment_word(above);
}

std::vector<Command> group_commands(const std::vector<Token>& tokens) {
  std::vector<Command> commands;
  Command current;
  std::string separator = "\n";
  const auto finish = [&](const std::string& next_separator) {
    if (!current.items.empty()) {
      if (!commands.empty() && continues(commands.back(), current)) {
        Command& previous = commands.back();
        previous.items.insert(previous.items.end(), current.items.begin(), current.items.end());
        previous.merged_spans.emplace_back(current.first_line, current.last_line);
      } else {
        commands.push_back(std::move(current));
      }
    }
    current = Command{};
    separator = next_separator;
  };
  for (const Token& token : tokens) {
    if (token.kind == TokenKind::separator) {
      finish(token.text);
      continue;
    }
    if (current.items.empty()) {
      current.joined_by = separator;
      current.first_line = token.line;
    }
    current.last_line = std::max(current.last_line, token.line);
    current.items.push_back(token);
  }
  finish("\n");
  return commands;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Interpreter: assignments, if/elif/else/fi, candidate commands
// ---------------------------------------------------------------------------------------------

// One `if` being read. An unknown condition reads its first branch (with a warning).
struct Branch {
  bool parent_active = true;
  bool in_condition = true;
  std::optional<bool> condition;  // nullopt: not evaluated
  int condition_line = 0;
  bool taken = false;
  bool active = false;
  std::set<int> lines;  // the if/elif lines that decided it
  std::vector<std::string> warnings;
};

struct Candidate {
  std::vector<std::string> words;
  int line = 0;  // where the command starts
  std::set<int> lines;
  std::vector<std::string> warnings;
  int megatron_flags = 0;
};

// Megatron-LM flags among the words ("--num-layers", "--seq-length=4096").
int count_megatron_flags(const std::vector<std::string>& words) {
  int n = 0;
  for (const std::string& word : words) {
    std::size_t start = 0;  // a quoted "--num-layers 80 --hidden-size 8192" counts its flags
    while (start < word.size()) {
      const std::size_t end = std::min(word.find_first_of(" \t\n", start), word.size());
      const std::string_view piece = std::string_view(word).substr(start, end - start);
      if (piece.size() > 2 && piece.substr(0, 2) == "--" &&
          formats::is_megatron_flag(piece.substr(2, piece.find('=') - 2))) {
        ++n;
      }
      start = end + 1;
    }
  }
  return n;
}

std::optional<long long> integer_of(const std::string& text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// `[ ... ]`, `[[ ... ]]` or `test ...` of strings and integers; nullopt for anything else
// (file tests, patterns, commands).
std::optional<bool> evaluate_test(std::vector<std::string> w) {
  bool negate = false;
  if (!w.empty() && w.front() == "!") {
    negate = true;
    w.erase(w.begin());
  }
  if (w.empty() || (w.front() != "[" && w.front() != "[[" && w.front() != "test")) {
    return std::nullopt;
  }
  if (w.front() != "test" && (w.back() == "]" || w.back() == "]]")) w.pop_back();
  w.erase(w.begin());
  if (!w.empty() && w.front() == "!") {
    negate = !negate;
    w.erase(w.begin());
  }
  std::optional<bool> result;
  if (w.size() == 1) result = !w[0].empty();
  if (w.size() == 2 && (w[0] == "-z" || w[0] == "-n")) result = w[1].empty() == (w[0] == "-z");
  if (w.size() == 3) {
    const std::string& op = w[1];
    const bool pattern = w[2].find_first_of("*?[") != std::string::npos;
    if ((op == "=" || op == "==") && !pattern) result = w[0] == w[2];
    if (op == "!=" && !pattern) result = w[0] != w[2];
    const std::optional<long long> a = integer_of(w[0]), b = integer_of(w[2]);
    if (a && b && op == "-eq") result = *a == *b;
    if (a && b && op == "-ne") result = *a != *b;
    if (a && b && op == "-lt") result = *a < *b;
    if (a && b && op == "-le") result = *a <= *b;
    if (a && b && op == "-gt") result = *a > *b;
    if (a && b && op == "-ge") result = *a >= *b;
  }
  if (result && negate) result = !*result;
  return result;
}

struct Interpreter {
  formats::ShellVariables variables;
  std::vector<Branch> branches;
  std::optional<Candidate> best;
  std::vector<std::string> warnings;  // about the script's structure (loops, sourcing)
  std::size_t expanded_bytes = 0;

  bool active() const {
    return branches.empty() || (branches.back().active && !branches.back().in_condition);
  }
  ExpansionTrace context(const Command& c) const;
  std::vector<std::string> expand(const Token& word, ExpansionTrace& trace, bool split = true);
  void condition(const Command& c, std::size_t k);
  void then_branch();
  std::size_t keyword(const Command& c, std::size_t k);
  std::size_t assign(const Command& c, std::size_t k);
  void store(const std::string& name, bool append, ShellVariable value);
  void command(const Command& c, std::size_t k, ExpansionTrace trace);
  void run(const Command& c);
};

// A trace that starts with the command's lines and the enclosing ifs' lines and warnings.
ExpansionTrace Interpreter::context(const Command& c) const {
  ExpansionTrace trace;
  for (int line = c.first_line; line <= c.last_line; ++line) trace.lines.insert(line);
  for (const auto& [first, last] : c.merged_spans) {
    for (int line = first; line <= last; ++line) trace.lines.insert(line);
  }
  for (const Branch& branch : branches) {
    trace.lines.insert(branch.lines.begin(), branch.lines.end());
    add_unique(trace.warnings, branch.warnings);
  }
  return trace;
}

std::vector<std::string> Interpreter::expand(const Token& word, ExpansionTrace& trace, bool split) {
  const ExpandOptions options{.variables = variables, .line = word.line, .split = split};
  const std::size_t before = trace.bytes;
  std::vector<std::string> words = formats::expand_word(word.text, options, trace);
  expanded_bytes += trace.bytes - before;
  return words;
}

// Three-valued && and || (nullopt: not evaluated); a new line's condition replaces the last.
std::optional<bool> combine(std::optional<bool> a, const std::string& op, std::optional<bool> b) {
  if (op == "&&") {
    if (a == false || b == false) return false;
    return a && b ? std::optional<bool>(true) : std::nullopt;
  }
  if (op == "||") {
    if (a == true || b == true) return true;
    return a && b ? std::optional<bool>(false) : std::nullopt;
  }
  return b;
}

// A condition command from item k: the first of an if/elif, or combined with the one before.
void Interpreter::condition(const Command& c, std::size_t k) {
  Branch& branch = branches.back();
  ExpansionTrace trace = context(c);
  std::vector<std::string> words;
  for (std::size_t i = k; i < c.items.size(); ++i) {
    if (c.items[i].kind != TokenKind::word) continue;
    for (std::string& word : expand(c.items[i], trace)) words.push_back(std::move(word));
  }
  const std::optional<bool> value = evaluate_test(words);
  branch.lines.insert(trace.lines.begin(), trace.lines.end());
  add_unique(branch.warnings, trace.warnings);
  const bool first = c.items[0].text == "if" || c.items[0].text == "elif";
  branch.condition = first ? value : combine(branch.condition, c.joined_by, value);
  if (first) branch.condition_line = c.first_line;
}

// `then`: the branch runs when its condition holds and no branch before it ran; a condition
// not evaluated reads the first branch.
void Interpreter::then_branch() {
  Branch& branch = branches.back();
  branch.in_condition = false;
  if (!branch.condition && branch.parent_active && !branch.taken) {
    branch.warnings.push_back(
        at_line(branch.condition_line, "the condition is not evaluated; its first branch is read"));
  }
  branch.active = branch.parent_active && !branch.taken && branch.condition.value_or(true);
  branch.taken = branch.taken || branch.active;
}

// Control words at item k (if, then, elif, else, fi, do, done, ...); returns the first item
// after them, or the command's size when the rest is a condition or skipped.
std::size_t Interpreter::keyword(const Command& c, std::size_t k) {
  while (k < c.items.size() && c.items[k].kind == TokenKind::word) {
    const std::string& w = c.items[k].text;
    if (w == "if") {
      Branch branch;
      branch.parent_active = active();
      branches.push_back(std::move(branch));
    } else if (w == "elif" && !branches.empty()) {
      branches.back().in_condition = true;
    } else if (w == "then" && !branches.empty()) {
      then_branch();
    } else if (w == "else" && !branches.empty()) {
      Branch& branch = branches.back();
      branch.active = branch.parent_active && !branch.taken;
      branch.taken = true;
    } else if (w == "fi" && !branches.empty()) {
      branches.pop_back();
    } else if (w == "for" || w == "while" || w == "until" || w == "case" || w == "select") {
      add_unique(
          warnings,
          {at_line(c.first_line, "`" + w + "` is not followed; its body is read once, in order")});
      return c.items.size();
    } else if (w != "do" && w != "done" && w != "esac" && w != "{" && w != "}" && w != "!") {
      break;
    }
    ++k;
    if (w == "if" || w == "elif") {
      condition(c, k);
      return c.items.size();
    }
  }
  if (!branches.empty() && branches.back().in_condition && k < c.items.size()) {
    condition(c, k);  // the next part of an if's condition (after && or ||)
    return c.items.size();
  }
  return k;
}

void Interpreter::store(const std::string& name, bool append, ShellVariable value) {
  ShellVariable& variable = variables[name];
  if (!append) {
    variable = std::move(value);
    return;
  }
  variable.values.insert(variable.values.end(), value.values.begin(), value.values.end());
  variable.is_array = variable.is_array || value.is_array;
  variable.lines.insert(value.lines.begin(), value.lines.end());
  add_unique(variable.warnings, value.warnings);
}

// NAME=value, NAME+=value or NAME=( ... ) at item k; returns the item after it.
std::size_t Interpreter::assign(const Command& c, std::size_t k) {
  std::string_view name, value;
  bool append = false;
  formats::split_assignment(c.items[k].text, &name, &append, &value);
  ExpansionTrace trace = context(c);
  ShellVariable variable;
  if (c.items[k].kind == TokenKind::array_open) {
    variable.is_array = true;
    for (++k; k < c.items.size() && c.items[k].kind != TokenKind::array_close; ++k) {
      for (std::string& word : expand(c.items[k], trace))
        variable.values.push_back(std::move(word));
    }
  } else {
    const Token value_token{
        .kind = TokenKind::word, .text = std::string(value), .line = c.items[k].line};
    std::string joined;
    for (const std::string& word : expand(value_token, trace, false)) {
      joined += (joined.empty() ? "" : " ") + word;
    }
    const auto it = variables.find(name);
    if (append && it != variables.end() && !it->second.is_array && !it->second.values.empty()) {
      it->second.values[0] += joined;  // NAME+=text appends to the string
    } else {
      variable.values.push_back(std::move(joined));
    }
  }
  variable.lines = std::move(trace.lines);
  variable.warnings = std::move(trace.warnings);
  store(std::string(name), append, std::move(variable));
  return k + 1;
}

// The words of a command that is not an assignment: a candidate for the Megatron command.
void Interpreter::command(const Command& c, std::size_t k, ExpansionTrace trace) {
  Candidate candidate;
  candidate.line = c.first_line;
  for (; k < c.items.size(); ++k) {
    if (c.items[k].kind == TokenKind::redirect) {
      ++k;  // and its target
      continue;
    }
    if (c.items[k].kind != TokenKind::word) continue;
    for (std::string& word : expand(c.items[k], trace)) candidate.words.push_back(std::move(word));
  }
  candidate.megatron_flags = count_megatron_flags(candidate.words);
  if (candidate.megatron_flags == 0) return;
  if (best && best->megatron_flags > candidate.megatron_flags) return;
  candidate.lines = std::move(trace.lines);
  candidate.warnings = std::move(trace.warnings);
  best = std::move(candidate);
}

void Interpreter::run(const Command& c) {
  std::size_t k = keyword(c, 0);
  if (k >= c.items.size() || !active()) return;
  while (k < c.items.size() &&
         (c.items[k].kind == TokenKind::array_open || is_assignment_word(c.items[k]))) {
    k = assign(c, k);
  }
  if (k >= c.items.size()) return;
  const std::string& first = c.items[k].text;
  if (first == "export" || first == "declare" || first == "local" || first == "readonly" ||
      first == "typeset") {
    for (++k; k < c.items.size();) {
      if (c.items[k].kind == TokenKind::array_open || is_assignment_word(c.items[k])) {
        k = assign(c, k);
      } else {
        ++k;  // an option (-a, -x) or a name exported as it is
      }
    }
    return;
  }
  if (first == "unset") {
    for (++k; k < c.items.size(); ++k) variables.erase(c.items[k].text);
    return;
  }
  if (first == "source" || first == ".") {
    add_unique(warnings, {at_line(c.first_line,
                                  "`" + first + "` is not followed (the paste is read alone)")});
    return;
  }
  command(c, k, context(c));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The chosen command: program, arguments, launcher's world size
// ---------------------------------------------------------------------------------------------

// The value of an option in `--name V` or `--name=V` form among words[0, end), if given (the
// last one, as argparse keeps).
std::optional<std::string> option_value(const std::vector<std::string>& words, std::size_t end,
                                        std::initializer_list<std::string_view> names) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i < end; ++i) {
    for (const std::string_view name : names) {
      if (words[i] == name && i + 1 < end) value = words[i + 1];
      if (words[i].size() > name.size() && words[i].rfind(name, 0) == 0 &&
          words[i][name.size()] == '=') {
        value = words[i].substr(name.size() + 1);
      }
    }
  }
  return value;
}

// torchrun / torch.distributed.launch: --nproc_per_node x --nnodes before the program.
void read_world_size(const std::vector<std::string>& words, std::size_t program, int line,
                     LaunchScript& out) {
  const std::optional<std::string> per_node =
      option_value(words, program, {"--nproc_per_node", "--nproc-per-node"});
  if (!per_node) return;
  const std::optional<std::string> nodes = option_value(words, program, {"--nnodes"});
  const std::optional<long long> gpus = integer_of(*per_node);
  const std::optional<long long> node_count = nodes ? integer_of(*nodes) : 1;
  if (!gpus || !node_count || *gpus < 1 || *node_count < 1 || *gpus > (1 << 20) ||
      *node_count > (1 << 20)) {
    out.warnings.push_back(
        at_line(line, "the launcher's --nproc_per_node " + *per_node +
                          (nodes ? " --nnodes " + *nodes : "") +
                          " is not a number of GPUs; the world size is not taken from it"));
    return;
  }
  out.world_size = *gpus * *node_count;
}

// One argument of the training script. "--num-layers 80 --hidden-size 8192" as one word
// (a quoted "${GPT_ARGS}") would be one argument to argparse, which Megatron refuses; the
// paste clearly meant its flags, so they are read, with a warning.
void add_argument(const std::string& word, int line, LaunchScript& out) {
  const bool several = word.rfind("--", 0) == 0 && word.find_first_of(" \t\n") != std::string::npos;
  if (!several) {
    out.megatron_words.push_back(word);
    return;
  }
  out.warnings.push_back(
      at_line(line, "\"" + word.substr(0, std::min<std::size_t>(word.size(), 30)) +
                        "...\" is one argument in bash (quoted); read as separate flags"));
  std::size_t start = 0;
  while (start < word.size()) {
    const std::size_t end = std::min(word.find_first_of(" \t\n", start), word.size());
    if (end > start) out.megatron_words.push_back(word.substr(start, end - start));
    start = end + 1;
  }
}

LaunchScript chosen_command(const Candidate& best, const std::set<int>& code_lines) {
  LaunchScript out;
  const std::vector<std::string>& words = best.words;
  std::size_t program = words.size();
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].size() > 3 && words[i].compare(words[i].size() - 3, 3, ".py") == 0) {
      program = i;
      break;
    }
  }
  std::size_t first_argument = program + 1;
  if (program == words.size()) {
    first_argument = 0;
    while (first_argument < words.size() && words[first_argument].rfind('-', 0) != 0)
      ++first_argument;
  } else {
    out.program = words[program];
    read_world_size(words, program, best.line, out);
  }
  for (std::size_t i = std::min(first_argument, words.size()); i < words.size(); ++i) {
    add_argument(words[i], best.line, out);
  }
  out.used_lines.assign(best.lines.begin(), best.lines.end());
  for (const int line : code_lines) out.ignored_lines += best.lines.count(line) == 0 ? 1 : 0;
  add_unique(out.warnings, best.warnings);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] read_launch_script, used_lines_text, parse_megatron_launch
// ---------------------------------------------------------------------------------------------

Expected<LaunchScript> read_launch_script(std::string_view text) {
  Expected<formats::LexedScript> lexed = formats::lex_launch_script(text);
  if (!lexed) return lexed.error();
  Interpreter interpreter;
  for (const Command& command : group_commands(lexed->tokens)) {
    interpreter.run(command);
    if (interpreter.expanded_bytes > kMaxExpandedBytes) {
      return Error{"megatron_args", at_line(command.first_line,
                                            "the variables expand to more than " +
                                                std::to_string(kMaxExpandedBytes >> 20) + " MiB")};
    }
  }
  if (!interpreter.best) {
    return Error{"megatron_args",
                 "no command in the paste passes Megatron-LM flags (such as --num-layers)"};
  }
  LaunchScript out = chosen_command(*interpreter.best, lexed->code_lines);
  add_unique(out.warnings, interpreter.warnings);
  const auto conf = interpreter.variables.find("PYTORCH_CUDA_ALLOC_CONF");
  if (conf != interpreter.variables.end() && !conf->second.values.empty()) {
    out.allocator_conf = conf->second.values.front();
  }
  const auto nvls = interpreter.variables.find("NCCL_NVLS_ENABLE");
  if (nvls != interpreter.variables.end() && !nvls->second.values.empty()) {
    out.nccl_nvls_enable = nvls->second.values.front();
  }
  std::stable_sort(
      out.warnings.begin(), out.warnings.end(),
      [](const std::string& a, const std::string& b) { return line_of(a) < line_of(b); });
  return out;
}

std::string used_lines_text(const LaunchScript& script) {
  std::string ranges;
  const std::vector<int>& lines = script.used_lines;
  for (std::size_t i = 0; i < lines.size();) {
    std::size_t j = i;
    while (j + 1 < lines.size() && lines[j + 1] == lines[j] + 1) ++j;
    ranges += (ranges.empty() ? "" : ", ") + std::to_string(lines[i]);
    if (j > i) ranges += "-" + std::to_string(lines[j]);
    i = j + 1;
  }
  const bool one = lines.size() == 1;
  return std::string(one ? "used line " : "used lines ") + ranges + "; ignored " +
         std::to_string(script.ignored_lines) + (script.ignored_lines == 1 ? " line" : " lines");
}

namespace {

// Only a script whose reader warned (code it did not run, variables it could not set) can
// have lost a value that way; in a plain list of flags a missing value is the user's.
bool may_have_lost_values(const LaunchScript& script) {
  return !script.warnings.empty() && (!script.program.empty() || script.used_lines.size() > 1);
}

std::string empty_value_warning(const std::string& flag) {
  return flag +
         " has no value here (its variable comes from code megamem does not run); Megatron's "
         "default is used: give the value";
}

// A flag followed by an empty word: its variable came from code the reader does not run
// (loops, printf -v, command substitution), while Megatron saw the real value. The flag is
// left out, so Megatron's default stands, with a warning, rather than refusing the run.
void drop_empty_values(LaunchScript& script) {
  if (!may_have_lost_values(script)) return;
  std::vector<std::string>& words = script.megatron_words;
  for (std::size_t i = 0; i + 1 < words.size();) {
    const bool empty_value = words[i].rfind("--", 0) == 0 && words[i + 1].empty() &&
                             (i + 2 == words.size() || words[i + 2].rfind("-", 0) == 0);
    if (!empty_value) {
      ++i;
      continue;
    }
    script.warnings.push_back(empty_value_warning(words[i]));
    words.erase(words.begin() + static_cast<std::ptrdiff_t>(i),
                words.begin() + static_cast<std::ptrdiff_t>(i) + 2);
  }
}

// The same for an unquoted empty expansion, which leaves no word at all: the parser then says
// the flag needs a value. Its valueless occurrences are dropped; false if there are none.
bool drop_valueless_flag(LaunchScript& script, const std::string& flag) {
  if (!may_have_lost_values(script)) return false;
  std::vector<std::string>& words = script.megatron_words;
  bool dropped = false;
  for (std::size_t i = 0; i < words.size();) {
    const bool valueless =
        words[i] == flag && (i + 1 == words.size() || words[i + 1].rfind("--", 0) == 0);
    if (!valueless) {
      ++i;
      continue;
    }
    words.erase(words.begin() + static_cast<std::ptrdiff_t>(i));
    dropped = true;
  }
  if (dropped) script.warnings.push_back(empty_value_warning(flag));
  return dropped;
}

// A positive count an option of the command gives (tokens, CP size, GPUs); 0 when absent or
// not one.
long long count_option(const std::vector<std::string>& words, std::string_view name) {
  const std::optional<std::string> text = option_value(words, words.size(), {name});
  const std::optional<long long> value = text ? integer_of(*text) : std::nullopt;
  return value && *value > 0 && *value < (1LL << 31) ? *value : 0;
}

bool has_word(const std::vector<std::string>& words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// slime's train.py (and train_async.py) passes its own defaults to Megatron before
// validate_args (slime/backends/megatron_utils/arguments.py _set_default_megatron_args):
// bf16 unless --fp16, the distributed optimizer (not for Muon), --seq-length 4096 as a
// placeholder. With --use-dynamic-batch-size each micro-batch is packed up to
// --max-tokens-per-gpu tokens per GPU (x CP over the context-parallel group), so that is the
// micro-batch the estimate prices.
void apply_slime_defaults(LaunchScript& script) {
  std::vector<std::string>& words = script.megatron_words;
  const bool slime_program = script.program == "train.py" || script.program == "train_async.py";
  if (!slime_program ||
      !(has_word(words, "--rollout-batch-size") || has_word(words, "--actor-num-gpus-per-node"))) {
    return;
  }
  std::string applied;
  const auto add = [&](std::vector<std::string> flag, const std::string& what) {
    words.insert(words.end(), flag.begin(), flag.end());
    applied += (applied.empty() ? "" : ", ") + what;
  };
  if (!has_word(words, "--bf16") && !has_word(words, "--fp16")) add({"--bf16"}, "--bf16");
  const bool muon = option_value(words, words.size(), {"--optimizer"}) == "muon";
  if (!has_word(words, "--use-distributed-optimizer") && !muon) {
    add({"--use-distributed-optimizer"}, "--use-distributed-optimizer");
  }
  const long long max_tokens = count_option(words, "--max-tokens-per-gpu");
  if (has_word(words, "--use-dynamic-batch-size") && max_tokens > 0) {
    const long long cp = count_option(words, "--context-parallel-size");
    const long long tokens = max_tokens * (cp > 0 ? cp : 1);
    add({"--micro-batch-size", "1", "--seq-length", std::to_string(tokens)},
        "micro-batches of " + std::to_string(tokens) + " packed tokens (--max-tokens-per-gpu)");
  } else if (!has_word(words, "--seq-length")) {
    add({"--seq-length", "4096"}, "--seq-length 4096");
  }
  // The actor's ray placement is the training world: --actor-num-nodes (default 1) x
  // --actor-num-gpus-per-node (slime/utils/arguments.py).
  const long long per_node = count_option(words, "--actor-num-gpus-per-node");
  const long long nodes = count_option(words, "--actor-num-nodes");
  if (!script.world_size && per_node > 0) script.world_size = per_node * (nodes > 0 ? nodes : 1);
  if (applied.empty()) return;
  script.warnings.push_back("slime (" + script.program + ") sets " + applied +
                            " before Megatron reads its arguments "
                            "(slime/backends/megatron_utils/arguments.py)");
}

// A parse error names what the reader could not follow, which is often why.
Error with_script_warnings(Error error, const LaunchScript& script) {
  if (script.warnings.empty()) return error;
  error.message += " (the script reader warned: " + script.warnings.front();
  if (script.warnings.size() > 1) {
    error.message += "; and " + std::to_string(script.warnings.size() - 1) + " more";
  }
  error.message += ")";
  return error;
}

}  // namespace

Expected<MegatronLaunch> parse_megatron_launch(std::string_view text, const LaunchSizes& sizes) {
  Expected<LaunchScript> read = read_launch_script(text);
  if (!read) return read.error();
  LaunchScript& script = read.value();
  drop_empty_values(script);
  apply_slime_defaults(script);
  std::int64_t world_size = sizes.world_size;
  if (world_size > 0 && script.world_size && *script.world_size != world_size) {
    script.warnings.push_back("the launcher runs " + std::to_string(*script.world_size) +
                              " GPUs (--nproc_per_node x --nnodes); the estimate is for the " +
                              std::to_string(world_size) + " given");
  }
  if (world_size == 0) world_size = script.world_size.value_or(sizes.default_world_size);
  if (world_size == 0) {
    return Error{"world_size",
                 "the paste does not say the number of GPUs (torchrun --nproc_per_node and "
                 "--nnodes); give it"};
  }
  Expected<MegatronArgs> args =
      parse_megatron_words(script.megatron_words, world_size, sizes.vocab_size);
  while (!args && args.error().message == "needs a value" &&
         drop_valueless_flag(script, args.error().field)) {
    args = parse_megatron_words(script.megatron_words, world_size, sizes.vocab_size);
  }
  if (!args) return with_script_warnings(args.error(), script);
  MegatronArgs parsed = std::move(args).value();
  // c10/cuda/CUDAAllocatorConfig.cpp reads expandable_segments:True from the environment
  // torchrun passes on (Megatron-Bridge, slime and Pai scripts export it).
  if (script.allocator_conf.find("expandable_segments:True") != std::string::npos ||
      script.allocator_conf.find("expandable_segments:true") != std::string::npos) {
    parsed.config.runtime.expandable_segments = true;
    script.warnings.push_back("PYTORCH_CUDA_ALLOC_CONF=" + script.allocator_conf +
                              ": the allocator's reserve is estimated with expandable segments");
  }
  // NCCL reads NCCL_NVLS_ENABLE from the environment (src/transport/nvls.cc ncclNvlsInit).
  if (script.nccl_nvls_enable == "0") {
    parsed.config.runtime.nccl_nvls = false;
    script.warnings.push_back("NCCL_NVLS_ENABLE=0: NCCL maps no NVLS buffers");
  }
  return MegatronLaunch{.args = std::move(parsed), .script = std::move(script)};
}

}  // namespace megamem
