// Which architecture fields mean nothing for a model (fields.hpp field_not_applicable): the
// module specs that would read them are not built. A field's registry row names the part of
// the architecture that reads it (FieldScope); here, beside those module specs, is when that
// part is absent and why, read by the settings page (a field that does not apply shows "—"
// and this reason) and the tests. It is architecture knowledge, not a text format, so it
// lives in the estimator's library and the formats and front ends only ask it.
#include <string>
#include <string_view>

#include "megamem/fields.hpp"

namespace megamem {
namespace {

constexpr std::string_view kDense = "Does not apply: a dense model has no experts (experts 0).";

bool has_experts(const ModelConfig& m) { return m.num_experts > 0; }

bool pattern_has(const ModelConfig& m, char symbol) {
  return m.hybrid_layer_pattern.find(symbol) != std::string::npos;
}

// arguments.py: a hybrid pattern's '+' layers turn multi-latent attention on.
bool uses_mla(const ModelConfig& m) { return m.multi_latent_attention || pattern_has(m, '+'); }

// Attention: multi_latent_attention.py MLASelfAttention sizes its q/kv down- and
// up-projections by the LoRA ranks and qk/v head dims; it reads neither --num-query-groups
// (MLA is not GQA) nor --kv-channels, and plain attention reads none of the MLA sizes. DSA's
// indexer exists only with the dsa variant (dsa.py DSAIndexer).
std::string_view attention_not_applicable(FieldScope scope, const ModelConfig& m) {
  if (scope == FieldScope::gqa && uses_mla(m) && !pattern_has(m, '*')) {
    return "Does not apply: multi-latent attention has no query groups or kv channels; its key "
           "and value sizes are the MLA ranks and head dims.";
  }
  if (scope == FieldScope::mla && !uses_mla(m)) {
    return "Does not apply: only multi-latent attention (--multi-latent-attention) reads it.";
  }
  if (scope == FieldScope::dsa && m.dsa_indexer_topk == 0) {
    return "Does not apply: only DeepSeek sparse attention (indexer top-k above 0) reads it.";
  }
  return {};
}

// moe_layer.py: the router, experts and shared experts exist only with --num-experts (a dense
// model's shared-expert gate is explained as dense); shared_experts.py: the gate belongs to
// the shared experts; transformer_config.py: a per-layer pattern (from the preset, or the
// hybrid pattern's E layers) replaces the integer frequency.
std::string_view experts_not_applicable(FieldScope scope, const ModelConfig& m) {
  if (!has_experts(m)) return kDense;
  if (scope == FieldScope::shared_experts && m.moe_shared_expert_intermediate_size <= 0) {
    return "Does not apply: the model has no shared experts.";
  }
  if (scope == FieldScope::moe_frequency &&
      (!m.moe_layer_pattern.empty() || !m.hybrid_layer_pattern.empty())) {
    return "Does not apply: a per-layer MoE pattern says which layers are MoE.";
  }
  return {};
}

// The other layer kinds: mamba_mixer.py MambaMixer is built only for the hybrid pattern's M
// layers (and Megatron-Bridge Falcon-H1's P layers); gated_delta_net/gdn.py only with
// --linear-attention-freq or 'G' layers; multi_token_prediction.py's repeated layer is one of the
// MTP layers (also a hybrid pattern's '/' parts); transformer/utils.py is_layer_window_attention's
// skip frequency picks which layers keep full attention, so it needs a window.
std::string_view layer_kind_not_applicable(FieldScope scope, const ModelConfig& m) {
  switch (scope) {
    case FieldScope::mamba:
      // Falcon-H1's 'P' layers hold a Mamba-2 mixer too (falcon_h1_layer.cpp).
      if (m.hybrid_layer_pattern.find_first_of("MP") != std::string::npos) return {};
      return "Does not apply: no Mamba layers (the hybrid layer pattern has no M or P).";
    case FieldScope::gated_deltanet:
      if (m.linear_attention_freq > 0 || pattern_has(m, 'G')) return {};
      return "Does not apply: no Gated DeltaNet layers (linear attention frequency 0).";
    case FieldScope::kimi_delta_attention:
      if (!m.kda_layer_pattern.empty()) return {};
      return "Does not apply: no Kimi Delta Attention layers (no KDA layer list).";
    case FieldScope::mtp:
      if (m.mtp_num_layers > 0 || pattern_has(m, '/')) return {};
      return "Does not apply: the model has no multi-token prediction layers.";
    case FieldScope::sliding_window:
      if (m.window_size > 0) return {};
      return "Does not apply: no sliding window (window size 0).";
    default:
      return {};
  }
}

}  // namespace

std::string_view field_not_applicable(const ConfigField& field, const ModelConfig& model) {
  switch (field.scope) {
    case FieldScope::always:
      return {};
    case FieldScope::gqa:
    case FieldScope::mla:
    case FieldScope::dsa:
      return attention_not_applicable(field.scope, model);
    case FieldScope::experts:
    case FieldScope::shared_experts:
    case FieldScope::moe_frequency:
      return experts_not_applicable(field.scope, model);
    default:
      return layer_kind_not_applicable(field.scope, model);
  }
}

std::string_view field_source(const ConfigField& field) {
  switch (field.scope) {
    case FieldScope::gqa:
      return "megatron/core/transformer/attention.py";
    case FieldScope::mla:
      return "megatron/core/transformer/multi_latent_attention.py";
    case FieldScope::dsa:
      return "megatron/core/transformer/experimental_attention_variant/dsa.py";
    case FieldScope::experts:
    case FieldScope::shared_experts:
    case FieldScope::moe_frequency:
      return "megatron/core/transformer/moe/moe_layer.py";
    case FieldScope::mamba:
      return "megatron/core/ssm/mamba_mixer.py";
    case FieldScope::gated_deltanet:
      return "megatron/core/ssm/gated_delta_net/";
    case FieldScope::kimi_delta_attention:
      return "Megatron-Bridge src/megatron/bridge/models/kimi/kimi_k3_layers.py";
    case FieldScope::mtp:
      return "megatron/core/transformer/multi_token_prediction.py";
    case FieldScope::sliding_window:
      return "megatron/core/transformer/utils.py";
    case FieldScope::always:
      break;
  }
  switch (field.group) {
    case FieldGroup::model:
      return "megatron/core/transformer/transformer_config.py";
    case FieldGroup::parallel:
      return "megatron/core/parallel_state.py, megatron/training/arguments.py";
    case FieldGroup::training:
      return "megatron/training/arguments.py";
    case FieldGroup::optimizer:
      return "megatron/core/optimizer/optimizer_config.py";
    case FieldGroup::runtime:
      return "docs/memory-model.md (device memory outside the allocator)";
    case FieldGroup::device:
      return "docs/presets.md (the GPU presets)";
  }
  return "docs/memory-model.md";
}

RecomputeModules recompute_modules_of_absent_layers(const ModelConfig& model) {
  // gdp_in_proj and gdp_qkv act on layers megamem does not build (gated delta product); mhc
  // on hyper-connections (hyper_connection.cpp); gdn_norm_out on Gated DeltaNet layers
  // (gated_deltanet.cpp).
  RecomputeModules out = {RecomputeModule::gdp_in_proj, RecomputeModule::gdp_qkv};
  if (!model.enable_mhc_connections) out.insert(RecomputeModule::mhc);
  if (!layer_kind_not_applicable(FieldScope::gated_deltanet, model).empty()) {
    out.insert(RecomputeModule::gdn_norm_out);
  }
  return out;
}

RecomputeModules recompute_modules_without_effect(const ModelConfig& model) {
  if (model.local_layer_spec) return {RecomputeModule::mlp};
  if (model.attn_res_block_size <= 0) return {};
  return {RecomputeModule::core_attn, RecomputeModule::mla_up_proj, RecomputeModule::layernorm,
          RecomputeModule::mlp};
}

const char* recompute_bypass_source(const ModelConfig& model) {
  return model.local_layer_spec
             ? "Megatron-Bridge src/megatron/bridge/models/gemma/modeling_gemma4.py "
               "Gemma4DenseTransformerLayer"
             : "Megatron-Bridge src/megatron/bridge/models/kimi/kimi_k3_layers.py";
}

RecomputeModules recompute_modules_failing(const ModelConfig& model) {
  if (!model.local_layer_spec && !model.gemma4_moe_layer) return {};
  return {RecomputeModule::layernorm};
}

RecomputeModules recompute_module_choices(const ModelConfig& model) {
  RecomputeModules out = RecomputeModules::all() - recompute_modules_of_absent_layers(model) -
                         recompute_modules_without_effect(model) - recompute_modules_failing(model);
  if (!has_experts(model)) {
    out = out - RecomputeModules{RecomputeModule::moe, RecomputeModule::moe_act,
                                 RecomputeModule::shared_experts};
  }
  if (model.moe_shared_expert_intermediate_size <= 0) {
    out = out - RecomputeModules{RecomputeModule::shared_experts};
  }
  // mla_up_proj without MLA is a rule error, not a choice.
  if (!uses_mla(model)) out = out - RecomputeModules{RecomputeModule::mla_up_proj};
  return out;
}

OffloadModules offload_module_choices(const ModelConfig& model) {
  // gdp_qkv acts on gated delta product layers, which megamem does not build.
  OffloadModules out = OffloadModules::all() - OffloadModules{OffloadModule::gdp_qkv};
  if (!has_experts(model)) {
    out = out - OffloadModules{OffloadModule::expert_fc1, OffloadModule::moe_act,
                               OffloadModule::fused_group_mlp};
  }
  // Megatron-Bridge gemma4_provider.py _validate_gemma4_moe_orchestration refuses it.
  if (model.gemma4_moe_layer) out = out - OffloadModules{OffloadModule::mlp_norm};
  return out;
}

}  // namespace megamem
