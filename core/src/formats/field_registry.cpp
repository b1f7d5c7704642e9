// The field registry (fields.hpp): one row per Config field.
//
// Index:
//   [rows]     the row builder and the accessor macros
//   [flags]    Megatron spellings of the multi-flag fields
//   [table]    the table
//   [api]      look-ups, link text, Megatron flags
//
// Share-link keys, defaults and bounds are frozen by link version 1 (docs/share-links.md):
// every link that decodes today must decode to the same Config. Megatron flags follow
// megatron/training/arguments.py (NVIDIA/Megatron-LM d98e8a6); Config{}'s value of a field is
// Megatron's default, so a one-to-one flag is written only when the value differs from it.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "megamem/fields.hpp"
#include "number_text.hpp"

namespace megamem {
namespace {

// ---- [rows] -------------------------------------------------------------------------------

FieldGroup group_of(std::string_view name) {
  const std::string_view head = name.substr(0, name.find('.'));
  if (head == "parallel") return FieldGroup::parallel;
  if (head == "training") return FieldGroup::training;
  if (head == "optimizer") return FieldGroup::optimizer;
  if (head == "runtime") return FieldGroup::runtime;
  if (head == "device") return FieldGroup::device;
  return FieldGroup::model;
}

// Builds a row: the macros below set the accessors, these calls the rest.
class Row {
 public:
  Row(std::string_view name, FieldKind kind, std::string_view key, std::string_view def) {
    f_.name = name;
    f_.group = group_of(name);
    f_.kind = kind;
    f_.link_key = key;
    f_.link_default = def;
  }
  ConfigField& field() { return f_; }
  // A one-to-one Megatron flag (reals: its range).
  Row& flag(std::string_view name, FlagForm form, double min = 1.0, double max = 0.0) {
    f_.flag = name;
    f_.flag_form = form;
    f_.flag_arity = form == FlagForm::store_true || form == FlagForm::store_false ? FlagArity::none
                                                                                  : FlagArity::one;
    f_.flag_min = min;
    f_.flag_max = max;
    if (f_.flag_help.empty()) f_.flag_help = name;
    return *this;
  }
  // A flag the importer reads by code; written one-to-one (form) or by write_flags. Without a
  // form, `arity` says how many words it takes.
  Row& read_by_code(std::string_view name, FlagForm form = FlagForm::none,
                    FlagArity arity = FlagArity::one) {
    flag(name, form);
    if (form == FlagForm::none) f_.flag_arity = arity;
    f_.read_by_importer = true;
    return *this;
  }
  // Further flags megatron_args.cpp reads into the field (fields.hpp FlagSpelling).
  Row& also_reads(std::initializer_list<FlagSpelling> spellings) {
    f_.other_flags.insert(f_.other_flags.end(), spellings.begin(), spellings.end());
    return *this;
  }
  Row& needs(std::string_view flag, std::string_view value = "") {
    f_.flag_needs = flag;
    f_.flag_needs_value = value;
    return *this;
  }
  Row& bridge(std::string_view bridge_field) {
    f_.bridge_field = bridge_field;
    return *this;
  }
  Row& writes(void (*write)(const Config&, std::vector<MegatronFlag>&)) {
    f_.write_flags = write;
    return *this;
  }
  Row& always() {
    f_.flag_always = true;
    return *this;
  }
  Row& moe_only() {
    f_.moe_only = true;
    return *this;
  }
  Row& run_setting() {
    f_.run_setting = true;
    return *this;
  }
  Row& environment() {
    f_.environment = true;
    return *this;
  }
  Row& scope(FieldScope part) {
    f_.scope = part;
    return *this;
  }
  Row& json(std::string_view key) {
    f_.json_key = key;
    return *this;
  }
  // The settings row: label, the flag as shown (default: the flag), effect on memory.
  Row& ui(std::string_view label, std::string_view help, std::string_view tooltip) {
    f_.label = label;
    if (!help.empty()) f_.flag_help = help;
    f_.tooltip = tooltip;
    return *this;
  }
  Row& range(double min, double max, double step, std::string_view format = "") {
    f_.ui_min = min;
    f_.ui_max = max;
    f_.ui_step = step;
    f_.ui_format = format;
    return *this;
  }
  Row& choices(std::vector<FieldChoice> choices) {
    f_.choices = std::move(choices);
    return *this;
  }
  operator ConfigField() const { return f_; }  // NOLINT: rows convert into the table

 private:
  ConfigField f_;
};

// Each macro binds a link key and its version-1 default to a Config member path.
#define MM_INT(key, def, path, lo, hi)                                          \
  [] {                                                                          \
    Row r(#path, FieldKind::integer, key, def);                                 \
    r.field().get_int = [](const Config& c) -> std::int64_t { return c.path; }; \
    r.field().set_int = [](Config& c, std::int64_t v) {                         \
      c.path = static_cast<std::remove_reference_t<decltype(c.path)>>(v);       \
    };                                                                          \
    r.field().min_int = lo;                                                     \
    r.field().max_int = hi;                                                     \
    r.field().wide = sizeof(Config{}.path) > sizeof(int);                       \
    return r;                                                                   \
  }()
#define MM_BOOL(key, def, path)                                                         \
  [] {                                                                                  \
    Row r(#path, FieldKind::boolean, key, def);                                         \
    r.field().get_int = [](const Config& c) -> std::int64_t { return c.path ? 1 : 0; }; \
    r.field().set_int = [](Config& c, std::int64_t v) { c.path = v != 0; };             \
    r.field().max_int = 1;                                                              \
    return r;                                                                           \
  }()
#define MM_CHOICE(key, def, path)                                         \
  [] {                                                                    \
    Row r(#path, FieldKind::choice, key, def);                            \
    r.field().get_int = [](const Config& c) -> std::int64_t {             \
      return static_cast<std::int64_t>(c.path);                           \
    };                                                                    \
    r.field().set_int = [](Config& c, std::int64_t v) {                   \
      c.path = static_cast<std::remove_reference_t<decltype(c.path)>>(v); \
    };                                                                    \
    return r;                                                             \
  }()
#define MM_REAL(key, def, path, lo, hi)                                    \
  [] {                                                                     \
    Row r(#path, FieldKind::real, key, def);                               \
    r.field().get_real = [](const Config& c) -> double { return c.path; }; \
    r.field().set_real = [](Config& c, double v) { c.path = v; };          \
    r.field().min_real = lo;                                               \
    r.field().max_real = hi;                                               \
    return r;                                                              \
  }()
#define MM_TEXT(key, path, limit)                                       \
  [] {                                                                  \
    Row r(#path, FieldKind::text, key, "");                             \
    r.field().text = [](Config& c) -> std::string* { return &c.path; }; \
    r.field().max_int = limit;                                          \
    return r;                                                           \
  }()
#define MM_LIST(key, path)                                                                \
  [] {                                                                                    \
    Row r(#path, FieldKind::module_list, key, "");                                        \
    r.field().get_list = [](const Config& c) { return module_name_list(c.path); };        \
    r.field().set_list = [](Config& c, const std::vector<std::string>& names,             \
                            std::string& unknown) {                                       \
      using Set = std::remove_reference_t<decltype(c.path)>;                              \
      const auto set = module_set_from_names<typename Set::module_type>(names, &unknown); \
      if (set) c.path = *set;                                                             \
      return set.has_value();                                                             \
    };                                                                                    \
    r.field().list_names = [] {                                                           \
      using Set = std::remove_reference_t<decltype(Config{}.path)>;                       \
      return known_module_names<typename Set::module_type>();                             \
    };                                                                                    \
    return r;                                                                             \
  }()
#define MM_PATTERN(key, path, max_value)                                                 \
  [] {                                                                                   \
    Row r(#path, FieldKind::pattern, key, "");                                           \
    r.field().pattern = [](Config& c) -> std::vector<std::uint8_t>* { return &c.path; }; \
    r.field().max_int = max_value;                                                       \
    return r;                                                                            \
  }()

constexpr std::int64_t kMaxGpus = std::int64_t{1} << 20;  // normalize()'s limit
constexpr std::int64_t kMaxDim = std::int64_t{1} << 22;   // normalize()'s sanity bound
constexpr std::int64_t kMaxCount = 1'000'000'000;
constexpr double kMaxReal = 1.0e9;

// Spellings shared by several rows: {link, json, megatron, label}.
const std::vector<FieldChoice> kOptimizerChoices = {{"adam", "adam", "adam", "Adam"},
                                                    {"sgd", "sgd", "sgd", "SGD"},
                                                    {"muon", "muon", "muon", "Muon"}};
std::vector<FieldChoice> dtype_choices(bool bf16, bool fp16, bool fp8) {
  return {{"fp32", "fp32", "fp32", "fp32"},
          {"bf16", "bf16", bf16 ? "bf16" : "", "bf16"},
          {"fp16", "fp16", fp16 ? "fp16" : "", "fp16"},
          {"fp8", "fp8", fp8 ? "fp8" : "", "fp8"}};
}

// ---- [flags] ------------------------------------------------------------------------------

void add_flag(std::vector<MegatronFlag>& flags, std::string name, std::string value = "") {
  flags.push_back({std::move(name), {}});
  if (!value.empty()) flags.back().values.push_back(std::move(value));
}

// --num-query-groups counts only with --group-query-attention (arguments.py).
void write_query_groups(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.model.num_query_groups <= 0) return;
  add_flag(flags, "--group-query-attention");
  add_flag(flags, "--num-query-groups", std::to_string(c.model.num_query_groups));
}

void write_ffn(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.model.ffn_hidden_size > 0) {
    add_flag(flags, "--ffn-hidden-size", std::to_string(c.model.ffn_hidden_size));
  } else if (c.model.activation == Activation::swiglu) {
    // Config's 0 means 4h, but Megatron's SwiGLU default is 8h/3 (arguments.py), so say it.
    add_flag(flags, "--ffn-hidden-size", std::to_string(4 * std::int64_t{c.model.hidden_size}));
  }
}

void write_activation(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.model.activation == Activation::swiglu) add_flag(flags, "--swiglu");
  if (c.model.activation == Activation::squared_relu) add_flag(flags, "--squared-relu");
}

// --window-size is Megatron's (left, right) tuple; causal windows have right = 0
// (arguments.py tuple_type; Megatron-Bridge gpt_oss_bridge.py writes (sliding_window - 1, 0)).
void write_window(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.model.window_size > 0) {
    add_flag(flags, "--window-size", std::to_string(c.model.window_size) + ",0");
  }
}

// A 0/1 layer pattern as a run-length list expression, e.g. "([0]*3+[1]*58)".
std::string pattern_expression(const std::vector<std::uint8_t>& pattern) {
  std::string expression = "(";
  std::size_t i = 0;
  while (i < pattern.size()) {
    std::size_t run = 1;
    while (i + run < pattern.size() && pattern[i + run] == pattern[i]) ++run;
    if (expression.size() > 1) expression += '+';
    expression += "[" + std::to_string(pattern[i]) + "]*" + std::to_string(run);
    i += run;
  }
  return expression + ")";
}

// --window-attn-skip-freq: the list when the layers have one, else the integer
// (transformer/utils.py is_layer_window_attention takes either).
void write_window_attn_skip_freq(const Config& c, std::vector<MegatronFlag>& flags) {
  if (!c.model.window_attn_pattern.empty()) {
    add_flag(flags, "--window-attn-skip-freq", pattern_expression(c.model.window_attn_pattern));
  } else if (c.model.window_attn_skip_freq != 0) {
    add_flag(flags, "--window-attn-skip-freq", std::to_string(c.model.window_attn_skip_freq));
  }
}

void write_moe_layer_freq(const Config& c, std::vector<MegatronFlag>& flags) {
  if (!c.model.moe_layer_pattern.empty()) {
    add_flag(flags, "--moe-layer-freq", pattern_expression(c.model.moe_layer_pattern));
  } else if (c.model.moe_layer_freq != 1) {
    add_flag(flags, "--moe-layer-freq", std::to_string(c.model.moe_layer_freq));
  }
}

// An explicit layout replaces the virtual stage count.
void write_virtual_stages(const Config& c, std::vector<MegatronFlag>& flags) {
  const ParallelConfig& p = c.parallel;
  if (!p.pipeline_layout.empty()) {
    add_flag(flags, "--pipeline-model-parallel-layout", p.pipeline_layout);
  } else if (p.virtual_stages_per_pipeline_rank > 1) {
    add_flag(flags, "--num-virtual-stages-per-pipeline-rank",
             std::to_string(p.virtual_stages_per_pipeline_rank));
  }
}

void write_params_dtype(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.training.params_dtype == DType::bf16) add_flag(flags, "--bf16");
  if (c.training.params_dtype == DType::fp16) add_flag(flags, "--fp16");
}

// FP8 recipes in enumerator order: none (no flag), then Megatron's --fp8-recipe choices.
const std::vector<FieldChoice> kFp8RecipeChoices = {
    {"none", "none", "", "none"},
    {"delayed", "delayed", "delayed", "delayed"},
    {"tensorwise", "tensorwise", "tensorwise", "tensorwise"},
    {"mxfp8", "mxfp8", "mxfp8", "mxfp8"},
    {"blockwise", "blockwise", "blockwise", "blockwise"}};

// --fp8-format turns FP8 on (transformer_config.py), so it is written only with a recipe.
void write_fp8_format(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.training.fp8_recipe == Fp8Recipe::none) return;
  add_flag(flags, "--fp8-format", c.training.fp8_format == Fp8Format::e4m3 ? "e4m3" : "hybrid");
}

void write_fp8(const Config& c, std::vector<MegatronFlag>& flags) {
  const Fp8Recipe recipe = c.training.fp8_recipe;
  if (recipe == Fp8Recipe::none) return;
  // "delayed" is Megatron's default recipe.
  const std::string_view spelling = kFp8RecipeChoices[static_cast<std::size_t>(recipe)].megatron;
  if (recipe != Fp8Recipe::delayed) add_flag(flags, "--fp8-recipe", std::string(spelling));
}

// --fp8-recipe alone (no --fp8-format): the optimizer's recipe when it is not Megatron's
// default; under FP8 write_fp8 writes the one recipe both use.
void write_optimizer_fp8_recipe(const Config& c, std::vector<MegatronFlag>& flags) {
  const Fp8Recipe recipe = c.optimizer.fp8_recipe;
  if (c.training.fp8_recipe != Fp8Recipe::none || recipe == Fp8Recipe::delayed ||
      recipe == Fp8Recipe::none) {
    return;
  }
  const std::string_view spelling = kFp8RecipeChoices[static_cast<std::size_t>(recipe)].megatron;
  add_flag(flags, "--fp8-recipe", std::string(spelling));
}

// Megatron-FSDP or torch FSDP2 and the Megatron-FSDP settings that differ from the
// defaults read_fsdp() assumes (megatron/training/arguments.py, _add_distributed_args).
void write_fsdp(const Config& c, std::vector<MegatronFlag>& flags) {
  const FsdpConfig& f = c.parallel.fsdp;
  if (f.impl == FsdpImpl::none) return;
  add_flag(flags, f.impl == FsdpImpl::megatron ? "--use-megatron-fsdp" : "--use-torch-fsdp2");
  add_flag(flags, "--megatron-fsdp-main-params-dtype",
           std::string(dtype_name(f.main_params_dtype)));
  add_flag(flags, "--megatron-fsdp-main-grads-dtype", std::string(dtype_name(f.main_grads_dtype)));
}

void write_cross_entropy(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.training.cross_entropy != CrossEntropyImpl::unfused) {
    add_flag(flags, "--cross-entropy-loss-fusion");
  }
  if (c.training.cross_entropy == CrossEntropyImpl::te_fused) {
    add_flag(flags, "--cross-entropy-fusion-impl", "te");
  }
}

void write_router_dtype(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.training.moe_router_fp32) add_flag(flags, "--moe-router-dtype", "fp32");
}

// transformer_config.py: --first-last-layers-bf16 with the two layer counts (1 by default);
// meaningful only under FP8.
void write_fp8_bf16_layers(const Config& c, std::vector<MegatronFlag>& flags) {
  const TrainingConfig& t = c.training;
  if (t.fp8_recipe == Fp8Recipe::none ||
      t.fp8_bf16_layers_at_start + t.fp8_bf16_layers_at_end == 0) {
    return;
  }
  add_flag(flags, "--first-last-layers-bf16");
  add_flag(flags, "--num-layers-at-start-in-bf16", std::to_string(t.fp8_bf16_layers_at_start));
  add_flag(flags, "--num-layers-at-end-in-bf16", std::to_string(t.fp8_bf16_layers_at_end));
}

// arguments.py: MTP depths ('/' parts) and pipeline segments ('|') exist only in the unified
// --hybrid-layer-pattern syntax; such a pattern is written under that name. Any other pattern
// keeps --hybrid-override-pattern, which every release reads (later ones as a deprecated alias).
void write_hybrid_pattern(const Config& c, std::vector<MegatronFlag>& flags) {
  const std::string& pattern = c.model.hybrid_layer_pattern;
  if (pattern.empty()) return;
  const bool unified = pattern.find_first_of("/|") != std::string::npos;
  add_flag(flags, unified ? "--hybrid-layer-pattern" : "--hybrid-override-pattern", pattern);
}

// Either spelling means the same once read back (arguments.py picks by --swiglu).
void write_bias_activation_fusion(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.training.bias_activation_fusion) return;
  add_flag(flags, "--no-bias-gelu-fusion");
  add_flag(flags, "--no-bias-swiglu-fusion");
}

void write_recompute(const Config& c, std::vector<MegatronFlag>& flags) {
  const RecomputeConfig& rc = c.training.recompute;
  if (rc.granularity == RecomputeGranularity::full) {
    add_flag(flags, "--recompute-granularity", "full");
    add_flag(flags, "--recompute-method",
             rc.method == RecomputeMethod::block ? "block" : "uniform");
    add_flag(flags, "--recompute-num-layers", std::to_string(rc.num_layers));
  } else if (rc.granularity == RecomputeGranularity::selective) {
    add_flag(flags, "--recompute-granularity", "selective");
    if (!rc.modules.empty()) flags.push_back({"--recompute-modules", module_name_list(rc.modules)});
  }
}

void write_offload_modules(const Config& c, std::vector<MegatronFlag>& flags) {
  const OffloadModules& modules = c.training.offload.offload_modules;
  if (!modules.empty()) flags.push_back({"--offload-modules", module_name_list(modules)});
}

void write_cuda_graph_modules(const Config& c, std::vector<MegatronFlag>& flags) {
  const CudaGraphModules& modules = c.training.cuda_graph_modules;
  if (c.training.cuda_graph_impl == CudaGraphImpl::none || modules.empty()) return;
  flags.push_back({"--cuda-graph-modules", module_name_list(modules)});
}

// Only bf16 params reduce gradients in bf16 on request (arguments.py validate_args).
void write_grad_reduce(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.optimizer.grad_reduce_in_bf16 && c.training.params_dtype == DType::bf16) {
    add_flag(flags, "--grad-reduce-in-bf16");
  }
}

// ---- [table] ------------------------------------------------------------------------------

std::vector<ConfigField> job_rows() {
  return {
      MM_INT("gpus", "1", parallel.world_size, 1, kMaxGpus)
          .json("world_size")
          .ui("GPUs", "world size (WORLD_SIZE, nodes x GPUs per node)",
              "Data parallel = GPUs / (TP x CP x PP): shards the distributed optimizer and "
              "gradient buffers.")
          .range(1, 0, 8),
      MM_INT("tp", "1", parallel.tensor_parallel, 1, kMaxDim)
          .flag("--tensor-model-parallel-size", FlagForm::value)
          .json("tensor_model_parallel_size")
          .ui("TP", "",
              "Splits each layer's weights and most activations TP ways; heads and FFN must "
              "divide.")
          .range(1, 0, 1),
      MM_INT("pp", "1", parallel.pipeline_parallel, 1, kMaxDim)
          .flag("--pipeline-model-parallel-size", FlagForm::value)
          .json("pipeline_model_parallel_size")
          .ui("PP", "",
              "Splits the layers over PP ranks; the first rank keeps activations of up to PP "
              "micro-batches in flight.")
          .range(1, 0, 1),
      MM_INT("vpp", "1", parallel.virtual_stages_per_pipeline_rank, 1, kMaxDim)
          .read_by_code("--num-virtual-stages-per-pipeline-rank")
          .also_reads({{"--num-layers-per-virtual-pipeline-stage", FlagArity::one},
                       {"--no-overlap-p2p-communication", FlagArity::none}})
          .writes(write_virtual_stages)
          .json("virtual_stages_per_pipeline_rank")
          .ui("VPP", "",
              "Interleaved schedule: more, smaller chunks per rank and more micro-batches in "
              "flight.")
          .range(1, 0, 1),
      MM_INT("cp", "1", parallel.context_parallel, 1, kMaxDim)
          .flag("--context-parallel-size", FlagForm::value)
          .json("context_parallel_size")
          .ui("CP", "",
              "Splits the sequence: activations shrink CP ways; the optimizer shards over "
              "DP x CP.")
          .range(1, 0, 1),
      MM_INT("ep", "1", parallel.expert_parallel, 1, kMaxDim)
          .flag("--expert-model-parallel-size", FlagForm::value)
          .json("expert_model_parallel_size")
          .ui("EP", "", "Splits the routed experts: E / EP experts of weights per GPU.")
          .range(1, 0, 1),
      MM_INT("etp", "0", parallel.expert_tensor_parallel, 0, kMaxDim)
          .flag("--expert-tensor-parallel-size", FlagForm::value)
          .json("expert_tensor_parallel_size")
          .ui("ETP", "--expert-tensor-parallel-size (0 = TP)",
              "Tensor parallelism inside each expert."),
      // arguments.py validate_args drops --sequence-parallel when TP = 1.
      MM_BOOL("sp", "1", parallel.sequence_parallel)
          .read_by_code("--sequence-parallel", FlagForm::store_true)
          .json("sequence_parallel")
          .ui("sequence parallel", "",
              "With TP > 1, norms and dropouts keep 1/TP of the sequence (needed for MoE "
              "with TP)."),
  };
}

std::vector<ConfigField> batch_rows() {
  return {
      MM_INT("mbs", "1", training.micro_batch_size, 1, kMaxDim)
          .flag("--micro-batch-size", FlagForm::value)
          .bridge("train.micro_batch_size")
          .always()
          .json("micro_batch_size")
          .ui("micro-batch", "", "Sequences per forward: every saved activation scales with it.")
          .range(1, 0, 1),
      MM_INT("gbs", "0", training.global_batch_size, 0, kMaxCount)
          .flag("--global-batch-size", FlagForm::value)
          .bridge("train.global_batch_size")
          .json("global_batch_size")
          .ui("global batch", "--global-batch-size (0 = micro-batch x DP)",
              "Sets the micro-batches per step; memory changes only through the pipeline "
              "schedule's warm-up.")
          .range(0, 0, 64),
      MM_INT("seq", "4096", training.seq_length, 1, kMaxDim)
          .flag("--seq-length", FlagForm::value)
          .bridge("model.seq_length")
          .json("seq_length")
          .ui("sequence length", "",
              "Tokens per sequence: activations scale with it (unfused attention with its "
              "square).")
          .range(1, 0, 512),
  };
}

std::vector<ConfigField> recompute_rows() {
  return {
      MM_CHOICE("recompute", "none", training.recompute.granularity)
          .choices({{"none", "none", "", "none"},
                    {"selective", "selective", "selective", "selective"},
                    {"full", "full", "full", "full"}})
          .read_by_code("--recompute-granularity")
          .also_reads({{"--recompute-activations", FlagArity::none},
                       {"--checkpoint-activations", FlagArity::none},
                       {"--moe-layer-recompute", FlagArity::none}})
          .writes(write_recompute)
          .json("recompute_granularity")
          .ui("recompute", "",
              "selective drops chosen modules' saved tensors; full keeps one input per "
              "layer group and re-runs it in backward."),
      MM_CHOICE("recompute-method", "uniform", training.recompute.method)
          .choices(
              {{"uniform", "uniform", "uniform", "uniform"}, {"block", "block", "block", "block"}})
          .read_by_code("--recompute-method")
          .needs("--recompute-granularity", "full")
          .json("recompute_method")
          .ui("method", "",
              "uniform: groups of N layers; block: the first N layers of each chunk."),
      MM_INT("recompute-layers", "1", training.recompute.num_layers, 0, kMaxDim)
          .read_by_code("--recompute-num-layers")
          .needs("--recompute-granularity", "full")
          .json("recompute_num_layers")
          .ui("recompute layers", "", "Layers per group (uniform) or per chunk (block).")
          .range(1, 0, 1),
      MM_LIST("recompute-modules", training.recompute.modules)
          .read_by_code("--recompute-modules", FlagForm::none, FlagArity::list)
          .needs("--recompute-granularity", "selective")
          .json("recompute_modules")
          .ui("recompute modules", "",
              "Each checked module's saved tensors are dropped and recomputed in "
              "backward (none checked = core_attn)."),
      MM_BOOL("distribute-saved", "0", training.recompute.distribute_saved_activations)
          .read_by_code("--distribute-saved-activations", FlagForm::store_true)
          .json("distribute_saved_activations")
          .ui("distribute saved", "",
              "Full recompute's kept inputs split over TP (not with sequence "
              "parallel)."),
      MM_BOOL("dist-opt", "1", optimizer.use_distributed_optimizer)
          .read_by_code("--use-distributed-optimizer", FlagForm::store_true)
          .json("use_distributed_optimizer")
          .ui("distributed optimizer", "",
              "Shards master weights and moments over data parallel ranks."),
  };
}

std::vector<ConfigField> pipeline_rows() {
  return {
      MM_INT("pp-first", "0", parallel.decoder_first_pipeline_num_layers, 0, kMaxDim)
          .flag("--decoder-first-pipeline-num-layers", FlagForm::value)
          .bridge("model.num_layers_in_first_pipeline_stage")
          .json("decoder_first_pipeline_num_layers")
          .ui("first-stage layers", "", "Layers on the first stage (0 = even split)."),
      MM_INT("pp-last", "0", parallel.decoder_last_pipeline_num_layers, 0, kMaxDim)
          .flag("--decoder-last-pipeline-num-layers", FlagForm::value)
          .bridge("model.num_layers_in_last_pipeline_stage")
          .json("decoder_last_pipeline_num_layers")
          .ui("last-stage layers", "", "Layers on the last stage (0 = even split)."),
      MM_BOOL("pp-emb", "0", parallel.account_for_embedding_in_pipeline_split)
          .flag("--account-for-embedding-in-pipeline-split", FlagForm::store_true)
          .json("account_for_embedding_in_pipeline_split")
          .ui("embedding as a layer", "", "The embedding counts as a layer when splitting."),
      MM_BOOL("pp-loss", "0", parallel.account_for_loss_in_pipeline_split)
          .flag("--account-for-loss-in-pipeline-split", FlagForm::store_true)
          .json("account_for_loss_in_pipeline_split")
          .ui("loss as a layer", "", "The loss counts as a layer when splitting."),
      MM_TEXT("pp-layout", parallel.pipeline_layout, 4096)
          .read_by_code("--pipeline-model-parallel-layout")  // written with vpp
          .json("pipeline_model_parallel_layout")
          .ui("layout", "",
              "Explicit stages, e.g. Et*4|(t*4|)*14tmL (E embedding, t layer, m MTP, L "
              "loss).")
          .range(0, 0, 1, "e.g. Et*4|(t*4|)*14tmL"),
      MM_INT("vpp-group", "0", parallel.microbatch_group_size_per_vp_stage, 0, kMaxDim)
          .flag("--microbatch-group-size-per-virtual-pipeline-stage", FlagForm::value)
          .json("microbatch_group_size_per_vp_stage")
          .ui("VPP group", "", "Micro-batches per group of the interleaved schedule (0 = PP)."),
      MM_INT("dist-opt-instances", "1", parallel.num_distributed_optimizer_instances, 1, kMaxDim)
          .flag("--num-distributed-optimizer-instances", FlagForm::value)
          .bridge("ddp.num_distributed_optimizer_instances")
          .json("num_distributed_optimizer_instances")
          .ui("optimizer instances", "",
              "Replicas of the distributed optimizer: each shards over fewer GPUs.")
          .range(1, 0, 1),
  };
}

std::vector<ConfigField> numerics_rows() {
  return {
      MM_CHOICE("dtype", "bf16", training.params_dtype)
          .choices({{"fp32", "fp32", "", "fp32"},
                    {"bf16", "bf16", "", "bf16"},
                    {"fp16", "fp16", "", "fp16"},
                    {"", "fp8", "", ""}})
          .read_by_code("--bf16", FlagForm::none, FlagArity::none)
          .also_reads({{"--fp16", FlagArity::none}})
          .writes(write_params_dtype)
          .json("params_dtype")
          .ui("precision", "--bf16 / --fp16 (default fp32)",
              "bf16/fp16 weights take 2 bytes with fp32 main grads and master weights; fp32 "
              "takes 4."),
      // E4M3 or hybrid (E5M2 gradients): Transformer Engine stores one byte either way
      // (common/recipe/__init__.py, Format), so the choice changes no memory; it is kept so
      // that the flags and Bridge overrides written back say what was read.
      MM_CHOICE("fp8-format", "hybrid", training.fp8_format)
          .json("fp8_format")
          .choices({{"hybrid", "hybrid", "hybrid", "hybrid"}, {"e4m3", "e4m3", "e4m3", "e4m3"}})
          .read_by_code("--fp8-format")
          .bridge("mixed_precision.fp8")
          .writes(write_fp8_format)
          .ui("FP8 format", "--fp8-format",
              "E4M3 everywhere, or E5M2 for gradients (hybrid): one byte either way, no memory "
              "change."),
      MM_CHOICE("fp8", "none", training.fp8_recipe)
          .json("fp8_recipe")
          .choices(kFp8RecipeChoices)
          .read_by_code("--fp8-recipe")
          .needs("--fp8-format")  // transformer_config.py: FP8 is on only with a format
          .bridge("mixed_precision.fp8_recipe")
          .writes(write_fp8)
          .ui("FP8 recipe", "--fp8-format with --fp8-recipe",
              "FP8 GEMMs: 1-byte saved GEMM inputs and cached FP8 weight copies (Transformer "
              "Engine)."),
      MM_BOOL("fp8-param-gather", "0", training.fp8_param_gather)
          .json("fp8_param_gather")
          .flag("--fp8-param-gather", FlagForm::store_true)
          .bridge("mixed_precision.fp8_param_gather")
          .ui("FP8 param gather", "", "GEMM weights stored in 1 byte."),
      // transformer_config.py: --first-last-layers-bf16 keeps --num-layers-at-start-in-bf16 and
      // --num-layers-at-end-in-bf16 decoder layers (1 each by default) out of FP8.
      MM_INT("fp8-bf16-first", "0", training.fp8_bf16_layers_at_start, 0, kMaxDim)
          .json("fp8_bf16_layers_at_start")
          .read_by_code("--num-layers-at-start-in-bf16")
          .also_reads({{"--first-last-layers-bf16", FlagArity::none}})
          .writes(write_fp8_bf16_layers)
          .ui("FP8: first layers in bf16", "--first-last-layers-bf16 --num-layers-at-start-in-bf16",
              "These leading decoder layers keep bf16 activations and no FP8 weight copies.")
          .range(0.0, 64.0, 1.0),
      MM_INT("fp8-bf16-last", "0", training.fp8_bf16_layers_at_end, 0, kMaxDim)
          .json("fp8_bf16_layers_at_end")
          .read_by_code("--num-layers-at-end-in-bf16")
          .ui("FP8: last layers in bf16", "--first-last-layers-bf16 --num-layers-at-end-in-bf16",
              "These trailing decoder layers keep bf16 activations and no FP8 weight copies.")
          .range(0.0, 64.0, 1.0),
  };
}

// The transformer implementation and its fused kernels' choices.
std::vector<ConfigField> implementation_rows() {
  return {
      MM_CHOICE("impl", "te", training.transformer_impl)
          .json("transformer_impl")
          .choices({{"te", "transformer_engine", "transformer_engine", "Transformer Engine"},
                    {"local", "local", "local", "local"}})
          .flag("--transformer-impl", FlagForm::value)
          .ui("transformer impl", "",
              "Transformer Engine fuses norms into linears; the local spec saves more."),
      // megatron/core/transformer/enums.py AttnBackend.
      MM_CHOICE("attn", "auto", training.attention_backend)
          .json("attention_backend")
          .choices({{"auto", "auto", "auto", "auto"},
                    {"flash", "flash", "flash", "flash"},
                    {"fused", "fused", "fused", "fused"},
                    {"unfused", "unfused", "unfused", "unfused"},
                    {"local", "local", "local", "local"}})
          .flag("--attention-backend", FlagForm::value)
          .ui("attention backend", "",
              "Flash/fused keep no seq x seq scores; unfused saves the probabilities."),
      // dsa_kernels.py: the fused sparse kernels, or Megatron-Core's PyTorch reference.
      MM_CHOICE("dsa-kernels", "none", training.dsa_kernel_backend)
          .json("dsa_kernel_backend")
          .choices({{"none", "none", "none", "PyTorch reference"},
                    {"tilelang", "tilelang", "tilelang", "TileLang"},
                    {"cudnn", "cudnn", "cudnn", "cuDNN"}})
          .flag("--dsa-kernel-backend", FlagForm::value)
          .ui("DSA kernels", "",
              "The PyTorch reference keeps dense fp32 scores per head (tests only); the fused "
              "kernels keep the top-k indices and the latent output."),
      MM_REAL("dsa-loss", "0", training.dsa_indexer_loss_coeff, 0.0, kMaxReal)
          .json("dsa_indexer_loss_coeff")
          .flag("--dsa-indexer-loss-coeff", FlagForm::value, 0.0, 1e6)
          .ui("DSA indexer loss", "--dsa-indexer-loss-coeff (0 = none)",
              "Trains the indexer with a KL loss against the attention; keeps its gradients "
              "from the forward.")
          .range(0.0, 1.0, 0.001, "%.4f"),
      MM_BOOL("dsa-sparse-loss", "0", training.dsa_indexer_use_sparse_loss)
          .json("dsa_indexer_use_sparse_loss")
          .flag("--dsa-indexer-use-sparse-loss", FlagForm::store_true)
          .ui("DSA sparse indexer loss", "",
              "The indexer loss on the top-k keys only, instead of dense scores."),
      MM_CHOICE("ce", "unfused", training.cross_entropy)
          .json("cross_entropy")
          .choices({{"unfused", "unfused", "", "unfused"},
                    {"native", "native", "native", "native fused"},
                    {"te", "te", "te", "TE fused"}})
          .read_by_code("--cross-entropy-fusion-impl")
          .also_reads({{"--cross-entropy-loss-fusion", FlagArity::none}})
          .needs("--cross-entropy-loss-fusion")
          .writes(write_cross_entropy)
          .ui("cross entropy", "--cross-entropy-loss-fusion / --cross-entropy-fusion-impl",
              "Unfused keeps fp32 logits; fused variants keep less at the loss."),
  };
}

std::vector<ConfigField> kernel_rows() {
  return {
      MM_BOOL("grad-acc-fusion", "1", training.gradient_accumulation_fusion)
          .json("gradient_accumulation_fusion")
          .flag("--no-gradient-accumulation-fusion", FlagForm::store_false)
          .ui("grad accum. fusion", "--no-gradient-accumulation-fusion clears it",
              "Off: a bf16 weight gradient is allocated before accumulating into the "
              "main grad."),
      MM_BOOL("mask-in-loader", "1", training.create_attention_mask_in_dataloader)
          .json("create_attention_mask_in_dataloader")
          .flag("--no-create-attention-mask-in-dataloader", FlagForm::store_false)
          .ui("mask in data loader", "--no-create-attention-mask-in-dataloader clears it",
              "The attention mask tensor a batch carries (unfused attention)."),
      MM_BOOL("softmax-fusion", "1", training.masked_softmax_fusion)
          .json("masked_softmax_fusion")
          .flag("--no-masked-softmax-fusion", FlagForm::store_false)
          .ui("softmax fusion", "--no-masked-softmax-fusion clears it",
              "Unfused attention only: off keeps an fp32 copy of the scores."),
      MM_BOOL("softmax-fp32", "0", training.attention_softmax_in_fp32)
          .json("attention_softmax_in_fp32")
          .read_by_code("--attention-softmax-in-fp32", FlagForm::store_true)
          .also_reads({{"--apply-query-key-layer-scaling", FlagArity::none}})
          .ui("softmax in fp32",
              "--attention-softmax-in-fp32 (--apply-query-key-layer-scaling sets it)",
              "Unfused attention where the fused softmax kernel does not run: the PyTorch "
              "softmax keeps its fp32 output, 4 bytes per score."),
      // PyTorch then needs CUBLAS_WORKSPACE_CONFIG=:4096:8.
      MM_BOOL("deterministic", "0", training.deterministic_mode)
          .flag("--deterministic-mode", FlagForm::store_true)
          .json("deterministic_mode")
          .ui("deterministic", "", "cuBLAS workspaces grow from 8 MiB to 32 MiB per handle."),
      // arguments.py: bias_swiglu_fusion with --swiglu, else bias_gelu_fusion.
      MM_BOOL("bias-act-fusion", "1", training.bias_activation_fusion)
          .json("bias_activation_fusion")
          .read_by_code("--no-bias-gelu-fusion", FlagForm::none, FlagArity::none)
          .also_reads({{"--no-bias-swiglu-fusion", FlagArity::none}})
          .writes(write_bias_activation_fusion)
          .ui("bias-activation fusion", "--no-bias-gelu-fusion / --no-bias-swiglu-fusion clear it",
              "Off: unfused activations keep extra copies (MoE experts too)."),
  };
}

// The flex dispatcher's backend (transformer_config.py moe_flex_dispatcher_backend) and DeepEP's
// SMs (token_dispatcher.py: None -> 20); flex_dispatcher_buffers.cpp sizes their buffers.
std::vector<ConfigField> flex_dispatcher_rows() {
  return {
      MM_CHOICE("flex-backend", "deepep", training.moe_flex_dispatcher_backend)
          .json("moe_flex_dispatcher_backend")
          .choices({{"deepep", "deepep", "deepep", "DeepEP"},
                    {"hybridep", "hybridep", "hybridep", "HybridEP"},
                    {"ncclep", "ncclep", "ncclep", "NCCL EP"}})
          .flag("--moe-flex-dispatcher-backend", FlagForm::value)
          .moe_only()
          .ui("flex backend", "with --moe-token-dispatcher-type flex",
              "DeepEP keeps fixed ring buffers; HybridEP a buffer for every token of the "
              "group; NCCL EP's are not sized. Outside PyTorch's allocator."),
      MM_INT("flex-sms", "20", training.moe_flex_dispatcher_num_sms, 2, 1024)
          .flag("--moe-flex-dispatcher-num-sms", FlagForm::value, 2.0)
          .also_reads({{"--moe-deepep-num-sms", FlagArity::one},
                       {"--moe-hybridep-num-sms", FlagArity::one}})
          .json("moe_flex_dispatcher_num_sms")
          .moe_only()
          .ui("flex SMs", "with the DeepEP backend",
              "DeepEP's SMs: half as many channels, each with its own NVLink and RDMA "
              "buffers."),
  };
}

std::vector<ConfigField> moe_training_rows() {
  return {
      MM_CHOICE("dispatcher", "alltoall", training.moe_token_dispatcher)
          .json("moe_token_dispatcher")
          .choices({{"allgather", "allgather", "allgather", "allgather"},
                    {"alltoall", "alltoall", "alltoall", "alltoall"},
                    {"flex", "flex", "flex", "flex"}})
          .flag("--moe-token-dispatcher-type", FlagForm::value)
          .moe_only()
          .ui("dispatcher", "",
              "allgather gathers every token (a global buffer); alltoall sends k copies; "
              "flex adds DeepEP buffers."),
      MM_BOOL("grouped-gemm", "1", training.moe_grouped_gemm)
          .json("moe_grouped_gemm")
          .flag("--moe-grouped-gemm", FlagForm::store_true)
          .moe_only()
          .ui("grouped GEMM", "",
              "Experts as grouped GEMMs: four more TE workspaces; allows moe_act "
              "recompute."),
      // transformer_config.py moe_router_dtype: None (the params dtype), fp32 or fp64.
      MM_BOOL("router-fp32", "0", training.moe_router_fp32)
          .json("moe_router_fp32")
          .read_by_code("--moe-router-dtype")
          .moe_only()
          .writes(write_router_dtype)
          .ui("router in fp32", "--moe-router-dtype fp32", "Router scores kept in fp32."),
      MM_BOOL("permute-fusion", "0", training.moe_permute_fusion)
          .json("moe_permute_fusion")
          .flag("--moe-permute-fusion", FlagForm::store_true)
          .moe_only()
          .ui("permute fusion", "",
              "alltoall: TE's fused permutation keeps an int32 row map instead of int64 "
              "indices."),
      MM_BOOL("wsqrelu-fusion", "0", training.moe_fused_weighted_squared_relu)
          .json("use_fused_weighted_squared_relu")
          .bridge("model.use_fused_weighted_squared_relu")
          .moe_only()
          .ui("fused weighted squared ReLU", "(Megatron-Bridge: Nemotron 3)",
              "Squared-ReLU experts apply the routing probabilities inside the activation "
              "kernel, which keeps no probability-weighted copy."),
      MM_BOOL("moe-overlap", "0", training.overlap_moe_expert_parallel_comm)
          .json("overlap_moe_expert_parallel_comm")
          .flag("--overlap-moe-expert-parallel-comm", FlagForm::store_true)
          .ui("overlap EP comm.", "",
              "Each forward runs beside the previous micro-batch's backward: about one layer "
              "more in flight, and one more warm-up micro-batch when interleaved."),
      MM_BOOL("delay-wgrad", "0", training.delay_wgrad_compute)
          .json("delay_wgrad_compute")
          .flag("--delay-wgrad-compute", FlagForm::store_true)
          .ui("delay wgrad", "",
              "Weight gradients wait for each node's backward_dw; its grad outputs stay until "
              "then."),
  };
}

// How tokens reach the experts: capacity, forced balance, the busiest rank's share.
std::vector<ConfigField> moe_routing_rows() {
  return {
      MM_REAL("capacity", "0", training.moe_expert_capacity_factor, 0.0, kMaxReal)
          .json("moe_expert_capacity_factor")
          .flag("--moe-expert-capacity-factor", FlagForm::value, 0.0, 1e6)
          .moe_only()
          .ui("capacity factor", "--moe-expert-capacity-factor (0 = dropless)",
              "Caps tokens per expert at this multiple of the average.")
          .range(0.0, 64.0, 0.25, "%.2f"),
      MM_BOOL("pad-capacity", "0", training.moe_pad_expert_input_to_capacity)
          .json("moe_pad_expert_input_to_capacity")
          .flag("--moe-pad-expert-input-to-capacity", FlagForm::store_true)
          .moe_only()
          .ui("pad to capacity", "", "Every expert receives exactly its capacity."),
      MM_BOOL("shared-overlap", "0", training.moe_shared_expert_overlap)
          .json("moe_shared_expert_overlap")
          .flag("--moe-shared-expert-overlap", FlagForm::store_true)
          .moe_only(),
      MM_BOOL("force-balance", "0", training.moe_router_force_load_balancing)
          .json("moe_router_force_load_balancing")
          .flag("--moe-router-force-load-balancing", FlagForm::store_true)
          .moe_only(),
      MM_REAL("imbalance", "1", training.moe_imbalance_factor, 0.0, kMaxReal)
          .json("moe_imbalance_factor")
          .ui("imbalance factor", "(megamem knob, no flag)",
              "The busiest EP rank's share of tokens over the balanced share.")
          .range(1.0, 64.0, 0.1, "%.2f"),
  };
}

std::vector<ConfigField> optimizer_rows() {
  return {
      MM_CHOICE("opt", "adam", optimizer.kind)
          .choices(kOptimizerChoices)
          .read_by_code("--optimizer", FlagForm::value)
          .json("optimizer")
          .ui("optimizer", "", "Adam keeps two moments per parameter; SGD and Muon one momentum."),
      MM_CHOICE("muon-scalar", "adam", optimizer.muon_scalar_optimizer)
          .choices({{"adam", "adam", "adam", "Adam"},
                    {"sgd", "sgd", "", "SGD"},
                    {"muon", "muon", "", "Muon"}})
          .flag("--muon-scalar-optimizer", FlagForm::value)
          .json("muon_scalar_optimizer"),
      MM_BOOL("grad-bf16", "0", optimizer.grad_reduce_in_bf16)
          .read_by_code("--grad-reduce-in-bf16", FlagForm::none, FlagArity::none)
          .also_reads({{"--accumulate-allreduce-grads-in-fp32", FlagArity::none}})
          .writes(write_grad_reduce)
          .json("grad_reduce_in_bf16")
          .ui("grad reduce in bf16", "",
              "A bf16 gradient buffer (2 bytes) with an fp32 copy in the optimizer."),
      MM_BOOL("precision-aware", "0", optimizer.use_precision_aware_optimizer)
          .flag("--use-precision-aware-optimizer", FlagForm::store_true)
          .json("use_precision_aware_optimizer")
          .ui("precision-aware", "",
              "TE FusedAdam: chosen dtypes for main grads, master weights and moments."),
  };
}

std::vector<ConfigField> optimizer_state_rows() {
  return {
      MM_CHOICE("main-grads", "fp32", optimizer.main_grads_dtype)
          .choices(dtype_choices(true, false, false))
          .flag("--main-grads-dtype", FlagForm::value)
          .json("main_grads_dtype")
          .ui("main grads", "", "Gradient buffer dtype."),
      MM_CHOICE("main-params", "fp32", optimizer.main_params_dtype)
          .choices(dtype_choices(false, true, false))
          .flag("--main-params-dtype", FlagForm::value)
          .json("main_params_dtype")
          .ui("main params", "", "Master weight dtype (bf16 keeps a 2-byte remainder by default)."),
      MM_CHOICE("exp-avg", "fp32", optimizer.exp_avg_dtype)
          .choices(dtype_choices(true, true, true))
          .flag("--exp-avg-dtype", FlagForm::value)
          .json("exp_avg_dtype")
          .ui("exp_avg", "", "First Adam moment dtype."),
      MM_CHOICE("exp-avg-sq", "fp32", optimizer.exp_avg_sq_dtype)
          .choices(dtype_choices(true, true, true))
          .flag("--exp-avg-sq-dtype", FlagForm::value)
          .json("exp_avg_sq_dtype")
          .ui("exp_avg_sq", "", "Second Adam moment dtype."),
      MM_BOOL("param-remainders", "1", optimizer.store_param_remainders)
          .json("store_param_remainders")
          .ui("param remainders", "--no-store-param-remainders clears it",
              "bf16 master weights as a 2-byte remainder of the fp32 value."),
      // optimizer_config.py: with fp32 main params and a recipe other than delayed (or
      // None), Megatron-Core keeps fp32 master weights and TE FusedAdam none (no remainders).
      MM_CHOICE("opt-fp8-recipe", "delayed", optimizer.fp8_recipe)
          .json("optimizer_fp8_recipe")
          .choices(kFp8RecipeChoices)
          .read_by_code("--fp8-recipe")
          .writes(write_optimizer_fp8_recipe)
          .ui("optimizer's FP8 recipe", "--fp8-recipe without --fp8-format",
              "The FP8 recipe Megatron-Core's optimizer config carries while FP8 is off: "
              "Megatron-LM's --fp8-recipe (delayed by default), Megatron-Bridge's "
              "mixed_precision.fp8_recipe (tensorwise by default). Other than delayed, the "
              "precision-aware optimizer with fp32 main params keeps 4-byte master weights."),
      MM_BOOL("opt-offload", "0", optimizer.optimizer_cpu_offload)
          .flag("--optimizer-cpu-offload", FlagForm::store_true)
          .json("optimizer_cpu_offload")
          .ui("optimizer CPU offload", "", "Optimizer state moves to host memory."),
      MM_REAL("opt-offload-fraction", "1", optimizer.optimizer_offload_fraction, 0.0, 1.0)
          .flag("--optimizer-offload-fraction", FlagForm::value, 0.0, 1.0)
          .needs("--optimizer-cpu-offload")
          .json("optimizer_offload_fraction")
          .ui("offload fraction", "", "Share of the optimizer state kept on the host.")
          .range(0.0, 1.0, 0.05, "%.2f"),
  };
}

// The DDP buffers' bucketing and the optimizer step's parameter all-gather.
std::vector<ConfigField> ddp_rows() {
  return {
      MM_BOOL("overlap-grad", "0", optimizer.overlap_grad_reduce)
          .flag("--overlap-grad-reduce", FlagForm::store_true)
          .bridge("ddp.overlap_grad_reduce")
          .json("overlap_grad_reduce")
          .ui("overlap grad reduce", "", "Gradient buckets; changes the DDP buffer padding."),
      // megatron/core/optimizer/__init__.py get_megatron_optimizer: the first model chunk gets
      // its own dense optimizer, whose step dispatches the next iteration's all-gather.
      MM_BOOL("overlap-ag-step", "0", optimizer.overlap_param_gather_with_optimizer_step)
          .flag("--overlap-param-gather-with-optimizer-step", FlagForm::store_true)
          .bridge("optimizer.overlap_param_gather_with_optimizer_step")
          .json("overlap_param_gather_with_optimizer_step")
          .ui("param gather in optimizer step", "--overlap-param-gather-with-optimizer-step",
              "The first model chunk gets its own optimizer: the step's FP8 casts are the "
              "larger group's, and no DDP buffer is split into buckets."),
      MM_INT("bucket", "0", optimizer.ddp_bucket_size_elements, 0, std::int64_t{1} << 50)
          .flag("--ddp-bucket-size", FlagForm::value)
          .bridge("ddp.bucket_size")
          .json("ddp_bucket_size"),
  };
}

std::vector<ConfigField> offload_rows() {
  return {
      MM_BOOL("act-offload", "0", training.offload.fine_grained_activation_offloading)
          .read_by_code("--fine-grained-activation-offloading", FlagForm::store_true)
          .json("fine_grained_activation_offloading")
          .ui("activation offload", "",
              "Saved tensors of the listed modules go to host memory, one layer comes "
              "back at a time."),
      MM_LIST("offload-modules", training.offload.offload_modules)
          .read_by_code("--offload-modules", FlagForm::none, FlagArity::list)
          .needs("--fine-grained-activation-offloading")
          .writes(write_offload_modules)
          .json("offload_modules")
          .ui("offload modules", "", "Modules whose saved tensors are offloaded."),
      MM_REAL("offload-fraction", "1", training.offload.activation_offload_fraction, 0.0, 1.0)
          .read_by_code("--activation-offload-fraction", FlagForm::value)
          .needs("--fine-grained-activation-offloading")
          .json("activation_offload_fraction"),
      MM_BOOL("cpu-offload", "0", training.offload.cpu_offloading)
          .json("cpu_offloading")
          .ui("legacy CPU offload", "--cpu-offloading",
              "All activations of the first N layers go to the host (no PP, no "
              "recompute)."),
      MM_INT("cpu-offload-layers", "0", training.offload.cpu_offloading_num_layers, 0, kMaxDim)
          .read_by_code("--cpu-offloading-num-layers", FlagForm::value)
          .json("cpu_offloading_num_layers")
          .ui("offloaded layers", "", "How many layers' activations go to the host."),
      MM_BOOL("cpu-offload-weights", "0", training.offload.cpu_offloading_weights)
          .json("cpu_offloading_weights"),
  };
}

std::vector<ConfigField> runtime_rows() {
  return {
      MM_REAL("rt.ctx", "0.5", runtime.cuda_context_gib, 0.0, kMaxReal)
          .json("cuda_context_gib")
          .ui("CUDA context (GiB)", "(megamem setting)",
              "Driver and CUDA context memory outside the allocator.")
          .range(0.0, 64.0, 0.1, "%.2f"),
      MM_REAL("rt.nccl", "0.25", runtime.nccl_gib_per_communicator, 0.0, kMaxReal)
          .json("nccl_gib_per_communicator")
          .ui("NCCL per group (GiB)", "(megamem setting)",
              "Buffers per NCCL communicator the rank uses (TP, PP, DP, EP, ...).")
          .range(0.0, 16.0, 0.05, "%.2f"),
      MM_REAL("rt.nccl-node", "0.521484375", runtime.nccl_node_gib_per_communicator, 0.0, kMaxReal)
          .json("nccl_node_gib_per_communicator")
          .ui("NCCL per group in a node (GiB)", "(megamem setting)",
              "Buffers per NCCL communicator whose ranks share one node (NVLink).")
          .range(0.0, 16.0, 0.05, "%.2f"),
      MM_REAL("rt.frag", "0.05", runtime.fragmentation_fraction, 0.0, 1.0)
          .json("fragmentation_fraction")
          .ui("fragmentation", "(megamem setting, fraction of the peak)",
              "Allocator fragmentation, as a fraction of the allocator peak.")
          .range(0.0, 1.0, 0.01, "%.2f"),
      MM_BOOL("rt.expandable", "0", runtime.expandable_segments)
          .json("expandable_segments")
          .ui("expandable segments", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
              "The caching allocator maps pages into one growing segment per pool, so the "
              "reserve is the peak with its fragmentation share rounded to 20 MiB pages."),
      MM_BOOL("rt.nvls", "1", runtime.nccl_nvls)
          .json("nccl_nvls")
          .ui("NCCL NVLS buffers", "NCCL_NVLS_ENABLE (0 turns them off)",
              "NCCL's NVLink SHARP buffers per group reducing in a node: 32 MiB per GPU of it "
              "on Hopper."),
      MM_REAL("rt.deepep", "0", runtime.deepep_buffer_gib, 0.0, kMaxReal)
          .json("deepep_buffer_gib")
          .ui("flex buffers (GiB)", "(megamem setting, flex dispatcher; 0 = sized by the backend)",
              "Replaces the flex dispatcher's DeepEP or HybridEP buffers, which megamem sizes "
              "from the library's own rules when this is 0.")
          .range(0.0, 64.0, 0.25, "%.2f"),
  };
}

std::vector<ConfigField> device_rows() {
  return {
      MM_TEXT("g.name", device.name, 200).json("name"),
      MM_REAL("g.mem", "80", device.capacity_gib, 0.0, kMaxReal)
          .json("capacity_gib")
          .ui("memory (GiB)", "the card's usable memory",
              "The capacity the peak is compared with (fits / does not fit).")
          .range(1.0, 4096.0, 1.0, "%.2f"),
      MM_INT("g.node", "8", device.gpus_per_node, 1, kMaxGpus)
          .json("gpus_per_node")
          .ui("GPUs per node", "the node size (NVLink domain)",
              "No effect on memory; used by the planner's communication model.")
          .range(1, 0, 1),
      MM_REAL("g.intra", "450", device.intra_node_bandwidth_gb_per_s, 0.0, kMaxReal)
          .json("intra_node_bandwidth_gb_per_s"),
      MM_REAL("g.inter", "50", device.inter_node_bandwidth_gb_per_s, 0.0, kMaxReal)
          .json("inter_node_bandwidth_gb_per_s"),
      MM_REAL("g.tflops", "989", device.peak_bf16_tflops, 0.0, kMaxReal).json("peak_bf16_tflops"),
      MM_REAL("g.cublas", "32", device.te_cublas_workspace_mib, 0.0, kMaxReal)
          .json("te_cublas_workspace_mib")
          .ui("TE workspace (MiB)", "(GPU property)",
              "Transformer Engine's cuBLAS workspace per stream: 32 MiB on Hopper, 4 MiB "
              "before.")
          .range(0.0, 1024.0, 1.0, "%.1f"),
      MM_BOOL("g.fp8-any-layout", "0", device.fp8_gemm_any_layout)
          .json("fp8_gemm_any_layout")
          .ui("FP8 GEMMs any layout", "(GPU property)",
              "Blackwell: Transformer Engine keeps no transposed FP8 weight copy."),
      MM_BOOL("g.nvls", "0", device.nvlink_multicast)
          .json("nvlink_multicast")
          .ui("NVLink multicast", "(GPU property: Hopper or later behind an NVSwitch)",
              "NCCL's NVLS algorithm runs on it and maps its buffers per group."),
      MM_REAL("g.fixed", "10", device.fixed_allocated_mib, 0.0, kMaxReal)
          .json("fixed_allocated_mib")
          .ui("fixed buffers (MiB)", "(calibrated)",
              "RNG states, rotary caches and small tensors no formula covers.")
          .range(0.0, 4096.0, 1.0, "%.1f"),
  };
}

std::vector<ConfigField> model_shape_rows() {
  return {
      MM_TEXT("m.name", model.name, 200).json("name"),
      MM_INT("m.layers", "0", model.num_layers, 0, kMaxDim)
          .flag("--num-layers", FlagForm::value)
          .always()
          .json("num_layers")
          .ui("layers", "",
              "Every layer's weights, gradients, optimizer state and saved activations "
              "scale with the number of layers.")
          .range(1, 0, 1),  // a number field: one click on a slider changed the model
      MM_INT("m.hidden", "0", model.hidden_size, 0, kMaxDim)
          .flag("--hidden-size", FlagForm::value)
          .always()
          .json("hidden_size")
          .ui("hidden", "",
              "Attention and MLP weights grow with hidden x hidden; every saved activation "
              "grows with it.")
          .range(1, 0, 128),
      MM_INT("m.heads", "0", model.num_attention_heads, 0, kMaxDim)
          .flag("--num-attention-heads", FlagForm::value)
          .always()
          .json("num_attention_heads")
          .ui("attention heads", "",
              "Must divide by TP; sets the head size. Unfused attention saves heads x seq^2 "
              "scores.")
          .range(1, 0, 1),
      // arguments.py: --num-query-groups counts only with --group-query-attention.
      MM_INT("m.groups", "0", model.num_query_groups, 0, kMaxDim)
          .scope(FieldScope::gqa)
          .read_by_code("--num-query-groups")
          .also_reads({{"--group-query-attention", FlagArity::none}})
          .writes(write_query_groups)
          .json("num_query_groups")
          .ui("query groups", "--num-query-groups (with --group-query-attention)",
              "Fewer key/value groups shrink the K and V projections and the saved K, V."),
      MM_INT("m.kv-ch", "0", model.kv_channels, 0, kMaxDim)
          .scope(FieldScope::gqa)
          .flag("--kv-channels", FlagForm::value)
          .json("kv_channels")
          .ui("kv channels", "--kv-channels (0 = hidden / heads)",
              "Head dimension: the size of Q, K, V per head.")
          .range(0, 0, 8),
  };
}

// The value head dimension, FFN, activation, norms and biases.
std::vector<ConfigField> model_width_rows() {
  return {
      // No Megatron-LM flag (--v-head-dim is MLA's): Megatron-Bridge's MiMoV2FlashSelfAttention.
      MM_INT("m.v-ch", "0", model.v_channels, 0, kMaxDim)
          .scope(FieldScope::gqa)
          .json("v_channels")
          .ui("value head dim", "(Megatron-Bridge: MiMo-V2-Flash; 0 = kv channels)",
              "V's head dimension where it differs from Q and K's: the V projection, "
              "linear_proj and the saved V and attention output.")
          .range(0, 0, 8),
      MM_INT("m.ffn", "0", model.ffn_hidden_size, 0, kMaxDim)
          .flag("--ffn-hidden-size", FlagForm::value)
          .writes(write_ffn)
          .json("ffn_hidden_size")
          .ui("FFN hidden", "--ffn-hidden-size (0 = 4 x hidden, SwiGLU 8/3)",
              "MLP weights (two or three hidden x FFN matrices) and the MLP's saved "
              "activations.")
          .range(0, 0, 128),
  };
}

std::vector<ConfigField> model_layer_rows() {
  return {
      MM_CHOICE("m.act", "gelu", model.activation)
          .choices({{"gelu", "gelu", "", "GeLU"},
                    {"swiglu", "swiglu", "", "SwiGLU"},
                    {"squared_relu", "squared_relu", "", "squared ReLU"}})
          .read_by_code("--swiglu", FlagForm::none, FlagArity::none)
          .also_reads({{"--squared-relu", FlagArity::none}, {"--quick-geglu", FlagArity::none}})
          .writes(write_activation)
          .json("activation")
          .ui("activation", "--swiglu / --squared-relu (default GeLU)",
              "SwiGLU doubles the first MLP matrix and saves both halves."),
      MM_CHOICE("m.norm", "layernorm", model.normalization)
          .choices({{"layernorm", "layernorm", "LayerNorm", "LayerNorm"},
                    {"rmsnorm", "rmsnorm", "RMSNorm", "RMSNorm"}})
          .flag("--normalization", FlagForm::value)
          .json("normalization")
          .ui("normalization", "", "RMSNorm has no bias; norms save their input."),
      MM_BOOL("m.qk-norm", "0", model.qk_layernorm)
          .flag("--qk-layernorm", FlagForm::store_true)
          .json("qk_layernorm")
          .ui("QK layernorm", "",
              "Norms on queries and keys: small weights, their inputs are saved."),
      // post_training/model_builder.py sets it from --export-qk-l2-norm (megatron_args.cpp).
      MM_BOOL("m.qk-l2", "0", model.qk_l2_norm)
          .flag("--qk-l2-norm", FlagForm::store_true)
          .also_reads({{"--export-qk-l2-norm", FlagArity::none}})
          .json("qk_l2_norm")
          .ui("QK L2 norm", "(Llama-4)",
              "A weightless norm on queries and keys; its inputs are saved."),
      MM_BOOL("m.bias", "1", model.add_bias_linear)
          .flag("--disable-bias-linear", FlagForm::store_false)
          .json("add_bias_linear")
          .ui("linear biases", "--disable-bias-linear clears it",
              "Bias vectors on every linear layer (small)."),
      // arguments.py also sets add_qkv_bias with add_bias_linear; the estimator adds QKV
      // biases whenever add_bias_linear holds, so the flag is kept as given.
      MM_BOOL("m.qkv-bias", "0", model.add_qkv_bias)
          .flag("--add-qkv-bias", FlagForm::store_true)
          .json("add_qkv_bias")
          .ui("QKV bias", "", "Bias on the QKV projection only (Qwen2)."),
      MM_BOOL("m.out-gate", "0", model.attention_output_gate)
          .flag("--attention-output-gate", FlagForm::store_true)
          .json("attention_output_gate")
          .ui("attention out gate", "",
              "A gate projection on the attention output: more weights and activations."),
      // Megatron-LM dev's TransformerConfig.head_wise_attn_gate (its flag is not in main's
      // arguments.py, so none is read or written); Megatron-Bridge's Step35Bridge sets it.
      MM_BOOL("m.head-gate", "0", model.head_wise_attn_gate)
          .json("head_wise_attn_gate")
          .ui("head-wise attention gate", "(Megatron-LM dev, Megatron-Bridge: Step-3.5)",
              "A sigmoid gate per head on the attention output: heads x hidden weights, the "
              "gated output saved."),
      MM_BOOL("m.post-norms", "0", model.post_sublayer_norms)
          .json("post_sublayer_norms")
          .ui("post-sublayer norms", "(Megatron-Bridge: Gemma 2/3, EXAONE 4.0)",
              "Norms on the attention and MLP outputs: small weights, their inputs are saved."),
  };
}

// Megatron-Bridge's Gemma layers (gemma/): fast_gelu (every Gemma provider), and Gemma 4
// dense's norms and layer spec (modeling_gemma4.py); no Megatron-LM flags.
std::vector<ConfigField> model_gemma4_layer_rows() {
  return {
      MM_BOOL("m.fast-gelu", "0", model.fast_gelu)
          .json("fast_gelu")
          .ui("fast GELU (tanh)", "(Megatron-Bridge: Gemma)",
              "Megatron-Core's fast_gelu, which Megatron does not fuse: a gated MLP keeps the "
              "activation's output and the up half as well."),
      MM_BOOL("m.torch-norms", "0", model.torch_rms_norms)
          .json("torch_rms_norms")
          .ui("plain-PyTorch norms", "(Megatron-Bridge: Gemma 4 dense)",
              "Norms as PyTorch expressions, and a norm on V: each keeps fp32 copies of its input "
              "for backward."),
      MM_BOOL("m.local-spec", "0", model.local_layer_spec)
          .json("local_layer_spec")
          .ui("local layer spec", "(Megatron-Bridge: Gemma 4 dense)",
              "The layers are Megatron-Core's local spec whatever the run's Transformer Engine "
              "setting: unfused attention keeps its probabilities."),
      // Gemma 4 26B-A4B (modeling_gemma4.py Gemma4TransformerLayer, Gemma4MoELayer,
      // Gemma4TopKRouter, Gemma4SelfAttention): HF enable_moe_block.
      MM_BOOL("m.gemma4-moe", "0", model.gemma4_moe_layer)
          .json("gemma4_moe_layer")
          .ui("Gemma 4 MoE layer", "(Megatron-Bridge: Gemma 4 26B-A4B)",
              "Router, shared and routed experts each normalise the layer input themselves, "
              "with three more norms after them: each norm keeps fp32 copies for backward."),
      // Gemma 4 E2B/E4B (modeling_gemma4.py _attach_ple_modules, Gemma4DenseSelfAttention,
      // _gemma4_dense_ffn_hidden_size): HF hidden_size_per_layer_input, num_kv_shared_layers,
      // use_double_wide_mlp.
      MM_INT("m.ple", "0", model.per_layer_input_size, 0, kMaxDim)
          .json("per_layer_input_size")
          .ui("per-layer embeddings", "(Megatron-Bridge: Gemma 4 E2B/E4B; 0 = none)",
              "Width of each layer's own token embedding: a vocabulary x layers table on the "
              "first stage, and a gate and projection per layer."),
      MM_INT("m.kv-shared", "0", model.kv_shared_layers, 0, kMaxDim)
          .json("kv_shared_layers")
          .ui("layers sharing K/V", "(Megatron-Bridge: Gemma 4 E2B/E4B)",
              "The last N layers reuse an earlier layer's K and V: the same weights, no K/V "
              "norms saved."),
      MM_BOOL("m.double-mlp", "0", model.double_wide_shared_mlp)
          .json("double_wide_shared_mlp")
          .ui("double-wide MLP on them", "(Gemma 4 E2B)", "Those layers' MLPs are twice as wide."),
  };
}

// How attention attends: sinks and sliding windows (gpt-oss).
std::vector<ConfigField> model_attention_variant_rows() {
  return {
      // transformer_config.py softmax_type; TE >= 2.8 DotProductAttention (gpt-oss).
      MM_CHOICE("m.softmax", "vanilla", model.softmax_type)
          .choices({{"vanilla", "vanilla", "vanilla", "vanilla"},
                    {"off_by_one", "off_by_one", "off-by-one", "off-by-one (zero sink)"},
                    {"learnable", "learnable", "learnable", "learnable sinks"}})
          .flag("--softmax-type", FlagForm::value)
          .json("softmax_type")
          .ui("softmax type", "",
              "Attention sinks: one extra logit per head (learnable: a weight per head). "
              "FlashAttention has none, so cuDNN runs it; with --deterministic-mode only "
              "unfused attention is left (s x s scores)."),
      MM_INT("m.window", "0", model.window_size, 0, kMaxDim)
          .read_by_code("--window-size")
          .writes(write_window)
          .json("window_size")
          .ui("sliding window", "--window-size W,0 (0 = full attention)",
              "Earlier tokens each query sees in windowed layers: less attention compute, "
              "the same saved tensors."),
      MM_INT("m.window-skip", "0", model.window_attn_skip_freq, 0, kMaxDim)
          .scope(FieldScope::sliding_window)
          .read_by_code("--window-attn-skip-freq")
          .writes(write_window_attn_skip_freq)
          .json("window_attn_skip_freq")
          .ui("full attention every", "--window-attn-skip-freq (0 = every layer windowed)",
              "Every N-th layer keeps full causal attention."),
      // arguments.py: --window-attn-skip-freq also takes a list expression, 1 = windowed.
      MM_PATTERN("m.window-pattern", model.window_attn_pattern, 1)
          .scope(FieldScope::sliding_window)
          .read_by_code("--window-attn-skip-freq")
          .json("window_attn_pattern"),
      MM_INT("m.window-heads", "0", model.window_num_attention_heads, 0, kMaxDim)
          .scope(FieldScope::sliding_window)
          .json("window_num_attention_heads")
          .ui("windowed layers' heads", "(Megatron-Bridge: Step-3.5; 0 = as full layers)",
              "Query heads of the sliding-window layers where they differ from the full ones."),
      MM_INT("m.window-groups", "0", model.window_num_query_groups, 0, kMaxDim)
          .scope(FieldScope::sliding_window)
          .json("window_num_query_groups")
          .ui("windowed layers' KV groups", "(0 = as full layers)",
              "Key/value groups of the sliding-window layers where they differ."),
      MM_INT("m.window-kv-ch", "0", model.window_kv_channels, 0, kMaxDim)
          .scope(FieldScope::sliding_window)
          .json("window_kv_channels")
          .ui("windowed layers' head dim", "(0 = as full layers)",
              "Head dimension of the sliding-window layers where it differs."),
  };
}

// No Megatron-LM flag: Megatron-Bridge's Gemma 2 / Gemma 4 providers.
std::vector<ConfigField> model_softcap_rows() {
  return {
      MM_REAL("m.logit-softcap", "0", model.final_logit_softcapping, 0.0, kMaxReal)
          .bridge("model.final_logit_softcapping")
          .json("final_logit_softcapping")
          .ui("logit soft-cap", "(Megatron-Bridge: Gemma 2 and 4; 0 = none)",
              "cap x tanh(logits / cap) after the output layer: the last stage keeps one more "
              "tokens x vocabulary / TP tensor per micro-batch (tanh's output).")
          .range(0.0, 100.0, 1.0, "%.1f"),
      MM_REAL("m.attn-softcap", "0", model.attn_logit_softcapping, 0.0, kMaxReal)
          .scope(FieldScope::gqa)
          .bridge("model.attn_logit_softcapping")
          .json("attn_logit_softcapping")
          .ui("attention soft-cap", "(Megatron-Bridge: Gemma 2; 0 = none)",
              "Caps the attention scores in PyTorch FlexAttention instead of Transformer "
              "Engine's kernel: the kernel's output is kept beside linear_proj's copy of it.")
          .range(0.0, 100.0, 1.0, "%.1f"),
  };
}

std::vector<ConfigField> model_embedding_rows() {
  return {
      MM_CHOICE("m.pos", "learned", model.position_embedding)
          .choices({{"learned", "learned_absolute", "learned_absolute", "learned absolute"},
                    {"rope", "rope", "rope", "RoPE"},
                    {"yarn", "yarn", "yarn", "YaRN"},
                    {"none", "none", "none", "none"}})
          .read_by_code("--position-embedding-type", FlagForm::value)
          .also_reads({{"--use-rotary-position-embeddings", FlagArity::none},
                       {"--no-position-embedding", FlagArity::none}})
          .json("position_embedding")
          .ui("position embedding", "",
              "Learned absolute embeddings add max-positions x hidden weights."),
      MM_INT("m.max-pos", "0", model.max_position_embeddings, 0, kMaxDim)
          .flag("--max-position-embeddings", FlagForm::value)
          .json("max_position_embeddings")
          .run_setting()
          .ui("max positions", "--max-position-embeddings (0 = sequence length)",
              "Size of a learned position embedding table.")
          .range(0, 0, 1024),
      MM_BOOL("m.untie", "0", model.untie_embeddings_and_output_weights)
          .flag("--untie-embeddings-and-output-weights", FlagForm::store_true)
          .json("untie_embeddings_and_output_weights")
          .ui("untie embeddings", "",
              "A separate output layer (vocabulary x hidden) on the last PP rank."),
      MM_INT("m.vocab", "0", model.vocab_size, 0, std::int64_t{1} << 31)
          .read_by_code("--vocab-size", FlagForm::value)
          .also_reads(
              {{"--padded-vocab-size", FlagArity::one}, {"--tokenizer-model", FlagArity::one}})
          .bridge("model.vocab_size")
          .json("vocab_size")
          .ui("vocabulary", "--vocab-size (or the tokenizer's)",
              "Embedding and output layer on the first and last PP rank; the loss keeps "
              "fp32 logits of tokens x vocabulary / TP.")
          .range(1, 0, 1024),
      MM_INT("m.vocab-div", "128", model.make_vocab_size_divisible_by, 1, kMaxDim)
          .flag("--make-vocab-size-divisible-by", FlagForm::value)
          .json("make_vocab_size_divisible_by")
          .run_setting()
          .ui("vocab divisible by", "", "The vocabulary is padded to a multiple of this times TP.")
          .range(1, 0, 1),
      MM_REAL("m.hdrop", "0.1", model.hidden_dropout, 0.0, 1.0)
          .flag("--hidden-dropout", FlagForm::value, 0.0, 1.0)
          .json("hidden_dropout")
          .run_setting()
          .ui("hidden dropout", "", "Above 0, each residual add saves a 1-byte mask per element.")
          .range(0.0, 1.0, 0.05, "%.2f"),
      MM_REAL("m.adrop", "0.1", model.attention_dropout, 0.0, 1.0)
          .flag("--attention-dropout", FlagForm::value, 0.0, 1.0)
          .json("attention_dropout")
          .run_setting()
          .ui("attention dropout", "",
              "Unfused attention saves its dropout mask and output (seq^2 per head).")
          .range(0.0, 1.0, 0.05, "%.2f"),
  };
}

std::vector<ConfigField> model_moe_rows() {
  return {
      // arguments.py validate_args: --num-experts 0 means a dense model.
      MM_INT("m.experts", "0", model.num_experts, 0, kMaxDim)
          .flag("--num-experts", FlagForm::value, 0.0)
          .bridge("model.num_moe_experts")
          .json("num_experts")
          .ui("experts", "--num-experts (0 = dense)",
              "Routed experts, split over EP: E / EP local experts of weights per GPU."),
      MM_INT("m.topk", "2", model.moe_router_topk, 0, kMaxDim)
          .scope(FieldScope::experts)
          .flag("--moe-router-topk", FlagForm::value)
          .json("moe_router_topk")
          .ui("top-k", "",
              "Each token is dispatched to k experts: k copies of the dispatched tokens.")
          .range(1, 0, 1),
      MM_INT("m.moe-ffn", "0", model.moe_ffn_hidden_size, 0, kMaxDim)
          .scope(FieldScope::experts)
          .flag("--moe-ffn-hidden-size", FlagForm::value)
          .json("moe_ffn_hidden_size")
          .ui("expert FFN", "--moe-ffn-hidden-size (0 = FFN hidden)",
              "Each expert's MLP width: expert weights and expert activations.")
          .range(0, 0, 64),
      MM_INT("m.shared", "0", model.moe_shared_expert_intermediate_size, 0, kMaxDim)
          .scope(FieldScope::experts)
          .flag("--moe-shared-expert-intermediate-size", FlagForm::value)
          .json("moe_shared_expert_intermediate_size")
          .ui("shared experts FFN", "",
              "Shared experts (summed width), a TP-split MLP beside the routed experts.")
          .range(0, 0, 64),
      MM_BOOL("m.shared-gate", "0", model.moe_shared_expert_gate)
          .scope(FieldScope::shared_experts)
          .flag("--moe-shared-expert-gate", FlagForm::store_true)
          .json("moe_shared_expert_gate")
          .ui("shared expert gate", "", "A gate on the shared experts' output (Qwen2-MoE)."),
      // post_training/model_builder.py sets it from --export-moe-apply-probs-on-input.
      MM_BOOL("m.probs-on-input", "0", model.moe_apply_probs_on_input)
          .scope(FieldScope::experts)
          .flag("--moe-apply-probs-on-input", FlagForm::store_true)
          .also_reads({{"--export-moe-apply-probs-on-input", FlagArity::none}})
          .json("moe_apply_probs_on_input")
          .ui("routing probs on input", "(Llama-4, top-1)",
              "Tokens times their routing probability before the experts; the product's input "
              "is saved."),
      MM_INT("m.latent", "0", model.moe_latent_size, 0, kMaxDim)
          .scope(FieldScope::experts)
          .flag("--moe-latent-size", FlagForm::value)
          .json("moe_latent_size")
          .ui("MoE latent size", "--moe-latent-size (0 = none)",
              "Experts work in a smaller latent space with down/up projections.")
          .range(0, 0, 64),
  };
}

// The router's settings and which layers are MoE.
std::vector<ConfigField> model_moe_router_rows() {
  return {
      MM_BOOL("m.expert-bias", "0", model.moe_router_enable_expert_bias)
          .scope(FieldScope::experts)
          .flag("--moe-router-enable-expert-bias", FlagForm::store_true)
          .json("moe_router_enable_expert_bias")
          .ui("expert bias", "", "Aux-loss-free balancing: two fp32 buffers of E per MoE layer."),
      // Megatron-Bridge's MiniMax-M3 provider keeps the router weight an fp32 parameter
      // (minimax_m3_bridge.py _promote_router_weights_to_float32); Megatron-LM has no flag
      // (router.py casts it to the params dtype) and Bridge no config key (a pre-wrap hook).
      MM_BOOL("m.router-fp32-weight", "0", model.moe_router_fp32_params)
          .scope(FieldScope::experts)
          .json("moe_router_fp32_params")
          .ui("router weight in fp32", "(Megatron-Bridge: MiniMax-M3)",
              "The router weight is an fp32 parameter: 4-byte weight and grad, Adam states "
              "without a master copy, and an fp32 copy of its input saved."),
      MM_INT("m.moe-freq", "1", model.moe_layer_freq, 1, kMaxDim)
          .scope(FieldScope::moe_frequency)
          .read_by_code("--moe-layer-freq")
          .writes(write_moe_layer_freq)
          .json("moe_layer_freq")
          .ui("MoE layer frequency", "--moe-layer-freq N",
              "Every N-th layer is MoE, the others dense.")
          .range(1, 0, 1),
      MM_PATTERN("m.moe-pattern", model.moe_layer_pattern, 1)
          .read_by_code("--moe-layer-freq")
          .json("moe_layer_pattern"),
  };
}

std::vector<ConfigField> model_mla_rows() {
  return {
      MM_BOOL("m.mla", "0", model.multi_latent_attention)
          .flag("--multi-latent-attention", FlagForm::store_true)
          .json("multi_latent_attention")
          .ui("MLA", "",
              "DeepSeek's attention: low-rank Q and KV projections, smaller weights, "
              "more saved intermediates."),
      // arguments.py _add_mla_args defaults: q_lora_rank None, kv_lora_rank 32, ...
      MM_INT("m.q-lora", "0", model.q_lora_rank, 0, kMaxDim)
          .scope(FieldScope::mla)
          .flag("--q-lora-rank", FlagForm::value)
          .json("q_lora_rank")
          .ui("q LoRA rank", "--q-lora-rank (0 = none)", "Rank of the query down-projection.")
          .range(0, 0, 64),
      MM_INT("m.kv-lora", "32", model.kv_lora_rank, 0, kMaxDim)
          .scope(FieldScope::mla)
          .flag("--kv-lora-rank", FlagForm::value)
          .json("kv_lora_rank")
          .ui("kv LoRA rank", "", "Rank of the key/value down-projection.")
          .range(0, 0, 64),
      MM_INT("m.qk-dim", "128", model.qk_head_dim, 0, kMaxDim)
          .scope(FieldScope::mla)
          .flag("--qk-head-dim", FlagForm::value)
          .json("qk_head_dim")
          .ui("qk head dim", "", "Query/key head size (no RoPE).")
          .range(0, 0, 8),
      MM_INT("m.qk-pos-dim", "64", model.qk_pos_emb_head_dim, 0, kMaxDim)
          .scope(FieldScope::mla)
          .flag("--qk-pos-emb-head-dim", FlagForm::value, 0.0)
          .json("qk_pos_emb_head_dim")
          .ui("qk RoPE dim", "", "Query/key head part that carries rotary embeddings.")
          .range(0, 0, 8),
      MM_INT("m.v-dim", "128", model.v_head_dim, 0, kMaxDim)
          .scope(FieldScope::mla)
          .flag("--v-head-dim", FlagForm::value)
          .json("v_head_dim")
          .ui("v head dim", "", "Value head size.")
          .range(0, 0, 8),
  };
}

// Multi-token prediction (multi_token_prediction.py).
std::vector<ConfigField> model_mtp_rows() {
  return {
      MM_INT("m.mtp", "0", model.mtp_num_layers, 0, kMaxDim)
          .flag("--mtp-num-layers", FlagForm::value, 0.0)
          .json("mtp_num_layers")
          .ui("MTP layers", "",
              "Extra prediction layers with their own embedding copy and loss on the last "
              "stage."),
      MM_BOOL("m.mtp-repeat", "0", model.mtp_use_repeated_layer)
          .scope(FieldScope::mtp)
          .flag("--mtp-use-repeated-layer", FlagForm::store_true)
          .json("mtp_use_repeated_layer")
          .ui("MTP shared layer", "", "All MTP depths share one layer's weights."),
      MM_CHOICE("m.mtp-kind", "last", model.mtp_layer_kind)
          .scope(FieldScope::mtp)
          .choices({{"last", "last_decoder_layer", "", "as the last decoder layer"},
                    {"dense", "dense", "", "dense MLP, full attention"},
                    {"window-dense", "window_dense", "", "dense MLP, windowed attention"},
                    {"dense-by-index", "dense_by_layer_index", "",
                     "dense MLP, attention by layer index"}})
          .json("mtp_layer_kind")
          .ui("MTP layer", "(Megatron-Bridge's MTP spec)",
              "Megatron-Core builds it like the last decoder layer; Bridge gives MiMo-V2-Flash "
              "and Step-3.5 dense ones."),
  };
}

// DeepSeek sparse attention is selected by --experimental-attention-variant dsa with its
// indexer's sizes (transformer_config.py dsa_*; the flags are generated from those fields).
// DeepSeek-V4's indexer reads the same sizes under Megatron-LM dev's variant dsv4_hybrid,
// whose per-layer ratios and output groups no flag of main carries.
void write_dsa(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.model.dsa_indexer_topk == 0) return;
  // A hybrid pattern's 'D' layers need no variant flag (hybrid_layer_specs.py).
  if (c.model.hybrid_layer_pattern.find('D') == std::string::npos) {
    add_flag(flags, "--experimental-attention-variant",
             c.model.csa_compress_ratios.empty() ? "dsa" : "dsv4_hybrid");
  }
  add_flag(flags, "--dsa-indexer-topk", std::to_string(c.model.dsa_indexer_topk));
}

// DeepSeek sparse attention (megatron/core/transformer/experimental_attention_variant/dsa.py).
std::vector<ConfigField> model_dsa_rows() {
  return {
      MM_INT("m.dsa-topk", "0", model.dsa_indexer_topk, 0, kMaxCount)
          .read_by_code("--dsa-indexer-topk")
          .also_reads({{"--experimental-attention-variant", FlagArity::one}})
          .writes(write_dsa)
          .json("dsa_indexer_topk")
          .ui("DSA top-k", "--experimental-attention-variant dsa --dsa-indexer-topk (0 = off)",
              "DeepSeek sparse attention: each query attends to the top-k keys an indexer "
              "picks (absorbed MLA; needs MLA).")
          .range(0, 0, 256),
      MM_INT("m.dsa-heads", "64", model.dsa_indexer_n_heads, 1, kMaxDim)
          .scope(FieldScope::dsa)
          .flag("--dsa-indexer-n-heads", FlagForm::value)
          .json("dsa_indexer_n_heads")
          .ui("DSA indexer heads", "", "Heads of the top-k indexer (full on every TP rank).")
          .range(1, 0, 1),
      MM_INT("m.dsa-dim", "128", model.dsa_indexer_head_dim, 1, kMaxDim)
          .scope(FieldScope::dsa)
          .flag("--dsa-indexer-head-dim", FlagForm::value)
          .json("dsa_indexer_head_dim")
          .ui("DSA indexer head dim", "", "Channels per indexer head.")
          .range(1, 0, 16),
      MM_INT("m.dsa-freq", "1", model.dsa_indexer_topk_freq, 1, kMaxDim)
          .scope(FieldScope::dsa)
          .flag("--dsa-indexer-topk-freq", FlagForm::value, 1.0)
          .json("dsa_indexer_topk_freq")
          .ui("DSA top-k frequency", "",
              "One layer in N computes the top-k (and has an indexer); the others reuse it.")
          .range(1, 0, 1),
      MM_INT("m.dsa-offset", "0", model.dsa_indexer_skip_topk_offset, 0, kMaxDim)
          .scope(FieldScope::dsa)
          .flag("--dsa-indexer-skip-topk-offset", FlagForm::value, 0.0)
          .json("dsa_indexer_skip_topk_offset")
          .ui("DSA top-k offset", "", "Layers before it all compute their own top-k.")
          .range(0, 0, 1),
  };
}

// DeepSeek-V4 (Megatron-LM dev; Megatron-Bridge deepseek/deepseek_v4_bridge.py sets these
// provider fields): hybrid compressed attention, hash routing. Main's arguments.py has no flag
// for them.
std::vector<ConfigField> model_dsv4_rows() {
  return {
      MM_PATTERN("m.csa-ratios", model.csa_compress_ratios, 128)
          .scope(FieldScope::mla)
          .json("csa_compress_ratios"),
      MM_INT("m.csa-window", "128", model.csa_window_size, 1, kMaxDim)
          .scope(FieldScope::mla)
          .bridge("model.csa_window_size")
          .json("csa_window_size")
          .ui("compressed attention window", "(Megatron-LM dev, Megatron-Bridge: DeepSeek-V4)",
              "Keys each query sees uncompressed before the compressed ones (DeepSeek-V4).")
          .range(1, 0, 16),
      MM_INT("m.o-groups", "0", model.o_groups, 0, kMaxDim)
          .scope(FieldScope::mla)
          .bridge("model.o_groups")
          .json("o_groups")
          .ui("output projection groups", "(DeepSeek-V4; 0 = none)",
              "Heads' outputs projected in groups to o_lora_rank each before linear_proj.")
          .range(0, 0, 1),
      MM_INT("m.o-lora", "0", model.o_lora_rank, 0, kMaxDim)
          .scope(FieldScope::mla)
          .bridge("model.o_lora_rank")
          .json("o_lora_rank")
          .ui("output LoRA rank", "(DeepSeek-V4)",
              "Width of each output group: linear_proj reads groups x this.")
          .range(0, 0, 64),
      MM_INT("m.hash-layers", "0", model.moe_n_hash_layers, 0, kMaxDim)
          .scope(FieldScope::experts)
          .bridge("model.moe_n_hash_layers")
          .json("moe_n_hash_layers")
          .ui("hash-routed layers", "(Megatron-LM dev, Megatron-Bridge: DeepSeek-V4)",
              "The first N MoE layers route by token id: an int32 vocabulary x top-k table "
              "each, no expert bias.")
          .range(0, 0, 1),
  };
}

// Manifold-constrained hyper-connections (megatron/core/transformer/hyper_connection.py).
std::vector<ConfigField> hyper_connection_rows() {
  return {
      MM_BOOL("m.mhc", "0", model.enable_mhc_connections)
          .flag("--enable-mhc-connections", FlagForm::store_true)
          .bridge("model.enable_hyper_connections")  // Megatron-LM dev's name
          .json("enable_mhc_connections")
          .ui("hyper-connections", "",
              "n residual streams mixed around each block: n x hidden saved per block and "
              "token, mixing weights per layer."),
      MM_INT("m.mhc-streams", "4", model.mhc_num_residual_streams, 1, 64)
          .flag("--mhc-num-residual-streams", FlagForm::value)
          .bridge("model.num_residual_streams")
          .json("mhc_num_residual_streams")
          .ui("residual streams", "", "Copies of the hidden state hyper-connections mix (n).")
          .range(1, 16, 1),
  };
}

// Hybrid models (megatron/core/models/hybrid/, megatron/core/ssm/mamba_mixer.py); the Mamba
// sizes are TransformerConfig fields (transformer_config.py mamba_* defaults).
std::vector<ConfigField> model_hybrid_rows() {
  return {
      MM_TEXT("m.hybrid", model.hybrid_layer_pattern, 4096)
          .read_by_code("--hybrid-override-pattern")
          .writes(write_hybrid_pattern)
          .also_reads({{"--hybrid-layer-pattern", FlagArity::one},
                       {"--hybrid-attention-ratio", FlagArity::one},
                       {"--hybrid-mlp-ratio", FlagArity::one},
                       {"--mtp-hybrid-override-pattern", FlagArity::one}})
          .json("hybrid_layer_pattern")
          .ui("hybrid layer pattern", "--hybrid-override-pattern (empty = GPT model)",
              "One symbol per layer: M Mamba-2, G Gated DeltaNet, * attention, + MLA, D DeepSeek "
              "sparse attention, - MLP, E MoE, P Mamba-2 and attention in parallel then an MLP "
              "(Megatron-Bridge Falcon-H1); | separates pipeline stages, each /<pattern> adds "
              "an MTP depth. Each is a layer of its own with its own weights and saved tensors.")
          .range(0, 0, 1, "e.g. M-M-M*-M-"),
      MM_INT("m.mamba-state", "128", model.mamba_state_dim, 1, kMaxDim)
          .scope(FieldScope::mamba)
          .flag("--mamba-state-dim", FlagForm::value)
          .json("mamba_state_dim")
          .ui("Mamba state dim", "", "SSM state size per group (d_state): B and C projections.")
          .range(1, 0, 16),
      MM_INT("m.mamba-head", "64", model.mamba_head_dim, 1, kMaxDim)
          .scope(FieldScope::mamba)
          .flag("--mamba-head-dim", FlagForm::value)
          .json("mamba_head_dim")
          .ui("Mamba head dim", "", "Channels per Mamba head; heads x head dim is d_inner.")
          .range(1, 0, 16),
      MM_INT("m.mamba-groups", "8", model.mamba_num_groups, 1, kMaxDim)
          .scope(FieldScope::mamba)
          .flag("--mamba-num-groups", FlagForm::value)
          .json("mamba_num_groups")
          .ui("Mamba groups", "", "B/C groups; must divide over TP.")
          .range(1, 0, 1),
      MM_INT("m.mamba-heads", "0", model.mamba_num_heads, 0, kMaxDim)
          .scope(FieldScope::mamba)
          .flag("--mamba-num-heads", FlagForm::value)
          .json("mamba_num_heads")
          .ui("Mamba heads", "--mamba-num-heads (0 = 2 x hidden / head dim)",
              "SSM heads; must divide over TP. Sets d_inner with the head dim.")
          .range(0, 0, 8),
  };
}

// Gated DeltaNet layers are selected by --experimental-attention-variant with
// --linear-attention-freq (transformer_config.py asserts the frequency for the variant).
void write_linear_attention(const Config& c, std::vector<MegatronFlag>& flags) {
  if (c.model.linear_attention_freq == 0) return;
  add_flag(flags, "--experimental-attention-variant", "gated_delta_net");
  add_flag(flags, "--linear-attention-freq", std::to_string(c.model.linear_attention_freq));
}

// Gated DeltaNet (megatron/core/ssm/gated_delta_net/); sizes are TransformerConfig fields
// (transformer_config.py linear_* defaults).
std::vector<ConfigField> model_gdn_rows() {
  return {
      MM_INT("m.la-freq", "0", model.linear_attention_freq, 0, kMaxDim)
          .read_by_code("--linear-attention-freq")
          .writes(write_linear_attention)
          .json("linear_attention_freq")
          .ui("linear attention freq", "--linear-attention-freq (0 = none)",
              "Gated DeltaNet layers: every layer but each N-th (full attention) has a Gated "
              "DeltaNet instead of self-attention.")
          .range(0, 0, 1),
      MM_INT("m.la-conv", "4", model.linear_conv_kernel_dim, 1, kMaxDim)
          .scope(FieldScope::gated_deltanet)
          .flag("--linear-conv-kernel-dim", FlagForm::value)
          .json("linear_conv_kernel_dim")
          .ui("GDN conv kernel", "", "Width of the causal conv1d on q, k, v.")
          .range(1, 0, 1),
      MM_INT("m.la-kdim", "128", model.linear_key_head_dim, 1, kMaxDim)
          .scope(FieldScope::gated_deltanet)
          .flag("--linear-key-head-dim", FlagForm::value)
          .json("linear_key_head_dim")
          .ui("GDN key head dim", "", "Query and key channels per Gated DeltaNet head.")
          .range(1, 0, 16),
      MM_INT("m.la-vdim", "128", model.linear_value_head_dim, 1, kMaxDim)
          .scope(FieldScope::gated_deltanet)
          .flag("--linear-value-head-dim", FlagForm::value)
          .json("linear_value_head_dim")
          .ui("GDN value head dim", "", "Value and output-gate channels per head.")
          .range(1, 0, 16),
      MM_INT("m.la-kheads", "16", model.linear_num_key_heads, 1, kMaxDim)
          .scope(FieldScope::gated_deltanet)
          .flag("--linear-num-key-heads", FlagForm::value)
          .json("linear_num_key_heads")
          .ui("GDN key heads", "", "Query and key heads; must divide over TP x CP.")
          .range(1, 0, 1),
      MM_INT("m.la-vheads", "32", model.linear_num_value_heads, 1, kMaxDim)
          .scope(FieldScope::gated_deltanet)
          .flag("--linear-num-value-heads", FlagForm::value)
          .json("linear_num_value_heads")
          .ui("GDN value heads", "", "Value heads; a multiple of the key heads.")
          .range(1, 0, 1),
  };
}

// Kimi K3's layers: Megatron-Bridge kimi/kimi_k3_provider.py KimiK3ModelProvider (no
// Megatron-LM flags; modules/kimi_delta_attention.cpp, attention_residuals.cpp).
std::vector<ConfigField> model_kimi_k3_rows() {
  return {
      MM_PATTERN("m.kda-layers", model.kda_layer_pattern, 1)
          .bridge("model.kimi_kda_layers")
          .json("kda_layer_pattern"),
      MM_INT("m.kda-heads", "96", model.kda_num_heads, 1, kMaxDim)
          .scope(FieldScope::kimi_delta_attention)
          .bridge("model.kimi_linear_num_heads")
          .json("kda_num_heads")
          .ui("KDA heads", "(Megatron-Bridge: Kimi K3)",
              "Kimi Delta Attention heads (query, key, value); must divide over TP.")
          .range(1, 0, 1),
      MM_INT("m.kda-dim", "128", model.kda_head_dim, 1, kMaxDim)
          .scope(FieldScope::kimi_delta_attention)
          .bridge("model.kimi_linear_head_dim")
          .json("kda_head_dim")
          .ui("KDA head dim", "(Megatron-Bridge: Kimi K3)", "Channels per KDA head.")
          .range(1, 0, 16),
      MM_INT("m.kda-conv", "4", model.kda_conv_kernel, 1, kMaxDim)
          .scope(FieldScope::kimi_delta_attention)
          .bridge("model.kimi_linear_conv_kernel_size")
          .json("kda_conv_kernel")
          .ui("KDA conv kernel", "(Megatron-Bridge: Kimi K3)",
              "Width of the short convolutions on q, k and v.")
          .range(1, 0, 1),
      MM_INT("m.attn-res", "0", model.attn_res_block_size, 0, kMaxDim)
          .bridge("model.kimi_attn_res_block_size")
          .json("attn_res_block_size")
          .ui("attention residuals block", "(Megatron-Bridge: Kimi K3; 0 = none)",
              "Each sublayer's input mixes a bank of snapshots (one per this many layers): "
              "fp32 copies of the bank are saved per sublayer; the bank crosses pipeline stages.")
          .range(0, 0, 1),
  };
}

// Megatron-FSDP / torch FSDP2 (megatron/core/distributed/fsdp/, arguments.py).
std::vector<ConfigField> fsdp_rows() {
  const std::vector<FieldChoice> dtypes = {{"fp32", "fp32", "fp32", "fp32"},
                                           {"bf16", "bf16", "bf16", "bf16"},
                                           {"fp16", "fp16", "fp16", "fp16"}};
  return {
      MM_CHOICE("fsdp", "none", parallel.fsdp.impl)
          .choices({{"none", "none", "", "none"},
                    {"megatron", "megatron", "", "Megatron-FSDP"},
                    {"torch", "torch_fsdp2", "", "torch FSDP2"}})
          .read_by_code("--use-megatron-fsdp", FlagForm::none, FlagArity::none)
          .also_reads({{"--use-torch-fsdp2", FlagArity::none}})
          .writes(write_fsdp)
          .json("fsdp")
          .ui("FSDP", "--use-megatron-fsdp / --use-torch-fsdp2",
              "Shards parameters, gradients and optimizer states over DP (see the sharding "
              "strategy); the current and prefetched layers are gathered unsharded."),
      MM_CHOICE("fsdp-shard", "optim_grads_params", parallel.fsdp.sharding)
          .choices({{"no_shard", "no_shard", "no_shard", "no_shard (ZeRO-0)"},
                    {"optim", "optim", "optim", "optim (ZeRO-1)"},
                    {"optim_grads", "optim_grads", "optim_grads", "optim_grads (ZeRO-2)"},
                    {"optim_grads_params", "optim_grads_params", "optim_grads_params",
                     "optim_grads_params (ZeRO-3)"}})
          .flag("--data-parallel-sharding-strategy", FlagForm::value)
          .json("data_parallel_sharding_strategy")
          .ui("FSDP sharding", "", "What Megatron-FSDP shards over the data-parallel group."),
      // megatron_fsdp/param_and_grad_buffer.py: with optim the main-weight buffer is sharded
      // over every instance's ranks; weights and grads keep their in-instance shards.
      MM_CHOICE("fsdp-outer", "no_shard", parallel.fsdp.outer_sharding)
          .choices({{"no_shard", "no_shard", "no_shard", "no_shard (HSDP)"},
                    {"optim", "optim", "optim", "optim (HFSDP)"}})
          .flag("--outer-dp-sharding-strategy", FlagForm::value)
          .json("outer_dp_sharding_strategy")
          .ui("FSDP outer sharding", "--outer-dp-sharding-strategy",
              "Across the optimizer instances: optim also shards the main weights and "
              "optimizer states over them."),
      MM_CHOICE("fsdp-main-params", "fp32", parallel.fsdp.main_params_dtype)
          .choices(dtypes)
          .read_by_code("--megatron-fsdp-main-params-dtype")
          .json("megatron_fsdp_main_params_dtype")
          .ui("FSDP main params", "", "Dtype of the sharded master weights."),
      MM_CHOICE("fsdp-main-grads", "fp32", parallel.fsdp.main_grads_dtype)
          .choices(dtypes)
          .read_by_code("--megatron-fsdp-main-grads-dtype")
          .json("megatron_fsdp_main_grads_dtype")
          .ui("FSDP main grads", "",
              "Dtype of the gradient buffers and of the reduce-scatter (fp32 unless set; later "
              "Megatron-Core releases default to the parameter dtype)."),
  };
}

// Megatron-FSDP's communication buffers and prefetch, FSDP2 resharding, meta-device init.
std::vector<ConfigField> fsdp_buffer_rows() {
  return {
      MM_BOOL("fsdp-double-buffer", "0", parallel.fsdp.double_buffer)
          .read_by_code("--fsdp-double-buffer", FlagForm::store_true)
          .json("fsdp_double_buffer")
          .ui("FSDP double buffer", "--fsdp-double-buffer (or --use-nccl-ub)",
              "Two units' all-gather and gradient buckets in a persistent pool, instead of "
              "prefetching up to the communication size into temporary buffers."),
      MM_BOOL("fsdp-max-pool", "0", parallel.fsdp.max_pool_double_buffer)
          .read_by_code("--megatron-fsdp-max-pool-double-buffer", FlagForm::store_true)
          .json("megatron_fsdp_max_pool_double_buffer")
          .ui("FSDP max-pool buffers", "with the double buffer",
              "The double buffer's pool fits every FSDP unit (the largest per bucket), not only "
              "the most common unit."),
      MM_BOOL("fsdp-persist-buf", "0", parallel.fsdp.persist_unpooled_buffers)
          .read_by_code("--fsdp-db-use-persist-buf-on-alloc-fail", FlagForm::store_true)
          .json("fsdp_db_use_persist_buf_on_alloc_fail")
          .ui("FSDP persistent unpooled buffers", "with the double buffer",
              "Units outside the double buffer's pool keep a persistent buffer per bucket "
              "instead of allocating one when needed."),
      MM_INT("fsdp-unit", "0", parallel.fsdp.communication_unit_elements, 0, kMaxCount)
          .read_by_code("--suggested-communication-unit-size", FlagForm::value)
          .json("suggested_communication_unit_size")
          .ui("FSDP unit size", "(elements; 0 = Megatron's default)",
              "Caps how many parameters are prefetched unsharded at once."),
      MM_BOOL("fsdp2-reshard", "1", parallel.fsdp.reshard_after_forward)
          .read_by_code("--torch-fsdp2-no-reshard-after-forward", FlagForm::store_false)
          .json("torch_fsdp2_reshard_after_forward")
          .ui("FSDP2 reshard after forward", "",
              "Off keeps every layer's gathered weights from forward to backward."),
      MM_BOOL("meta-init", "0", parallel.fsdp.init_model_with_meta_device)
          .read_by_code("--init-model-with-meta-device", FlagForm::store_true)
          .json("init_model_with_meta_device")
          .ui("meta-device init", "",
              "Without it the whole model is first built unsharded on the GPU, which can set "
              "the peak."),
  };
}

// Deferred output-layer wgrad (tensor_parallel/layers.py), what decides TE's attention
// backend (attention_backend.hpp) and per-layer CUDA graphs (cuda_graphs.hpp).
std::vector<ConfigField> wgrad_and_backend_rows() {
  return {
      MM_BOOL("defer-wgrad", "0", training.defer_embedding_wgrad_compute)
          .flag("--defer-embedding-wgrad-compute", FlagForm::store_true)
          .json("defer_embedding_wgrad_compute")
          .ui("defer embedding wgrad", "",
              "The output layer keeps each micro-batch's input and output gradient until the "
              "deferred weight-gradient GEMMs run."),
      MM_INT("wgrad-limit", "0", training.wgrad_deferral_limit, 0, kMaxDim)
          .flag("--wgrad-deferral-limit", FlagForm::value, 0.0)
          .json("wgrad_deferral_limit"),
      MM_BOOL("flash-attn", "1", training.flash_attn_available)
          .environment()
          .json("flash_attn_available")
          .ui("flash-attn installed", "(environment)",
              "Without flash-attn, deterministic TE training below sm90 falls back to unfused "
              "attention and keeps the s x s scores."),
      MM_BOOL("te-norm-view", "0", training.te_norm_saves_input_view)
          .environment()
          .json("te_norm_saves_input_view")
          .ui("TE < 1.13", "(environment)", "Q/K norms keep views of linear_qkv's output."),
      MM_INT("g.sm", "90", device.compute_capability, 10, 1000)
          .json("compute_capability")
          .ui("compute capability", "(80 = A100, 90 = H100, 100 = B200)",
              "Decides which attention kernels TE may pick."),
      // Per-layer CUDA graphs (megatron/core/transformer/cuda_graphs.py, cuda_graphs.hpp).
      MM_CHOICE("cuda-graph", "none", training.cuda_graph_impl)
          .json("cuda_graph_impl")
          .choices({{"none", "none", "none", "none"},
                    {"local", "local", "local", "local"},
                    {"te", "transformer_engine", "transformer_engine", "Transformer Engine"},
                    {"full-iteration", "full_iteration", "full_iteration", "full iteration"}})
          .read_by_code("--cuda-graph-impl", FlagForm::value)
          .also_reads({{"--enable-cuda-graph", FlagArity::none},
                       {"--external-cuda-graph", FlagArity::none}})
          .ui("CUDA graphs", "",
              "Transformer Engine graphs keep static inputs per layer and in-flight "
              "micro-batch; the capture holds the graphed activations."),
      MM_LIST("cuda-graph-modules", training.cuda_graph_modules)
          .read_by_code("--cuda-graph-modules", FlagForm::none, FlagArity::list)
          .also_reads({{"--cuda-graph-scope", FlagArity::list}})
          .writes(write_cuda_graph_modules)
          .json("cuda_graph_modules")
          .ui("graphed modules", "", "The captured parts of each layer (none checked = whole)."),
      MM_INT("cuda-graph-warmup", "3", training.cuda_graph_warmup_steps, 0, kMaxCount)
          .read_by_code("--cuda-graph-warmup-steps", FlagForm::value)
          .json("cuda_graph_warmup_steps"),
      // Transformer Engine userbuffers (transformer_engine/pytorch/module/base.py initialize_ub).
      MM_BOOL("tp-comm-overlap", "0", training.tp_comm_overlap)
          .flag("--tp-comm-overlap", FlagForm::store_true)
          .also_reads({{"--tp-comm-overlap-cfg", FlagArity::one}})
          .json("tp_comm_overlap")
          .ui("TP comm overlap", "",
              "Transformer Engine's userbuffers: twelve [s x b / CP, h] buffers outside the "
              "allocator."),
  };
}

#undef MM_INT
#undef MM_BOOL
#undef MM_CHOICE
#undef MM_REAL
#undef MM_TEXT
#undef MM_LIST
#undef MM_PATTERN

// The table, in link order (docs/share-links.md): the job, pipeline details, numerics, MoE,
// optimizer, offloading, runtime, GPU, model.
std::vector<ConfigField> all_rows() {
  std::vector<ConfigField> rows;
  for (std::vector<ConfigField> part : {job_rows(),
                                        batch_rows(),
                                        recompute_rows(),
                                        pipeline_rows(),
                                        numerics_rows(),
                                        implementation_rows(),
                                        kernel_rows(),
                                        moe_training_rows(),
                                        flex_dispatcher_rows(),
                                        moe_routing_rows(),
                                        optimizer_rows(),
                                        optimizer_state_rows(),
                                        ddp_rows(),
                                        offload_rows(),
                                        runtime_rows(),
                                        device_rows(),
                                        model_shape_rows(),
                                        model_width_rows(),
                                        model_layer_rows(),
                                        model_gemma4_layer_rows(),
                                        model_attention_variant_rows(),
                                        model_softcap_rows(),
                                        model_embedding_rows(),
                                        model_moe_rows(),
                                        model_moe_router_rows(),
                                        model_mla_rows(),
                                        model_mtp_rows(),
                                        model_dsa_rows(),
                                        model_dsv4_rows(),
                                        hyper_connection_rows(),
                                        fsdp_rows(),
                                        fsdp_buffer_rows(),
                                        wgrad_and_backend_rows()}) {
    for (ConfigField& field : part) rows.push_back(std::move(field));
  }
  for (ConfigField& field : model_hybrid_rows()) rows.push_back(std::move(field));
  for (ConfigField& field : model_gdn_rows()) rows.push_back(std::move(field));
  for (ConfigField& field : model_kimi_k3_rows()) rows.push_back(std::move(field));
  return rows;
}

// "0*3,1*58" <-> {0,0,0,1,...}: runs of a value (0/1, or a compression ratio).
std::string format_pattern(const std::vector<std::uint8_t>& pattern) {
  std::string out;
  std::size_t i = 0;
  while (i < pattern.size()) {
    std::size_t run = 1;
    while (i + run < pattern.size() && pattern[i + run] == pattern[i]) ++run;
    if (!out.empty()) out += ',';
    out += std::to_string(pattern[i]);
    if (run > 1) out += "*" + std::to_string(run);
    i += run;
  }
  return out;
}

}  // namespace

// ---- [api] --------------------------------------------------------------------------------

std::span<const UnmodeledFlag> unmodeled_megatron_flags() {
  static constexpr UnmodeledFlag kFlags[] = {
      {"--fp4-format", "NVFP4 weights and caches"},
      {"--fp4-param-gather", "the NVFP4 parameter buffer"},
      {"--use-nccl-ub", "grad and param buffers from an NCCL memory pool"},
      {"--ddp-pad-buckets-for-high-nccl-busbw", "buckets padded to 2^16 elements"},
      {"--reuse-grad-buf-for-mxfp8-param-ag", "the MXFP8 parameter all-gather buffer"},
      {"--heterogeneous-layers-config-path", "per-layer shapes (Nemotron-NAS)"},
      {"--heterogeneous-layers-config-encoded-json", "per-layer shapes (Nemotron-NAS)"},
      {"--moe-paged-stash", "the paged MoE activation stash"},
      // megatron_fsdp.py release_params_fp8_transpose_cache; fsdp_memory.cpp
      {"--keep-fp8-transpose-cache",
       "Megatron-FSDP keeps each FP8 parameter's transpose, 1 byte per parameter, whole"},
      // gpt_builders.py import_module; megatron_args.cpp skips megatron.core.* specs
      {"--spec", "a layer spec module other than Megatron-Core's own replaces the standard one"},
      // Read from Megatron-LM d98e8a6 (docs/memory-model.md §9): each moves memory when set.
      // transformer_engine.py _gtp_pre_init: weights and grads split g ways further
      {"--tensor-parallel-num-weight-shards", "weights and grads sharded further (GTP)"},
      {"--expert-tensor-parallel-num-weight-shards", "expert weights and grads sharded further"},
      // training.py _freeze_all_model_chunks: no grads, no optimizer, forward only
      {"--freeze-all-layers", "no gradients, optimizer state or saved activations"},
      // param_and_grad_buffer.py _ParamAndGradBuffer.__init__: an unsharded fp32 main_grad
      {"--ddp-param-name-patterns-for-fp32-local-accumulation",
       "an unsharded fp32 gradient for each matching parameter"},
      // fine_grained_activation_offload.py post_warmup_callback: rank r keeps r x delta bytes
      {"--delta-offload-bytes-across-pp-ranks", "offloadable activations kept on later stages"},
      // initialize.py _initialize_distributed: the fake backend makes no NCCL communicator
      {"--fake-process-group", "no NCCL or dispatcher buffers"},
      // transformer_layer.py, fused_bias_dropout.py: the residual stream in fp32
      {"--fp32-residual-connection", "an fp32 residual stream and pipeline buffers"},
      // layers.py _linear_forward: fp32 logits [N, V/TP]
      {"--output-logit-dtype", "the logits in another dtype"},
      // gpt_model.py, TELMHeadColumnParallelLinear: TE's MXFP8 copy of the output weight
      {"--fp8-output-proj", "an FP8 output layer with its cached weight copy"},
      // token_dispatcher.py _HybridEPManager.setup_metadata: statically sized expert inputs
      {"--moe-expert-rank-capacity-factor", "expert inputs sized to the capacity"},
      // mamba_mixer.py: the unfused path saves the scan's inputs separately
      {"--disable-mamba-mem-eff-path", "the unfused Mamba path's saved tensors"},
      // experts.py TEGroupedMLP: interleaved GLU skips the fused weighted SwiGLU
      {"--moe-mlp-glu-interleave-size", "the unfused GLU's saved tensors"},
      {"--use-te-activation-func", "the expert activation's output saved apart"},
      // full_cuda_graph.py: the step's temporaries stay in the graph pool
      {"--optimizer-cuda-graph", "the optimizer step's transients kept in a graph pool"},
      {"--mhc-recompute-layer-num", "hyper-connection checkpoints per recompute block"},
      // combined_1f1b.py: attention backward moved before the next MoE forward
      {"--ep-overlap-early-attn-memory-release", "an earlier release of attention activations"},
      // fine_grained_activation_offload.py tensor_need_offloading (megamem: 2^20 elements)
      {"--min-offloaded-tensor-size", "another size below which tensors stay on the GPU"},
      // router.py apply_input_jitter: the noise and the jittered input saved
      {"--moe-input-jitter-eps", "the router's jittered input saved"},
      // param_and_grad_buffer.py: an all-to-all into a fresh bucket-sized buffer
      {"--ddp-reduce-scatter-with-fp32-accumulation", "a bucket-sized receive buffer"},
      // parallel_state.py: extra all-gather communicators for Megatron-FSDP
      {"--create-all-gather-group", "more NCCL communicators"},
  };
  return kFlags;
}

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> table = all_rows();
  return table;
}

void copy_field(const ConfigField& field, Config& from, Config& to) {
  switch (field.kind) {
    case FieldKind::integer:
    case FieldKind::boolean:
    case FieldKind::choice:
      field.set_int(to, field.get_int(from));
      return;
    case FieldKind::real:
      field.set_real(to, field.get_real(from));
      return;
    case FieldKind::text:
      *field.text(to) = *field.text(from);
      return;
    case FieldKind::module_list: {
      std::string unknown;  // names from a Config are always known
      field.set_list(to, field.get_list(from), unknown);
      return;
    }
    case FieldKind::pattern:
      *field.pattern(to) = *field.pattern(from);
      return;
  }
}

const ConfigField* field_by_link_key(std::string_view key) {
  if (key.empty()) return nullptr;
  for (const ConfigField& field : config_fields()) {
    if (field.link_key == key) return &field;
  }
  return nullptr;
}

const ConfigField* field_by_name(std::string_view name) {
  for (const ConfigField& field : config_fields()) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

const ConfigField* field_by_json_key(FieldGroup group, std::string_view key) {
  if (key.empty()) return nullptr;
  for (const ConfigField& field : config_fields()) {
    if (field.group == group && field.json_key == key) return &field;
  }
  return nullptr;
}

std::string_view field_group_name(FieldGroup group) {
  // In FieldGroup's order (fields.hpp).
  static constexpr std::string_view kNames[] = {"model",     "parallel", "training",
                                                "optimizer", "runtime",  "device"};
  const auto index = static_cast<std::size_t>(group);
  return index < std::size(kNames) ? kNames[index] : kNames[0];
}

std::string field_link_text(const ConfigField& field, const Config& config) {
  Config& c = const_cast<Config&>(config);  // accessors are shared with parsing; read only here
  switch (field.kind) {
    case FieldKind::integer:
      return std::to_string(field.get_int(config));
    case FieldKind::boolean:
      return field.get_int(config) ? "1" : "0";
    case FieldKind::choice: {
      const std::int64_t index = field.get_int(config);
      if (index < 0 || index >= static_cast<std::int64_t>(field.choices.size())) return "?";
      return std::string(field.choices[static_cast<std::size_t>(index)].link);
    }
    case FieldKind::real:
      return shortest_double_text(field.get_real(config));
    case FieldKind::text:
      return *field.text(c);
    case FieldKind::module_list: {
      std::string out;
      for (const std::string& item : field.get_list(config)) out += (out.empty() ? "" : ",") + item;
      return out;
    }
    case FieldKind::pattern:
      return format_pattern(*field.pattern(c));
  }
  return std::string();
}

bool is_architecture_field(const ConfigField& field, const ModelConfig& model) {
  if (field.group != FieldGroup::model || field.name == "model.name") return false;
  if (field.name == "model.max_position_embeddings") {
    return model.position_embedding == PositionEmbedding::learned_absolute;
  }
  return !field.run_setting;
}

void append_megatron_flags(const ConfigField& field, const Config& config,
                           std::vector<MegatronFlag>& flags) {
  if (field.moe_only && config.model.num_experts == 0) return;  // inert without experts
  if (field.write_flags) return field.write_flags(config, flags);
  static const Config megatron_defaults;
  const std::string name(field.flag);
  const bool at_default =
      field_link_text(field, config) == field_link_text(field, megatron_defaults);
  switch (field.flag_form) {
    case FlagForm::none:
      return;
    case FlagForm::store_true:
      if (field.get_int(config)) add_flag(flags, name);
      return;
    case FlagForm::store_false:
      if (!field.get_int(config)) add_flag(flags, name);
      return;
    case FlagForm::value:
      break;
  }
  if (at_default && !field.flag_always) return;
  if (field.kind == FieldKind::choice) {
    const auto index = static_cast<std::size_t>(field.get_int(config));
    if (index < field.choices.size() && !field.choices[index].megatron.empty()) {
      add_flag(flags, name, std::string(field.choices[index].megatron));
    }
    return;
  }
  add_flag(flags, name, field_link_text(field, config));
}

}  // namespace megamem
