// Megatron-Bridge recipe overrides ("model.tensor_model_parallel_size=4 ...") <-> BridgeNode and
// Config (see bridge_config.hpp). Bridge's launch scripts (scripts/training/run_recipe.py and
// the recipes' CLI) apply Hydra-style dotted overrides onto a recipe's ConfigContainer.
//
// to_bridge_overrides() is written from to_megatron_args() (the one home of which fields a
// configuration exports), each Megatron flag turned into the Bridge field that sets it; the
// parallel layout, batch, recompute and precision fields are always written so a recipe's own
// values for them cannot leak into the run.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/megatron_dump_flags.hpp"
#include "formats/number_text.hpp"
#include "megamem/bridge_config.hpp"
#include "megamem/estimate_types.hpp"
#include "megamem/expected.hpp"
#include "megamem/fields.hpp"
#include "megamem/megatron_args.hpp"

namespace megamem {
namespace {

using formats::lookup;

BridgeNode& child(BridgeNode& map, const std::string& key) {
  for (auto& [name, value] : map.entries) {
    if (name == key) return value;
  }
  map.entries.push_back(BridgeEntry{key, bridge_node(BridgeNode::Kind::map)});
  return map.entries.back().value;
}

// A YAML-like scalar, a quoted string or a [a, b] list.
BridgeNode override_value(std::string_view text) {
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front()) {
    return bridge_scalar(std::string(text.substr(1, text.size() - 2)), true);
  }
  if (text == "null" || text == "None" || text == "~") return BridgeNode{};
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    BridgeNode list = bridge_node(BridgeNode::Kind::sequence);
    std::string item;
    for (const char c : text.substr(1, text.size() - 2)) {
      if (c == ',') {
        if (!item.empty()) list.items.push_back(override_value(item));
        item.clear();
      } else if (c != ' ') {
        item += c;
      }
    }
    if (!item.empty()) list.items.push_back(override_value(item));
    return list;
  }
  return bridge_scalar(std::string(text), false);
}

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t start = 0;
  while (start < text.size()) {
    while (start < text.size() && (text[start] == ' ' || text[start] == '\n' ||
                                   text[start] == '\t' || text[start] == '\r')) {
      ++start;
    }
    std::size_t end = start;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n' && text[end] != '\t' &&
           text[end] != '\r') {
      ++end;
    }
    if (end > start) words.push_back(text.substr(start, end - start));
    start = end;
  }
  return words;
}

// Megatron flag (without "--") -> Bridge field, where it is not model.<destination>: the
// registry row's bridge_field.
std::optional<std::string_view> bridge_field_of(std::string_view flag) {
  for (const ConfigField& field : config_fields()) {
    if (!field.bridge_field.empty() && field.flag.size() == flag.size() + 2 &&
        field.flag.substr(2) == flag) {
      return field.bridge_field;
    }
  }
  return std::nullopt;
}

// Switches whose Bridge field is the negation or another field.
constexpr std::pair<std::string_view, std::string_view> kSwitchFields[] = {
    {"untie-embeddings-and-output-weights", "model.share_embeddings_and_output_weights=false"},
    {"disable-bias-linear", "model.add_bias_linear=false"},
    {"swiglu", "model.gated_linear_unit=true"},
    {"squared-relu", "model.activation_func=squared_relu"},
    {"group-query-attention", ""},  // model.num_query_groups carries it
    {"grad-reduce-in-bf16", "mixed_precision.grad_reduce_in_fp32=false"},
    {"no-bias-swiglu-fusion", "model.bias_activation_fusion=false"},
    {"no-bias-gelu-fusion", "model.bias_activation_fusion=false"},
    {"no-create-attention-mask-in-dataloader", "dataset.create_attention_mask=false"},
    {"use-distributed-optimizer",
     "ddp.use_distributed_optimizer=true optimizer.use_distributed_optimizer=true"},
};

constexpr std::string_view kOptimizerFlags[] = {
    "optimizer",        "muon-scalar-optimizer", "use-precision-aware-optimizer",
    "main-grads-dtype", "main-params-dtype",     "exp-avg-dtype",
    "exp-avg-sq-dtype", "optimizer-cpu-offload", "optimizer-offload-fraction"};

std::string underscored(std::string_view flag) {
  std::string out(flag);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

// One flag with its values as override words.
std::string flag_override(std::string_view flag, const std::vector<std::string>& values) {
  if (values.empty()) {
    if (const auto field = lookup(kSwitchFields, flag)) return std::string(*field);
    if (const auto field = bridge_field_of(flag)) return std::string(*field) + "=true";
    if (flag == "bf16" || flag == "fp16") return "mixed_precision." + std::string(flag) + "=true";
    if (std::find(std::begin(kOptimizerFlags), std::end(kOptimizerFlags), flag) !=
        std::end(kOptimizerFlags)) {
      return "optimizer." + underscored(flag) + "=true";
    }
    if (flag.rfind("no-", 0) == 0) return "model." + underscored(flag.substr(3)) + "=false";
    return "model." + underscored(flag) + "=true";
  }
  std::string value = values.front();
  if (values.size() > 1 || flag == "recompute-modules" || flag == "offload-modules") {
    value = "[";
    for (const std::string& item : values) value += (value.size() > 1 ? "," : "") + item;
    value += "]";
  }
  if (value.find_first_of(" '\"()*+|") != std::string::npos) value = "'" + value + "'";
  std::string field;
  if (const auto mapped = bridge_field_of(flag)) {
    field = *mapped;
  } else if (std::find(std::begin(kOptimizerFlags), std::end(kOptimizerFlags), flag) !=
             std::end(kOptimizerFlags)) {
    field = "optimizer." + underscored(flag);
  } else {
    field = "model." + underscored(flag);
  }
  return field + "=" + value;
}

// Without FP8 the recipe's MixedPrecisionConfig.fp8_recipe still reaches the optimizer
// (OptimizerConfig::fp8_recipe); Megatron-Core's None acts as delayed.
std::string optimizer_fp8_recipe(const Config& config) {
  const Fp8Recipe recipe = config.optimizer.fp8_recipe == Fp8Recipe::none
                               ? Fp8Recipe::delayed
                               : config.optimizer.fp8_recipe;
  const ConfigField& field = *field_by_link_key("opt-fp8-recipe");
  return "mixed_precision.fp8_recipe=" +
         std::string(field.choices[static_cast<std::size_t>(recipe)].megatron);
}

// A 0/1 layer pattern as a Python list, "[0,1,1]".
std::string layer_list(const std::vector<std::uint8_t>& pattern) {
  std::string list;
  for (const std::uint8_t layer : pattern)
    list += (list.empty() ? "[" : ",") + std::to_string(layer);
  return list + "]";
}

}  // namespace

Expected<BridgeNode> parse_bridge_overrides(std::string_view overrides) {
  BridgeNode root = bridge_node(BridgeNode::Kind::map);
  for (const std::string_view written : split_words(overrides)) {
    std::string_view word = written;
    if (!word.empty() && word.front() == '+') word.remove_prefix(1);  // Hydra's "add" prefix
    const std::size_t equals = word.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      return Error{std::string(written),  // as written: a lone "+" is a word too
                   "expects key=value (e.g. model.tensor_model_parallel_size=4)"};
    }
    BridgeNode* node = &root;
    std::string_view key = word.substr(0, equals);
    for (std::size_t dot = key.find('.'); dot != std::string_view::npos; dot = key.find('.')) {
      node = &child(*node, std::string(key.substr(0, dot)));
      if (node->kind != BridgeNode::Kind::map) {
        return Error{std::string(word.substr(0, equals)), "sets a field inside a value"};
      }
      key.remove_prefix(dot + 1);
    }
    BridgeNode& target = child(*node, std::string(key));
    target = override_value(word.substr(equals + 1));
  }
  return root;
}

namespace {

// A Bridge-only field's value as Bridge text: a pattern row's marked layers as a list of 1-based
// numbers (KimiK3ModelProvider.kimi_kda_layers), a boolean as true/false, a number otherwise.
std::string bridge_only_text(const ConfigField& field, const Config& config) {
  if (field.kind == FieldKind::boolean) return field.get_int(config) != 0 ? "true" : "false";
  if (field.kind != FieldKind::pattern)
    return shortest_double_text(bridge_only_value(field, config));
  Config copy = config;  // the registry reaches a pattern through a mutable Config
  const std::vector<std::uint8_t>& pattern = *field.pattern(copy);
  std::string numbers;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i]) numbers += (numbers.empty() ? "" : ",") + std::to_string(i + 1);
  }
  return "[" + numbers + "]";
}

// The registry's Bridge-only fields (no Megatron-LM flag: the Gemma soft-caps, DeepSeek-V4's
// sizes, Kimi K3's sizes and KDA layers) where the model reads them (field_not_applicable) and
// they differ from the defaults. The KDA sizes' defaults are KimiK3ModelProvider's
// (kimi_k3_provider.py kimi_linear_* = 96, 128, 4), so an unwritten one reads back the same.
void append_bridge_only_fields(const Config& config, std::vector<std::string>& out) {
  static const Config defaults;
  for (const ConfigField& field : config_fields()) {
    if (!is_bridge_only_field(field) || !field_not_applicable(field, config.model).empty()) {
      continue;
    }
    const std::string value = bridge_only_text(field, config);
    if (value != bridge_only_text(field, defaults))
      out.push_back(std::string(field.bridge_field) + "=" + value);
  }
}

}  // namespace

std::string to_bridge_overrides(const Config& config) {
  std::vector<std::string> out;
  const Expected<std::vector<std::string>> words = split_command_line(to_megatron_args(config));
  for (std::size_t i = 0; words && i < words->size();) {
    const std::string flag = (*words)[i].substr(2);
    std::vector<std::string> values;
    for (++i; i < words->size() && (*words)[i].rfind("--", 0) != 0; ++i) {
      values.push_back((*words)[i]);
    }
    if (flag == "num-virtual-stages-per-pipeline-rank" ||
        flag == "num-layers-per-virtual-pipeline-stage" ||
        (flag == "fp8-recipe" && config.training.fp8_recipe == Fp8Recipe::none)) {
      continue;  // written from the Config below
    }
    // Bridge takes the patterns as lists (TransformerConfig.moe_layer_freq and
    // window_attn_skip_freq: int | list).
    if (flag == "moe-layer-freq" && !config.model.moe_layer_pattern.empty()) {
      out.push_back("model.moe_layer_freq=" + layer_list(config.model.moe_layer_pattern));
      continue;
    }
    if (flag == "window-attn-skip-freq" && !config.model.window_attn_pattern.empty()) {
      out.push_back("model.window_attn_skip_freq=" + layer_list(config.model.window_attn_pattern));
      continue;
    }
    const std::string text = flag_override(flag, values);
    if (!text.empty()) out.push_back(text);
  }
  append_bridge_only_fields(config, out);
  if (config.model.vocab_size > 0) out.push_back("model.should_pad_vocab=true");
  if (!config.optimizer.store_param_remainders) {
    out.push_back("optimizer.store_param_remainders=false");
  }
  if (config.training.fp8_recipe == Fp8Recipe::none) out.push_back(optimizer_fp8_recipe(config));
  const ParallelConfig& p = config.parallel;
  // Always written: what recipes set and a run must not inherit.
  const int vpp = p.virtual_stages_per_pipeline_rank;
  for (const std::string& fixed :
       {"model.tensor_model_parallel_size=" + std::to_string(p.tensor_parallel),
        "model.pipeline_model_parallel_size=" + std::to_string(p.pipeline_parallel),
        "model.virtual_pipeline_model_parallel_size=" +
            (vpp > 1 && p.pipeline_layout.empty() ? std::to_string(vpp) : "null"),
        "model.context_parallel_size=" + std::to_string(p.context_parallel),
        "model.expert_model_parallel_size=" + std::to_string(p.expert_parallel),
        "train.micro_batch_size=" + std::to_string(config.training.micro_batch_size)}) {
    const std::string key = fixed.substr(0, fixed.find('='));
    const bool present = std::any_of(
        out.begin(), out.end(), [&](const std::string& o) { return o.rfind(key + "=", 0) == 0; });
    if (!present) out.push_back(fixed);
  }
  std::string text;
  for (const std::string& o : out) text += (text.empty() ? "" : " ") + o;
  return text;
}

}  // namespace megamem
