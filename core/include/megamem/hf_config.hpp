// HuggingFace config.json -> ModelConfig (what Megatron-Bridge's converters would build).
//
// Families, by "model_type": llama, mistral, qwen2, qwen3, qwen2_moe, qwen3_moe, mixtral,
// deepseek_v2, deepseek_v3 (also Moonlight), kimi_k2, glm4_moe (GLM-4.5, -Air, 4.6) and gpt_oss.
// Mapping:
//   num_hidden_layers, hidden_size, num_attention_heads -> layers, hidden, heads
//   num_key_value_heads -> num_query_groups (GQA when fewer than the heads)
//   head_dim (else hidden/heads) -> kv_channels; intermediate_size -> ffn_hidden_size
//   hidden_act silu -> SwiGLU (every family here has a gated MLP); rms_norm_eps -> RMSNorm
//   tie_word_embeddings (family default false) -> untie_embeddings_and_output_weights
//   attention_bias / Qwen2's q,k,v biases -> add_qkv_bias; mlp_bias -> add_bias_linear
//   Qwen3, GLM's use_qk_norm -> qk_layernorm; rope_scaling type yarn -> YaRN, else RoPE
//   experts: num_experts | num_local_experts | n_routed_experts, num_experts_per_tok,
//     moe_intermediate_size (Mixtral: intermediate_size); shared experts: n_shared_experts x
//     moe_intermediate_size, or Qwen2-MoE's shared_expert_intermediate_size with its gate
//   which layers are MoE: first_k_dense_replace + moe_layer_freq (DeepSeek/Kimi/GLM),
//     decoder_sparse_step + mlp_only_layers (Qwen MoE) -> moe_layer_pattern
//   MLA: q_lora_rank (null = none), kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
//     v_head_dim, with the q/kv latent norms as qk_layernorm; topk_method noaux_tc -> expert
//     bias (GLM: always); num_nextn_predict_layers -> mtp_num_layers
//   gpt_oss: num_local_experts, intermediate_size as the expert width, every linear biased
//     (--add-bias-linear), sinks -> softmax_type learnable, sliding_window - 1 -> window_size,
//     layer_types -> window_attn_skip_freq; its clamped GLU is estimated as SwiGLU (a note)
//   llama4 (text_config) / llama4_text: num_local_experts of intermediate_size with a shared
//     expert of the same, moe_layers or interleave_moe_layer_step, intermediate_size_mlp for
//     dense layers, use_qk_norm -> qk_l2_norm, top-1 -> moe_apply_probs_on_input
// Dropouts are taken from attention_dropout (hidden dropout 0, as these models train).
//
// Fields that change nothing megamem models (rope_theta, sliding_window, quantization_config,
// token ids, ...) are ignored; fields that would change memory but have no Megatron
// equivalent here are listed in `notes`. An unknown model_type (the error lists the supported
// ones), a missing or mistyped required field is an Error naming the field. No I/O: the caller
// reads the file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/expected.hpp"

namespace megamem {

struct HfImport {
  ModelConfig model;
  std::string model_type;          // "qwen3_moe"
  std::vector<std::string> notes;  // approximations the import made, one sentence each
};

// The text of a config.json. A multimodal wrapper ({"text_config": {...}}) is read through
// its text_config.
Expected<HfImport> import_hf_config(std::string_view config_json);

// The model_type values import_hf_config() understands.
const std::vector<std::string>& supported_hf_model_types();

}  // namespace megamem
