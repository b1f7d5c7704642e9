// The argument dump of a Megatron-LM log -> Config, and the log's measurements beside an
// estimate (see megatron_log.hpp).
//
// The dump prints vars(args) after megatron/training/arguments.py validate_args: one entry per
// argparse destination, with Python's str() of the value. Each entry is turned back into the
// flag that sets it, so parse_megatron_args() (one home for what a flag means) reads the run:
//   * True/False: a store_true flag "--name" is written when True; a store_false destination
//     ("--no-name", "--disable-name", or a renamed one such as --disable-bias-linear for
//     add_bias_linear) is written when False;
//   * None: left out (argparse's "not given");
//   * ['a', 'b']: the words of an nargs='+' flag (moe_layer_freq keeps its list expression);
//   * torch.bfloat16 and enum reprs (AttnBackend.auto): the flag's choice names.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/megatron_flag_names.hpp"
#include "megamem/megatron_log.hpp"

namespace megamem {
namespace {

// Dump names whose flag is spelt differently (arguments.py dest=...).
constexpr std::pair<std::string_view, std::string_view> kRenamedFlags[] = {
    {"fp8", "fp8-format"},
    {"fp4", "fp4-format"},
    {"microbatch_group_size_per_vp_stage", "microbatch-group-size-per-virtual-pipeline-stage"},
};

// store_false flags whose destination is not the flag's name.
constexpr std::pair<std::string_view, std::string_view> kRenamedFalseFlags[] = {
    {"add_bias_linear", "disable-bias-linear"},
    {"add_position_embedding", "no-position-embedding"},
    {"overlap_p2p_comm", "no-overlap-p2p-communication"},
    {"apply_rope_fusion", "no-rope-fusion"},
};

// Megatron-LM before --fp8-format (2023): --fp8-e4m3 and --fp8-hybrid switches.
constexpr std::pair<std::string_view, std::string_view> kLegacyFp8Flags[] = {
    {"fp8_e4m3", "e4m3"},
    {"fp8_hybrid", "hybrid"},
};

// Values validate_args derives; read directly instead of as flags.
constexpr std::string_view kReadDirectly[] = {
    "world_size",
    "padded_vocab_size",
    "virtual_pipeline_model_parallel_size",
    "num_layers_per_virtual_pipeline_stage",
    "num_virtual_stages_per_pipeline_rank",
};

// Arguments that only mean something when another one has a value; the dump prints their
// defaults regardless, and Megatron ignores them then, so they are left out.
struct Dependency {
  std::string_view name;
  std::string_view needs;
  std::string_view value;  // the needed argument's printed value
};
constexpr Dependency kDependencies[] = {
    {"recompute_method", "recompute_granularity", "full"},
    {"recompute_num_layers", "recompute_granularity", "full"},
    {"recompute_modules", "recompute_granularity", "selective"},
    {"cpu_offloading_num_layers", "cpu_offloading", "True"},
    {"offload_modules", "fine_grained_activation_offloading", "True"},
    {"activation_offload_fraction", "fine_grained_activation_offloading", "True"},
    {"optimizer_offload_fraction", "optimizer_cpu_offload", "True"},
    {"cross_entropy_fusion_impl", "cross_entropy_loss_fusion", "True"},
    {"fp8_recipe", "fp8", "!None"},
};

std::string dashed(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

template <class Table>
std::optional<std::string_view> lookup(const Table& table, std::string_view name) {
  for (const auto& [key, value] : table) {
    if (key == name) return value;
  }
  return std::nullopt;
}

// torch dtypes (arguments.py maps --main-grads-dtype etc. to torch dtypes; fp8 is uint8) and
// enum reprs ("AttnBackend.auto") back to the flag's choice names.
std::string choice_name(const std::string& value) {
  static const std::pair<std::string_view, std::string_view> kDtypes[] = {
      {"torch.float32", "fp32"},
      {"torch.bfloat16", "bf16"},
      {"torch.float16", "fp16"},
      {"torch.uint8", "fp8"}};
  if (const auto name = lookup(kDtypes, value)) return std::string(*name);
  const std::size_t dot = value.find('.');
  const bool is_enum = dot != std::string::npos && dot > 0 && value[0] >= 'A' && value[0] <= 'Z' &&
                       value.find_first_of(" /[(,'\"") == std::string::npos;
  return is_enum ? value.substr(dot + 1) : value;
}

// "['core_attn', 'mlp']" -> {"core_attn", "mlp"}.
std::vector<std::string> list_words(std::string_view value) {
  std::vector<std::string> words;
  std::string current;
  for (const char c : value.substr(1)) {
    if (c == ',' || c == ']') {
      if (!current.empty()) words.push_back(current);
      current.clear();
    } else if (c != ' ' && c != '\'' && c != '"') {
      current += c;
    }
  }
  return words;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
                                              "YZ0123456789-_.,/=:+") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

using Dump = std::map<std::string, const LogArgument*, std::less<>>;

bool dependency_met(const Dump& dump, std::string_view name) {
  for (const Dependency& d : kDependencies) {
    if (d.name != name) continue;
    const auto it = dump.find(d.needs);
    const std::string value = it == dump.end() ? "None" : it->second->value;
    if (d.value == "!None" ? value == "None" : value != d.value) return false;
  }
  return true;
}

// The flag words of one boolean argument; nullopt when no flag sets it.
std::optional<std::vector<std::string>> boolean_flag(std::string_view name, bool value) {
  const std::string flag = dashed(name);
  if (const auto legacy = lookup(kLegacyFp8Flags, name)) {
    if (!value) return std::vector<std::string>{};
    return std::vector<std::string>{"--fp8-format", std::string(*legacy)};
  }
  if (value) {
    if (formats::is_megatron_flag(flag)) return std::vector<std::string>{"--" + flag};
    if (lookup(kRenamedFalseFlags, name)) return std::vector<std::string>{};  // the default
    if (formats::is_megatron_flag("no-" + flag) || formats::is_megatron_flag("disable-" + flag)) {
      return std::vector<std::string>{};  // a store_false flag's default
    }
    return std::nullopt;
  }
  if (const auto renamed = lookup(kRenamedFalseFlags, name)) {
    return std::vector<std::string>{"--" + std::string(*renamed)};
  }
  for (const std::string prefix : {"no-", "disable-"}) {
    if (formats::is_megatron_flag(prefix + flag)) {
      return std::vector<std::string>{"--" + prefix + flag};
    }
  }
  if (formats::is_megatron_flag(flag)) return std::vector<std::string>{};  // store_true unset
  return std::nullopt;
}

// The flag words of one dumped argument; nullopt when it is not a flag's destination.
std::optional<std::vector<std::string>> argument_flag(const Dump& dump, const LogArgument& a) {
  if (a.value == "True" || a.value == "False") return boolean_flag(a.name, a.value == "True");
  const std::string flag = std::string(lookup(kRenamedFlags, a.name).value_or(dashed(a.name)));
  if (!formats::is_megatron_flag(flag)) return std::nullopt;
  if (a.value == "None" || !dependency_met(dump, a.name)) return std::vector<std::string>{};
  std::vector<std::string> words = {"--" + flag};
  if (!a.value.empty() && a.value.front() == '[' && a.name != "moe_layer_freq") {
    const std::vector<std::string> items = list_words(a.value);
    if (items.empty()) return std::vector<std::string>{};  // an empty nargs='+' list
    for (const std::string& item : items) words.push_back(choice_name(item));
  } else {
    words.push_back(choice_name(a.value));
  }
  return words;
}

std::optional<std::int64_t> dumped_integer(const Dump& dump, std::string_view name) {
  const auto it = dump.find(name);
  if (it == dump.end()) return std::nullopt;
  const std::string& text = it->second->value;
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 15) {
    return std::nullopt;
  }
  return std::stoll(text);
}

// Virtual pipeline stages and the layout, from what validate_args derived.
Expected<std::vector<std::string>> pipeline_flags(const Dump& dump) {
  const auto layout = dump.find("pipeline_model_parallel_layout");
  if (layout != dump.end() && layout->second->value != "None") {
    if (layout->second->value.rfind('<', 0) == 0) {
      return Error{"pipeline_model_parallel_layout",
                   "line " + std::to_string(layout->second->line) +
                       ": the dump shows an object, not the layout string; give the run's flags "
                       "with --megatron-args instead"};
    }
    return std::vector<std::string>{};  // the generic path writes the layout flag
  }
  const std::optional<std::int64_t> stages =
      dumped_integer(dump, "virtual_pipeline_model_parallel_size");
  if (stages && *stages > 1) {
    return std::vector<std::string>{"--num-virtual-stages-per-pipeline-rank",
                                    std::to_string(*stages)};
  }
  return std::vector<std::string>{};
}

struct DumpFlags {
  std::vector<std::string> words;
  std::map<std::string, std::size_t> flag_lines;  // flag -> dump line, for errors
  std::vector<std::string> unused;
};

Expected<DumpFlags> dump_flags(const MegatronLog& log, const Dump& dump) {
  DumpFlags out;
  for (const LogArgument& argument : log.arguments) {
    if (std::find(std::begin(kReadDirectly), std::end(kReadDirectly), argument.name) !=
        std::end(kReadDirectly)) {
      continue;
    }
    const std::optional<std::vector<std::string>> words = argument_flag(dump, argument);
    if (!words) {
      out.unused.push_back(argument.name);
      continue;
    }
    if (!words->empty()) out.flag_lines[words->front()] = argument.line;
    out.words.insert(out.words.end(), words->begin(), words->end());
  }
  Expected<std::vector<std::string>> pipeline = pipeline_flags(dump);
  if (!pipeline) return pipeline.error();
  out.words.insert(out.words.end(), pipeline->begin(), pipeline->end());
  return out;
}

}  // namespace

Expected<LogConfig> log_config(const MegatronLog& log, std::int64_t vocab_size) {
  Dump dump;
  for (const LogArgument& argument : log.arguments) dump[argument.name] = &argument;
  const std::optional<std::int64_t> world_size = dumped_integer(dump, "world_size");
  if (!world_size || *world_size < 1) {
    return Error{"world_size", "the argument dump (line " +
                                   std::to_string(log.arguments_first_line) +
                                   ") has no world_size; is it a Megatron-LM log?"};
  }
  Expected<DumpFlags> flags = dump_flags(log, dump);
  if (!flags) return flags.error();
  std::vector<std::string>& words = flags.value().words;
  std::int64_t vocab = vocab_size > 0 ? vocab_size : log.tokenizer_vocab_size;
  if (vocab == 0) {
    if (const auto padded = dumped_integer(dump, "padded_vocab_size")) {
      words.push_back("--padded-vocab-size");
      words.push_back(std::to_string(*padded));
    }
  }
  LogConfig out;
  for (const std::string& word : flags->words) {
    out.megatron_flags += (out.megatron_flags.empty() ? "" : " ") + shell_quote(word);
  }
  Expected<MegatronArgs> parsed = parse_megatron_args(out.megatron_flags, *world_size, vocab);
  if (!parsed) {
    const auto line = flags->flag_lines.find(parsed.error().field);
    if (line == flags->flag_lines.end()) return parsed.error();
    return Error{parsed.error().field, "argument dump line " + std::to_string(line->second) + ": " +
                                           parsed.error().message};
  }
  out.args = std::move(*parsed);
  out.unused_arguments = std::move(flags.value().unused);
  const auto mapping = dump.find("use_tp_pp_dp_mapping");
  out.tp_pp_dp_rank_order = mapping != dump.end() && mapping->second->value == "True";
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
                 "no \"[Rank N] (after K iterations) memory (MB)\" line after the argument dump "
                 "(line " +
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
