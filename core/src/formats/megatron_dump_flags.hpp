// Megatron-LM arguments as argparse destinations with Python-printed values -> flags.
//
// Shared by the readers of a training log's argument dump (megatron_log_config.cpp) and of a
// Megatron-Bridge configuration (bridge_config.cpp): both name Megatron's arguments by their
// destination (tensor_model_parallel_size, add_bias_linear, fp8, ...) with values as Python
// prints them (True, None, ['core_attn'], torch.bfloat16, AttnBackend.auto). Each becomes the
// flag(s) that set it, and parse_megatron_args() -- the one home of what a flag means -- reads
// the result:
//   * True/False: a store_true flag "--name" is written when True; a store_false destination
//     ("--no-name", "--disable-name", or a renamed one such as --disable-bias-linear for
//     add_bias_linear) is written when False;
//   * None: left out (argparse's "not given");
//   * ['a', 'b']: the words of an nargs='+' flag (moe_layer_freq keeps its list expression);
//   * torch.bfloat16 and enum reprs (AttnBackend.auto): the flag's choice names;
//   * virtual_pipeline_model_parallel_size (what validate_args derives) as
//     --num-virtual-stages-per-pipeline-rank.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/expected.hpp"
#include "megamem/megatron_args.hpp"

namespace megamem::formats {

struct DumpedArgument {
  std::string name;    // argparse destination, e.g. "tensor_model_parallel_size"
  std::string value;   // as Python prints it
  std::string source;  // where it was read, for errors ("argument dump line 12")
};

struct DumpedFlags {
  std::vector<std::string> words;                   // the flags and their values
  std::map<std::string, std::string> flag_sources;  // flag -> source, for errors
  std::vector<std::string> unused;                  // destinations no flag sets
};

// The flags of the arguments; an Error names the argument's source.
Expected<DumpedFlags> dumped_arguments_to_flags(const std::vector<DumpedArgument>& arguments);

// The words shell-quoted into one command line.
std::string command_line_of(const std::vector<std::string>& words);

// parse_megatron_args() of the flags; an Error on a flag names the source of its argument.
Expected<MegatronArgs> parse_dumped_flags(const DumpedFlags& flags, std::int64_t world_size,
                                          std::int64_t vocab_size);

// The value of a (name, value) table's entry for name, if any.
template <class Table>
std::optional<std::string_view> lookup(const Table& table, std::string_view name) {
  for (const auto& [key, value] : table) {
    if (key == name) return value;
  }
  return std::nullopt;
}

// True when some Megatron-LM flag sets this destination (directly, negated or renamed).
bool is_megatron_destination(const std::string& name);

}  // namespace megamem::formats
