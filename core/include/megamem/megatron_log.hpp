// Megatron-LM training logs -> what the run was and what it measured.
//
// read_megatron_log() takes the text of a training log (stdout of pretrain_gpt.py, as torchrun,
// srun or NeMo-Run wrote it: launcher prefixes such as "[default0]:", "0: " or "[rank3]:",
// timestamps, ANSI colours, CRLF line ends, ranks interleaved) and picks out
//   * the argument dump megatron/training/arguments.py _print_args writes after validate_args
//     ("------------------------ arguments ------------------------", one "  name ..... value"
//     line per argument, "-------------------- end of arguments ---------------------");
//   * " > padded vocab (size: V) with P dummy tokens (new size: N)" (the tokenizer's
//     vocabulary; megatron/training/tokenizer/tokenizer.py _vocab_size_with_padding);
//   * " > number of parameters on (tensor, pipeline) model parallel rank (t, p): N"
//     (megatron/training/training.py get_model);
//   * "Theoretical memory footprints: weight and optimizer=X MB[, activation=Y MB, total=Z MB]"
//     (megatron/training/theoretical_memory_usage.py report_theoretical_memory);
//   * "[Rank N] (after K iterations) memory (MB) | allocated: A | max allocated: B |
//     reserved: C | max reserved: D" (megatron/training/utils.py report_memory; "MB" there is
//     MiB, the values are torch.cuda.memory_allocated() and friends divided by 1024^2);
//   * Megatron-Bridge's "[Rank N] (after K iterations) memory (GB) | mem-allocated-gigabytes: A |
//     ... | mem-max-allocated-gigabytes: B | ... | mem-max-reserved-gigabytes: D | ..."
//     (src/megatron/bridge/training/utils/train_utils.py report_memory; GB = 1e9 bytes), read
//     into the same memory reports.
// When a log holds several runs (a job restarted into the same file), the last argument dump
// and what follows it are read. Of several memory reports of one rank, the last is kept.
// Every line read is listed with its number, so a front end can say which lines were used.
//
// log_config() turns the argument dump back into the Config the run used: each dumped
// argument becomes the Megatron-LM flag(s) it came from (booleans as store_true/store_false
// flags, None left out, lists as nargs='+' words, torch dtypes and enums by name, dump names
// that differ from their flag mapped), and parse_megatron_args() reads them with the world
// size and vocabulary the log gives. compare_log() lays the estimate beside the measurements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/estimate_types.hpp"
#include "megamem/expected.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/share_link.hpp"

namespace megamem {

// One "[Rank N] (after K iterations) memory (MB)" (or Bridge's "memory (GB)") report, in bytes.
struct LogMemoryReport {
  std::int64_t global_rank = 0;
  std::int64_t iteration = 0;
  std::uint64_t allocated_bytes = 0;      // torch.cuda.memory_allocated()
  std::uint64_t max_allocated_bytes = 0;  // torch.cuda.max_memory_allocated()
  std::uint64_t reserved_bytes = 0;       // torch.cuda.memory_reserved()
  std::uint64_t max_reserved_bytes = 0;   // torch.cuda.max_memory_reserved()
  std::size_t line = 0;                   // 1-based line number in the log
  // Megatron-Bridge's "memory (GB)" report (GB = 1e9 bytes, 5 significant digits) rather than
  // Megatron-LM's "memory (MB)" one.
  bool bridge = false;
};

// One "number of parameters on (tensor, pipeline) model parallel rank (t, p): N" line.
struct LogParameterCount {
  int tensor_rank = 0;
  int pipeline_rank = 0;
  std::int64_t params = 0;
  std::size_t line = 0;
};

// One "  name ..... value" line of the argument dump, value as printed.
struct LogArgument {
  std::string name;
  std::string value;
  std::size_t line = 0;
};

// "Theoretical memory footprints: ..." (0 where the line leaves a figure out).
struct LogTheoreticalMemory {
  double weight_and_optimizer_mib = 0.0;
  double activation_mib = 0.0;
  double total_mib = 0.0;
  std::size_t line = 0;  // 0 = not in the log
};

// A line the reader used, and what it took from it.
struct LogLineRead {
  std::size_t line = 0;
  std::string what;  // "argument dump", "memory report of rank 3", ...
};

struct MegatronLog {
  std::vector<LogArgument> arguments;  // the (last) argument dump, in printed order
  std::size_t arguments_first_line = 0;
  std::size_t arguments_last_line = 0;
  std::int64_t tokenizer_vocab_size = 0;  // from "padded vocab (size: V)"; 0 = not printed
  std::int64_t padded_vocab_size = 0;     // "(new size: N)"; 0 = not printed
  std::vector<LogParameterCount> parameter_counts;  // one per (t, p), last one kept
  LogTheoreticalMemory theoretical;
  std::vector<LogMemoryReport> memory_reports;  // the last of each rank, by global rank
  std::vector<LogLineRead> lines_read;          // ranges of the dump count as one entry
  std::vector<std::string> notes;               // lines skipped ("line 812: memory report cut off")
  std::size_t line_count = 0;
};

// The largest log read_megatron_log() takes (a longer paste is an Error saying so).
inline constexpr std::size_t kMaxMegatronLogBytes = std::size_t{64} << 20;

// Reads a training log. Errors: no argument dump, or a dump that never ends (a truncated
// log), naming the line; a log over kMaxMegatronLogBytes.
Expected<MegatronLog> read_megatron_log(std::string_view text);

// The run's configuration, from the argument dump.
struct LogConfig {
  MegatronArgs args;           // the Config and the flags parse_megatron_args() sorted out
  std::string megatron_flags;  // the flags the dump was turned into
  // Dumped values that are not arguments of a flag (derived by validate_args, e.g. rank,
  // data_parallel_size, params_dtype) and so were not used, besides the ones read directly
  // (world_size, padded_vocab_size, virtual_pipeline_model_parallel_size).
  std::vector<std::string> unused_arguments;
  bool tp_pp_dp_rank_order = false;  // --use-tp-pp-dp-mapping
};

// vocab_size: the tokenizer's vocabulary when the log does not print it (0 = from the log:
// the tokenizer's printed size, else padded_vocab_size, else the padded vocabulary that
// reproduces rank (0, 0)'s logged parameter count, with a warning saying so).
Expected<LogConfig> log_config(const MegatronLog& log, std::int64_t vocab_size = 0);

// The pipeline rank of a global rank under Megatron's default rank order 'tp-cp-ep-dp-pp'
// (tp fastest, pp slowest) or, with --use-tp-pp-dp-mapping, 'tp-pp-dp'
// (megatron/core/parallel_state.py initialize_model_parallel, RankGenerator).
int pipeline_rank_of(std::int64_t global_rank, const ParallelConfig& parallel,
                     bool tp_pp_dp_rank_order);

// One printed rank, measured beside estimated.
struct RankComparison {
  std::int64_t global_rank = 0;
  int pp_rank = 0;
  LogMemoryReport measured;
  const RankMemory* estimated = nullptr;  // into the Estimate compare_log() was given
  std::int64_t estimated_params = 0;      // dense + expert parameters of that rank
  std::int64_t logged_params = 0;         // the log's count for (tp 0, this pp rank); 0 = none
};

// Every memory report of the log against the estimate of config (the Estimate must outlive
// the result). Error when the log has no memory report (the run stopped before the first
// --log-interval) or a rank the layout does not have.
Expected<std::vector<RankComparison>> compare_log(const MegatronLog& log, const LogConfig& config,
                                                  const Estimate& estimate);

// A training log beside the estimate of the run it describes: what `megamem compare` prints and
// the page's "paste a training log" box shows, from one call. `ranks` point into `estimate`,
// so a LogComparison is moved, never copied.
struct LogComparison {
  MegatronLog log;
  LogConfig config;
  SharedConfig shared;  // the run's configuration, presets detected (its share link)
  Estimate estimate;
  std::vector<RankComparison> ranks;

  LogComparison() = default;
  LogComparison(LogComparison&&) = default;
  LogComparison& operator=(LogComparison&&) = default;
  LogComparison(const LogComparison&) = delete;
  LogComparison& operator=(const LogComparison&) = delete;
};

struct LogComparisonOptions {
  std::int64_t vocab_size = 0;  // the tokenizer's vocabulary when the log does not print it
  std::string gpu_id;           // a GPU preset for the estimate ("" = the configuration's)
};

// read_megatron_log, log_config, estimate (with timelines) and compare_log in a row; the first
// Error stops it (an unknown GPU preset is an Error of field "gpu").
Expected<LogComparison> compare_megatron_log(std::string_view text,
                                             const LogComparisonOptions& options = {});

// What the comparison leaves out, for a front end to show beside it: flags that change memory
// but are not modeled, and the estimate's own warnings.
std::vector<std::string> log_comparison_warnings(const LogComparison& comparison);

// What the comparison's reading of the log noted without it changing the estimate: the dumped
// values that are no flag of this Megatron-LM version. `megamem compare` prints them as notes
// and the page's log box lists them, from here.
std::vector<std::string> log_comparison_notes(const LogComparison& comparison);

}  // namespace megamem
