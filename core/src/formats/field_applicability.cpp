// Which architecture fields mean nothing for a model (fields.hpp field_not_applicable): the
// module specs that would read them are not built. One table, read by the settings page
// (a field that does not apply shows "—" and this reason) and the tests.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/fields.hpp"

namespace megamem {
namespace {

struct Applicability {
  std::vector<std::string_view> fields;  // config.hpp paths
  bool (*applies)(const ModelConfig&);
  std::string_view why_not;
};

bool has_experts(const ModelConfig& m) { return m.num_experts > 0; }

// The table, first match wins (a dense model's shared-expert gate is explained as dense).
const std::vector<Applicability>& applicability_table() {
  static const std::vector<Applicability> table = {
      // multi_latent_attention.py MLASelfAttention: q/kv down- and up-projections sized by the
      // LoRA ranks and qk/v head dims; it reads neither --num-query-groups (MLA is not GQA) nor
      // --kv-channels.
      {{"model.num_query_groups", "model.kv_channels"},
       [](const ModelConfig& m) { return !m.multi_latent_attention; },
       "Does not apply: multi-latent attention has no query groups or kv channels; its key and "
       "value sizes are the MLA ranks and head dims."},
      {{"model.q_lora_rank", "model.kv_lora_rank", "model.qk_head_dim", "model.qk_pos_emb_head_dim",
        "model.v_head_dim"},
       [](const ModelConfig& m) { return m.multi_latent_attention; },
       "Does not apply: only multi-latent attention (--multi-latent-attention) reads it."},
      // moe_layer.py: the router, experts and shared experts exist only with --num-experts.
      {{"model.moe_router_topk", "model.moe_ffn_hidden_size",
        "model.moe_shared_expert_intermediate_size", "model.moe_shared_expert_gate",
        "model.moe_latent_size", "model.moe_router_enable_expert_bias", "model.moe_layer_freq"},
       has_experts,
       "Does not apply: a dense model has no experts (experts 0)."},
      // shared_experts.py: the gate belongs to the shared experts.
      {{"model.moe_shared_expert_gate"},
       [](const ModelConfig& m) { return m.moe_shared_expert_intermediate_size > 0; },
       "Does not apply: the model has no shared experts."},
      // transformer_config.py: a per-layer pattern (from the preset, or the hybrid pattern's E
      // layers) replaces the integer frequency.
      {{"model.moe_layer_freq"},
       [](const ModelConfig& m) {
         return m.moe_layer_pattern.empty() && m.hybrid_layer_pattern.empty();
       },
       "Does not apply: a per-layer MoE pattern says which layers are MoE."},
      // mamba_mixer.py MambaMixer: built only for the hybrid pattern's M layers.
      {{"model.mamba_state_dim", "model.mamba_head_dim", "model.mamba_num_groups",
        "model.mamba_num_heads"},
       [](const ModelConfig& m) { return m.hybrid_layer_pattern.find('M') != std::string::npos; },
       "Does not apply: no Mamba layers (the hybrid layer pattern has no M)."},
      // gated_delta_net/gdn.py: built only with --linear-attention-freq.
      {{"model.linear_conv_kernel_dim", "model.linear_key_head_dim", "model.linear_value_head_dim",
        "model.linear_num_key_heads", "model.linear_num_value_heads"},
       [](const ModelConfig& m) { return m.linear_attention_freq > 0; },
       "Does not apply: no Gated DeltaNet layers (linear attention frequency 0)."},
      // multi_token_prediction.py: the repeated layer is one of the MTP layers.
      {{"model.mtp_use_repeated_layer"},
       [](const ModelConfig& m) { return m.mtp_num_layers > 0; },
       "Does not apply: the model has no multi-token prediction layers."},
      // transformer/utils.py is_layer_window_attention: the skip frequency picks which layers
      // keep full attention, so it needs a window.
      {{"model.window_attn_skip_freq"},
       [](const ModelConfig& m) { return m.window_size > 0; },
       "Does not apply: no sliding window (window size 0)."},
  };
  return table;
}

}  // namespace

std::string_view field_not_applicable(const ConfigField& field, const ModelConfig& model) {
  for (const Applicability& rule : applicability_table()) {
    const bool listed =
        std::find(rule.fields.begin(), rule.fields.end(), field.name) != rule.fields.end();
    if (listed && !rule.applies(model)) return rule.why_not;
  }
  return {};
}

}  // namespace megamem
