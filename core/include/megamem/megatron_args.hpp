// Megatron-LM command lines <-> Config.
//
// parse_megatron_args() reads the flags a Megatron-LM launch script passes to
// pretrain_gpt.py (e.g. "--num-layers 32 --hidden-size 4096 --tensor-model-parallel-size 2
// --moe-layer-freq '([0]*1+[1]*15)'") and returns the Config Megatron would run, with
// Megatron's defaults (megatron/training/arguments.py) for every flag not given. The text is
// split like a POSIX shell (quotes, backslashes, line continuations); `--flag value` and
// `--flag=value` are both accepted, and a flag repeated later wins, as in argparse.
//
// Every flag is sorted into one of four groups:
//   * memory-relevant and modeled: sets a Config field;
//   * memory-relevant but not modeled (Megatron-FSDP, CUDA graphs, FP4, ...): listed in
//     unmodeled_flags so front ends can warn that the estimate ignores them;
//   * a Megatron-LM flag without effect on memory (logging, data, checkpointing, fusions,
//     learning rate, ...): listed in ignored_flags;
//   * not a Megatron-LM flag at all (typo, launcher flag): listed in unknown_flags.
// None of the last three is fatal. A malformed value (missing, not a number, not one of
// Megatron's choices) is an Error naming the flag. Megatron's rules on the values are
// normalize()'s (the rule book, core/src/rules); the parser checks only what a Config cannot
// express (which flags were given together).
//
// to_megatron_args() is the inverse: the flags that reproduce a Config's memory-relevant
// fields. It leaves out flags whose value is Megatron's default, and fields that have no
// Megatron flag (runtime overheads, moe_imbalance_factor, store_param_remainders, ...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/expected.hpp"

namespace megamem {

struct MegatronArgs {
  Config config;
  std::vector<std::string> ignored_flags;    // Megatron flags with no effect on memory
  std::vector<std::string> unmodeled_flags;  // change memory, but megamem does not model them
  std::vector<std::string> unknown_flags;    // not Megatron-LM flags
  // Rules only one Megatron-LM version or launcher enforces, about flags the Config cannot
  // hold (the rule book, normalize(), warns about the rest).
  std::vector<std::string> warnings;
};

// True when `flag` ("--seq-length", "--seq-length=4096") is a flag of Megatron-LM's
// pretraining scripts, modeled or not.
bool is_megatron_lm_flag(std::string_view flag);

// vocab_size: the tokenizer's vocabulary; it overrides --vocab-size and is needed when the
// flags name a tokenizer file instead (0 = take --vocab-size from the flags).
Expected<MegatronArgs> parse_megatron_args(std::string_view command_line, std::int64_t world_size,
                                           std::int64_t vocab_size = 0);

// parse_megatron_args() of words already split (a launch script's expanded arguments,
// launch_script.hpp).
Expected<MegatronArgs> parse_megatron_words(const std::vector<std::string>& words,
                                            std::int64_t world_size, std::int64_t vocab_size = 0);

// Parses a --moe-layer-freq value: an integer N, or a Python list expression such as
// "([0]*3+[1]*58)" or "[1,0,1,0]", into a 0/1 pattern of num_layers entries.
Expected<std::vector<std::uint8_t>> parse_moe_layer_freq(std::string_view value, int num_layers);

// --window-attn-skip-freq's list form (arguments.py moe_freq_type): one entry per layer, 1 a
// sliding-window layer and 0 full attention (transformer/utils.py is_layer_window_attention).
Expected<std::vector<std::uint8_t>> parse_window_attn_pattern(std::string_view value,
                                                              int num_layers);

// Splits a command line like a POSIX shell: whitespace separates words, '...' is literal,
// "..." honours \" \\ \$ \`, a backslash outside quotes escapes the next character, and a
// backslash-newline joins lines. Errors on an unterminated quote.
Expected<std::vector<std::string>> split_command_line(std::string_view command_line);

// The Megatron-LM flags that reproduce config's memory-relevant fields (shell-quoted where
// needed). parse_megatron_args(to_megatron_args(c), c.parallel.world_size) gives back c for
// every field that has a Megatron flag.
std::string to_megatron_args(const Config& config);

// The flags of to_megatron_args(config) that make up a parallel layout and what the planner
// searches with it (TP, PP, VPP or the layout string, CP, EP, ETP, sequence parallelism,
// micro-batch size, recompute, activation and optimizer offload), shell-quoted.
std::string layout_megatron_args(const Config& config);

}  // namespace megamem
