// The argument dump of a Megatron-LM log -> Config, and the log's measurements beside an
// estimate (see megatron_log.hpp). The dump's arguments become flags in
// megatron_dump_flags.cpp.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/megatron_dump_flags.hpp"
#include "megamem/estimate.hpp"
#include "megamem/megatron_log.hpp"

namespace megamem {
namespace {

const LogArgument* find_argument(const MegatronLog& log, std::string_view name) {
  for (const LogArgument& argument : log.arguments) {
    if (argument.name == name) return &argument;
  }
  return nullptr;
}

std::optional<std::int64_t> dumped_integer(const MegatronLog& log, std::string_view name) {
  const LogArgument* argument = find_argument(log, name);
  if (!argument) return std::nullopt;
  const std::string& text = argument->value;
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 15) {
    return std::nullopt;
  }
  return std::stoll(text);
}

// The parameters Megatron counts on (tensor, pipeline) rank (0, 0) for the dump's flags with
// a given padded vocabulary: the estimator's count of that rank (dense + expert).
std::optional<std::int64_t> first_rank_params(formats::DumpedFlags flags, std::int64_t world_size,
                                              std::int64_t padded_vocab) {
  flags.words.push_back("--padded-vocab-size");
  flags.words.push_back(std::to_string(padded_vocab));
  const Expected<MegatronArgs> parsed = formats::parse_dumped_flags(flags, world_size, 0);
  if (!parsed) return std::nullopt;
  const Expected<Estimate> estimated = estimate(parsed->config);
  if (!estimated || estimated->ranks.empty()) return std::nullopt;
  return estimated->ranks[0].dense_params + estimated->ranks[0].expert_params;
}

// A log of a HuggingFace tokenizer prints neither the vocabulary nor padded_vocab_size
// (training.py prints only the parameter count). Rank (0, 0)'s count is affine in the padded
// vocabulary (the embedding, and the output layer when it shares the stage, are [V/TP x h];
// megatron/core/models/common/embeddings/language_model_embedding.py), so two trial
// vocabularies give the line and the logged count gives V. It is used only when V is a
// positive multiple of --make-vocab-size-divisible-by x TP (training.py
// _vocab_size_with_padding) and reproduces the count exactly.
std::optional<std::int64_t> vocabulary_from_parameter_count(const MegatronLog& log,
                                                            const LogParameterCount& count,
                                                            const formats::DumpedFlags& flags,
                                                            std::int64_t world_size) {
  const std::optional<std::int64_t> divisible = dumped_integer(log, "make_vocab_size_divisible_by");
  const std::optional<std::int64_t> tp = dumped_integer(log, "tensor_model_parallel_size");
  if (!divisible || !tp || *divisible < 1 || *tp < 1) return std::nullopt;
  const std::int64_t step = *divisible * *tp;
  const auto low = first_rank_params(flags, world_size, step);
  const auto high = first_rank_params(flags, world_size, 2 * step);
  if (!low || !high || *high <= *low) return std::nullopt;
  const std::int64_t per_step = *high - *low;
  const std::int64_t above = count.params - *low;
  if (above < 0 || above % per_step != 0) return std::nullopt;
  const std::int64_t vocab = step * (1 + above / per_step);
  if (first_rank_params(flags, world_size, vocab) != count.params) return std::nullopt;
  return vocab;
}

// The padded vocabulary solved from rank (0, 0)'s logged count, with the warning that says so.
std::optional<std::int64_t> solved_padded_vocabulary(const MegatronLog& log,
                                                     const formats::DumpedFlags& flags,
                                                     std::int64_t world_size, std::string& note) {
  const auto count = std::find_if(
      log.parameter_counts.begin(), log.parameter_counts.end(),
      [](const LogParameterCount& c) { return c.tensor_rank == 0 && c.pipeline_rank == 0; });
  if (count == log.parameter_counts.end()) return std::nullopt;
  const std::optional<std::int64_t> padded =
      vocabulary_from_parameter_count(log, *count, flags, world_size);
  if (padded) {
    note = "the log prints no vocabulary: padded vocabulary " + std::to_string(*padded) +
           " solved from the parameter count of rank (0, 0) (line " + std::to_string(count->line) +
           "); --vocab-size overrides it";
  }
  return padded;
}

}  // namespace

Expected<LogConfig> log_config(const MegatronLog& log, std::int64_t vocab_size) {
  const std::optional<std::int64_t> world_size = dumped_integer(log, "world_size");
  if (!world_size || *world_size < 1) {
    return Error{"world_size", "the argument dump (line " +
                                   std::to_string(log.arguments_first_line) +
                                   ") has no world_size; is it a Megatron-LM log?"};
  }
  std::vector<formats::DumpedArgument> arguments;
  for (const LogArgument& a : log.arguments) {
    arguments.push_back({a.name, a.value, "argument dump line " + std::to_string(a.line)});
  }
  Expected<formats::DumpedFlags> flags = formats::dumped_arguments_to_flags(arguments);
  if (!flags) return flags.error();
  const std::int64_t vocab = vocab_size > 0 ? vocab_size : log.tokenizer_vocab_size;
  std::string vocab_note;
  if (vocab == 0) {
    std::optional<std::int64_t> padded = dumped_integer(log, "padded_vocab_size");
    if (!padded) padded = solved_padded_vocabulary(log, *flags, *world_size, vocab_note);
    if (padded) {
      flags.value().words.push_back("--padded-vocab-size");
      flags.value().words.push_back(std::to_string(*padded));
    }
  }
  Expected<MegatronArgs> parsed = formats::parse_dumped_flags(*flags, *world_size, vocab);
  if (!parsed) return parsed.error();
  if (!vocab_note.empty()) parsed.value().warnings.push_back(vocab_note);
  LogConfig out;
  out.megatron_flags = formats::command_line_of(flags->words);
  out.args = std::move(*parsed);
  out.unused_arguments = std::move(flags.value().unused);
  const LogArgument* mapping = find_argument(log, "use_tp_pp_dp_mapping");
  out.tp_pp_dp_rank_order = mapping && mapping->value == "True";
  return out;
}

int pipeline_rank_of(std::int64_t global_rank, const ParallelConfig& parallel,
                     bool tp_pp_dp_rank_order) {
  const std::int64_t pp = std::max(parallel.pipeline_parallel, 1);
  const std::int64_t tp_cp =
      std::int64_t{std::max(parallel.tensor_parallel, 1)} * std::max(parallel.context_parallel, 1);
  // megatron/core/parallel_state.py: decoder RankGenerator with ep=1, order 'tp-cp-ep-dp-pp'
  // (pp slowest) or, with use_tp_pp_dp_mapping, 'tp-cp-ep-pp-dp' (pp right after tp and cp).
  if (tp_pp_dp_rank_order) return static_cast<int>((global_rank / tp_cp) % pp);
  const std::int64_t per_stage = std::max<std::int64_t>(parallel.world_size / pp, 1);
  return static_cast<int>(std::min(global_rank / per_stage, pp - 1));
}

Expected<std::vector<RankComparison>> compare_log(const MegatronLog& log, const LogConfig& config,
                                                  const Estimate& estimate) {
  if (log.memory_reports.empty()) {
    return Error{"log",
                 "no \"[Rank N] (after K iterations) memory (MB)\" line (nor Megatron-Bridge's "
                 "\"memory (GB)\") after the argument dump (line " +
                     std::to_string(log.arguments_first_line) +
                     "): the run stopped before its first memory report, which Megatron prints "
                     "after the first --log-interval iterations"};
  }
  const Config& c = config.args.config;
  std::vector<RankComparison> out;
  for (const LogMemoryReport& report : log.memory_reports) {
    if (report.global_rank >= c.parallel.world_size) {
      return Error{"log", "line " + std::to_string(report.line) + ": rank " +
                              std::to_string(report.global_rank) + " is outside world_size " +
                              std::to_string(c.parallel.world_size)};
    }
    RankComparison row{
        .global_rank = report.global_rank,
        .pp_rank = pipeline_rank_of(report.global_rank, c.parallel, config.tp_pp_dp_rank_order),
        .measured = report};
    if (row.pp_rank >= static_cast<int>(estimate.ranks.size())) {
      return Error{"log", "the estimate has no pipeline rank " + std::to_string(row.pp_rank)};
    }
    row.estimated = &estimate.ranks[static_cast<std::size_t>(row.pp_rank)];
    row.estimated_params = row.estimated->dense_params + row.estimated->expert_params;
    const int tp_rank =
        static_cast<int>(report.global_rank % std::max(c.parallel.tensor_parallel, 1));
    for (const LogParameterCount& count : log.parameter_counts) {
      if (count.pipeline_rank == row.pp_rank && count.tensor_rank == tp_rank) {
        row.logged_params = count.params;
      }
    }
    out.push_back(row);
  }
  return out;
}

}  // namespace megamem
