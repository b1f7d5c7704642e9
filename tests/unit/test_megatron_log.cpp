// Megatron-LM training logs (megatron_log.hpp): the argument dump read back as the Config that
// ran, the memory reports, parameter counts and footprints as printed, messy logs, bad logs.
// Real excerpts name their public source; synthetic logs are written the way
// megatron/training/arguments.py _print_args and megatron/training/utils.py report_memory
// print, from a known configuration, and must read back to it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "megamem/estimate.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/megatron_log.hpp"
#include "megamem/share_link.hpp"
#include "random_megatron_config.hpp"

using namespace megamem;

namespace {

std::string underscored(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::string python_list(const std::vector<std::string>& items, bool quoted) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += (i ? ", " : "") + (quoted ? "'" + items[i] + "'" : items[i]);
  }
  return out + "]";
}

// How the dump prints one flag's destination and value after validate_args.
std::pair<std::string, std::string> dump_entry(const Config& c, const std::string& flag,
                                               const std::vector<std::string>& values) {
  if (values.empty()) {
    if (flag == "disable-bias-linear") return {"add_bias_linear", "False"};
    if (flag.rfind("no-", 0) == 0) return {underscored(flag.substr(3)), "False"};
    return {underscored(flag), "True"};
  }
  const std::string& value = values.front();
  if (flag == "fp8-format") return {"fp8", value};
  if (flag == "microbatch-group-size-per-virtual-pipeline-stage") {
    return {"microbatch_group_size_per_vp_stage", value};
  }
  if (flag == "num-virtual-stages-per-pipeline-rank") {
    return {"virtual_pipeline_model_parallel_size", value};
  }
  if (flag == "attention-backend") return {"attention_backend", "AttnBackend." + value};
  if (flag.find("dtype") != std::string::npos && flag != "moe-router-dtype") {
    const std::string torch = value == "bf16"   ? "bfloat16"
                              : value == "fp16" ? "float16"
                                                : "float32";
    return {underscored(flag), "torch." + torch};
  }
  if (flag == "recompute-modules" || flag == "offload-modules") {
    return {underscored(flag), python_list(values, true)};
  }
  if (flag == "moe-layer-freq" && value.find('[') != std::string::npos) {
    std::vector<std::string> entries;
    for (const std::uint8_t e : c.model.moe_layer_pattern) entries.push_back(std::to_string(e));
    return {"moe_layer_freq", python_list(entries, false)};
  }
  return {underscored(flag), value};
}

// The sorted "name ..... value" entries _print_args writes for config (plus derived values).
std::vector<std::pair<std::string, std::string>> dump_entries(const Config& c) {
  const Expected<std::vector<std::string>> words = split_command_line(to_megatron_args(c));
  REQUIRE(words.has_value());
  std::vector<std::pair<std::string, std::string>> entries = {
      {"world_size", std::to_string(c.parallel.world_size)},
      {"rank", "0"},
      {"params_dtype", "torch.bfloat16"},
      {"vocab_size", "None"},
      {"lr", "0.0003"},
      {"data_path", "['1.0', '/data/my-gpt_text_document']"},
      {"a_derived_value_with_a_name_longer_than_the_dots_x", "7"}};
  for (std::size_t i = 0; i < words->size();) {
    const std::string flag = (*words)[i].substr(2);
    std::vector<std::string> values;
    for (++i; i < words->size() && (*words)[i].rfind("--", 0) != 0; ++i) {
      values.push_back((*words)[i]);
    }
    if (flag != "vocab-size") entries.push_back(dump_entry(c, flag, values));
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    std::string x = a.first, y = b.first;
    for (char& ch : x) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (char& ch : y) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return x < y;
  });
  return entries;
}

// Launcher prefixes, colours and line ends as torchrun, srun and NeMo-Run write them.
std::string messy(const std::string& line, std::size_t index) {
  static const std::vector<std::string> prefixes = {
      "[default0]:", "0: ", "[rank0]:", "[NeMo I 2025-06-01 10:00:00 nemo_logging:381] ", ""};
  std::string out = prefixes[index % prefixes.size()] + line;
  if (index % 7 == 3) out = "\x1b[32m" + out + "\x1b[0m";
  return out + (index % 2 ? "\r\n" : "\n");
}

std::string memory_line(std::int64_t rank, int iteration, double base_mib) {
  return "[Rank " + std::to_string(rank) + "] (after " + std::to_string(iteration) +
         " iterations) memory (MB) | allocated: " + std::to_string(base_mib) +
         " | max allocated: " + std::to_string(base_mib * 3) +
         " | reserved: " + std::to_string(base_mib * 3.5) +
         " | max reserved: " + std::to_string(base_mib * 4);
}

// A whole log of a run of config: start-up lines, the dump, the vocabulary, per-rank
// parameter counts, two rounds of memory reports (the second is the one to keep) and noise.
std::string synthetic_log(const Config& c) {
  std::vector<std::string> lines = {"using world size: " + std::to_string(c.parallel.world_size),
                                    "------------------------ arguments ------------------------"};
  for (const auto& [name, value] : dump_entries(c)) {
    const std::size_t dots = name.size() < 48 ? 48 - name.size() : 0;
    lines.push_back("  " + name + " " + std::string(dots, '.') + " " + value);
  }
  lines.push_back("-------------------- end of arguments ---------------------");
  const std::int64_t multiple =
      std::int64_t{c.model.make_vocab_size_divisible_by} * c.parallel.tensor_parallel;
  const std::int64_t padded = (c.model.vocab_size + multiple - 1) / multiple * multiple;
  lines.push_back(" > padded vocab (size: " + std::to_string(c.model.vocab_size) + ") with " +
                  std::to_string(padded - c.model.vocab_size) +
                  " dummy tokens (new size: " + std::to_string(padded) + ")");
  const std::int64_t per_stage = c.parallel.world_size / c.parallel.pipeline_parallel;
  for (int round = 0; round < 2; ++round) {
    for (int pp = c.parallel.pipeline_parallel - 1; pp >= 0; --pp) {
      lines.push_back("[default3]:NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/IPC");
      lines.push_back(memory_line(pp * per_stage, 10 + 10 * round, 1000.0 * (pp + 1) + round));
    }
  }
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i) text += messy(lines[i], i);
  return text;
}

MegatronLog read(const std::string& text) {
  const Expected<MegatronLog> log = read_megatron_log(text);
  if (!log) FAIL(log.error().field + ": " + log.error().message);
  return *log;
}

Error read_error(const std::string& text) {
  const Expected<MegatronLog> log = read_megatron_log(text);
  REQUIRE_FALSE(log.has_value());
  return log.error();
}

// The minimal dump of a small GPT (for the error cases).
std::string small_log() {
  Config c;
  c.model.num_layers = 4;
  c.model.hidden_size = 512;
  c.model.num_attention_heads = 8;
  c.model.vocab_size = 50257;
  c.training.seq_length = 1024;
  c.training.params_dtype = DType::bf16;
  c.parallel.world_size = 8;
  c.parallel.pipeline_parallel = 2;
  c.parallel.tensor_parallel = 2;
  return synthetic_log(c);
}

}  // namespace

TEST_CASE("a log made from a known configuration reads back to that configuration") {
  testing::RandomMegatronConfig random(20261123);
  for (int i = 0; i < 60; ++i) {
    const Config original = random.next();
    const std::string text = synthetic_log(original);
    INFO("flags: " << to_megatron_args(original));
    const MegatronLog log = read(text);
    const Expected<LogConfig> config = log_config(log);
    if (!config) FAIL(config.error().field + ": " + config.error().message);
    INFO("read back as: " << config->megatron_flags);
    const Config back = testing::with_unexported_fields(config->args.config, original);
    CHECK(share_link_differences(original, back).empty());
    CHECK(config->unused_arguments ==
          std::vector<std::string>{"a_derived_value_with_a_name_longer_than_the_dots_x",
                                   "params_dtype", "rank"});
    REQUIRE(log.memory_reports.size() ==
            static_cast<std::size_t>(original.parallel.pipeline_parallel));
  }
}

TEST_CASE("exported Megatron flags read back to the same configuration") {
  testing::RandomMegatronConfig random(7);
  for (int i = 0; i < 200; ++i) {
    const Config original = random.next();
    const std::string flags = to_megatron_args(original);
    INFO(flags);
    const Expected<MegatronArgs> parsed = parse_megatron_args(flags, original.parallel.world_size);
    REQUIRE(parsed.has_value());
    const Config back = testing::with_unexported_fields(parsed->config, original);
    CHECK(share_link_differences(original, back).empty());
  }
}

TEST_CASE("the last memory report of each rank is kept, in bytes (MB there is MiB)") {
  const MegatronLog log = read(small_log());
  REQUIRE(log.memory_reports.size() == 2);
  CHECK(log.memory_reports[0].global_rank == 0);
  CHECK(log.memory_reports[0].iteration == 20);
  CHECK(log.memory_reports[0].allocated_bytes == 1001ull * 1024 * 1024);
  CHECK(log.memory_reports[1].global_rank == 4);
  CHECK(log.memory_reports[1].max_reserved_bytes == 2001ull * 4 * 1024 * 1024);
  CHECK(log.tokenizer_vocab_size == 50257);
  CHECK(log.padded_vocab_size == 50432);
  // Superseded reports and the noise inside nothing else are notes, not errors.
  CHECK(std::count_if(log.notes.begin(), log.notes.end(), [](const std::string& note) {
          return note.find("earlier memory report") != std::string::npos;
        }) == 2);
}

TEST_CASE("memory reports quoted in NVIDIA/TransformerEngine PR 2043 read as printed") {
  // Source: github.com/NVIDIA/TransformerEngine/pull/2043 (a comment's Megatron-LM output,
  // 2025-08-28): four ranks, printed out of order.
  const std::string excerpt =
      "Theoretical memory footprints: weight and optimizer=5562.32 MB\n"
      "[Rank 1] (after 20 iterations) memory (MB) | allocated: 6351.375 | max allocated: "
      "7974.18994140625 | reserved: 8528.0 | max reserved: 8528.0\n"
      "[Rank 3] (after 20 iterations) memory (MB) | allocated: 6351.375 | max allocated: "
      "7974.18994140625 | reserved: 8528.0 | max reserved: 8528.0\n"
      "[Rank 2] (after 20 iterations) memory (MB) | allocated: 6351.375 | max allocated: "
      "7974.18994140625 | reserved: 8528.0 | max reserved: 8528.0\n"
      "[Rank 0] (after 20 iterations) memory (MB) | allocated: 6351.375 | max allocated: "
      "7974.18994140625 | reserved: 8528.0 | max reserved: 8528.0\n";
  const MegatronLog log = read(small_log() + excerpt);  // small_log's rank 4 stays
  REQUIRE(log.memory_reports.size() == 5);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(log.memory_reports[i].global_rank == static_cast<std::int64_t>(i));
    CHECK(log.memory_reports[i].allocated_bytes == 6'659'899'392ull);  // 6351.375 MiB
    CHECK(log.memory_reports[i].max_allocated_bytes == 8'361'544'192ull);
  }
  CHECK(log.theoretical.weight_and_optimizer_mib == Approx(5562.32));
}

TEST_CASE("a srun-prefixed report and footprint from a LEONARDO run read through the prefix") {
  // Source: a public Python log parser on GitHub quoting a Megatron-LM log from the LEONARDO
  // cluster ("[lrdn0137:0]:" is srun's --label prefix), 2025-03-31.
  const std::string excerpt =
      "[lrdn0137:0]:Theoretical memory footprints: weight and optimizer=9884.48 MB\n"
      "[lrdn0137:0]:[Rank 0] (after 50 iterations) memory (MB) | allocated: 9909.07763671875 | "
      "max allocated: 50277.15625 | reserved: 53386.0 | max reserved: 53386.0\n";
  const MegatronLog log = read(small_log() + excerpt);
  CHECK(log.memory_reports.front().iteration == 50);
  CHECK(log.memory_reports.front().max_reserved_bytes == 53386ull * 1024 * 1024);
  CHECK(log.theoretical.weight_and_optimizer_mib == Approx(9884.48));
}

TEST_CASE("newer report_memory's device usage field and two reports on one line are read") {
  const std::string joined =
      "[Rank 0] (after 5 iterations) memory (MB) | allocated: 10.0 | max allocated: 20.0 | "
      "reserved: 30.0 | max reserved: 40.0 | device usage: 50.0[Rank 2] (after 5 iterations) "
      "memory (MB) | allocated: 11.0 | max allocated: 21.0 | reserved: 31.0 | max reserved: 41.0\n";
  const MegatronLog log = read(small_log() + joined);
  CHECK(log.memory_reports[0].max_reserved_bytes == 40ull * 1024 * 1024);
  CHECK(log.memory_reports[1].global_rank == 2);
}

TEST_CASE("global ranks map to pipeline ranks in Megatron's default order, tp fastest") {
  ParallelConfig p;
  p.world_size = 32;
  p.tensor_parallel = 2;
  p.pipeline_parallel = 4;
  p.context_parallel = 2;
  // 'tp-cp-ep-dp-pp': 8 ranks per stage.
  CHECK(pipeline_rank_of(0, p, false) == 0);
  CHECK(pipeline_rank_of(7, p, false) == 0);
  CHECK(pipeline_rank_of(8, p, false) == 1);
  CHECK(pipeline_rank_of(31, p, false) == 3);
  // --use-tp-pp-dp-mapping, 'tp-cp-ep-pp-dp': the stage changes every TP x CP ranks.
  CHECK(pipeline_rank_of(4, p, true) == 1);
  CHECK(pipeline_rank_of(16, p, true) == 0);
}

TEST_CASE("a log without an argument dump says what is missing") {
  const Error error = read_error("[Rank 0] (after 1 iterations) memory (MB) | allocated: 1.0\n");
  CHECK(error.message.find("argument dump") != std::string::npos);
}

TEST_CASE("a truncated log names the line its argument dump starts on") {
  const std::string text = small_log();
  const Error error = read_error(text.substr(0, text.find("micro_batch_size")));
  CHECK(error.message.find("line 2:") == 0);
  CHECK(error.message.find("cut off") != std::string::npos);
}

TEST_CASE("a run that crashed before the first memory report is a clear error in compare") {
  std::string text = small_log();
  text = text.substr(0, text.find("NCCL INFO"));
  const MegatronLog log = read(text);
  const Expected<LogConfig> config = log_config(log);
  REQUIRE(config.has_value());
  const Expected<Estimate> estimated = estimate(config->args.config);
  REQUIRE(estimated.has_value());
  const auto compared = compare_log(log, *config, *estimated);
  REQUIRE_FALSE(compared.has_value());
  CHECK(compared.error().message.find("stopped before its first memory report") !=
        std::string::npos);
}

TEST_CASE("a memory report cut off mid-line is skipped with a note naming its line") {
  const MegatronLog log = read(small_log() + "[Rank 6] (after 20 iterations) memory (MB) | allo");
  CHECK(log.memory_reports.size() == 2);
  CHECK(std::any_of(log.notes.begin(), log.notes.end(), [](const std::string& note) {
    return note.find("cut off or garbled") != std::string::npos && note.rfind("line ", 0) == 0;
  }));
}

TEST_CASE("a log over the size limit is refused with the limit in the message") {
  const std::string huge(kMaxMegatronLogBytes + 1, 'x');
  const Error error = read_error(huge);
  CHECK(error.message.find("MiB") != std::string::npos);
}

TEST_CASE("compare pairs each printed rank with its pipeline rank and parameter count") {
  std::string text = small_log();
  text += " > number of parameters on (tensor, pipeline) model parallel rank (0, 1): 12345\n";
  const MegatronLog log = read(text);
  const Expected<LogConfig> config = log_config(log);
  REQUIRE(config.has_value());
  const Expected<Estimate> estimated = estimate(config->args.config);
  REQUIRE(estimated.has_value());
  const auto compared = compare_log(log, *config, *estimated);
  REQUIRE(compared.has_value());
  REQUIRE(compared->size() == 2);
  CHECK((*compared)[1].global_rank == 4);
  CHECK((*compared)[1].pp_rank == 1);
  CHECK((*compared)[1].logged_params == 12345);
  CHECK((*compared)[1].estimated == &estimated->ranks[1]);
  CHECK((*compared)[0].logged_params == 0);
}

// Megatron's dump prints every argument, so the defaults of ones it uses only beside another
// (the registry's flag_needs) are there in every log: left out unless that other one is set.
TEST_CASE("dumped arguments Megatron uses only beside another are left out without it") {
  const auto with_dump_lines = [](const std::vector<std::string>& lines) {
    std::string text = small_log();
    const std::size_t end = text.find("-------------------- end of arguments");
    std::string added;
    for (const std::string& line : lines) added += "  " + line + "\n";
    return text.insert(text.rfind('\n', end) + 1, added);
  };
  const std::vector<std::string> defaults = {
      "fp8 ......................................... None",
      "fp8_recipe .................................. tensorwise",
      "recompute_granularity ....................... selective",
      "recompute_method ............................ uniform",
      "recompute_num_layers ........................ 1",
      "cross_entropy_loss_fusion ................... False",
      "cross_entropy_fusion_impl ................... te",
      "optimizer_cpu_offload ....................... False",
      "optimizer_offload_fraction .................. 0.5"};
  const Expected<LogConfig> off = log_config(read(with_dump_lines(defaults)));
  REQUIRE(off.has_value());
  for (const char* flag : {"--recompute-method", "--recompute-num-layers",
                           "--cross-entropy-fusion-impl", "--optimizer-offload-fraction"}) {
    INFO(flag << " in " << off->megatron_flags);
    CHECK(off->megatron_flags.find(flag) == std::string::npos);
  }
  // The recipe without a format still reaches the optimizer config (training.py).
  CHECK(off->megatron_flags.find("--fp8-recipe tensorwise") != std::string::npos);
  CHECK(off->args.config.training.fp8_recipe == Fp8Recipe::none);
  CHECK(off->args.config.optimizer.fp8_recipe == Fp8Recipe::tensorwise);

  std::vector<std::string> fp8 = defaults;
  fp8[0] = "fp8 ......................................... hybrid";
  const Expected<LogConfig> on = log_config(read(with_dump_lines(fp8)));
  REQUIRE(on.has_value());
  CHECK(on->megatron_flags.find("--fp8-format hybrid --fp8-recipe tensorwise") !=
        std::string::npos);
  CHECK(on->args.config.training.fp8_recipe == Fp8Recipe::tensorwise);
}

TEST_CASE("dumped arguments read back to their flags by arguments.py's destinations") {
  // dest= names and store_false flags come from the table generated from arguments.py
  // (megatron_flag_names.cpp): add_bias_linear False is --disable-bias-linear,
  // layernorm_zero_centered_gamma True --apply-layernorm-1p, nccl_ub True --use-nccl-ub (whose
  // memory the estimate does not model), layernorm_epsilon --norm-epsilon.
  std::string text = small_log();
  const std::size_t end = text.find("-------------------- end of arguments");
  text.insert(text.rfind('\n', end) + 1,
              "  add_bias_linear ............................. False\n"
              "  layernorm_zero_centered_gamma ............... True\n"
              "  nccl_ub ..................................... True\n"
              "  layernorm_epsilon ........................... 1e-06\n");
  const Expected<LogConfig> config = log_config(read(text));
  REQUIRE(config.has_value());
  for (const char* flag :
       {"--disable-bias-linear", "--apply-layernorm-1p", "--use-nccl-ub", "--norm-epsilon 1e-06"}) {
    INFO(flag << " in " << config->megatron_flags);
    CHECK(config->megatron_flags.find(flag) != std::string::npos);
  }
  CHECK_FALSE(config->args.config.model.add_bias_linear);
  const std::vector<std::string>& unmodeled = config->args.unmodeled_flags;
  CHECK(std::find(unmodeled.begin(), unmodeled.end(), "--use-nccl-ub") != unmodeled.end());
}
