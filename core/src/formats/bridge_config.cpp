// Megatron-Bridge ConfigContainer <-> Config (see bridge_config.hpp).
//
// Index:
//   [SECTION] Field tables (Bridge names -> Megatron-LM argument destinations)
//   [SECTION] Node values as Python prints them
//   [SECTION] Sections: model, train, ddp, optimizer, dataset, mixed_precision, comm_overlap
//   [SECTION] import_bridge_config, parse_bridge_overrides, to_bridge_overrides
//
// Field names: NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/models/gpt_provider.py,
// training/config.py, training/mixed_precision.py (067f987); the model provider's other fields
// are megatron/core/transformer/transformer_config.py's, which Megatron-LM turns into flags of
// the same name (megatron/training/argument_utils.py ArgumentGroupFactory).
#include "megamem/bridge_config.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/hybrid_allocation.hpp"
#include "formats/megatron_dump_flags.hpp"
#include "formats/number_text.hpp"
#include "megamem/fields.hpp"
#include "megamem/megatron_args.hpp"

namespace megamem {
namespace {

using formats::lookup;

using formats::DumpedArgument;

// ---------------------------------------------------------------------------------------------
// [SECTION] Field tables
// ---------------------------------------------------------------------------------------------

// Sections of a ConfigContainer that do not change memory.
constexpr std::string_view kQuietSections[] = {"_target_",
                                               "checkpoint",
                                               "logger",
                                               "scheduler",
                                               "tokenizer",
                                               "rng",
                                               "dist",
                                               "ft",
                                               "profiling",
                                               "inprocess_restart",
                                               "rerun_state_machine",
                                               "straggler",
                                               "nvrx_straggler",
                                               "validation",
                                               "tensor_inspect"};

// Bridge field -> Megatron-LM argument destination, where they differ.
constexpr std::pair<std::string_view, std::string_view> kRenamedFields[] = {
    {"num_moe_experts", "num_experts"},
    {"num_layers_in_first_pipeline_stage", "decoder_first_pipeline_num_layers"},
    {"num_layers_in_last_pipeline_stage", "decoder_last_pipeline_num_layers"},
    {"layernorm_epsilon", "norm_epsilon"},
    {"bucket_size", "ddp_bucket_size"},
    {"use_custom_fsdp", "use_megatron_fsdp"},
    {"sequence_length", "seq_length"},
    {"fp8_param", "fp8_param_gather"},
    {"nccl_ub", "use_nccl_ub"},
    {"create_attention_mask", "create_attention_mask_in_dataloader"},
};

// Fields of Bridge's dataclasses (and TransformerConfig fields Megatron-LM has no flag for)
// that do not change memory: read quietly. Anything else unknown is a warning naming it.
constexpr std::string_view kKnownQuietFields[] = {
    "_target_", "should_pad_vocab", "gated_linear_unit", "activation_func",
    "share_embeddings_and_output_weights", "bias_activation_fusion", "hf_model_id",
    "hf_model_revision", "generation_config", "params_dtype", "pipeline_dtype", "autocast_dtype",
    "autocast_enabled", "fp32", "enable_autocast", "parallel_output", "logit_dtype",
    "transformer_layer_spec", "seq_len_interpolation_factor", "rope_scaling", "rope_scaling_factor",
    "scale_factor", "low_freq_factor", "high_freq_factor", "old_context_len",
    "deallocate_pipeline_outputs", "scatter_embedding_sequence_parallel", "tp_only_amax_red",
    "tp_comm_overlap_cfg", "use_transformer_engine_full_layer_spec",
    "use_transformer_engine_op_fuser", "dense_grouped_gemm", "mtp_enabled",
    "init_model_with_meta_device", "use_te_rng_tracker", "restore_modelopt_state",
    "use_arbitrary_attention_mask", "vocab_size", "timers", "config_logger_dir",
    "finalize_model_grads_func", "grad_scale_func", "grad_sync_func", "param_sync_func",
    "no_sync_func", "init_method", "output_layer_init_method", "embedding_init_method",
    "mamba_stack_spec", "hetereogenous_dist_checkpoint", "heterogeneous_block_specs",
    "falconh1_ratio", "falconh1_stack_spec", "is_hybrid_model", "variable_seq_lengths",
    "batch_p2p_sync", "pipeline_model_parallel_comm_backend", "check_for_nan_in_grad",
    "average_in_collective", "preserve_fp32_weights", "gradient_reduce_div_fusion",
    "suggested_communication_unit_size", "fsdp_double_buffer", "disable_symmetric_registration",
    "pad_buckets_for_high_nccl_busbw", "align_param_gather", "decoupled_weight_decay",
    "pin_cpu_grads", "pin_cpu_params", "config_logger_dir", "use_torch_optimizer_for_cpu_offload",
    "overlap_cpu_optimizer_d2h_h2d", "loss_scale_window", "decrease_batch_size_if_needed",
    "manual_gc_eval", "train_sync_interval", "exit_signal_handler_for_dataloader",
    "mid_level_dataset_surplus", "split_matrix", "drop_last_partial_validation_sequence",
    "add_extra_token_to_sequence", "skip_getting_attention_mask_from_dataset",
    "object_storage_cache_path", "path_to_cache", "blend", "blend_per_split",
    "multiple_validation_sets", "full_validation", "mock", "num_dataset_builder_threads",
    "random_seed", "persistent_workers", "pin_memory",
    // TransformerConfig fields Megatron-LM sets without a flag of the same name, and ones
    // whose memory effect megamem reads from another field (cpu_offloading from
    // cpu_offloading_num_layers, the tp_comm_* details from tp_comm_overlap).
    "activation_func_fp8_input_store", "async_tensor_model_parallel_allreduce",
    "barrier_with_L1_time", "batch_p2p_comm", "cpu_offloading", "cpu_offloading_activations",
    "cpu_offloading_double_buffering", "cpu_offloading_weights", "cuda_graph_retain_backward_graph",
    "cuda_graph_use_single_mempool", "disable_parameter_transpose_cache", "fp4_param",
    "fp8_dot_product_attention", "fp8_multi_head_attention", "fused_single_qkv_rope",
    "inference_sampling_seed", "layernorm_zero_centered_gamma", "memory_efficient_layer_norm",
    "moe_extended_tp", "moe_router_topk_limited_devices", "moe_token_dropping",
    "moe_use_legacy_grouped_gemm", "num_microbatches_with_partial_activation_checkpoints",
    "overlap_p2p_comm_warmup_flush", "perform_initialization", "quant_recipe", "softmax_scale",
    "tp_comm_atomic_ag", "tp_comm_atomic_rs", "tp_comm_overlap_disable_fc1",
    "tp_comm_overlap_disable_qkv", "use_kitchen", "use_mamba_mem_eff_path",
    "store_param_remainders"};

// TransformerConfig fields without a Megatron-LM flag whose value other than the default moves
// memory megamem does not price: read quietly at the default, named when set.
struct UnpricedSetting {
  std::string_view key;
  std::string_view value;   // as python_value() spells it
  std::string_view effect;  // what it changes
};
constexpr UnpricedSetting kUnpricedSettings[] = {
    // transformer_engine.py TEDotProductAttention: FP8 attention keeps FP8 inputs for backward.
    {"fp8_dot_product_attention", "True", "FP8 attention's saved inputs"},
    {"fp8_multi_head_attention", "True", "FP8 attention's inputs and outputs"},
    // extensions/transformer_engine.py: is_first_microbatch = None, no cached FP8 weights.
    {"disable_parameter_transpose_cache", "True", "no cached FP8 weight copies"},
    // pipeline_parallel/schedules.py deallocate_output_tensor: outputs kept in flight.
    {"deallocate_pipeline_outputs", "False", "each in-flight micro-batch's stage output kept"},
};

std::string_view unpriced_effect(std::string_view key, std::string_view value) {
  for (const UnpricedSetting& setting : kUnpricedSettings) {
    if (setting.key == key && setting.value == value) return setting.effect;
  }
  return {};
}

// Mixed-precision recipes (training/mixed_precision.py): the fields each one sets.
struct PrecisionRecipe {
  std::string_view name;
  std::vector<std::pair<std::string_view, std::string_view>> fields;
};

const std::vector<PrecisionRecipe>& precision_recipes() {
  using F = std::vector<std::pair<std::string_view, std::string_view>>;
  const F bf16 = {{"bf16", "True"}, {"fp16", "False"}, {"grad_reduce_in_fp32", "True"}};
  const F fp16 = {{"fp16", "True"}, {"bf16", "False"}, {"grad_reduce_in_fp32", "False"}};
  const auto with = [](F base, const F& more) {
    base.insert(base.end(), more.begin(), more.end());
    return base;
  };
  const F delayed = {{"fp8", "hybrid"}, {"fp8_recipe", "delayed"}, {"fp8_param_gather", "True"}};
  const F mxfp8 = {{"fp8", "e4m3"},
                   {"fp8_recipe", "mxfp8"},
                   {"fp8_param_gather", "True"},
                   {"reuse_grad_buf_for_mxfp8_param_ag", "True"}};
  const F current = {{"fp8", "hybrid"},
                     {"fp8_recipe", "tensorwise"},
                     {"first_last_layers_bf16", "True"},
                     {"fp8_param_gather", "True"}};
  const F subchannel = {{"fp8", "hybrid"}, {"fp8_recipe", "blockwise"}};
  const F nvfp4 = {{"fp4", "e2m1"}, {"fp4_param_gather", "True"}};
  static const std::vector<PrecisionRecipe> recipes = {
      {"bf16_mixed", bf16},
      {"fp16_mixed", fp16},
      {"bf16_with_fp8_delayed_scaling_mixed", with(bf16, delayed)},
      {"fp16_with_fp8_delayed_scaling_mixed", with(fp16, delayed)},
      {"bf16_with_mxfp8_mixed", with(bf16, mxfp8)},
      {"fp16_with_mxfp8_mixed", with(fp16, mxfp8)},
      {"bf16_with_fp8_current_scaling_mixed", with(bf16, current)},
      {"fp16_with_fp8_current_scaling_mixed", with(fp16, current)},
      {"bf16_with_fp8_subchannel_scaling_mixed", with(bf16, subchannel)},
      {"fp16_with_fp8_subchannel_scaling_mixed", with(fp16, subchannel)},
      {"bf16_with_nvfp4_mixed", with(bf16, nvfp4)},
  };
  return recipes;
}

bool contains(const auto& list, std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Node values as Python prints them
// ---------------------------------------------------------------------------------------------

const BridgeNode* entry(const BridgeNode& map, std::string_view key) {
  for (const auto& [name, value] : map.entries) {
    if (name == key) return &value;
  }
  return nullptr;
}

// megatron/core/transformer/enums.py AttnBackend: flash=1, fused=2, unfused=3, local=4, auto=5.
std::optional<std::string> attention_backend_name(const BridgeNode& node) {
  const BridgeNode* args = entry(node, "_args_");
  if (!args || args->items.size() != 1) return std::nullopt;
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"1", "flash"}, {"2", "fused"}, {"3", "unfused"}, {"4", "local"}, {"5", "auto"}};
  const auto name = lookup(kNames, args->items.front().scalar);
  if (!name) return std::nullopt;
  return "AttnBackend." + std::string(*name);
}

// The value as Megatron's argument dump would print it; nullopt for objects megamem does not
// read (functions, init methods) and for malformed values.
std::optional<std::string> python_value(const BridgeNode& node) {
  switch (node.kind) {
    case BridgeNode::Kind::null:
      return "None";
    case BridgeNode::Kind::scalar:
      if (node.quoted) return node.scalar;
      if (node.scalar == "true" || node.scalar == "True") return "True";
      if (node.scalar == "false" || node.scalar == "False") return "False";
      if (node.scalar == "null" || node.scalar == "~" || node.scalar == "None") return "None";
      return node.scalar;
    case BridgeNode::Kind::sequence: {
      std::string out = "[";
      for (const BridgeNode& item : node.items) {
        if (item.kind != BridgeNode::Kind::scalar) return std::nullopt;
        out += (out.size() > 1 ? ", " : "") + item.scalar;
      }
      return out + "]";
    }
    case BridgeNode::Kind::map: {
      const BridgeNode* target = entry(node, "_target_");
      if (!target) return std::nullopt;
      if (target->scalar.rfind("torch.", 0) == 0) return target->scalar;  // a dtype
      if (target->scalar.find("AttnBackend") != std::string::npos) {
        return attention_backend_name(node);
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string where(const std::string& key, const BridgeNode& node) {
  return node.line > 0 ? key + " (line " + std::to_string(node.line) + ")" : key;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Sections
// ---------------------------------------------------------------------------------------------

// The Megatron arguments read so far; a later assignment of a name replaces the earlier one
// (mixed_precision overrides the model's fields, as MixedPrecisionConfig.setup() does).
struct Reader {
  std::vector<DumpedArgument> arguments;
  std::vector<std::string> warnings;

  void set(const std::string& name, const std::string& value, const std::string& source) {
    for (DumpedArgument& argument : arguments) {
      if (argument.name == name) {
        argument = {name, value, source};
        return;
      }
    }
    arguments.push_back({name, value, source});
  }

  const DumpedArgument* get(std::string_view name) const {
    for (const DumpedArgument& argument : arguments) {
      if (argument.name == name) return &argument;
    }
    return nullptr;
  }
};

// Fields whose Bridge form is not one Megatron argument.
bool read_special_field(Reader& r, const std::string& field, const std::string& value,
                        const std::string& source) {
  if (field == "vocab_size" || field == "should_pad_vocab") {
    return true;  // read_vocabulary()
  } else if (field == "share_embeddings_and_output_weights") {
    r.set("untie_embeddings_and_output_weights", value == "True" ? "False" : "True", source);
  } else if (field == "gated_linear_unit") {
    r.set("swiglu", value, source);  // SiLU is the GLU Bridge's GPT providers use
  } else if (field == "activation_func") {
    // A function: _target_ torch.nn.functional.silu / gelu, or squared_relu.
    if (value.find("squared_relu") != std::string::npos) r.set("squared_relu", "True", source);
  } else if (field == "num_query_groups") {
    r.set("group_query_attention", value == "None" ? "False" : "True", source);
    r.set("num_query_groups", value, source);
  } else if (field == "bias_activation_fusion") {
    r.set("bias_swiglu_fusion", value, source);
    r.set("bias_gelu_fusion", value, source);
  } else if (field == "grad_reduce_in_fp32") {
    r.set("grad_reduce_in_bf16", value == "True" ? "False" : "True", source);
  } else if (field == "tp_comm_overlap" || field == "use_distributed_optimizer") {
    // Either ddp.use_distributed_optimizer or optimizer.use_distributed_optimizer turns it on.
    const DumpedArgument* before = r.get(field);
    if (!(before && before->value == "True")) r.set(field, value, source);
  } else {
    return false;
  }
  return true;
}

// The Bridge-only field (fields.hpp is_bridge_only_field) at this path, read after the flags.
bool is_bridge_only_path(std::string_view path) {
  return std::any_of(config_fields().begin(), config_fields().end(), [&](const ConfigField& f) {
    return is_bridge_only_field(f) && f.bridge_field == path;
  });
}

// A pattern row's Bridge list of 1-based layer numbers (kimi_kda_layers) as one entry per
// layer; nullopt for anything else.
std::optional<std::vector<std::uint8_t>> layer_numbers(const BridgeNode& node, int layers) {
  if (node.kind != BridgeNode::Kind::sequence || layers <= 0) return std::nullopt;
  std::vector<std::uint8_t> pattern(static_cast<std::size_t>(layers), 0);
  for (const BridgeNode& item : node.items) {
    const std::optional<LeadingNumber> number =
        item.kind == BridgeNode::Kind::scalar ? leading_number(item.scalar) : std::nullopt;
    if (!number || number->length != item.scalar.size() || number->value < 1 ||
        number->value > layers || number->value != std::floor(number->value)) {
      return std::nullopt;
    }
    pattern[static_cast<std::size_t>(number->value) - 1] = 1;
  }
  return pattern;
}

// Sets the Bridge-only fields the YAML gives; a value that is not a number in the field's
// range is a warning naming it (the field keeps its default).
void read_bridge_only_fields(const BridgeNode& root, Config& config,
                             std::vector<std::string>& warnings) {
  for (const ConfigField& field : config_fields()) {
    if (!is_bridge_only_field(field)) continue;
    const std::string_view path = field.bridge_field;
    const std::size_t dot = path.find('.');
    const BridgeNode* section = entry(root, path.substr(0, dot));
    const BridgeNode* node = section ? entry(*section, path.substr(dot + 1)) : nullptr;
    if (node && field.kind == FieldKind::pattern) {
      if (node->kind == BridgeNode::Kind::null) continue;
      const auto pattern = layer_numbers(*node, config.model.num_layers);
      if (pattern) {
        *field.pattern(config) = *pattern;
      } else {
        warnings.push_back(where(std::string(path), *node) +
                           ": expects a list of layer numbers from 1 to num_layers; ignored");
      }
      continue;
    }
    const std::optional<std::string> value = node ? python_value(*node) : std::nullopt;
    if (!value || *value == "None") continue;
    if (field.kind == FieldKind::boolean && (*value == "True" || *value == "False")) {
      field.set_int(config, *value == "True" ? 1 : 0);
      continue;
    }
    const std::optional<LeadingNumber> number = leading_number(*value);
    const bool integer = field.kind == FieldKind::integer;
    const double lo = integer ? static_cast<double>(field.min_int) : field.min_real;
    const double hi = integer ? static_cast<double>(field.max_int) : field.max_real;
    if (!number || number->length != value->size() || number->value < lo || number->value > hi ||
        (integer && number->value != std::floor(number->value))) {
      warnings.push_back(where(std::string(path), *node) + ": '" + *value +
                         "' is not a value megamem can read here; ignored");
      continue;
    }
    if (integer) {
      field.set_int(config, static_cast<std::int64_t>(number->value));
    } else {
      field.set_real(config, number->value);
    }
  }
}

// Reads one section's fields (model, train, ddp, optimizer, dataset, mixed_precision, ...).
std::optional<Error> read_fields(Reader& r, const std::string& section, const BridgeNode& map) {
  for (const auto& [key, node] : map.entries) {
    const std::string path = section + "." + key;
    const std::string field(lookup(kRenamedFields, key).value_or(key));
    if (key == "_target_" || is_bridge_only_path(path)) continue;
    std::optional<std::string> value = python_value(node);
    if (key == "activation_func" && node.kind == BridgeNode::Kind::map) {
      const BridgeNode* target = entry(node, "_target_");
      value = target ? target->scalar : std::string();
    }
    if (!value) {
      if (node.kind == BridgeNode::Kind::map && entry(node, "_target_")) continue;  // an object
      if (contains(kKnownQuietFields, key)) continue;
      if (formats::is_megatron_destination(field)) {
        return Error{path, where(path, node) + ": megamem cannot read this value as a " +
                               "setting (expected a number, string, true/false or list)"};
      }
      r.warnings.push_back(where(path, node) + ": not a field megamem knows; ignored");
      continue;
    }
    if (const std::string_view effect = unpriced_effect(key, *value); !effect.empty()) {
      r.warnings.push_back(where(path, node) + ": " + *value + " changes memory (" +
                           std::string(effect) +
                           ") but is not modeled; the estimate leaves it out");
    }
    if (read_special_field(r, field, *value, where(path, node))) continue;
    if (!formats::is_megatron_destination(field) && !contains(kKnownQuietFields, key)) {
      r.warnings.push_back(where(path, node) + ": not a field megamem knows; ignored");
      continue;
    }
    r.set(field, *value, where(path, node));
  }
  return std::nullopt;
}

// runtime_config_update (training/config.py) runs MixedPrecisionConfig.setup(), which copies
// every field of it the optimizer config also has onto it, before optimizer.finalize(): the
// optimizer gets MixedPrecisionConfig's fp8_recipe, "tensorwise" unless a recipe sets one,
// also in a bf16 run (OptimizerConfig::fp8_recipe says what that changes).
std::optional<Error> read_mixed_precision(Reader& r, const BridgeNode& node) {
  if (node.kind == BridgeNode::Kind::null) return std::nullopt;
  r.set("fp8_recipe", "tensorwise", where("mixed_precision (MixedPrecisionConfig default)", node));
  if (node.kind == BridgeNode::Kind::map) return read_fields(r, "mixed_precision", node);
  std::string name = node.scalar;
  std::replace(name.begin(), name.end(), '-', '_');  // mixed_precision.py registers both
  for (const PrecisionRecipe& recipe : precision_recipes()) {
    if (recipe.name != name) continue;
    for (const auto& [field, value] : recipe.fields) {
      const std::string source = where("mixed_precision=" + node.scalar, node);
      if (!read_special_field(r, std::string(field), std::string(value), source)) {
        r.set(std::string(field), std::string(value), source);
      }
    }
    return std::nullopt;
  }
  std::string names;
  for (const PrecisionRecipe& recipe : precision_recipes()) {
    names += (names.empty() ? "" : ", ") + std::string(recipe.name);
  }
  return Error{"mixed_precision", where("mixed_precision", node) + ": unknown recipe '" +
                                      node.scalar + "' (training/mixed_precision.py has " + names +
                                      ")"};
}

// model.vocab_size is used as is unless should_pad_vocab (gpt_provider.py provide()).
std::vector<std::string> vocabulary_flags(const BridgeNode& root) {
  const BridgeNode* model = entry(root, "model");
  const BridgeNode* vocab = model ? entry(*model, "vocab_size") : nullptr;
  if (!vocab || vocab->kind != BridgeNode::Kind::scalar) return {};
  const BridgeNode* pad = entry(*model, "should_pad_vocab");
  const bool padded = pad && python_value(*pad) == "True";
  return {padded ? "--vocab-size" : "--padded-vocab-size", vocab->scalar};
}

// ConfigContainer.env_vars (training/config.py, exported into the process before training):
// two of the variables Bridge's recipes set change memory, PYTORCH_CUDA_ALLOC_CONF with
// expandable_segments:True (c10/cuda/CUDAAllocatorConfig.cpp) and NCCL_NVLS_ENABLE=0 (NCCL
// src/transport/nvls.cc ncclNvlsInit). The rest are read quietly.
void read_env_vars(const BridgeNode& root, RuntimeOverheadConfig& runtime) {
  const BridgeNode* env = entry(root, "env_vars");
  if (!env || env->kind != BridgeNode::Kind::map) return;
  if (const BridgeNode* conf = entry(*env, "PYTORCH_CUDA_ALLOC_CONF")) {
    const std::optional<std::string> value = python_value(*conf);
    if (value && (value->find("expandable_segments:True") != std::string::npos ||
                  value->find("expandable_segments:true") != std::string::npos)) {
      runtime.expandable_segments = true;
    }
  }
  if (const BridgeNode* nvls = entry(*env, "NCCL_NVLS_ENABLE")) {
    if (python_value(*nvls) == "0") runtime.nccl_nvls = false;
  }
}

}  // namespace

// A model-section number (num_layers, the hybrid ratios); 0 when absent or not a number.
double model_number(const BridgeNode& model, const char* key) {
  const BridgeNode* node = entry(model, key);
  const std::optional<std::string> value = node ? python_value(*node) : std::nullopt;
  const std::optional<LeadingNumber> number = value ? leading_number(*value) : std::nullopt;
  return number && number->length == value->size() ? number->value : 0.0;
}

// Megatron-Bridge's FalconH1ModelProvider places its layers from falconh1_ratio, after the
// attention and MLP ratios, when hybrid_override_pattern is None
// (falcon_h1/modeling_falconh1/mamba_hybrid_layer_allocation.py allocate_layers; the bridge
// sets 1.0: every layer parallel): that pattern, as --hybrid-override-pattern.
void read_falcon_h1_ratio(const BridgeNode& root, Reader& r) {
  const BridgeNode* model = entry(root, "model");
  if (!model || !entry(*model, "falconh1_ratio")) return;
  const double parallel = model_number(*model, "falconh1_ratio");
  const DumpedArgument* pattern = r.get("hybrid_override_pattern");
  if (parallel <= 0 || (pattern && pattern->value != "None")) return;
  const double layers = model_number(*model, "num_layers");
  if (layers < 1 || layers > 4096) return;  // the pattern field's length (field_registry.cpp)
  r.set("hybrid_override_pattern",
        formats::pattern_from_ratios(static_cast<int>(layers),
                                     model_number(*model, "hybrid_attention_ratio"),
                                     model_number(*model, "hybrid_mlp_ratio"), parallel),
        where("model.falconh1_ratio", *entry(*model, "falconh1_ratio")));
}

namespace {

// What a ConfigContainer says that no Megatron-LM flag carries, read into the Config directly.
void read_fields_without_flags(const BridgeNode& root, BridgeImport& out) {
  // optimizer.store_param_remainders has no Megatron-LM flag; read it into the Config directly.
  if (const BridgeNode* optimizer = entry(root, "optimizer")) {
    if (const BridgeNode* remainders = entry(*optimizer, "store_param_remainders")) {
      const std::optional<std::string> value = python_value(*remainders);
      if (value == "True" || value == "False") {
        out.args.config.optimizer.store_param_remainders = *value == "True";
      }
    }
  }
  read_bridge_only_fields(root, out.args.config, out.warnings);
  read_env_vars(root, out.args.config.runtime);
  if (const BridgeNode* model = entry(root, "model")) {
    if (const BridgeNode* target = entry(*model, "_target_")) {
      ModelConfig& m = out.args.config.model;
      m.name = target->scalar.substr(target->scalar.rfind('.') + 1);
      // minimax_m3_bridge.py: MiniMaxM3ModelProvider.__post_init__ (the VLM provider inherits
      // it) registers _promote_router_weights_to_float32, so the class alone says the router
      // weights are fp32 parameters; no config key does.
      if (m.name == "MiniMaxM3ModelProvider" || m.name == "MiniMaxM3VLModelProvider") {
        m.moe_router_fp32_params = true;
      }
    }
  }
}

}  // namespace

Expected<BridgeImport> import_bridge_config(const BridgeNode& root, std::int64_t world_size) {
  if (root.kind != BridgeNode::Kind::map) {
    return Error{"bridge_config", "expects a mapping of sections (model:, train:, ...)"};
  }
  Reader r;
  // dataset's sequence_length after model's seq_length; mixed precision last (it wins).
  for (const char* section : {"model", "train", "ddp", "optimizer", "dataset", "comm_overlap"}) {
    const BridgeNode* node = entry(root, section);
    if (!node || node->kind == BridgeNode::Kind::null) continue;
    if (node->kind != BridgeNode::Kind::map) {
      return Error{section, where(section, *node) + ": expects a mapping of fields"};
    }
    if (std::optional<Error> error = read_fields(r, section, *node)) return *error;
  }
  if (const BridgeNode* precision = entry(root, "mixed_precision")) {
    if (std::optional<Error> error = read_mixed_precision(r, *precision)) return *error;
  }
  for (const auto& [section, node] : root.entries) {
    static constexpr std::string_view kRead[] = {"model",           "train",   "ddp",
                                                 "optimizer",       "dataset", "comm_overlap",
                                                 "mixed_precision", "env_vars"};
    if (contains(kRead, section) || contains(kQuietSections, section)) continue;
    if (section == "peft" && node.kind == BridgeNode::Kind::null) continue;
    r.warnings.push_back(where(section, node) + ": a section megamem does not read; ignored");
  }
  read_falcon_h1_ratio(root, r);
  Expected<formats::DumpedFlags> flags = formats::dumped_arguments_to_flags(r.arguments);
  if (!flags) return flags.error();
  for (const std::string& word : vocabulary_flags(root)) flags.value().words.push_back(word);
  Expected<MegatronArgs> parsed = formats::parse_dumped_flags(*flags, world_size, 0);
  if (!parsed) return parsed.error();
  BridgeImport out{.args = std::move(*parsed),
                   .megatron_flags = formats::command_line_of(flags->words),
                   .warnings = std::move(r.warnings)};
  read_fields_without_flags(root, out);
  for (const std::string& flag : out.args.unmodeled_flags) {
    out.warnings.push_back(flag + " changes memory but is not modeled; the estimate leaves it out");
  }
  return out;
}

}  // namespace megamem
