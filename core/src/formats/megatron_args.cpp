// Megatron-LM flags -> Config (see megatron_args.hpp for the contract).
//
// Index:
//   [SECTION] Shell-like splitting
//   [SECTION] Flag lookups: modeled and unmodeled rows of the registry
//   [SECTION] Grouping words into flags and sorting them
//   [SECTION] FlagReader: typed access with errors naming the flag
//   [SECTION] Model, parallelism, training, optimizer, recompute, offload fields
//   [SECTION] Derived flags (VPP degree) and checks on which flags were given together
//   [SECTION] parse_moe_layer_freq, parse_megatron_args
//
// Rules cite the Megatron-LM file they come from (NVIDIA/Megatron-LM d98e8a6); "arguments.py"
// is megatron/training/arguments.py and "transformer_config.py" is
// megatron/core/transformer/transformer_config.py. The parser reports what is malformed and
// the few rules about which flags were given together (a Config cannot hold "unset"); every
// rule on the values is the rule book's (normalize(), core/src/rules).
#include "megamem/megatron_args.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "formats/hybrid_allocation.hpp"
#include "formats/megatron_expressions.hpp"
#include "formats/megatron_flag_names.hpp"
#include "megamem/fields.hpp"
#include "megamem/presets.hpp"
#include "memory/runtime_overheads.hpp"

namespace megamem {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Shell-like splitting
// ---------------------------------------------------------------------------------------------

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// ---------------------------------------------------------------------------------------------
// [SECTION] Flag lookups
// ---------------------------------------------------------------------------------------------

// The words a flag the estimate reads takes: its registry row's flag or one of the row's other
// spellings (fields.hpp); nullopt for a flag no row reads.
std::optional<FlagArity> modeled_flag_arity(std::string_view name) {
  for (const ConfigField& field : config_fields()) {
    if (field.flag == name) return field.flag_arity;
    for (const FlagSpelling& spelling : field.other_flags) {
      if (spelling.name == name) return spelling.arity;
    }
  }
  return std::nullopt;
}

// A flag that changes memory without a Config field (the registry's unmodeled_megatron_flags);
// a few more matter only with certain values, decided in note_unmodeled_flags().
bool is_unmodeled_flag(std::string_view name) {
  const std::span<const UnmodeledFlag> flags = unmodeled_megatron_flags();
  return std::any_of(flags.begin(), flags.end(),
                     [&](const UnmodeledFlag& flag) { return flag.flag == name; });
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Grouping words into flags and sorting them
// ---------------------------------------------------------------------------------------------

// argparse treats "-1" or "-.5" as a value, not as an option (no Megatron option looks like a
// negative number).
bool looks_like_flag(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return false;
  const char second = word[1];
  if ((second >= '0' && second <= '9') || second == '.') return false;
  return true;
}

struct FlagOccurrence {
  std::string name;
  std::vector<std::string> values;
};

// Groups words into flags with the values that follow them. Words before the first flag (the
// program, e.g. "python pretrain_gpt.py") are skipped; "--flag=value" carries its value.
std::vector<FlagOccurrence> group_flags(const std::vector<std::string>& words) {
  std::vector<FlagOccurrence> flags;
  for (const std::string& word : words) {
    if (looks_like_flag(word)) {
      if (word == "--") continue;  // argparse's end-of-options marker
      const std::size_t equals = word.find('=');
      if (equals != std::string::npos && word.rfind("--", 0) == 0) {
        flags.push_back({word.substr(0, equals), {word.substr(equals + 1)}});
      } else {
        flags.push_back({word, {}});
      }
    } else if (!flags.empty()) {
      flags.back().values.push_back(word);
    }
  }
  return flags;
}

void add_unique(std::vector<std::string>& list, const std::string& name) {
  if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) {
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] FlagReader: typed access with errors naming the flag
// ---------------------------------------------------------------------------------------------

// The last value of every modeled flag given (argparse: a repeated flag's last value wins),
// read with Megatron's types; the first malformed value becomes the parse error.
class FlagReader {
 public:
  explicit FlagReader(std::map<std::string, std::vector<std::string>, std::less<>> values)
      : values_(std::move(values)) {}

  bool has(std::string_view flag) const { return values_.find(flag) != values_.end(); }

  const std::vector<std::string>* list(std::string_view flag) const {
    const auto it = values_.find(flag);
    return it == values_.end() ? nullptr : &it->second;
  }

  const std::string* text(std::string_view flag) const {
    const auto it = values_.find(flag);
    return it == values_.end() || it->second.empty() ? nullptr : &it->second.front();
  }

  // Python int(): optional sign, digits, surrounding spaces.
  std::optional<std::int64_t> integer(std::string_view flag, std::int64_t min_value) {
    const std::string* value = text(flag);
    if (!value) return std::nullopt;
    std::string_view digits = trim(*value);
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    std::int64_t parsed = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      fail(flag, "expects an integer, got '" + *value + "'");
      return std::nullopt;
    }
    if (parsed < min_value) {
      fail(flag, "must be at least " + std::to_string(min_value) + ", got " + *value);
      return std::nullopt;
    }
    return parsed;
  }

  void read(std::string_view flag, int& out, int min_value) {
    if (const std::optional<std::int64_t> value = integer(flag, min_value)) {
      if (*value > 1'000'000'000) {
        fail(flag, "value " + std::to_string(*value) + " is out of range");
        return;
      }
      out = static_cast<int>(*value);
    }
  }

  void read(std::string_view flag, std::int64_t& out, std::int64_t min_value) {
    if (const std::optional<std::int64_t> value = integer(flag, min_value)) out = *value;
  }

  // Python float(): decimal or exponent notation.
  void read(std::string_view flag, double& out, double min_value, double max_value) {
    const std::string* value = text(flag);
    if (!value) return;
    const std::string trimmed(trim(*value));
    char* end = nullptr;
    const double parsed = std::strtod(trimmed.c_str(), &end);
    if (trimmed.empty() || end != trimmed.c_str() + trimmed.size() || !std::isfinite(parsed)) {
      fail(flag, "expects a number, got '" + *value + "'");
      return;
    }
    if (parsed < min_value || parsed > max_value) {
      fail(flag, "must be between " + format_number(min_value) + " and " +
                     format_number(max_value) + ", got " + *value);
      return;
    }
    out = parsed;
  }

  // One of Megatron's argparse choices.
  template <class T>
  void choose(std::string_view flag, T& out,
              std::initializer_list<std::pair<std::string_view, T>> choices) {
    const std::string* value = text(flag);
    if (!value) return;
    std::string names;
    for (const auto& [name, mapped] : choices) {
      if (name == *value) {
        out = mapped;
        return;
      }
      names += names.empty() ? "" : ", ";
      names += name;
    }
    fail(flag, "invalid choice '" + *value + "' (choose from " + names + ")");
  }

  // One of the registry's Megatron spellings (fields.hpp); its enumerator index.
  std::optional<std::size_t> choose_index(std::string_view flag,
                                          const std::vector<FieldChoice>& choices) {
    const std::string* value = text(flag);
    if (!value) return std::nullopt;
    std::string names;
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (choices[i].megatron.empty()) continue;
      if (choices[i].megatron == *value) return i;
      names += names.empty() ? "" : ", ";
      names += choices[i].megatron;
    }
    fail(flag, "invalid choice '" + *value + "' (choose from " + names + ")");
    return std::nullopt;
  }

  // A value Megatron accepts but megamem cannot estimate (e.g. --optimizer lion).
  void refuse_unmodeled(std::string_view flag, std::initializer_list<std::string_view> values) {
    const std::string* value = text(flag);
    if (!value) return;
    for (const std::string_view unmodeled : values) {
      if (*value == unmodeled) {
        fail(flag, "'" + *value + "' is a Megatron-LM choice megamem does not model");
        return;
      }
    }
  }

  void fail(std::string_view field, std::string message) {
    if (!error) error = Error{std::string(field), std::move(message)};
  }

  std::optional<Error> error;
  // Rules only one Megatron-LM version or launcher enforces, about flags a Config cannot hold.
  std::vector<std::string> warnings;

 private:
  static std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    return text;
  }

  static std::string format_number(double value) {
    std::string text = std::to_string(value);
    text.erase(text.find_last_not_of('0') + 1);
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text;
  }

  std::map<std::string, std::vector<std::string>, std::less<>> values_;
};

// Splits a list flag's words ("a b", "[a, b]" or "a,b") into names.
std::vector<std::string> module_names(const std::vector<std::string>& words) {
  std::vector<std::string> names;
  for (const std::string& word : words) {
    std::string current;
    for (const char c : word + " ") {
      if (is_space(c) || c == ',' || c == '[' || c == ']' || c == '\'' || c == '"') {
        if (!current.empty()) names.push_back(current);
        current.clear();
      } else {
        current += c;
      }
    }
  }
  return names;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Model, parallelism, training, optimizer, recompute, offload fields
// ---------------------------------------------------------------------------------------------

// Values Megatron accepts but megamem cannot estimate (e.g. --optimizer lion), refused before
// the one-to-one flags are read so the refusal is the error reported.
void refuse_unmodeled_choices(FlagReader& r) {
  r.refuse_unmodeled("--fp8-recipe", {"custom"});
  r.refuse_unmodeled("--transformer-impl", {"inference_optimized"});
  r.refuse_unmodeled("--optimizer", {"lion", "soap", "adaptive_muon"});
  r.refuse_unmodeled("--muon-scalar-optimizer", {"lion"});
}

// One field whose Megatron flag is one-to-one (fields.hpp): a value with Megatron's type and
// lower bound, an enum spelling, or the flag's presence.
void read_registry_flag(FlagReader& r, const ConfigField& field, Config& c) {
  if (field.flag_form == FlagForm::store_true || field.flag_form == FlagForm::store_false) {
    field.set_int(c, r.has(field.flag) == (field.flag_form == FlagForm::store_true) ? 1 : 0);
    return;
  }
  if (field.flag_form != FlagForm::value) return;
  if (field.kind == FieldKind::integer && field.wide) {
    std::int64_t value = field.get_int(c);
    r.read(field.flag, value, static_cast<std::int64_t>(field.flag_min));
    field.set_int(c, value);
  } else if (field.kind == FieldKind::integer) {
    int value = static_cast<int>(field.get_int(c));
    r.read(field.flag, value, static_cast<int>(field.flag_min));
    field.set_int(c, value);
  } else if (field.kind == FieldKind::real) {
    double value = field.get_real(c);
    r.read(field.flag, value, field.flag_min, field.flag_max);
    field.set_real(c, value);
  } else if (field.kind == FieldKind::choice) {
    if (const std::optional<std::size_t> index = r.choose_index(field.flag, field.choices)) {
      field.set_int(c, static_cast<std::int64_t>(*index));
    }
  }
}

void read_registry_flags(FlagReader& r, Config& c) {
  for (const ConfigField& field : config_fields()) {
    if (!field.read_by_importer) read_registry_flag(r, field, c);
  }
}

// Flags Megatron needs before it can build a model (arguments.py: required_args, and the
// asserts on micro_batch_size and seq_length).
constexpr std::string_view kRequiredFlags[] = {
    "--num-layers", "--hidden-size", "--num-attention-heads", "--seq-length", "--micro-batch-size"};

// arguments.py validate_args: the legacy --encoder-num-layers / --encoder-seq-length stand for
// --num-layers / --seq-length when those are absent. It asserts that not both are given, then
// copies one onto the other, so an argument dump has both, equal.
std::optional<Error> read_encoder_aliases(std::vector<FlagOccurrence>& flags) {
  const auto named = [&](std::string_view name) {
    return std::find_if(flags.begin(), flags.end(),
                        [&](const FlagOccurrence& flag) { return flag.name == name; });
  };
  for (const auto& [legacy, current] : {std::pair{"--encoder-num-layers", "--num-layers"},
                                        std::pair{"--encoder-seq-length", "--seq-length"}}) {
    const auto alias = named(legacy);
    if (alias == flags.end()) continue;
    const auto given = named(current);
    if (given == flags.end()) {
      alias->name = current;
    } else if (given->values == alias->values) {
      flags.erase(alias);
    } else {
      return Error{legacy, std::string("differs from ") + current +
                               "; Megatron-LM takes one of them (megatron/training/arguments.py)"};
    }
  }
  return std::nullopt;
}

bool has_hybrid_pattern(const FlagReader& r) {
  return r.has("--hybrid-override-pattern") || r.has("--hybrid-layer-pattern");
}

// Hybrid models: --hybrid-override-pattern, its later name --hybrid-layer-pattern
// (arguments.py: not both), or the ratio flags of earlier releases.
void read_hybrid(FlagReader& r, ModelConfig& m) {
  const std::string* pattern = r.text("--hybrid-override-pattern");
  if (const std::string* layer_pattern = r.text("--hybrid-layer-pattern")) {
    if (pattern) {
      r.fail("--hybrid-layer-pattern", "cannot be combined with --hybrid-override-pattern");
    }
    pattern = layer_pattern;
  }
  if (pattern) {
    m.hybrid_layer_pattern = *pattern;
    // arguments.py: a legacy --mtp-hybrid-override-pattern X with --mtp-num-layers D becomes
    // the unified "<main>/X/X..." (D parts) unless the pattern has '/' parts already.
    const std::string* mtp = r.text("--mtp-hybrid-override-pattern");
    if (mtp && !mtp->empty() && m.mtp_num_layers > 0 && pattern->find('/') == std::string::npos) {
      for (int depth = 0; depth < m.mtp_num_layers; ++depth) m.hybrid_layer_pattern += "/" + *mtp;
    }
    // arguments.py: without --num-layers Megatron takes the pattern's layer count (the main
    // part's symbols, get_hybrid_total_layer_count).
    if (!r.has("--num-layers")) {
      const std::string main = pattern->substr(0, pattern->find('/'));
      m.num_layers = static_cast<int>(
          main.size() - static_cast<std::size_t>(std::count(main.begin(), main.end(), '|')));
    }
    return;
  }
  double attention_ratio = 0, mlp_ratio = 0;
  r.read("--hybrid-attention-ratio", attention_ratio, 0.0, 1.0);
  r.read("--hybrid-mlp-ratio", mlp_ratio, 0.0, 1.0);
  if (attention_ratio + mlp_ratio > 1.0) {
    r.fail("--hybrid-mlp-ratio", "with --hybrid-attention-ratio must not exceed 1");
    return;
  }
  if (attention_ratio + mlp_ratio > 0 && m.num_layers > 0) {
    m.hybrid_layer_pattern = formats::pattern_from_ratios(m.num_layers, attention_ratio, mlp_ratio);
  }
}

// DeepSeek sparse attention: --experimental-attention-variant dsa with the indexer's top-k
// (transformer_config.py dsa_indexer_topk, None by default: the indexer cannot be built
// without it).
void read_dsa(FlagReader& r, ModelConfig& m) {
  if (!r.text("--dsa-indexer-topk")) {
    r.fail("--dsa-indexer-topk", "must be set for the dsa variant (the indexer's top-k)");
    return;
  }
  r.read("--dsa-indexer-topk", m.dsa_indexer_topk, 1);
}

// Gated DeltaNet layers: --experimental-attention-variant gated_delta_net (gdn in later
// releases) with --linear-attention-freq N (an integer; Megatron also takes a Python list
// expression, which megamem does not read). transformer_config.py asserts the frequency for
// the variant; without the variant Megatron builds no linear-attention layers. DSA: read_dsa.
// A hybrid pattern's 'D' layers (hybrid_layer_specs.py) read the dsa_indexer_* fields without
// the variant flag.
bool pattern_has_sparse_attention(FlagReader& r) {
  for (const char* flag : {"--hybrid-layer-pattern", "--hybrid-override-pattern"}) {
    const std::string* pattern = r.text(flag);
    if (pattern && pattern->find('D') != std::string::npos) return true;
  }
  return false;
}

void read_attention_variant(FlagReader& r, ModelConfig& m) {
  const std::string* variant = r.text("--experimental-attention-variant");
  if (pattern_has_sparse_attention(r) && r.text("--dsa-indexer-topk")) {
    r.read("--dsa-indexer-topk", m.dsa_indexer_topk, 1);
  } else if (!variant || *variant != "dsa") {
    if (r.text("--dsa-indexer-topk")) {
      r.warnings.push_back(
          "--dsa-indexer-topk without --experimental-attention-variant dsa is ignored by "
          "Megatron-Core (no sparse attention is built)");
    }
  }
  if (!variant) {
    if (r.text("--linear-attention-freq")) {
      r.warnings.push_back(
          "--linear-attention-freq without --experimental-attention-variant gated_delta_net is "
          "ignored by Megatron-Core (no linear-attention layers are built)");
    }
    return;
  }
  if (*variant == "dsa") {
    read_dsa(r, m);
    return;
  }
  if (*variant == "dsv4_hybrid") {
    r.fail("--experimental-attention-variant",
           "'dsv4_hybrid' (DeepSeek-V4, Megatron-LM dev) needs per-layer compression ratios and "
           "output groups no Megatron-LM main flag carries: start from the deepseek-v4-flash "
           "preset, a deepseek_v4 config.json or a link");
    return;
  }
  if (*variant != "gated_delta_net" && *variant != "gdn") {
    r.fail("--experimental-attention-variant",
           "'" + *variant +
               "' is not modeled by megamem; use gated_delta_net (Gated DeltaNet) or dsa "
               "(DeepSeek sparse attention)");
    return;
  }
  if (!r.text("--linear-attention-freq")) {
    r.fail("--linear-attention-freq", "must be set for the gated delta net variant");
    return;
  }
  r.read("--linear-attention-freq", m.linear_attention_freq, 1);
}

void read_model(FlagReader& r, ModelConfig& m) {
  // arguments.py core_transformer_config_from_args: --num-query-groups only counts with
  // --group-query-attention (else num_query_groups=None, i.e. MHA); its argparse default is 1.
  if (r.has("--group-query-attention")) {
    m.num_query_groups = 1;
    r.read("--num-query-groups", m.num_query_groups, 1);
  }

  // post_training/model_builder.py: the ModelOpt entry point's Llama-4 switches.
  if (r.has("--export-qk-l2-norm")) m.qk_l2_norm = true;
  if (r.has("--export-moe-apply-probs-on-input")) m.moe_apply_probs_on_input = true;

  if (r.has("--swiglu")) m.activation = Activation::swiglu;
  if (r.has("--squared-relu")) {
    // argument_utils.py core_transformer_config_from_args: assert not args.swiglu.
    if (r.has("--swiglu")) r.fail("--squared-relu", "cannot be combined with --swiglu");
    m.activation = Activation::squared_relu;
  }
  if (r.has("--quick-geglu")) {
    // A gated GeLU variant: same shapes as SwiGLU (gated_linear_unit=True).
    if (r.has("--swiglu")) r.fail("--quick-geglu", "cannot be combined with --swiglu");
    m.activation = Activation::swiglu;
  }
  // arguments.py validate_args: without --ffn-hidden-size, SwiGLU uses 2/3 of 4h rounded down
  // to a multiple of 64 ("int((4 * args.hidden_size * 2 / 3) / 64) * 64").
  if (!r.has("--ffn-hidden-size") && r.has("--swiglu") && m.hidden_size > 0) {
    m.ffn_hidden_size = m.hidden_size / 24 * 64;
  }

  r.choose<PositionEmbedding>(
      "--position-embedding-type", m.position_embedding,
      {{"learned_absolute", PositionEmbedding::learned_absolute},
       {"rope", PositionEmbedding::rope},
       {"yarn", PositionEmbedding::yarn},
       // Multimodal RoPE has no parameters and the same activations as RoPE.
       {"mrope", PositionEmbedding::rope},
       // Relative attention buckets (T5-style) have no GPT path in Megatron-Core.
       {"relative", PositionEmbedding::none},
       {"none", PositionEmbedding::none}});
  // arguments.py validate_args: the legacy flag forces RoPE.
  if (r.has("--use-rotary-position-embeddings")) m.position_embedding = PositionEmbedding::rope;
  // arguments.py validate_args: "--no-position-embedding is deprecated, use
  // --position-embedding-type" (a RuntimeError unless the type is rope).
  if (r.has("--no-position-embedding") && m.position_embedding != PositionEmbedding::rope) {
    r.fail("--no-position-embedding",
           "is deprecated; use --position-embedding-type none (arguments.py refuses it unless "
           "the type is rope)");
  }
}

// --window-size "W,0" (arguments.py tuple_type, also "(W, 0)"): W earlier tokens and the token
// itself; -1 is Megatron's infinite window, i.e. full attention.
void read_window_size(FlagReader& r, ModelConfig& m) {
  const std::string* value = r.text("--window-size");
  if (!value) return;
  std::string text;
  for (const char ch : *value) {
    if (ch != '(' && ch != ')' && ch != ' ') text += ch;
  }
  const std::size_t comma = text.find(',');
  const std::string left = text.substr(0, comma);
  const bool causal = comma != std::string::npos && text.substr(comma + 1) == "0";
  int window = 0;
  const auto [end, ec] = std::from_chars(left.data(), left.data() + left.size(), window);
  if (!causal || ec != std::errc() || end != left.data() + left.size() || window < -1) {
    r.fail("--window-size",
           "expects a causal window W,0 (W earlier tokens, -1 = unlimited), got '" + *value + "'");
    return;
  }
  m.window_size = window < 0 ? 0 : window;
}

void read_parallel(FlagReader& r, ParallelConfig& p) {
  // arguments.py validate_args: "disable sequence parallelism when tp=1".
  p.sequence_parallel = r.has("--sequence-parallel") && p.tensor_parallel > 1;
  if (const std::string* layout = r.text("--pipeline-model-parallel-layout")) {
    // The validation data and some launch scripts keep shell escapes ("Et*3\|\(tt\|\)*6L");
    // backslashes are never layout characters, so drop them.
    p.pipeline_layout.clear();
    for (const char c : *layout) {
      if (c != '\\') p.pipeline_layout += c;
    }
  }
}

// transformer_config.py: --first-last-layers-bf16 keeps --num-layers-at-start-in-bf16 and
// --num-layers-at-end-in-bf16 layers (1 each by default) out of FP8; it means nothing without
// FP8 (fp8_utils.py, is_first_last_bf16_layer). Its refusal with delayed scaling is a rule
// (rules/precision.cpp). Read only under FP8.
void read_fp8_bf16_layers(FlagReader& r, TrainingConfig& t) {
  if (!r.has("--first-last-layers-bf16")) return;
  t.fp8_bf16_layers_at_start = 1;
  t.fp8_bf16_layers_at_end = 1;
  r.read("--num-layers-at-start-in-bf16", t.fp8_bf16_layers_at_start, 0);
  r.read("--num-layers-at-end-in-bf16", t.fp8_bf16_layers_at_end, 0);
}

// transformer_config.py: FP8 is on only with --fp8-format (e4m3 or hybrid: same bytes); the
// recipe (the registry row's spellings) defaults to Megatron's "delayed"; without a format it
// only reaches the optimizer (OptimizerConfig::fp8_recipe). A misspelt one is an error.
void read_fp8(FlagReader& r, Config& c) {
  const ConfigField& recipe = *field_by_link_key("fp8");
  const std::optional<std::size_t> chosen = r.choose_index(recipe.flag, recipe.choices);
  const std::size_t delayed = static_cast<std::size_t>(Fp8Recipe::delayed);  // Megatron's default
  if (!r.has(recipe.flag_needs)) {
    // training.py passes args.fp8_recipe to OptimizerConfig also without a format.
    c.optimizer.fp8_recipe = static_cast<Fp8Recipe>(chosen.value_or(delayed));
    return;
  }
  r.choose<Fp8Format>(recipe.flag_needs, c.training.fp8_format,
                      {{"e4m3", Fp8Format::e4m3}, {"hybrid", Fp8Format::hybrid}});
  recipe.set_int(c, static_cast<std::int64_t>(chosen.value_or(delayed)));
  read_fp8_bf16_layers(r, c.training);
}

void read_training(FlagReader& r, TrainingConfig& t) {
  // arguments.py validate_args: params_dtype is fp32 unless --fp16 or --bf16, which exclude
  // each other ("assert not args.bf16").
  if (r.has("--fp16") && r.has("--bf16")) r.fail("--fp16", "cannot be combined with --bf16");
  if (r.has("--fp16")) t.params_dtype = DType::fp16;
  if (r.has("--bf16")) t.params_dtype = DType::bf16;

  // transformer_config.py moe_router_dtype: None (the params dtype), fp32 or fp64. fp64
  // router scores are not modeled (listed as unmodeled in note_unmodeled_flags).
  std::string_view router_dtype;
  r.choose<std::string_view>("--moe-router-dtype", router_dtype,
                             {{"fp32", "fp32"}, {"fp64", "fp64"}});
  t.moe_router_fp32 = router_dtype == "fp32";
  // transformer_config.py __post_init__: the deprecated --moe-deepep-num-sms and
  // --moe-hybridep-num-sms set moe_flex_dispatcher_num_sms when it is not given; two
  // different values are a ValueError.
  if (!r.has("--moe-flex-dispatcher-num-sms")) {
    std::optional<int> sms;
    for (const char* alias : {"--moe-deepep-num-sms", "--moe-hybridep-num-sms"}) {
      if (!r.has(alias)) continue;
      int value = t.moe_flex_dispatcher_num_sms;
      r.read(alias, value, 2);
      if (sms && *sms != value) r.fail(alias, "conflicts with --moe-deepep-num-sms");
      sms = value;
    }
    if (sms) t.moe_flex_dispatcher_num_sms = *sms;
  }

  // megatron/core/model_parallel_config.py cross_entropy_fusion_impl: native (default) or te.
  if (r.has("--cross-entropy-loss-fusion")) {
    t.cross_entropy = CrossEntropyImpl::native_fused;
    r.choose<CrossEntropyImpl>(
        "--cross-entropy-fusion-impl", t.cross_entropy,
        {{"native", CrossEntropyImpl::native_fused}, {"te", CrossEntropyImpl::te_fused}});
  } else if (r.has("--cross-entropy-fusion-impl")) {
    CrossEntropyImpl unused = CrossEntropyImpl::unfused;
    r.choose<CrossEntropyImpl>(
        "--cross-entropy-fusion-impl", unused,
        {{"native", CrossEntropyImpl::native_fused}, {"te", CrossEntropyImpl::te_fused}});
  }
  // arguments.py: bias_activation_fusion = bias_swiglu_fusion with --swiglu, else
  // bias_gelu_fusion.
  t.bias_activation_fusion =
      r.has("--swiglu") ? !r.has("--no-bias-swiglu-fusion") : !r.has("--no-bias-gelu-fusion");
  // arguments.py validate_args (and transformer_config.py __post_init__):
  // --apply-query-key-layer-scaling sets attention_softmax_in_fp32.
  t.attention_softmax_in_fp32 =
      r.has("--attention-softmax-in-fp32") || r.has("--apply-query-key-layer-scaling");
}

void read_optimizer(FlagReader& r, OptimizerConfig& o, DType params_dtype) {
  // arguments.py --optimizer; "dist_muon" is the deprecated spelling of muon with the
  // (layer-wise) distributed optimizer. lion, soap and adaptive_muon are not modeled.
  if (r.text("--optimizer") && *r.text("--optimizer") == "dist_muon") {
    o.kind = OptimizerKind::muon;
    o.use_distributed_optimizer = true;
  } else {
    r.choose<OptimizerKind>("--optimizer", o.kind,
                            {{"adam", OptimizerKind::adam},
                             {"sgd", OptimizerKind::sgd},
                             {"muon", OptimizerKind::muon}});
  }
  // For emerging optimizers (muon) arguments.py turns --use-distributed-optimizer into the
  // layer-wise distributed optimizer; the Config keeps the flag, which means "sharded".
  if (r.has("--use-distributed-optimizer")) o.use_distributed_optimizer = true;

  // arguments.py validate_args (bf16 branch): gradients accumulate and reduce in fp32 unless
  // --grad-reduce-in-bf16 or a non-fp32 --main-grads-dtype; the DDP grad buffer takes that
  // dtype (training.py get_megatron_ddp_config: grad_reduce_in_fp32). For fp16 and fp32
  // params the flag has no effect, so it is dropped.
  o.grad_reduce_in_bf16 = false;
  if (params_dtype == DType::bf16) {
    if (r.has("--accumulate-allreduce-grads-in-fp32") && o.main_grads_dtype != DType::fp32) {
      r.fail("--accumulate-allreduce-grads-in-fp32",
             "requires --main-grads-dtype fp32 (arguments.py validate_args)");
    }
    o.grad_reduce_in_bf16 = r.has("--grad-reduce-in-bf16") || o.main_grads_dtype == DType::bf16;
  }
}

// A module list as a typed set (modules.hpp names the modules). An unknown name is an
// error where Megatron checks the list, else it is dropped with a warning.
template <class Module>
ModuleSet<Module> read_module_set(FlagReader& r, std::string_view flag,
                                  const std::vector<std::string>& names, bool checked) {
  ModuleSet<Module> set;
  for (const std::string& name : names) {
    if (const std::optional<Module> module = module_from_name<Module>(name)) {
      set.insert(*module);
    } else if (checked) {
      r.fail(flag, "invalid module '" + name + "' (transformer_config.py allows " +
                       known_module_names<Module>() + ")");
    } else {
      r.warnings.push_back(std::string(flag) + " names an unknown module '" + name +
                           "'; unused here, so ignored");
    }
  }
  return set;
}

// FSDP-specific dtypes: "auto" is the params dtype; without the flag Megatron-Core <= 0.15
// reduced in fp32 unless --grad-reduce-in-bf16 (param_and_grad_buffer.py grad_reduce_in_fp32).
DType read_fsdp_dtype(FlagReader& r, std::string_view flag, DType params_dtype, DType absent) {
  if (!r.has(flag)) return absent;
  DType dtype = params_dtype;
  r.choose<DType>(flag, dtype,
                  {{"fp32", DType::fp32},
                   {"bf16", DType::bf16},
                   {"fp16", DType::fp16},
                   {"auto", params_dtype}});
  return dtype;
}

void read_fsdp(FlagReader& r, FsdpConfig& f, OptimizerConfig& o, DType params_dtype) {
  if (r.has("--use-megatron-fsdp")) {
    f.impl = FsdpImpl::megatron;
    o.use_distributed_optimizer = true;  // arguments.py: Megatron-FSDP v1 requires it
  } else if (r.has("--use-torch-fsdp2")) {
    f.impl = FsdpImpl::torch_fsdp2;
  }
  // --data-parallel-sharding-strategy is read by the registry (field_registry.cpp).
  if (f.impl == FsdpImpl::none) return;  // the FSDP settings mean nothing without FSDP
  f.main_params_dtype =
      read_fsdp_dtype(r, "--megatron-fsdp-main-params-dtype", params_dtype, DType::fp32);
  const DType legacy_grads =
      params_dtype == DType::bf16 && !o.grad_reduce_in_bf16 ? DType::fp32 : params_dtype;
  f.main_grads_dtype =
      read_fsdp_dtype(r, "--megatron-fsdp-main-grads-dtype", params_dtype, legacy_grads);
  // param_and_grad_buffer.py: NCCL user buffers always use the FSDP double buffer.
  f.double_buffer = r.has("--fsdp-double-buffer") || r.has("--use-nccl-ub");
  f.max_pool_double_buffer = r.has("--megatron-fsdp-max-pool-double-buffer");
  f.persist_unpooled_buffers = r.has("--fsdp-db-use-persist-buf-on-alloc-fail");
  r.read("--suggested-communication-unit-size", f.communication_unit_elements, 1);
  f.reshard_after_forward = !r.has("--torch-fsdp2-no-reshard-after-forward");
  f.init_model_with_meta_device = r.has("--init-model-with-meta-device");
}

// The recompute flags as given (unset stays unset: some rules are about what was given).
struct RecomputeFlags {
  std::optional<RecomputeGranularity> granularity;
  std::optional<RecomputeMethod> method;
  std::optional<int> num_layers;
  std::vector<std::string> modules;
};

RecomputeFlags read_recompute_flags(FlagReader& r) {
  RecomputeFlags f;
  // arguments.py validate_args: --recompute-activations means selective recompute.
  if (r.has("--recompute-activations")) f.granularity = RecomputeGranularity::selective;
  if (r.has("--recompute-granularity")) {
    RecomputeGranularity value = RecomputeGranularity::none;
    r.choose<RecomputeGranularity>(
        "--recompute-granularity", value,
        {{"full", RecomputeGranularity::full}, {"selective", RecomputeGranularity::selective}});
    if (value != RecomputeGranularity::none) f.granularity = value;
  }
  if (r.has("--recompute-method")) {
    RecomputeMethod value = RecomputeMethod::uniform;
    r.choose<RecomputeMethod>(
        "--recompute-method", value,
        {{"uniform", RecomputeMethod::uniform}, {"block", RecomputeMethod::block}});
    f.method = value;
  }
  if (r.has("--recompute-num-layers")) {
    int value = 1;
    // 0 is a real setting with the block method (no layer recomputed); the rule book checks.
    r.read("--recompute-num-layers", value, 0);
    f.num_layers = value;
  }
  if (const std::vector<std::string>* words = r.list("--recompute-modules")) {
    f.modules = module_names(*words);
  }
  return f;
}

// Checks about which recompute flags were given at all, which a Config cannot express (it
// always holds a method and a layer count); the rules on their values are the rule book's
// (core/src/rules/recompute_offload.cpp).
void check_recompute_flags(FlagReader& r, const RecomputeFlags& f) {
  if (r.has("--checkpoint-activations")) {
    r.fail("--checkpoint-activations",
           "is no longer valid; use --recompute-granularity (arguments.py exits on it)");
  }
  if (f.granularity == RecomputeGranularity::full) {
    // transformer_config.py __post_init__: full recompute needs a method and a layer count.
    if (!f.method) {
      r.fail("--recompute-method",
             "full recompute needs --recompute-method uniform or block (transformer_config.py)");
    }
    if (!f.num_layers) {
      r.fail("--recompute-num-layers",
             "full recompute needs --recompute-num-layers (transformer_config.py)");
    }
  } else if (f.granularity == RecomputeGranularity::selective) {
    // transformer_config.py __post_init__ raises on a layer count with selective recompute;
    // only Megatron-LM's arguments.py refuses a method, which selective recompute ignores.
    if (f.method) {
      r.warnings.push_back(
          "--recompute-method is ignored with selective recompute; Megatron-LM refuses it "
          "(megatron/training/arguments.py validate_args)");
    }
    if (f.num_layers) {
      r.fail("--recompute-num-layers",
             "must be unset with selective recompute (transformer_config.py)");
    }
  }
}

void read_recompute(FlagReader& r, RecomputeConfig& rc) {
  RecomputeFlags f = read_recompute_flags(r);
  // transformer_config.py: --moe-layer-recompute is the deprecated spelling of selective
  // recompute of the "moe" module, and raises with full granularity.
  if (r.has("--moe-layer-recompute")) {
    if (f.granularity == RecomputeGranularity::full) {
      r.fail("--moe-layer-recompute", "cannot be combined with full recompute granularity");
    }
    f.granularity = RecomputeGranularity::selective;
    if (std::find(f.modules.begin(), f.modules.end(), "moe") == f.modules.end()) {
      if (f.modules.empty()) f.modules.push_back("core_attn");  // the default it extends
      f.modules.push_back("moe");
    }
  }
  check_recompute_flags(r, f);
  rc.granularity = f.granularity.value_or(RecomputeGranularity::none);
  if (f.method) rc.method = *f.method;
  if (f.num_layers) rc.num_layers = *f.num_layers;
  rc.distribute_saved_activations = r.has("--distribute-saved-activations");
  // transformer_config.py checks the module names only with selective granularity.
  const bool checked = rc.granularity == RecomputeGranularity::selective;
  rc.modules = read_module_set<RecomputeModule>(r, "--recompute-modules", f.modules, checked);
}

// The offload flags; their rules live in the rule book (core/src/rules/recompute_offload.cpp).
void read_offload(FlagReader& r, OffloadConfig& o) {
  o.fine_grained_activation_offloading = r.has("--fine-grained-activation-offloading");
  if (const std::vector<std::string>* words = r.list("--offload-modules")) {
    // transformer_config.py checks the module names only with fine-grained offloading.
    o.offload_modules = read_module_set<OffloadModule>(r, "--offload-modules", module_names(*words),
                                                       o.fine_grained_activation_offloading);
  }
  r.read("--activation-offload-fraction", o.activation_offload_fraction, 0.0, 1.0);
  r.read("--cpu-offloading-num-layers", o.cpu_offloading_num_layers, 0);
  // arguments.py validate_args: a positive layer count turns legacy CPU offloading on.
  o.cpu_offloading = o.cpu_offloading_num_layers > 0;
}

// Per-layer CUDA graphs. arguments.py validate_args: --enable-cuda-graph means local,
// --external-cuda-graph transformer_engine; --cuda-graph-scope is the deprecated spelling of
// --cuda-graph-modules, whose "full" means whole layers (an empty set) and whose
// "full_iteration" selects --cuda-graph-impl full_iteration (cuda_graph_config.py).
void read_cuda_graphs(FlagReader& r, TrainingConfig& t) {
  r.choose<CudaGraphImpl>("--cuda-graph-impl", t.cuda_graph_impl,
                          {{"none", CudaGraphImpl::none},
                           {"local", CudaGraphImpl::local},
                           {"transformer_engine", CudaGraphImpl::transformer_engine},
                           {"full_iteration", CudaGraphImpl::full_iteration}});
  if (r.has("--enable-cuda-graph")) t.cuda_graph_impl = CudaGraphImpl::local;
  if (r.has("--external-cuda-graph")) t.cuda_graph_impl = CudaGraphImpl::transformer_engine;
  const char* flag = r.has("--cuda-graph-modules") ? "--cuda-graph-modules" : "--cuda-graph-scope";
  if (const std::vector<std::string>* words = r.list(flag)) {
    std::vector<std::string> names;
    for (const std::string& name : module_names(*words)) {
      if (name == "full_iteration") t.cuda_graph_impl = CudaGraphImpl::full_iteration;
      if (name != "full" && name != "full_iteration" && name != "full_iteration_inference") {
        names.push_back(name);
      }
    }
    t.cuda_graph_modules = read_module_set<CudaGraphModule>(r, flag, names, true);
  }
  r.read("--cuda-graph-warmup-steps", t.cuda_graph_warmup_steps, 0);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Derived flags (VPP degree) and checks on which flags were given together
// ---------------------------------------------------------------------------------------------

// --num-layers-per-virtual-pipeline-stage x: (L + [emb] + [loss]) / PP layers per rank, in
// chunks of x. The degree exists only when both divide (arguments.py validate_args).
void derive_from_layers_per_virtual_stage(FlagReader& r, Config& c) {
  ParallelConfig& p = c.parallel;
  int layers_per_virtual_stage = 1;
  r.read("--num-layers-per-virtual-pipeline-stage", layers_per_virtual_stage, 1);
  if (p.decoder_first_pipeline_num_layers > 0 || p.decoder_last_pipeline_num_layers > 0) {
    r.fail("--num-layers-per-virtual-pipeline-stage",
           "cannot be combined with --decoder-first/last-pipeline-num-layers; use "
           "--num-virtual-stages-per-pipeline-rank (arguments.py validate_args)");
    return;
  }
  int layers_for_split = c.model.num_layers;  // L' of memory-model.md §2.5
  if (p.account_for_embedding_in_pipeline_split) ++layers_for_split;
  if (p.account_for_loss_in_pipeline_split) ++layers_for_split;
  if (layers_for_split % p.pipeline_parallel != 0 ||
      (layers_for_split / p.pipeline_parallel) % layers_per_virtual_stage != 0) {
    r.fail("--num-layers-per-virtual-pipeline-stage",
           "the layers per pipeline rank (" + std::to_string(layers_for_split) + " over " +
               std::to_string(p.pipeline_parallel) +
               " ranks, counting embedding/loss) must split into chunks of " +
               std::to_string(layers_per_virtual_stage) + " (arguments.py validate_args)");
    return;
  }
  p.virtual_stages_per_pipeline_rank =
      layers_for_split / p.pipeline_parallel / layers_per_virtual_stage;
}

// arguments.py validate_args: the virtual pipeline degree from whichever of the three VPP
// flags is given (at most one may be). Only what is needed to derive the degree is checked
// here; the placement rules are the rule book's (core/src/rules/pipeline_layout.cpp).
void derive_virtual_stages(FlagReader& r, Config& c) {
  ParallelConfig& p = c.parallel;
  const int given = static_cast<int>(r.has("--num-layers-per-virtual-pipeline-stage")) +
                    static_cast<int>(r.has("--num-virtual-stages-per-pipeline-rank")) +
                    static_cast<int>(r.has("--pipeline-model-parallel-layout"));
  if (given > 1) {
    r.fail("--num-layers-per-virtual-pipeline-stage",
           "at most one of --num-layers-per-virtual-pipeline-stage, "
           "--num-virtual-stages-per-pipeline-rank and --pipeline-model-parallel-layout may be "
           "set (arguments.py validate_args)");
    return;
  }
  if (!p.pipeline_layout.empty()) {
    // A malformed layout is the parser's to report; its stage count is PP x VPP (a count
    // that is not a multiple of PP is the rule book's to refuse).
    Expected<std::vector<std::string>> stages =
        formats::expand_pipeline_layout(p.pipeline_layout, "--pipeline-model-parallel-layout");
    if (!stages) {
      r.fail(stages.error().field, stages.error().message);
    } else if (stages->size() % static_cast<std::size_t>(p.pipeline_parallel) == 0) {
      p.virtual_stages_per_pipeline_rank =
          static_cast<int>(stages->size() / static_cast<std::size_t>(p.pipeline_parallel));
    }
  } else if (r.has("--num-virtual-stages-per-pipeline-rank")) {
    r.read("--num-virtual-stages-per-pipeline-rank", p.virtual_stages_per_pipeline_rank, 1);
  } else if (r.has("--num-layers-per-virtual-pipeline-stage")) {
    derive_from_layers_per_virtual_stage(r, c);
  }
  // arguments.py validate_args (not Megatron-Core): without overlapped P2P communication the
  // interleaved schedule wants PP > 2.
  if (p.virtual_stages_per_pipeline_rank > 1 && p.pipeline_parallel == 2 &&
      r.has("--no-overlap-p2p-communication")) {
    r.warnings.push_back(
        "Megatron-LM's arguments.py wants --pipeline-model-parallel-size > 2 for the "
        "interleaved schedule with --no-overlap-p2p-communication");
  }
}

// One flag-only rule: GQA and MLA exclude each other in Megatron-LM's arguments.py; the MLA
// layer ignores the query groups (megatron/core/transformer/multi_latent_attention.py).
void check_flag_combinations(FlagReader& r, const Config& c) {
  if (c.model.multi_latent_attention && r.has("--group-query-attention")) {
    r.warnings.push_back(
        "--group-query-attention is ignored with --multi-latent-attention; Megatron-LM refuses "
        "the pair (megatron/training/arguments.py validate_args)");
  }
}

void note_unmodeled_flags(const FlagReader& r, const std::vector<FlagOccurrence>& flags,
                          DType params_dtype, MegatronArgs& out) {
  for (const FlagOccurrence& flag : flags) {
    if (!is_unmodeled_flag(flag.name)) continue;
    const bool core_spec = flag.name == "--spec" && !flag.values.empty() &&
                           flag.values.front().rfind("megatron.core.", 0) == 0;
    if (!core_spec) add_unique(out.unmodeled_flags, flag.name);
  }
  if (r.text("--moe-router-dtype") && *r.text("--moe-router-dtype") == "fp64") {
    add_unique(out.unmodeled_flags, "--moe-router-dtype");
  }
  // With fp16 params Megatron reduces gradients in fp16 unless this flag asks for fp32 (a
  // 4-byte grad buffer Config cannot express); with bf16 it is already the default.
  if (r.has("--accumulate-allreduce-grads-in-fp32") && params_dtype == DType::fp16) {
    add_unique(out.unmodeled_flags, "--accumulate-allreduce-grads-in-fp32");
  }
}

// A --tp-comm-overlap-cfg file is a path megamem cannot read: the warning gives the most its
// settings could add to the default userbuffers (runtime_overheads.hpp).
void note_userbuffer_cfg(const FlagReader& r, const Config& c, MegatronArgs& out) {
  if (!r.has("--tp-comm-overlap-cfg") || !c.training.tp_comm_overlap) return;
  const double bound_mib = std::ceil(userbuffer_cfg_bound_bytes(c) / (1024.0 * 1024.0));
  out.warnings.push_back(
      "--tp-comm-overlap-cfg is not read: the userbuffers are sized with Transformer Engine's "
      "default methods; a file that moves reduce-scatter buffers to ring_exchange adds at most " +
      std::to_string(static_cast<long long>(bound_mib)) +
      " MiB outside PyTorch's allocator (transformer_engine/pytorch/module/base.py "
      "initialize_ub)");
}

// A HuggingFace model name as presets spell it: the last path component ("meta-llama/
// Llama-3.1-8B-Instruct" or a local /models/Llama-3.1-8B-Instruct), lowercase, without the
// suffixes of a model's variants (Instruct, Base, chat, ...), which share its tokenizer.
std::string tokenizer_model_key(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (const std::size_t slash = path.rfind('/'); slash != std::string_view::npos) {
    path.remove_prefix(slash + 1);
  }
  std::string key(path);
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (const std::string_view suffix : {"-instruct", "-base", "-chat", "-hf", "-it", "-v0.1"}) {
    if (key.size() > suffix.size() && key.ends_with(suffix)) {
      key.resize(key.size() - suffix.size());
    }
  }
  return key;
}

// The model preset a --tokenizer-model names (HuggingFaceTokenizer): by its config.json's
// repository or by its id.
const ModelPreset* preset_of_tokenizer(std::string_view tokenizer) {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  if (!catalog) return nullptr;
  const std::string key = tokenizer_model_key(tokenizer);
  for (const ModelPreset& preset : catalog->models) {
    std::string_view source = preset.source;
    if (const std::size_t blob = source.find("/blob/"); blob != std::string_view::npos) {
      source = source.substr(0, blob);
    }
    if (tokenizer_model_key(source) == key || preset.id == key) return &preset;
  }
  return nullptr;
}

// Vocabulary: the caller's tokenizer size wins over --vocab-size (the tokenizer provides
// it). --padded-vocab-size wins over both and is used as is (megatron/training/
// argument_utils.py gpt_config_from_args: should_pad_vocab=False), i.e. padding to 1. A
// HuggingFace tokenizer (Megatron-LM's examples pass --tokenizer-model) of a model megamem
// has a preset for gives that preset's vocabulary.
std::optional<Error> read_vocabulary(FlagReader& r, ModelConfig& m, std::int64_t vocab_size) {
  r.read("--vocab-size", m.vocab_size, 1);
  if (vocab_size > 0) m.vocab_size = vocab_size;
  if (r.has("--padded-vocab-size")) {
    r.read("--padded-vocab-size", m.vocab_size, 1);
    m.make_vocab_size_divisible_by = 1;
  }
  if (r.error) return r.error;
  const std::string* tokenizer = r.text("--tokenizer-model");
  if (m.vocab_size == 0 && tokenizer) {
    if (const ModelPreset* preset = preset_of_tokenizer(*tokenizer)) {
      m.vocab_size = preset->model.vocab_size;
      r.warnings.push_back("vocabulary " + std::to_string(m.vocab_size) + " of " + preset->name +
                           " (preset " + preset->id + "), whose tokenizer --tokenizer-model " +
                           *tokenizer + " names; --vocab-size overrides it");
      return std::nullopt;
    }
    return Error{"--vocab-size", "--tokenizer-model " + *tokenizer +
                                     " is not a model megamem has a preset for; pass its "
                                     "vocabulary with --vocab-size"};
  }
  if (m.vocab_size == 0) {
    return Error{"--vocab-size",
                 "the flags name no vocabulary size; pass the tokenizer's "
                 "vocabulary (e.g. 50257 for GPT-2 BPE)"};
  }
  return std::nullopt;
}

// --window-attn-skip-freq (arguments.py moe_freq_type, as --moe-layer-freq): an integer N
// (every N-th layer full attention) or a list expression (parse_window_attn_pattern).
void read_window_attn_skip_freq(FlagReader& r, ModelConfig& m) {
  constexpr std::string_view kFlag = "--window-attn-skip-freq";
  const std::string* value = r.text(kFlag);
  if (!value) return;
  if (value->find('[') == std::string::npos) return r.read(kFlag, m.window_attn_skip_freq, 0);
  // A log's argument dump and a Bridge config print the list Megatron already evaluated as
  // Python's repr, "[0, 1, 1]"; _eval_pattern's alphabet has no spaces, so they are dropped.
  std::string list = *value;
  std::erase(list, ' ');
  Expected<std::vector<std::uint8_t>> pattern = parse_window_attn_pattern(list, m.num_layers);
  if (!pattern) return r.fail(kFlag, pattern.error().message);
  m.window_attn_pattern = std::move(*pattern);
}

// The flags that need the model first (--moe-layer-freq, --window-attn-skip-freq, the virtual
// pipeline degree) and the checks on which flags were given together.
std::optional<Error> read_layout_flags(FlagReader& r, Config& c) {
  read_window_attn_skip_freq(r, c.model);
  if (const std::string* freq = r.text("--moe-layer-freq")) {
    Expected<std::vector<std::uint8_t>> pattern = parse_moe_layer_freq(*freq, c.model.num_layers);
    if (!pattern) return pattern.error();
    if (freq->find('[') == std::string::npos) {
      r.read("--moe-layer-freq", c.model.moe_layer_freq, 1);
    } else {
      c.model.moe_layer_pattern = std::move(*pattern);
    }
  }
  derive_virtual_stages(r, c);
  check_flag_combinations(r, c);
  return r.error;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] parse_moe_layer_freq, split_command_line, parse_megatron_args (and _words)
// ---------------------------------------------------------------------------------------------

Expected<std::vector<std::uint8_t>> parse_window_attn_pattern(std::string_view value,
                                                              int num_layers) {
  constexpr std::string_view kField = "--window-attn-skip-freq";
  Expected<formats::PatternValue> list = formats::evaluate_pattern_expression(value, kField);
  if (!list) return list.error();
  // transformer/utils.py is_layer_window_attention indexes the list by layer number.
  if (!list->is_list || static_cast<std::int64_t>(list->list.size()) != num_layers) {
    return Error{std::string(kField), "expects one 0/1 entry per layer (--num-layers " +
                                          std::to_string(num_layers) + "), got \"" +
                                          std::string(value) + "\""};
  }
  std::vector<std::uint8_t> pattern;
  for (const std::int64_t entry : list->list) {
    if (entry != 0 && entry != 1) {
      return Error{std::string(kField), "entries must be 1 (windowed) or 0 (full attention), got " +
                                            std::to_string(entry)};
    }
    pattern.push_back(static_cast<std::uint8_t>(entry));
  }
  return pattern;
}

Expected<std::vector<std::uint8_t>> parse_moe_layer_freq(std::string_view value, int num_layers) {
  constexpr std::string_view kField = "--moe-layer-freq";
  std::vector<std::uint8_t> pattern;
  // arguments.py moe_freq_type: a value without '[' is int(x); otherwise a list expression.
  if (value.find('[') == std::string_view::npos) {
    std::string_view digits = value;
    while (!digits.empty() && is_space(digits.front())) digits.remove_prefix(1);
    while (!digits.empty() && is_space(digits.back())) digits.remove_suffix(1);
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    int frequency = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), frequency);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      return Error{std::string(kField),
                   "expects an integer or a list expression such as "
                   "\"([0]*3+[1]*58)\", got '" +
                       std::string(value) + "'"};
    }
    if (frequency < 1) {
      return Error{std::string(kField), "frequency must be at least 1, got " + std::string(value)};
    }
    // megatron/core/models/gpt/gpt_layer_specs.py: layer i is MoE when i % N == 0.
    for (int i = 0; i < num_layers; ++i) pattern.push_back(i % frequency == 0 ? 1 : 0);
    return pattern;
  }
  Expected<formats::PatternValue> evaluated = formats::evaluate_pattern_expression(value, kField);
  if (!evaluated) return evaluated.error();
  if (!evaluated->is_list) {
    return Error{std::string(kField), "\"" + std::string(value) + "\" is not a list"};
  }
  // megatron/core/models/gpt/gpt_layer_specs.py: "Invalid length of moe_layer_pattern".
  if (static_cast<std::int64_t>(evaluated->list.size()) != num_layers) {
    return Error{std::string(kField),
                 "pattern \"" + std::string(value) + "\" has " +
                     std::to_string(evaluated->list.size()) +
                     " entries, expected --num-layers = " + std::to_string(num_layers)};
  }
  for (const std::int64_t entry : evaluated->list) {
    if (entry != 0 && entry != 1) {
      return Error{std::string(kField),
                   "pattern entries must be 0 (dense) or 1 (MoE), got " + std::to_string(entry)};
    }
    pattern.push_back(static_cast<std::uint8_t>(entry));
  }
  return pattern;
}

namespace {

// A '...' quote starting at `open`: everything up to the next ' is literal. Returns the index
// after the closing quote.
Expected<std::size_t> append_single_quoted(std::string_view command_line, std::size_t open,
                                           std::string& word) {
  const std::size_t close = command_line.find('\'', open + 1);
  if (close == std::string_view::npos) {
    return Error{"megatron_args",
                 "unterminated ' quote starting at character " + std::to_string(open + 1)};
  }
  word.append(command_line.substr(open + 1, close - open - 1));
  return close + 1;
}

// A "..." quote starting at `open`. Returns the index after the closing quote.
Expected<std::size_t> append_double_quoted(std::string_view command_line, std::size_t open,
                                           std::string& word) {
  const std::size_t n = command_line.size();
  std::size_t j = open + 1;
  while (j < n) {
    const char d = command_line[j];
    if (d == '"') return j + 1;
    // Inside double quotes a backslash only escapes " \ $ ` and newline (POSIX).
    if (d == '\\' && j + 1 < n) {
      const char e = command_line[j + 1];
      if (e == '"' || e == '\\' || e == '$' || e == '`') {
        word += e;
        j += 2;
        continue;
      }
      if (e == '\n') {
        j += 2;
        continue;
      }
    }
    word += d;
    ++j;
  }
  return Error{"megatron_args",
               "unterminated \" quote starting at character " + std::to_string(open + 1)};
}

}  // namespace

Expected<std::vector<std::string>> split_command_line(std::string_view command_line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  std::size_t i = 0;
  const std::size_t n = command_line.size();
  while (i < n) {
    const char c = command_line[i];
    if (is_space(c)) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      ++i;
    } else if (c == '\\') {
      if (i + 1 < n && command_line[i + 1] == '\n') {
        i += 2;  // line continuation
      } else if (i + 1 < n) {
        word += command_line[i + 1];
        in_word = true;
        i += 2;
      } else {
        ++i;  // a trailing backslash escapes nothing
      }
    } else if (c == '\'' || c == '"') {
      const Expected<std::size_t> after_quote = c == '\''
                                                    ? append_single_quoted(command_line, i, word)
                                                    : append_double_quoted(command_line, i, word);
      if (!after_quote) return after_quote.error();
      in_word = true;
      i = *after_quote;
    } else {
      word += c;
      in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

namespace {

// The model's architecture: the GPT flags, then the layer kinds of hybrid, windowed and
// linear-attention models.
void read_architecture(FlagReader& r, ModelConfig& m) {
  read_model(r, m);
  read_hybrid(r, m);
  read_window_size(r, m);
  read_attention_variant(r, m);
}

}  // namespace

Expected<MegatronArgs> parse_megatron_args(std::string_view command_line, std::int64_t world_size,
                                           std::int64_t vocab_size) {
  Expected<std::vector<std::string>> words = split_command_line(command_line);
  if (!words) return words.error();
  return parse_megatron_words(*words, world_size, vocab_size);
}

Expected<MegatronArgs> parse_megatron_words(const std::vector<std::string>& words,
                                            std::int64_t world_size, std::int64_t vocab_size) {
  if (world_size < 1) return Error{"world_size", "must be at least 1"};
  if (vocab_size < 0) return Error{"vocab_size", "must not be negative"};
  std::vector<FlagOccurrence> flags = group_flags(words);
  if (std::optional<Error> error = read_encoder_aliases(flags)) return *error;

  MegatronArgs out;
  std::map<std::string, std::vector<std::string>, std::less<>> modeled_values;
  for (const FlagOccurrence& flag : flags) {
    if (const std::optional<FlagArity> arity = modeled_flag_arity(flag.name)) {
      if (*arity == FlagArity::none && !flag.values.empty()) {
        return Error{flag.name, "takes no value, got '" + join_words(flag.values) + "'"};
      }
      if (*arity != FlagArity::none && flag.values.empty()) {
        return Error{flag.name, "needs a value"};
      }
      if (*arity == FlagArity::one && flag.values.size() > 1) {
        return Error{flag.name, "takes one value, got '" + join_words(flag.values) + "'"};
      }
      modeled_values[flag.name] = flag.values;
    } else if (is_unmodeled_flag(flag.name)) {
      modeled_values[flag.name] = flag.values;  // read by the checks; listed below
    } else if (flag.name.rfind("--", 0) == 0 && formats::is_megatron_flag(flag.name.substr(2))) {
      add_unique(out.ignored_flags, flag.name);
    } else {
      add_unique(out.unknown_flags, flag.name);
    }
  }

  FlagReader r(std::move(modeled_values));
  for (const std::string_view required : kRequiredFlags) {
    if (!r.has(required) && !(required == "--num-layers" && has_hybrid_pattern(r))) {
      return Error{std::string(required), "is required (megatron/training/arguments.py)"};
    }
  }

  Config& c = out.config;
  c.parallel.world_size = world_size;
  refuse_unmodeled_choices(r);
  read_registry_flags(r, c);
  read_architecture(r, c.model);
  read_parallel(r, c.parallel);
  read_training(r, c.training);
  read_fp8(r, c);
  read_optimizer(r, c.optimizer, c.training.params_dtype);
  read_recompute(r, c.training.recompute);
  read_offload(r, c.training.offload);
  read_cuda_graphs(r, c.training);
  read_fsdp(r, c.parallel.fsdp, c.optimizer, c.training.params_dtype);
  if (r.error) return *r.error;
  if (std::optional<Error> error = read_vocabulary(r, c.model, vocab_size)) return *error;
  if (std::optional<Error> error = read_layout_flags(r, c)) return *error;
  out.warnings = std::move(r.warnings);

  note_unmodeled_flags(r, flags, c.training.params_dtype, out);
  note_userbuffer_cfg(r, c, out);
  return out;
}

bool is_megatron_lm_flag(std::string_view flag) {
  if (flag.size() < 3 || flag.substr(0, 2) != "--") return false;
  flag.remove_prefix(2);
  return formats::is_megatron_flag(flag.substr(0, flag.find('=')));
}

}  // namespace megamem
