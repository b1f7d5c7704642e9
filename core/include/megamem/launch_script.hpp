// A pasted Megatron-LM launch script -> the arguments of its training command.
//
// People paste what they run: a bash script with comments, backslash continuations, variables
// (`TP=8`, `export PP=4`, `GPT_ARGS="--num-layers 80 ..."`), bash arrays (`MODEL_ARGS=( ... )`,
// `MODEL_ARGS+=( ... )`), and a launcher (`torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py
// ${GPT_ARGS[@]}`). read_launch_script() reads that subset of bash without running anything
// (no I/O): it expands the variables defined in the paste, follows `if` branches whose
// condition is a plain string or number test, and picks the command that passes the most
// Megatron-LM flags. Everything it cannot know (command substitution `$(...)`, variables the
// paste does not define, loops) is a warning naming the line, never an error. A bare list of
// flags (one command, or one flag per line) reads as before.
//
// parse_megatron_launch() is the one front door of the CLI's --megatron-args and the page's
// flags box: the script's arguments go to parse_megatron_words(); the number of GPUs comes
// from the caller, else the launcher (torchrun --nproc_per_node x --nnodes), else the
// caller's default. docs/megatron-flags.md lists the accepted subset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/expected.hpp"
#include "megamem/megatron_args.hpp"

namespace megamem {

struct LaunchScript {
  std::string program;  // the training script, e.g. "pretrain_gpt.py" ("" if none)
  std::vector<std::string> megatron_words;  // its arguments, expanded
  std::vector<int> used_lines;              // 1-based, ascending: the command and what feeds it
  int ignored_lines = 0;  // lines with code (not blank, not only a comment) not used
  std::optional<std::int64_t> world_size;  // the launcher's --nproc_per_node x --nnodes
  std::string allocator_conf;         // PYTORCH_CUDA_ALLOC_CONF as the paste sets it ("" if not)
  std::string nccl_nvls_enable;       // NCCL_NVLS_ENABLE as the paste sets it ("" if not)
  std::vector<std::string> warnings;  // "line 7: ..." for what was not understood
};

// Errors only on what makes the text unreadable (an unterminated quote, a runaway expansion)
// or when no command passes a Megatron-LM flag; each names the line.
Expected<LaunchScript> read_launch_script(std::string_view text);

// "used lines 12-40, 45; ignored 3 lines" (ASCII: the page's font has no en dash).
std::string used_lines_text(const LaunchScript& script);

struct LaunchSizes {
  std::int64_t world_size = 0;          // given by the user: wins over the launcher (0 = none)
  std::int64_t default_world_size = 0;  // when neither the user nor the launcher says (0 = none)
  std::int64_t vocab_size = 0;          // as parse_megatron_args()
};

struct MegatronLaunch {
  MegatronArgs args;
  LaunchScript script;
};

// read_launch_script() then parse_megatron_words() with the world size chosen as above; an
// Error on world_size when nothing says the number of GPUs.
Expected<MegatronLaunch> parse_megatron_launch(std::string_view text, const LaunchSizes& sizes);

}  // namespace megamem
