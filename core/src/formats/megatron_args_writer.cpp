// Config -> Megatron-LM flags (to_megatron_args), the inverse of parse_megatron_args().
//
// Emits the flags Megatron needs to build the model (layers, hidden size, heads, micro batch)
// and every memory-relevant field that differs from Megatron's default, as the field
// registry (fields.hpp) spells them. Fields without a Megatron flag (runtime overheads,
// moe_imbalance_factor, store_param_remainders, ...) and the world size are left out.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/fields.hpp"
#include "megamem/megatron_args.hpp"

namespace megamem {
namespace {

// Quotes a word for a POSIX shell when it holds anything beyond [A-Za-z0-9_.,:/=+-].
std::string shell_quote(std::string_view word) {
  bool safe = !word.empty();
  for (const char c : word) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '.' || c == ',' || c == ':' || c == '/' || c == '=' ||
                       c == '+' || c == '-';
    if (!plain) safe = false;
  }
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace

std::string to_megatron_args(const Config& config) {
  // Model, parallelism, training, optimizer; each group in the registry's order.
  std::vector<MegatronFlag> flags;
  for (const FieldGroup group :
       {FieldGroup::model, FieldGroup::parallel, FieldGroup::training, FieldGroup::optimizer}) {
    for (const ConfigField& field : config_fields()) {
      if (field.group == group) append_megatron_flags(field, config, flags);
    }
  }
  std::string text;
  for (const MegatronFlag& flag : flags) {
    text += (text.empty() ? "" : " ") + flag.name;
    for (const std::string& value : flag.values) text += " " + shell_quote(value);
  }
  return text;
}

std::string layout_megatron_args(const Config& config) {
  // The planner's search dimensions (planner.hpp), by their Megatron flags.
  static const std::set<std::string, std::less<>> layout_flags = {
      "--tensor-model-parallel-size",
      "--pipeline-model-parallel-size",
      "--num-virtual-stages-per-pipeline-rank",
      "--pipeline-model-parallel-layout",
      "--context-parallel-size",
      "--expert-model-parallel-size",
      "--expert-tensor-parallel-size",
      "--sequence-parallel",
      "--micro-batch-size",
      "--recompute-granularity",
      "--recompute-method",
      "--recompute-num-layers",
      "--recompute-modules",
      "--fine-grained-activation-offloading",
      "--offload-modules",
      "--use-precision-aware-optimizer",
      "--optimizer-cpu-offload",
      "--optimizer-offload-fraction",
  };
  const std::string all = to_megatron_args(config);
  const Expected<std::vector<std::string>> words = split_command_line(all);
  if (!words) return all;  // to_megatron_args quotes what it writes; kept as a safe fallback
  std::string out;
  bool keep = false;
  for (const std::string& word : *words) {
    if (word.rfind("--", 0) == 0) keep = layout_flags.count(word) > 0;
    if (!keep) continue;
    const bool quote = word.find_first_of(" |()*'\"") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + word + "'" : word);
  }
  return out;
}

}  // namespace megamem
