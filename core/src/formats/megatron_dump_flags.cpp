// Megatron-LM arguments (destination, printed value) -> flags (see megatron_dump_flags.hpp).
#include "formats/megatron_dump_flags.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/megatron_flag_names.hpp"
#include "megamem/fields.hpp"

namespace megamem::formats {
namespace {

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

std::string dashed(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

// The dump name of a flag ("--fp8-format" -> "fp8"; arguments.py's dest=, from the generated
// table of megatron_flag_names.cpp).
std::string destination_of(std::string_view flag) {
  flag.remove_prefix(std::min<std::size_t>(2, flag.size()));
  for (const RenamedDestination& renamed : renamed_destinations()) {
    if (renamed.flag == flag) return std::string(renamed.destination);
  }
  std::string out(flag);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

// A Megatron flag spelt as `flag` (without "--") that stores into `destination`.
bool flag_sets(const std::string& flag, std::string_view destination) {
  return is_megatron_flag(flag) && destination_of("--" + flag) == destination;
}

// The flag spelt otherwise than `destination` that does `action` to it, or "".
std::string renamed_flag(std::string_view destination, DestinationAction action) {
  for (const RenamedDestination& renamed : renamed_destinations()) {
    if (renamed.destination == destination && renamed.action == action) {
      return std::string(renamed.flag);
    }
  }
  return {};
}

// The flag that sets `destination` false: --no-x or --disable-x, or a renamed store_false.
std::string false_flag(std::string_view destination) {
  const std::string flag = dashed(destination);
  for (const std::string prefix : {"no-", "disable-"}) {
    if (flag_sets(prefix + flag, destination)) return prefix + flag;
  }
  return renamed_flag(destination, DestinationAction::sets_false);
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

using Dump = std::map<std::string, const DumpedArgument*, std::less<>>;

// False for an argument Megatron uses only when another one is given (the registry's
// flag_needs: --recompute-method without full recompute). The dump prints its default
// regardless; Megatron ignores it then, so it is left out. An argument another row reads
// without a condition is kept (--fp8-recipe also reaches the optimizer without a format).
bool dependency_met(const Dump& dump, std::string_view name) {
  bool conditional = false;
  for (const ConfigField& field : config_fields()) {
    if (destination_of(field.flag) != name) continue;
    if (field.flag_needs.empty()) return true;
    conditional = true;
    const auto it = dump.find(destination_of(field.flag_needs));
    const std::string value = it == dump.end() ? "None" : it->second->value;
    const bool met = field.flag_needs_value.empty() ? value != "None" && value != "False"
                                                    : value == field.flag_needs_value;
    if (met) return true;
  }
  return !conditional;
}

// The flag words of one boolean argument; nullopt when no flag sets it.
std::optional<std::vector<std::string>> boolean_flag(std::string_view name, bool value) {
  const std::string flag = dashed(name);
  if (const auto legacy = lookup(kLegacyFp8Flags, name)) {
    if (!value) return std::vector<std::string>{};
    return std::vector<std::string>{"--fp8-format", std::string(*legacy)};
  }
  const std::string unset = false_flag(name);
  if (value) {
    if (formats::is_megatron_flag(flag)) return std::vector<std::string>{"--" + flag};
    const std::string renamed = renamed_flag(name, DestinationAction::sets_true);
    if (!renamed.empty()) return std::vector<std::string>{"--" + renamed};
    if (!unset.empty()) return std::vector<std::string>{};  // a store_false flag's default
    return std::nullopt;
  }
  if (!unset.empty()) return std::vector<std::string>{"--" + unset};
  if (formats::is_megatron_flag(flag)) return std::vector<std::string>{};  // store_true unset
  if (!renamed_flag(name, DestinationAction::sets_true).empty()) return std::vector<std::string>{};
  return std::nullopt;
}

// The flag words of one dumped argument; nullopt when it is not a flag's destination.
std::optional<std::vector<std::string>> argument_flag(const Dump& dump, const DumpedArgument& a) {
  if (a.value == "True" || a.value == "False") return boolean_flag(a.name, a.value == "True");
  std::string flag = dashed(a.name);
  if (!formats::is_megatron_flag(flag)) flag = renamed_flag(a.name, DestinationAction::value);
  if (flag.empty()) return std::nullopt;
  if (a.value == "None" || !dependency_met(dump, a.name)) return std::vector<std::string>{};
  std::vector<std::string> words = {"--" + flag};
  // moe_layer_freq and window_attn_skip_freq (int | list) dump as one list, one flag value.
  const bool layer_list = a.name == "moe_layer_freq" || a.name == "window_attn_skip_freq";
  if (!a.value.empty() && a.value.front() == '[' && !layer_list) {
    const std::vector<std::string> items = list_words(a.value);
    if (items.empty()) return std::vector<std::string>{};  // an empty nargs='+' list
    for (const std::string& item : items) words.push_back(choice_name(item));
  } else {
    words.push_back(choice_name(a.value));
  }
  return words;
}

std::optional<std::int64_t> integer_of(const Dump& dump, std::string_view name) {
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
                   layout->second->source +
                       ": the value is an object, not the layout string; give the run's flags "
                       "with --megatron-args instead"};
    }
    return std::vector<std::string>{};  // the generic path writes the layout flag
  }
  const std::optional<std::int64_t> stages =
      integer_of(dump, "virtual_pipeline_model_parallel_size");
  if (stages && *stages > 1) {
    return std::vector<std::string>{"--num-virtual-stages-per-pipeline-rank",
                                    std::to_string(*stages)};
  }
  return std::vector<std::string>{};
}

}  // namespace

Expected<DumpedFlags> dumped_arguments_to_flags(const std::vector<DumpedArgument>& arguments) {
  Dump dump;
  for (const DumpedArgument& argument : arguments) dump[argument.name] = &argument;
  DumpedFlags out;
  for (const DumpedArgument& argument : arguments) {
    if (std::find(std::begin(kReadDirectly), std::end(kReadDirectly), argument.name) !=
        std::end(kReadDirectly)) {
      continue;
    }
    const std::optional<std::vector<std::string>> words = argument_flag(dump, argument);
    if (!words) {
      out.unused.push_back(argument.name);
      continue;
    }
    if (!words->empty()) out.flag_sources[words->front()] = argument.source;
    out.words.insert(out.words.end(), words->begin(), words->end());
  }
  Expected<std::vector<std::string>> pipeline = pipeline_flags(dump);
  if (!pipeline) return pipeline.error();
  out.words.insert(out.words.end(), pipeline->begin(), pipeline->end());
  return out;
}

std::string command_line_of(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + shell_quote(word);
  return out;
}

Expected<MegatronArgs> parse_dumped_flags(const DumpedFlags& flags, std::int64_t world_size,
                                          std::int64_t vocab_size) {
  Expected<MegatronArgs> parsed =
      parse_megatron_args(command_line_of(flags.words), world_size, vocab_size);
  if (parsed) return parsed;
  const auto source = flags.flag_sources.find(parsed.error().field);
  if (source == flags.flag_sources.end()) return parsed.error();
  return Error{parsed.error().field, source->second + ": " + parsed.error().message};
}

bool is_megatron_destination(const std::string& name) {
  if (std::find(std::begin(kReadDirectly), std::end(kReadDirectly), name) !=
      std::end(kReadDirectly)) {
    return true;
  }
  if (lookup(kLegacyFp8Flags, name)) return true;
  for (const RenamedDestination& renamed : renamed_destinations()) {
    if (renamed.destination == name) return true;
  }
  const std::string flag = dashed(name);
  return is_megatron_flag(flag) || is_megatron_flag("no-" + flag) ||
         is_megatron_flag("disable-" + flag);
}

}  // namespace megamem::formats
