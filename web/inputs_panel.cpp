// The settings column: which fields, in which section, in what order (ui.md). Each row's
// label, Megatron flag, tooltip (its effect on memory), bounds and step come from the field
// registry (core fields.hpp), looked up by share-link key. Index:
//   [rows]      drawing a registry field as a row
//   [errors]    which row explains the current error
//   [model]     architecture, MoE, MLA, MTP, hybrid/GDN layers, and the import boxes
//   [cluster]   GPU preset, GPU count, node size, capacity
//   [parallel]  TP PP VPP CP EP ETP, derived DP, uneven pipelines
//   [training]  batch, sequence, precision, kernels, MoE dispatch
//   [recompute] recompute and activation offload
//   [optimizer] optimizer, distributed optimizer, CPU offload
//   [runtime]   runtime overheads and per-GPU fixed buffers
#include "inputs_panel.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "imgui.h"
#include "import_boxes.hpp"
#include "megamem/fields.hpp"
#include "megamem/modules.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"
#include "megamem/suggestions.hpp"
#include "messages.hpp"
#include "theme.hpp"
#include "top_bar.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

// ---- [rows] -----------------------------------------------------------------------------------

// The registry's row (core fields.hpp) behind a link key; every key below names one.
const ConfigField& field_of(const char* key) {
  const ConfigField* field = field_by_link_key(key);
  IM_ASSERT(field != nullptr && "inputs_panel: a row names an unknown share-link key");
  return *field;
}

// Label, key, flag and tooltip come from the registry; all are string literals there.
InputSpec spec_of(const ConfigField& field) {
  return {field.label.data(), field.link_key.data(), field.flag_help.data(), field.tooltip.data()};
}

// The parallel sizes whose -/+ buttons step through values that divide (the core's
// step_parallel_size): TP 8 + goes to 16, never 9.
bool steps_through_divisors(const ConfigField& field) {
  for (const char* key : {"tp", "pp", "vpp", "cp", "ep", "etp"}) {
    if (field.link_key == key) return true;
  }
  return false;
}

bool number_row(InputContext& ctx, const ConfigField& field, Config& c) {
  const InputSpec spec = spec_of(field);
  if (steps_through_divisors(field)) {
    int value = static_cast<int>(field.get_int(c));
    const auto next = [&](int direction) {
      // A layout the page generated is derived again for the new size (app.cpp), so the
      // step looks past it.
      Config from = c;
      if (from.parallel.pipeline_layout == ctx.state.generated_layout) {
        from.parallel.pipeline_layout.clear();
      }
      return step_parallel_size(from, field.json_key, direction);
    };
    if (!row_int_steps(ctx, spec, &value, static_cast<int>(field.ui_min), next)) return false;
    field.set_int(c, value);
    return true;
  }
  if (field.kind == FieldKind::real) {
    double value = field.get_real(c);
    if (!row_double(ctx, spec, &value, field.ui_min, field.ui_max, field.ui_step,
                    field.ui_format.data())) {
      return false;
    }
    field.set_real(c, value);
    return true;
  }
  if (field.wide) {
    std::int64_t value = field.get_int(c);
    if (!row_int64(ctx, spec, &value, static_cast<std::int64_t>(field.ui_min),
                   static_cast<std::int64_t>(field.ui_step))) {
      return false;
    }
    field.set_int(c, value);
    return true;
  }
  int value = static_cast<int>(field.get_int(c));
  const bool changed = field.ui_max > 0
                           ? row_slider(ctx, spec, &value, static_cast<int>(field.ui_min),
                                        static_cast<int>(field.ui_max))
                           : row_int(ctx, spec, &value, static_cast<int>(field.ui_min),
                                     static_cast<int>(field.ui_step));
  if (changed) field.set_int(c, value);
  return changed;
}

// The model preset the configuration came from (nullptr: none, a custom model).
const ModelPreset* chosen_model(const AppState& state) {
  if (state.shared.model_id.empty()) return nullptr;
  const Expected<PresetCatalog>& catalog = builtin_presets();
  return catalog ? catalog->find_model(state.shared.model_id) : nullptr;
}

// The preset's value of an architecture field as shown, when the configuration's differs
// ("" when it does not, or the field is not an architecture field).
std::string preset_value_if_edited(const AppState& state, const ConfigField& field) {
  const ModelPreset* preset = field.group == FieldGroup::model ? chosen_model(state) : nullptr;
  if (preset == nullptr) return "";
  Config original;
  original.model = preset->model;
  std::string text = field_link_text(field, original);
  if (text == field_link_text(field, state.shared.config)) return "";
  if (field.kind == FieldKind::boolean) text = tr(text == "1" ? "checked" : "unchecked");
  return text.empty() ? "\"\"" : text;
}

// Sets the field back to the chosen preset's value.
void restore_preset_value(const ConfigField& field, AppState& state) {
  const ModelPreset* preset = chosen_model(state);
  if (preset == nullptr) return;
  Config original = state.shared.config;
  original.model = preset->model;
  Config& c = state.shared.config;
  if (field.kind == FieldKind::real) {
    field.set_real(c, field.get_real(original));
  } else if (field.kind == FieldKind::text) {
    *field.text(c) = *field.text(original);
  } else {
    field.set_int(c, field.get_int(original));
  }
}

// The widget of the field's kind.
void draw_row(InputContext& ctx, const ConfigField& field, Config& c) {
  switch (field.kind) {
    case FieldKind::boolean: {
      bool value = field.get_int(c) != 0;
      if (row_checkbox(ctx, spec_of(field), &value)) field.set_int(c, value ? 1 : 0);
      return;
    }
    case FieldKind::choice: {
      std::vector<const char*> labels;
      for (const FieldChoice& choice : field.choices) labels.push_back(choice.label.data());
      int index = static_cast<int>(field.get_int(c));
      if (row_choice(ctx, spec_of(field), &index, labels)) field.set_int(c, index);
      return;
    }
    case FieldKind::text:
      row_text(ctx, spec_of(field), field.text(c), field.ui_format.data());
      return;
    case FieldKind::module_list:
    case FieldKind::pattern:
      IM_ASSERT(false && "inputs_panel: lists are drawn by modules_row");
      return;
    case FieldKind::integer:
    case FieldKind::real:
      number_row(ctx, field, c);
      return;
  }
}

// One input row for the field under this link key: "—" when it does not apply to the model
// (the core says why), else its widget, marked with a reset when edited away from the preset.
void row(InputContext& ctx, const char* key) {
  const ConfigField& field = field_of(key);
  Config& c = ctx.state.shared.config;
  const std::string_view why_not = field_not_applicable(field, c.model);
  if (!why_not.empty()) {
    row_not_applicable(ctx, spec_of(field), why_not.data());  // a literal of the core's table
    return;
  }
  ctx.preset_value = preset_value_if_edited(ctx.state, field);
  ctx.preset_field = field.group == FieldGroup::model && chosen_model(ctx.state) != nullptr;
  draw_row(ctx, field, c);
  if (ctx.reset_clicked) {
    restore_preset_value(field, ctx.state);
    ctx.changed = true;
    ctx.state.edited_key = key;
  }
  ctx.preset_value.clear();
  ctx.preset_field = false;
  ctx.reset_clicked = false;
}

void rows(InputContext& ctx, std::initializer_list<const char*> keys) {
  for (const char* key : keys) row(ctx, key);
}

// Module names as checkboxes: the modules that act on the model (the core's module choices)
// and any chosen one besides, so that it can be unticked; in the core's table order.
template <class Module>
void modules_row(InputContext& ctx, const char* key, ModuleSet<Module> choices) {
  const ConfigField& field = field_of(key);
  std::vector<std::string> names = field.get_list(ctx.state.shared.config);
  std::vector<const char*> known;
  for (std::size_t i = 0; i < module_name_table(Module{}).size(); ++i) {
    const auto module = static_cast<Module>(i);
    const std::string_view name = module_name(module);
    const bool chosen = std::find(names.begin(), names.end(), name) != names.end();
    if (choices.has(module) || chosen) known.push_back(name.data());  // literals: terminated
  }
  std::string unknown;  // the checkboxes offer only names the set knows
  if (row_modules(ctx, spec_of(field), &names, known)) {
    field.set_list(ctx.state.shared.config, names, unknown);
  }
}

// A collapsible group, open when one of its fields differs from link version 1's default.
bool group(InputContext& ctx, const char* title, std::initializer_list<const char*> keys) {
  static const Config defaults = share_link_defaults();
  bool set = false;
  for (const char* key : keys) {
    const ConfigField& field = field_of(key);
    set =
        set || field_link_text(field, ctx.state.shared.config) != field_link_text(field, defaults);
  }
  return ImGui::TreeNodeEx(title, set ? ImGuiTreeNodeFlags_DefaultOpen : 0, "%s", tr(title));
}

// ---- [errors] ---------------------------------------------------------------------------------

// Errors about a field explained at another row (where the fix usually is); every other
// error field is a registry JSON key and shows under that field's row.
struct ErrorRow {
  const char* field;  // the core's Error::field
  const char* key;    // the row's share-link key
};
constexpr ErrorRow kErrorRows[] = {
    {"num_attention_heads", "tp"}, {"num_query_groups", "tp"}, {"ffn_hidden_size", "tp"},
    {"num_experts", "ep"},         {"num_layers", "pp"},
};

const char* row_key_of_error_field(const std::string& error_field) {
  for (const ErrorRow& error_row : kErrorRows) {
    if (error_field == error_row.field) return error_row.key;
  }
  for (const ConfigField& field : config_fields()) {
    if (!field.link_key.empty() && field.json_key == error_field) return field.link_key.data();
  }
  return "";
}

// ---- [model] ----------------------------------------------------------------------------------

// Whether some architecture field differs from the preset (the rows marked with a reset).
bool architecture_edited(const AppState& state, const ModelPreset& preset) {
  Config original;
  original.model = preset.model;
  for (const ConfigField& field : config_fields()) {
    if (field.group != FieldGroup::model || field.link_key.empty()) continue;
    if (field_link_text(field, original) != field_link_text(field, state.shared.config)) {
      return true;
    }
  }
  return false;
}

// "reset architecture to <preset>" under the picker, enabled once a field was edited. It is
// there (disabled) before, so the first edit does not push the rows below from under the
// pointer (a held + on layers).
void reset_architecture_button(InputContext& ctx) {
  const ModelPreset* preset = chosen_model(ctx.state);
  if (preset == nullptr) return;
  char label[160];
  std::snprintf(label, sizeof label, tr("reset architecture to %s"), preset->name.c_str());
  const bool edited = architecture_edited(ctx.state, *preset);
  ImGui::BeginDisabled(!edited);
  const bool clicked = ImGui::SmallButton(label);
  ImGui::EndDisabled();
  if (!edited) return;
  describe_item(ctx.state, "reset architecture", "button", label,
                "The marked fields were edited; this restores every architecture field to the "
                "preset's value.");
  if (!clicked) return;
  ctx.state.shared.config.model = preset->model;
  ctx.state.edited_key = "model";  // the layout is checked as after picking the model
  ctx.changed = true;
}

// A frequency field, or, where a preset gives a per-layer 0/1 pattern instead, a note that
// counts the pattern's layers (`note_format` takes the count and the pattern's length).
template <class Pattern>
void frequency_or_pattern_row(InputContext& ctx, const char* key, const Pattern& pattern,
                              const char* note_format) {
  if (pattern.empty()) {
    row(ctx, key);
    return;
  }
  int marked = 0;
  for (const auto bit : pattern) marked += bit;
  char note[96];
  std::snprintf(note, sizeof note, tr(note_format), marked, pattern.size());
  row_note(ctx, note);
}

// Attention sinks, sliding windows and soft-caps; a per-layer window list (MiMo-V2-Flash's preset)
// shows as a note in place of the skip frequency.
void attention_variant_rows(InputContext& ctx) {
  const ModelConfig& m = ctx.state.shared.config.model;
  rows(ctx, {"m.softmax", "m.window"});
  frequency_or_pattern_row(ctx, "m.window-skip", m.window_attn_pattern,
                           "windowed layers: %d of %zu (pattern from the preset)");
  rows(ctx, {"m.window-heads", "m.window-groups", "m.window-kv-ch", "m.attn-softcap",
             "m.logit-softcap"});
}

// DeepSeek-V4's compressed attention (its per-layer ratios come from a preset or config.json,
// shown as a count) and hyper-connections.
void deepseek_v4_rows(InputContext& ctx) {
  const ModelConfig& m = ctx.state.shared.config.model;
  if (!m.csa_compress_ratios.empty()) {
    int compressed = 0;
    for (const auto ratio : m.csa_compress_ratios) compressed += ratio > 1 ? 1 : 0;
    char note[96];
    std::snprintf(note, sizeof note, tr("compressed-attention layers: %d of %zu (from the preset)"),
                  compressed, m.csa_compress_ratios.size());
    row_note(ctx, note);
    rows(ctx, {"m.csa-window", "m.o-groups", "m.o-lora"});
  }
}

void model_rows(InputContext& ctx) {
  const ModelConfig& m = ctx.state.shared.config.model;
  ImGui::SetNextItemWidth(-1.0f);
  if (model_picker(ctx.state, "model preset")) ctx.changed = true;
  reset_architecture_button(ctx);
  rows(ctx,
       {"m.layers",   "m.hidden",    "m.ffn",        "m.heads",       "m.groups",     "m.kv-ch",
        "m.v-ch",     "m.vocab",     "m.vocab-div",  "m.act",         "m.norm",       "m.pos",
        "m.max-pos",  "m.untie",     "m.bias",       "m.qkv-bias",    "m.qk-norm",    "m.qk-l2",
        "m.out-gate", "m.head-gate", "m.post-norms", "m.torch-norms", "m.local-spec", "m.fast-gelu",
        "m.ple",      "m.kv-shared", "m.double-mlp", "m.hdrop",       "m.adrop"});
  attention_variant_rows(ctx);
  rows(ctx, {"m.mhc", "m.mhc-streams"});
  if (group(ctx, "mixture of experts", {"m.experts"})) {
    rows(ctx,
         {"m.experts", "m.topk", "m.moe-ffn", "m.shared", "m.shared-gate", "m.probs-on-input",
          "m.latent", "m.expert-bias", "m.router-fp32-weight", "m.hash-layers", "m.gemma4-moe"});
    frequency_or_pattern_row(ctx, "m.moe-freq", m.moe_layer_pattern,
                             "MoE layers: %d of %zu (pattern from the preset)");
    ImGui::TreePop();
  }
  if (group(ctx, "multi-latent attention", {"m.mla"})) {
    rows(ctx,
         {"m.mla", "m.q-lora", "m.kv-lora", "m.qk-dim", "m.qk-pos-dim", "m.v-dim", "m.dsa-topk"});
    if (ctx.state.shared.config.model.dsa_indexer_topk > 0) {
      rows(ctx, {"m.dsa-heads", "m.dsa-dim", "m.dsa-freq", "m.dsa-offset"});
    }
    deepseek_v4_rows(ctx);
    ImGui::TreePop();
  }
  if (group(ctx, "multi-token prediction", {"m.mtp"})) {
    rows(ctx, {"m.mtp", "m.mtp-repeat", "m.mtp-kind"});
    ImGui::TreePop();
  }
  // Hybrid models (Nemotron-H: Megatron-Core's hybrid layer pattern) and Gated DeltaNet
  // layers (Qwen3-Next: --linear-attention-freq); each group opens when the model has them.
  if (group(ctx, "hybrid layers (Mamba)", {"m.hybrid"})) {
    rows(ctx, {"m.hybrid", "m.mamba-state", "m.mamba-head", "m.mamba-groups", "m.mamba-heads"});
    ImGui::TreePop();
  }
  if (group(ctx, "Gated DeltaNet layers", {"m.la-freq"})) {
    rows(ctx, {"m.la-freq", "m.la-conv", "m.la-kdim", "m.la-vdim", "m.la-kheads", "m.la-vheads"});
    ImGui::TreePop();
  }
  // Kimi K3 (Megatron-Bridge's KimiK3Bridge): the KDA layer list comes from a preset or an
  // imported config.json and shows as a note.
  if (group(ctx, "Kimi K3 layers (KDA, attention residuals)", {"m.attn-res", "m.kda-layers"})) {
    rows(ctx, {"m.attn-res"});
    frequency_or_pattern_row(ctx, "m.kda-heads", m.kda_layer_pattern,
                             "KDA layers: %d of %zu (pattern from the preset)");
    if (!m.kda_layer_pattern.empty()) rows(ctx, {"m.kda-heads"});
    rows(ctx, {"m.kda-dim", "m.kda-conv"});
    ImGui::TreePop();
  }
  if (draw_import_boxes(ctx.state)) ctx.changed = true;
}

// ---- [cluster] --------------------------------------------------------------------------------

void cluster_rows(InputContext& ctx) {
  ImGui::SetNextItemWidth(-1.0f);
  if (gpu_picker(ctx.state, "GPU preset")) ctx.changed = true;
  rows(ctx, {"gpus", "g.node", "g.mem", "g.fp8-any-layout", "g.nvls"});
  // What the step-time model reads of the GPU and its links (docs/planner.md).
  if (ImGui::TreeNodeEx(tr("speeds"), 0)) {
    rows(ctx, {"g.tflops", "g.intra", "g.inter"});
    ImGui::TreePop();
  }
}

// ---- [parallel] -------------------------------------------------------------------------------

void parallel_rows(InputContext& ctx) {
  rows(ctx, {"tp", "pp", "vpp", "cp", "ep", "etp", "sp"});
  const Config& config = ctx.state.shared.config;
  if (config.model.num_experts > 0 && config.parallel.expert_tensor_parallel == 0) {
    // The rules and their messages use the effective ETP (tensor_parallel.cpp: 0 = TP).
    char note[96];
    std::snprintf(note, sizeof note, tr("ETP 0 means ETP = TP = %d"),
                  config.parallel.tensor_parallel);
    row_note(ctx, note);
  }
  if (ctx.state.last_estimate && !ctx.state.error) {
    const NormalizedConfig& n = ctx.state.last_estimate->normalized;
    char note[160];
    std::snprintf(
        note, sizeof note,
        n.num_microbatches == 1 ? tr("-> DP %lld, expert-DP %lld, %lld micro-batch per step")
                                : tr("-> DP %lld, expert-DP %lld, %lld micro-batches per step"),
        static_cast<long long>(n.data_parallel), static_cast<long long>(n.expert_data_parallel),
        static_cast<long long>(n.num_microbatches));
    row_note(ctx, note);
  }
  if (group(ctx, "uneven pipeline", {"pp-first", "pp-last", "pp-layout"})) {
    rows(ctx, {"pp-first", "pp-last", "pp-emb", "pp-loss", "pp-layout", "vpp-group",
               "dist-opt-instances"});
    ImGui::TreePop();
  }
  row(ctx, "fsdp");
  if (ctx.state.shared.config.parallel.fsdp.impl != FsdpImpl::none) {
    rows(ctx, {"fsdp-shard", "fsdp-main-params", "fsdp-main-grads", "fsdp-double-buffer"});
    if (ctx.state.shared.config.parallel.num_distributed_optimizer_instances > 1) {
      row(ctx, "fsdp-outer");
    }
    if (ctx.state.shared.config.parallel.fsdp.double_buffer) {
      rows(ctx, {"fsdp-max-pool", "fsdp-persist-buf"});
    }
    rows(ctx, {"fsdp-unit", "fsdp2-reshard", "meta-init"});
  }
}

// ---- [training] -------------------------------------------------------------------------------

// TE or local CUDA graphs and, for TE's, the scopes they capture and the warm-up steps.
void cuda_graph_rows(InputContext& ctx) {
  const TrainingConfig& t = ctx.state.shared.config.training;
  row(ctx, "cuda-graph");
  if (t.cuda_graph_impl == CudaGraphImpl::none) return;
  modules_row(ctx, "cuda-graph-modules", CudaGraphModules::all());
  row(ctx, "cuda-graph-warmup");
}

void training_rows(InputContext& ctx) {
  const Config& c = ctx.state.shared.config;
  rows(ctx, {"mbs", "gbs", "seq", "dtype", "fp8", "fp8-format", "fp8-param-gather"});
  if (c.training.fp8_recipe != Fp8Recipe::none) rows(ctx, {"fp8-bf16-first", "fp8-bf16-last"});
  rows(ctx, {"impl", "attn", "ce", "grad-acc-fusion", "bias-act-fusion", "softmax-fusion",
             "softmax-fp32", "mask-in-loader", "deterministic", "tp-comm-overlap", "defer-wgrad"});
  if (c.training.defer_embedding_wgrad_compute) row(ctx, "wgrad-limit");
  cuda_graph_rows(ctx);
  if (c.model.dsa_indexer_topk > 0) rows(ctx, {"dsa-kernels", "dsa-loss", "dsa-sparse-loss"});
  if (c.model.num_experts > 0 &&
      ImGui::TreeNodeEx(tr("MoE dispatch"), ImGuiTreeNodeFlags_DefaultOpen)) {
    row(ctx, "dispatcher");
    if (c.training.moe_token_dispatcher == TokenDispatcher::flex) {
      row(ctx, "flex-backend");
      const bool deepep = c.training.moe_flex_dispatcher_backend == FlexDispatcherBackend::deepep;
      if (deepep) row(ctx, "flex-sms");
    }
    rows(ctx, {"grouped-gemm", "router-fp32", "permute-fusion", "capacity", "pad-capacity",
               "force-balance", "imbalance", "moe-overlap", "delay-wgrad"});
    if (c.model.moe_shared_expert_intermediate_size > 0) row(ctx, "shared-overlap");
    if (c.model.activation == Activation::squared_relu) row(ctx, "wsqrelu-fusion");
    ImGui::TreePop();
  }
}

// ---- [recompute] ------------------------------------------------------------------------------

void recompute_rows(InputContext& ctx) {
  const TrainingConfig& t = ctx.state.shared.config.training;
  row(ctx, "recompute");
  if (t.recompute.granularity == RecomputeGranularity::full) {
    rows(ctx, {"recompute-method", "recompute-layers"});
  }
  if (t.recompute.granularity == RecomputeGranularity::selective) {
    modules_row(ctx, "recompute-modules", recompute_module_choices(ctx.state.shared.config.model));
  }
  rows(ctx, {"distribute-saved", "act-offload"});
  if (t.offload.fine_grained_activation_offloading) {
    modules_row(ctx, "offload-modules", offload_module_choices(ctx.state.shared.config.model));
    row(ctx, "offload-fraction");
  }
  row(ctx, "cpu-offload");
  if (t.offload.cpu_offloading) rows(ctx, {"cpu-offload-layers", "cpu-offload-weights"});
}

// ---- [optimizer] ------------------------------------------------------------------------------

void optimizer_rows(InputContext& ctx) {
  const OptimizerConfig& o = ctx.state.shared.config.optimizer;
  rows(ctx, {"opt", "dist-opt", "grad-bf16", "overlap-grad", "bucket", "precision-aware"});
  if (ctx.state.shared.config.parallel.virtual_stages_per_pipeline_rank > 1) {
    row(ctx, "overlap-ag-step");
  }
  if (o.kind == OptimizerKind::muon) row(ctx, "muon-scalar");
  if (o.use_precision_aware_optimizer) {
    rows(ctx,
         {"main-grads", "main-params", "exp-avg", "exp-avg-sq", "param-remainders", "opt-offload"});
    if (o.optimizer_cpu_offload) row(ctx, "opt-offload-fraction");
    // Under FP8 the model's recipe is the optimizer's (OptimizerConfig::fp8_recipe).
    if (ctx.state.shared.config.training.fp8_recipe == Fp8Recipe::none) row(ctx, "opt-fp8-recipe");
  }
}

// ---- [runtime] --------------------------------------------------------------------------------

void runtime_rows(InputContext& ctx) {
  rows(ctx, {"rt.expandable", "rt.frag", "rt.ctx", "rt.nccl", "rt.nccl-node", "rt.nvls",
             "rt.deepep", "g.cublas", "g.fixed", "g.sm", "flash-attn", "te-norm-view"});
}

}  // namespace

const char* error_row_key(const AppState& state) {
  if (!state.error) return "";
  // Beside the field that is wrong; under the last edit only when that field has no row.
  const char* key = row_key_of_error_field(state.error->field);
  if (key[0] == '\0' && !state.edited_key.empty()) return state.edited_key.c_str();
  return key;
}

bool draw_inputs_panel(AppState& state) {
  InputContext ctx{.state = state,
                   .error_key = error_row_key(state),
                   .label_width_px = ImGui::GetFontSize() * 10.5f};
  static bool error_shown_last_frame = true;

  // An error whose row is hidden (collapsed section, or no row at all) is shown on top.
  if (state.error && !error_shown_last_frame) {
    if (error_box(state)) ctx.changed = true;
    ctx.error_shown = true;
  }

  if (section("MODEL")) model_rows(ctx);
  if (section("CLUSTER")) cluster_rows(ctx);
  if (section("PARALLELISM")) parallel_rows(ctx);
  if (section("TRAINING")) training_rows(ctx);
  if (section("RECOMPUTE AND OFFLOAD")) recompute_rows(ctx);
  if (section("OPTIMIZER")) optimizer_rows(ctx);
  if (section("RUNTIME OVERHEADS", false)) runtime_rows(ctx);
  error_shown_last_frame = ctx.error_shown;
  return ctx.changed;
}

}  // namespace megamem::web
