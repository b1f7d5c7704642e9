// Megatron-LM training log -> MegatronLog (see megatron_log.hpp for the contract).
//
// Index:
//   [SECTION] Line cleaning (CR, ANSI colours) and a small cursor over expected text
//   [SECTION] The printed lines: argument, memory report, parameter count, vocabulary, theory
//   [SECTION] read_megatron_log: one pass over the lines
#include "megamem/megatron_log.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "number_text.hpp"

namespace megamem {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Line cleaning and a cursor
// ---------------------------------------------------------------------------------------------

constexpr double kBytesPerMiB = 1024.0 * 1024.0;
constexpr std::size_t kMaxNotes = 40;

// Drops CR and ANSI escape sequences (ESC [ ... final byte, or ESC and one character).
std::string clean_line(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '\r') continue;
    if (c != '\x1b') {
      out += c;
      continue;
    }
    if (i + 1 < raw.size() && raw[i + 1] == '[') {
      i += 2;
      while (i < raw.size() && !(raw[i] >= '@' && raw[i] <= '~')) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

// Reads expected literals and numbers left to right; any mismatch clears ok.
struct Cursor {
  std::string_view text;
  bool ok = true;

  void expect(std::string_view literal) {
    if (!ok || text.substr(0, literal.size()) != literal) {
      ok = false;
      return;
    }
    text.remove_prefix(literal.size());
  }

  std::int64_t integer() {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (!ok || ec != std::errc() || value < 0) {
      ok = false;
      return 0;
    }
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return value;
  }

  // A non-negative decimal as Python prints floats (1234.5, 1e-05).
  double number() {
    const std::optional<LeadingNumber> number = leading_number(text);
    if (!ok || !number || number->value < 0.0 || number->value > 1e12) {
      ok = false;
      return 0.0;
    }
    text.remove_prefix(number->length);
    return number->value;
  }
};

std::uint64_t mib_to_bytes(double mib) {
  return static_cast<std::uint64_t>(std::llround(mib * kBytesPerMiB));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The printed lines
// ---------------------------------------------------------------------------------------------

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "  name ......... value" (arguments.py _print_args pads name with 48 - len(name) dots, so
// names of 48 characters or more have none: "  name  value"). Launcher prefixes before the
// name are skipped.
std::optional<LogArgument> parse_argument_line(std::string_view line) {
  std::size_t name_end = std::string_view::npos;
  std::size_t value_start = std::string_view::npos;
  if (const std::size_t dots = line.find(" ."); dots != std::string_view::npos) {
    std::size_t after = dots + 1;
    while (after < line.size() && line[after] == '.') ++after;
    if (after < line.size() && line[after] == ' ') {
      name_end = dots;
      value_start = after + 1;
    }
  } else {
    // No dots: the name is an identifier of at least 48 characters followed by two spaces.
    for (std::size_t gap = line.find("  "); gap != std::string_view::npos;
         gap = line.find("  ", gap + 1)) {
      std::size_t start = gap;
      while (start > 0 && is_identifier_char(line[start - 1])) --start;
      if (gap - start >= 48) {
        name_end = gap;
        value_start = gap + 2;
        break;
      }
    }
  }
  if (name_end == std::string_view::npos || name_end == 0) return std::nullopt;
  std::size_t name_start = name_end;
  while (name_start > 0 && is_identifier_char(line[name_start - 1])) --name_start;
  // The name follows the two-space indent (after any launcher prefix).
  if (name_start == name_end || (name_start > 0 && line[name_start - 1] != ' ')) {
    return std::nullopt;
  }
  std::string_view value = line.substr(std::min(value_start, line.size()));
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return LogArgument{std::string(line.substr(name_start, name_end - name_start)),
                     std::string(value), 0};
}

// "[Rank N] (after K iterations) memory (<unit>)", the start both reports share.
void read_report_header(Cursor& c, LogMemoryReport& report, std::string_view unit) {
  c.expect("[Rank ");
  report.global_rank = c.integer();
  c.expect("] (after ");
  report.iteration = c.integer();
  c.expect(" iterations) memory (");
  c.expect(unit);
  c.expect(")");
}

// "[Rank N] (after K iterations) memory (MB) | allocated: A | max allocated: B | reserved: C |
// max reserved: D" (newer versions append "| device usage: E", not needed here).
std::optional<LogMemoryReport> parse_memory_report(std::string_view from_bracket) {
  Cursor c{from_bracket};
  LogMemoryReport report;
  read_report_header(c, report, "MB");
  c.expect(" | allocated: ");
  report.allocated_bytes = mib_to_bytes(c.number());
  c.expect(" | max allocated: ");
  report.max_allocated_bytes = mib_to_bytes(c.number());
  c.expect(" | reserved: ");
  report.reserved_bytes = mib_to_bytes(c.number());
  c.expect(" | max reserved: ");
  report.max_reserved_bytes = mib_to_bytes(c.number());
  if (!c.ok) return std::nullopt;
  return report;
}

// Megatron-Bridge's report: "[Rank N] (after K iterations) memory (GB) | mem-allocated-gigabytes:
// A | mem-active-gigabytes: ... | mem-reserved-gigabytes: C | mem-max-allocated-gigabytes: B |
// ... | mem-max-reserved-gigabytes: D | mem-alloc-retires: R | mem-allocated-count: N"
// (src/megatron/bridge/training/utils/train_utils.py, training_log and report_memory:
// torch.cuda.memory_stats() bytes / 1e9, rounded to 5 significant digits; the keys are
// MEMORY_KEYS there, in any order). The four figures compare reads are required.
std::optional<LogMemoryReport> parse_bridge_memory_report(std::string_view from_bracket) {
  Cursor c{from_bracket};
  LogMemoryReport report;
  read_report_header(c, report, "GB");
  if (!c.ok) return std::nullopt;
  std::string_view fields = c.text;
  // Reports of several ranks can share a line (prints from different processes interleave).
  fields = fields.substr(0, fields.find("[Rank "));
  const std::pair<std::string_view, std::uint64_t LogMemoryReport::*> kKeys[] = {
      {" | mem-allocated-gigabytes: ", &LogMemoryReport::allocated_bytes},
      {" | mem-max-allocated-gigabytes: ", &LogMemoryReport::max_allocated_bytes},
      {" | mem-reserved-gigabytes: ", &LogMemoryReport::reserved_bytes},
      {" | mem-max-reserved-gigabytes: ", &LogMemoryReport::max_reserved_bytes}};
  for (const auto& [key, member] : kKeys) {
    const std::size_t at = fields.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    Cursor value{fields.substr(at + key.size())};
    const double gigabytes = value.number();
    if (!value.ok) return std::nullopt;
    report.*member = static_cast<std::uint64_t>(std::llround(gigabytes * 1e9));
  }
  report.bridge = true;
  return report;
}

// "number of parameters on (tensor, pipeline) model parallel rank (t, p): N".
constexpr std::string_view kParameterCountText =
    "number of parameters on (tensor, pipeline) model parallel rank (";

std::optional<LogParameterCount> parse_parameter_count(std::string_view after_text) {
  Cursor c{after_text};
  LogParameterCount count;
  count.tensor_rank = static_cast<int>(std::min<std::int64_t>(c.integer(), 1 << 30));
  c.expect(", ");
  count.pipeline_rank = static_cast<int>(std::min<std::int64_t>(c.integer(), 1 << 30));
  c.expect("): ");
  count.params = c.integer();
  if (!c.ok) return std::nullopt;
  return count;
}

constexpr std::string_view kPaddedVocabText = "padded vocab (size: ";

// "padded vocab (size: V) with P dummy tokens (new size: N)".
std::optional<std::pair<std::int64_t, std::int64_t>> parse_padded_vocab(std::string_view after) {
  Cursor c{after};
  const std::int64_t vocab = c.integer();
  c.expect(") with ");
  c.integer();
  c.expect(" dummy tokens (new size: ");
  const std::int64_t padded = c.integer();
  if (!c.ok || vocab < 1 || padded < vocab) return std::nullopt;
  return std::pair{vocab, padded};
}

constexpr std::string_view kTheoreticalText =
    "Theoretical memory footprints: weight and optimizer=";

// "weight and optimizer=X MB[, activation=Y MB, total=Z MB]".
std::optional<LogTheoreticalMemory> parse_theoretical(std::string_view after) {
  Cursor c{after};
  LogTheoreticalMemory theory;
  theory.weight_and_optimizer_mib = c.number();
  c.expect(" MB");
  if (!c.ok) return std::nullopt;
  Cursor rest = c;
  rest.expect(", activation=");
  theory.activation_mib = rest.number();
  rest.expect(" MB, total=");
  theory.total_mib = rest.number();
  if (!rest.ok) theory.activation_mib = theory.total_mib = 0.0;
  return theory;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] read_megatron_log
// ---------------------------------------------------------------------------------------------

bool is_dump_start(std::string_view line) {
  return line.find("-- arguments --") != std::string_view::npos;
}

bool is_dump_end(std::string_view line) {
  return line.find("-- end of arguments --") != std::string_view::npos;
}

// What one pass collects; finish() turns it into the MegatronLog.
struct LogReader {
  MegatronLog log;
  std::map<std::int64_t, LogMemoryReport> reports;
  std::map<std::pair<int, int>, LogParameterCount> counts;
  std::size_t vocab_line = 0;
  bool in_dump = false;
  std::size_t notes_dropped = 0;

  void note(std::size_t line, const std::string& text) {
    if (log.notes.size() < kMaxNotes) {
      log.notes.push_back("line " + std::to_string(line) + ": " + text);
    } else {
      ++notes_dropped;
    }
  }

  // A new dump: a run started (again); what came before belongs to an earlier run.
  void start_dump(std::size_t line) {
    if (log.arguments_first_line > 0) {
      note(line, "a new argument dump (the job restarted); the lines before it (from line " +
                     std::to_string(log.arguments_first_line) + ") belong to an earlier run");
    }
    const std::vector<std::string> notes = std::move(log.notes);
    log = MegatronLog{};
    log.notes = notes;
    reports.clear();
    counts.clear();
    vocab_line = 0;
    in_dump = true;
    log.arguments_first_line = line;
  }

  void read_dump_line(std::size_t number, std::string_view line) {
    if (is_dump_end(line)) {
      in_dump = false;
      log.arguments_last_line = number;
      return;
    }
    if (std::optional<LogArgument> argument = parse_argument_line(line)) {
      argument->line = number;
      log.arguments.push_back(std::move(*argument));
    } else if (line.find_first_not_of(" \t") != std::string_view::npos) {
      note(number, "inside the argument dump but not an argument line; skipped");
    }
  }

  void read_memory_reports(std::size_t number, std::string_view line) {
    for (std::size_t at = line.find("[Rank "); at != std::string_view::npos;
         at = line.find("[Rank ", at + 1)) {
      const std::string_view from_bracket = line.substr(at);
      const std::size_t next = from_bracket.find("[Rank ", 1);
      const std::string_view own = from_bracket.substr(0, next);
      std::optional<LogMemoryReport> report;
      if (own.find("memory (MB)") != std::string_view::npos) {
        report = parse_memory_report(from_bracket);
      } else if (own.find("memory (GB)") != std::string_view::npos) {
        report = parse_bridge_memory_report(from_bracket);
      } else {
        continue;
      }
      if (!report) {
        note(number, "a memory report that is cut off or garbled; skipped");
        continue;
      }
      report->line = number;
      const auto [it, inserted] = reports.try_emplace(report->global_rank, *report);
      if (!inserted) {
        note(it->second.line, "an earlier memory report of rank " +
                                  std::to_string(report->global_rank) + "; line " +
                                  std::to_string(number) + " is used");
        it->second = *report;
      }
    }
  }

  void read_other(std::size_t number, std::string_view line) {
    if (const std::size_t at = line.find(kParameterCountText); at != std::string_view::npos) {
      if (auto count = parse_parameter_count(line.substr(at + kParameterCountText.size()))) {
        count->line = number;
        counts[{count->tensor_rank, count->pipeline_rank}] = *count;
      } else {
        note(number, "a parameter count that is cut off; skipped");
      }
    }
    if (const std::size_t at = line.find(kPaddedVocabText); at != std::string_view::npos) {
      if (const auto vocab = parse_padded_vocab(line.substr(at + kPaddedVocabText.size()))) {
        std::tie(log.tokenizer_vocab_size, log.padded_vocab_size) = *vocab;
        vocab_line = number;
      }
    }
    if (const std::size_t at = line.find(kTheoreticalText); at != std::string_view::npos) {
      if (auto theory = parse_theoretical(line.substr(at + kTheoreticalText.size()))) {
        theory->line = number;
        log.theoretical = *theory;
      }
    }
    read_memory_reports(number, line);
  }

  void read_line(std::size_t number, std::string_view raw) {
    const std::string line = clean_line(raw);
    if (is_dump_start(line)) {
      start_dump(number);
    } else if (in_dump) {
      read_dump_line(number, line);
    } else {
      read_other(number, line);
    }
  }

  MegatronLog finish();
};

MegatronLog LogReader::finish() {
  auto& read = log.lines_read;
  read.push_back({log.arguments_first_line,
                  "argument dump to line " + std::to_string(log.arguments_last_line) + " (" +
                      std::to_string(log.arguments.size()) + " arguments)"});
  if (vocab_line > 0) read.push_back({vocab_line, "tokenizer vocabulary and its padding"});
  for (const auto& [key, count] : counts) {
    log.parameter_counts.push_back(count);
    read.push_back({count.line, "parameter count of (tensor, pipeline) rank (" +
                                    std::to_string(key.first) + ", " + std::to_string(key.second) +
                                    ")"});
  }
  if (log.theoretical.line > 0) {
    read.push_back({log.theoretical.line, "Megatron's theoretical memory footprint"});
  }
  for (const auto& [rank, report] : reports) {
    log.memory_reports.push_back(report);
    read.push_back({report.line, "memory report of rank " + std::to_string(rank) + " after " +
                                     std::to_string(report.iteration) + " iterations"});
  }
  std::sort(read.begin(), read.end(),
            [](const LogLineRead& a, const LogLineRead& b) { return a.line < b.line; });
  if (notes_dropped > 0) {
    log.notes.push_back("... and " + std::to_string(notes_dropped) + " more skipped lines");
  }
  return std::move(log);
}

}  // namespace

Expected<MegatronLog> read_megatron_log(std::string_view text) {
  if (text.size() > kMaxMegatronLogBytes) {
    return Error{"log", "is " + std::to_string(text.size() >> 20) +
                            " MiB; megamem reads logs up to " +
                            std::to_string(kMaxMegatronLogBytes >> 20) +
                            " MiB (the argument dump and the first memory reports are near the "
                            "start: keep the first part)"};
  }
  LogReader reader;
  std::size_t number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    reader.read_line(++number, text.substr(start, end - start));
    start = end + 1;
  }
  if (reader.log.arguments_first_line == 0) {
    return Error{"log",
                 "no Megatron-LM argument dump (the \"------------------------ arguments "
                 "------------------------\" block pretrain_gpt.py prints at start-up); it holds "
                 "the configuration the run used"};
  }
  if (reader.in_dump) {
    return Error{"log", "line " + std::to_string(reader.log.arguments_first_line) +
                            ": the argument dump starting here never ends (no \"end of "
                            "arguments\" line): the log is cut off"};
  }
  reader.log.line_count = number;
  return reader.finish();
}

}  // namespace megamem
