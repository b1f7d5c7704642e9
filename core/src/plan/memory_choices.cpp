// Recompute and offload choices; see memory_choices.hpp.
#include "plan/memory_choices.hpp"

#include <algorithm>

#include "megamem/modules.hpp"

namespace megamem {
namespace {

// The sets as the model's layers run them: modules their forward bypasses or that fail there
// (modules.hpp) taken out, sets left empty or repeated dropped.
std::vector<RecomputeModules> as_the_layers_run(const ModelConfig& m,
                                                const std::vector<RecomputeModules>& sets) {
  const RecomputeModules unavailable =
      recompute_modules_without_effect(m) | recompute_modules_failing(m);
  std::vector<RecomputeModules> out;
  for (const RecomputeModules& set : sets) {
    const RecomputeModules kept = set - unavailable;
    if (kept.empty() || std::find(out.begin(), out.end(), kept) != out.end()) continue;
    out.push_back(kept);
  }
  return out;
}

}  // namespace

std::vector<RecomputeModules> selective_recompute_choices(const Config& base) {
  using R = RecomputeModule;
  const ModelConfig& m = base.model;
  const bool moe = m.num_experts > 0;
  const R mlp = moe ? R::moe : R::mlp;
  std::vector<RecomputeModules> sets = {{R::core_attn}};
  // Gated DeltaNet layers (--experimental-attention-variant gdn): gdn_norm_out discards the
  // gated norm's output and out_proj's input (megatron/core/ssm/gated_delta_net/gdn.py,
  // CheckpointWithoutOutput). Mamba layers have no selective module: hybrid_block.py
  // recomputes them only under full recompute, so Nemotron-H gets no row of its own.
  const bool gdn = m.linear_attention_freq > 0;
  if (gdn) sets.push_back({R::gdn_norm_out});
  if (m.multi_latent_attention) sets.push_back({R::mla_up_proj});
  if (m.multi_latent_attention) sets.push_back({R::core_attn, R::mla_up_proj});
  if (moe && base.training.moe_grouped_gemm) sets.push_back({R::moe_act, R::layernorm});
  if (moe && m.moe_shared_expert_intermediate_size > 0) sets.push_back({R::shared_experts});
  sets.push_back({mlp});
  if (moe && m.multi_latent_attention && !m.moe_layer_pattern.empty()) {
    sets.push_back({R::mla_up_proj, R::mlp});  // DeepSeek-V3's recipe (dense layers' MLP)
  }
  sets.push_back({R::core_attn, mlp, R::layernorm});
  if (gdn) sets.push_back({R::core_attn, mlp, R::layernorm, R::gdn_norm_out});
  return as_the_layers_run(m, sets);
}

OffloadModules activation_offload_choice(const Config& base) {
  using O = OffloadModule;
  const bool moe = base.model.num_experts > 0;
  const bool local = base.training.transformer_impl == TransformerImpl::local;
  OffloadModules out = {O::qkv_linear, O::core_attn, O::attn_proj};
  if (local || base.model.multi_latent_attention) out.insert(O::attn_norm);
  if (local || moe) out.insert(O::mlp_norm);
  if (moe) out.insert(O::expert_fc1);
  if (moe && base.training.moe_grouped_gemm) out.insert(O::moe_act);
  return out & offload_module_choices(base.model);
}

}  // namespace megamem
