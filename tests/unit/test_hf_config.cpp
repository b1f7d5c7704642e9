// HuggingFace config.json import: one real config.json per family (copied verbatim from the
// model repositories named above each), checked against the presets built from the same
// files and against the published parameter counts.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "hf_import_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/hf_config.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json
const char* kLlama3_70B = R"json({
  "architectures": [
    "LlamaForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": 128001,
  "hidden_act": "silu",
  "hidden_size": 8192,
  "initializer_range": 0.02,
  "intermediate_size": 28672,
  "max_position_embeddings": 8192,
  "model_type": "llama",
  "num_attention_heads": 64,
  "num_hidden_layers": 80,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
})json";

// https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json
const char* kLlama31_8B = R"json({
  "architectures": [
    "LlamaForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": 128001,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.43.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
})json";

// https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json
const char* kMistral7B = R"json({
  "architectures": [
    "MistralForCausalLM"
  ],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mistral",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.34.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})json";

// https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json
const char* kQwen25_7B = R"json({
  "architectures": [
    "Qwen2ForCausalLM"
  ],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 3584,
  "initializer_range": 0.02,
  "intermediate_size": 18944,
  "max_position_embeddings": 131072,
  "max_window_layers": 28,
  "model_type": "qwen2",
  "num_attention_heads": 28,
  "num_hidden_layers": 28,
  "num_key_value_heads": 4,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 131072,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1",
  "use_cache": true,
  "use_mrope": false,
  "use_sliding_window": false,
  "vocab_size": 152064
})json";

// https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json
const char* kQwen3_8B = R"json({
  "architectures": [
    "Qwen3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 12288,
  "max_position_embeddings": 40960,
  "max_window_layers": 36,
  "model_type": "qwen3",
  "num_attention_heads": 32,
  "num_hidden_layers": 36,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})json";

// https://huggingface.co/Qwen/Qwen1.5-MoE-A2.7B/blob/main/config.json
const char* kQwen15MoE = R"json({
  "architectures": [
    "Qwen2MoeForCausalLM"
  ],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 5632,
  "max_position_embeddings": 8192,
  "max_window_layers": 21,
  "model_type": "qwen2_moe",
  "num_attention_heads": 16,
  "num_hidden_layers": 24,
  "num_key_value_heads": 16,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 32768,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.39.0.dev0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936,
  "decoder_sparse_step": 1,
  "moe_intermediate_size": 1408,
  "shared_expert_intermediate_size": 5632,
  "num_experts_per_tok": 4,
  "num_experts": 60,
  "norm_topk_prob": false,
  "output_router_logits": false,
  "router_aux_loss_coef": 0.001
})json";

// https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json
const char* kQwen3_235B = R"json({
  "architectures": [
    "Qwen3MoeForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "decoder_sparse_step": 1,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 12288,
  "max_position_embeddings": 40960,
  "max_window_layers": 94,
  "mlp_only_layers": [],
  "model_type": "qwen3_moe",
  "moe_intermediate_size": 1536,
  "norm_topk_prob": true,
  "num_attention_heads": 64,
  "num_experts": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 94,
  "num_key_value_heads": 4,
  "output_router_logits": false,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000.0,
  "router_aux_loss_coef": 0.001,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})json";

// https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json
const char* kQwen3_30B = R"json({
  "architectures": [
    "Qwen3MoeForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "decoder_sparse_step": 1,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 6144,
  "max_position_embeddings": 40960,
  "max_window_layers": 48,
  "mlp_only_layers": [],
  "model_type": "qwen3_moe",
  "moe_intermediate_size": 768,
  "norm_topk_prob": true,
  "num_attention_heads": 32,
  "num_experts": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 48,
  "num_key_value_heads": 4,
  "output_router_logits": false,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000.0,
  "router_aux_loss_coef": 0.001,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})json";

// https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json
const char* kMixtral8x7B = R"json({
  "architectures": [
    "MixtralForCausalLM"
  ],
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mixtral",
  "num_attention_heads": 32,
  "num_experts_per_tok": 2,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "num_local_experts": 8,
  "output_router_logits": false,
  "rms_norm_eps": 1e-05,
  "rope_theta": 1000000.0,
  "router_aux_loss_coef": 0.02,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.36.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})json";

// https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite/blob/main/config.json
const char* kDeepSeekV2Lite = R"json({
  "architectures": [
    "DeepseekV2ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "auto_map": {
    "AutoConfig": "configuration_deepseek.DeepseekV2Config",
    "AutoModel": "modeling_deepseek.DeepseekV2Model",
    "AutoModelForCausalLM": "modeling_deepseek.DeepseekV2ForCausalLM"
  },
  "aux_loss_alpha": 0.001,
  "bos_token_id": 100000,
  "eos_token_id": 100001,
  "first_k_dense_replace": 1,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 10944,
  "kv_lora_rank": 512,
  "max_position_embeddings": 163840,
  "model_type": "deepseek_v2",
  "moe_intermediate_size": 1408,
  "moe_layer_freq": 1,
  "n_group": 1,
  "n_routed_experts": 64,
  "n_shared_experts": 2,
  "norm_topk_prob": false,
  "num_attention_heads": 16,
  "num_experts_per_tok": 6,
  "num_hidden_layers": 27,
  "num_key_value_heads": 16,
  "pretraining_tp": 1,
  "q_lora_rank": null,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "rms_norm_eps": 1e-06,
  "rope_scaling": {
    "beta_fast": 32,
    "beta_slow": 1,
    "factor": 40,
    "mscale": 0.707,
    "mscale_all_dim": 0.707,
    "original_max_position_embeddings": 4096,
    "type": "yarn"
  },
  "rope_theta": 10000,
  "routed_scaling_factor": 1.0,
  "scoring_func": "softmax",
  "seq_aux": true,
  "tie_word_embeddings": false,
  "topk_group": 1,
  "topk_method": "greedy",
  "torch_dtype": "bfloat16",
  "transformers_version": "4.33.1",
  "use_cache": true,
  "v_head_dim": 128,
  "vocab_size": 102400
})json";

// https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json
const char* kDeepSeekV3 = R"json({
  "architectures": [
    "DeepseekV3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "auto_map": {
    "AutoConfig": "configuration_deepseek.DeepseekV3Config",
    "AutoModel": "modeling_deepseek.DeepseekV3Model",
    "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"
  },
  "aux_loss_alpha": 0.001,
  "bos_token_id": 0,
  "eos_token_id": 1,
  "ep_size": 1,
  "first_k_dense_replace": 3,
  "hidden_act": "silu",
  "hidden_size": 7168,
  "initializer_range": 0.02,
  "intermediate_size": 18432,
  "kv_lora_rank": 512,
  "max_position_embeddings": 163840,
  "model_type": "deepseek_v3",
  "moe_intermediate_size": 2048,
  "moe_layer_freq": 1,
  "n_group": 8,
  "n_routed_experts": 256,
  "n_shared_experts": 1,
  "norm_topk_prob": true,
  "num_attention_heads": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 61,
  "num_key_value_heads": 128,
  "num_nextn_predict_layers": 1,
  "pretraining_tp": 1,
  "q_lora_rank": 1536,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "quantization_config": {
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "weight_block_size": [
      128,
      128
    ]
  },
  "rms_norm_eps": 1e-06,
  "rope_scaling": {
    "beta_fast": 32,
    "beta_slow": 1,
    "factor": 40,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
    "original_max_position_embeddings": 4096,
    "type": "yarn"
  },
  "rope_theta": 10000,
  "routed_scaling_factor": 2.5,
  "scoring_func": "sigmoid",
  "seq_aux": true,
  "tie_word_embeddings": false,
  "topk_group": 4,
  "topk_method": "noaux_tc",
  "torch_dtype": "bfloat16",
  "transformers_version": "4.33.1",
  "use_cache": true,
  "v_head_dim": 128,
  "vocab_size": 129280
})json";

// https://huggingface.co/moonshotai/Moonlight-16B-A3B-Instruct/blob/main/config.json
const char* kMoonlight = R"json({
  "architectures": [
    "DeepseekV3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "auto_map": {
    "AutoConfig": "configuration_deepseek.DeepseekV3Config",
    "AutoModel": "modeling_deepseek.DeepseekV3Model",
    "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"
  },
  "aux_loss_alpha": 0.001,
  "bos_token_id": 163584,
  "eos_token_id": 163586,
  "ep_size": 1,
  "first_k_dense_replace": 1,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 11264,
  "kv_lora_rank": 512,
  "max_position_embeddings": 8192,
  "model_type": "deepseek_v3",
  "moe_intermediate_size": 1408,
  "moe_layer_freq": 1,
  "n_group": 1,
  "n_routed_experts": 64,
  "n_shared_experts": 2,
  "norm_topk_prob": true,
  "num_attention_heads": 16,
  "num_experts_per_tok": 6,
  "num_hidden_layers": 27,
  "num_key_value_heads": 16,
  "num_nextn_predict_layers": 0,
  "pretraining_tp": 1,
  "q_lora_rank": null,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "rms_norm_eps": 1e-05,
  "rope_theta": 50000.0,
  "routed_scaling_factor": 2.446,
  "scoring_func": "sigmoid",
  "seq_aux": true,
  "tie_word_embeddings": false,
  "topk_group": 1,
  "topk_method": "noaux_tc",
  "torch_dtype": "bfloat16",
  "transformers_version": "4.46.3",
  "use_cache": true,
  "v_head_dim": 128,
  "vocab_size": 163840
})json";

// https://huggingface.co/moonshotai/Kimi-K2-Instruct/blob/main/config.json
const char* kKimiK2 = R"json({
  "architectures": [
    "DeepseekV3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "auto_map": {
    "AutoConfig": "configuration_deepseek.DeepseekV3Config",
    "AutoModel": "modeling_deepseek.DeepseekV3Model",
    "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"
  },
  "aux_loss_alpha": 0.001,
  "bos_token_id": 163584,
  "eos_token_id": 163585,
  "first_k_dense_replace": 1,
  "hidden_act": "silu",
  "hidden_size": 7168,
  "initializer_range": 0.02,
  "intermediate_size": 18432,
  "kv_lora_rank": 512,
  "max_position_embeddings": 131072,
  "model_type": "kimi_k2",
  "moe_intermediate_size": 2048,
  "moe_layer_freq": 1,
  "n_group": 1,
  "n_routed_experts": 384,
  "n_shared_experts": 1,
  "norm_topk_prob": true,
  "num_attention_heads": 64,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 61,
  "num_key_value_heads": 64,
  "num_nextn_predict_layers": 0,
  "pretraining_tp": 1,
  "q_lora_rank": 1536,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "quantization_config": {
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "weight_block_size": [
      128,
      128
    ]
  },
  "rms_norm_eps": 1e-06,
  "rope_scaling": {
    "beta_fast": 1.0,
    "beta_slow": 1.0,
    "factor": 32.0,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
    "original_max_position_embeddings": 4096,
    "type": "yarn"
  },
  "rope_theta": 50000.0,
  "routed_scaling_factor": 2.827,
  "scoring_func": "sigmoid",
  "seq_aux": true,
  "tie_word_embeddings": false,
  "topk_group": 1,
  "topk_method": "noaux_tc",
  "torch_dtype": "bfloat16",
  "transformers_version": "4.48.3",
  "use_cache": true,
  "v_head_dim": 128,
  "vocab_size": 163840
})json";

}  // namespace

TEST_CASE("llama: Llama-3-70B config.json imports as the preset, 70,553,706,496 parameters") {
  const HfImport hf = import(kLlama3_70B);
  CHECK(hf.model_type == "llama");
  CHECK(hf.model.num_query_groups == 8);
  CHECK(hf.model.kv_channels == 128);
  CHECK(hf.model.activation == Activation::swiglu);
  CHECK(hf.model.normalization == Normalization::rmsnorm);
  CHECK(hf.model.untie_embeddings_and_output_weights);
  CHECK_FALSE(hf.model.add_bias_linear);
  CHECK(hf.notes.empty());
  check_matches_preset(hf.model, "llama-3-70b");
  CHECK(total_params(hf.model) == 70'553'706'496);
}

TEST_CASE("llama: Llama-3.1-8B config.json (llama3 RoPE scaling) imports as the preset") {
  const HfImport hf = import(kLlama31_8B);
  CHECK(hf.model.position_embedding == PositionEmbedding::rope);
  check_matches_preset(hf.model, "llama-3.1-8b");
}

TEST_CASE("mistral: Mistral-7B config.json has 7.3B parameters, sliding window noted") {
  const HfImport hf = import(kMistral7B);
  CHECK(hf.model.num_query_groups == 8);
  CHECK(hf.model.vocab_size == 32000);
  REQUIRE(hf.notes.size() == 1);
  CHECK(hf.notes[0].find("sliding-window") != std::string::npos);
  // Mistral AI's announcement: "Mistral 7B is a 7.3B parameter model".
  check_near(total_params(hf.model), 7.3e9);
}

TEST_CASE("qwen2: Qwen2.5-7B config.json has q/k/v biases and 7.61B parameters") {
  const HfImport hf = import(kQwen25_7B);
  CHECK(hf.model_type == "qwen2");
  CHECK(hf.model.add_qkv_bias);
  CHECK_FALSE(hf.model.add_bias_linear);
  CHECK_FALSE(hf.model.qk_layernorm);
  CHECK(hf.model.num_query_groups == 4);
  CHECK(hf.model.kv_channels == 128);
  // Model card: "Number of Parameters: 7.61B".
  check_near(total_params(hf.model), 7.61e9);
}

TEST_CASE("qwen3: Qwen3-8B config.json imports with QK-norm as the preset") {
  const HfImport hf = import(kQwen3_8B);
  CHECK(hf.model.qk_layernorm);
  CHECK(hf.model.untie_embeddings_and_output_weights);  // tie_word_embeddings false
  check_matches_preset(hf.model, "qwen3-8b");
}

TEST_CASE("qwen2_moe: Qwen1.5-MoE-A2.7B has a gated shared expert and 14.3B parameters") {
  const HfImport hf = import(kQwen15MoE);
  CHECK(hf.model.num_experts == 60);
  CHECK(hf.model.moe_router_topk == 4);
  CHECK(hf.model.moe_ffn_hidden_size == 1408);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 5632);
  CHECK(hf.model.moe_shared_expert_gate);
  CHECK(hf.model.add_qkv_bias);
  CHECK(hf.model.moe_layer_pattern.empty());  // every layer MoE
  // Qwen blog "Qwen1.5-MoE: Matching 7B Model Performance with 1/3 Activated Parameters":
  // 14.3B parameters in total.
  check_near(total_params(hf.model), 14.3e9);
}

TEST_CASE("qwen3_moe: Qwen3-235B-A22B and Qwen3-30B-A3B import as their presets") {
  const HfImport big = import(kQwen3_235B);
  CHECK(big.model.num_experts == 128);
  CHECK(big.model.moe_ffn_hidden_size == 1536);
  CHECK(big.model.qk_layernorm);
  check_matches_preset(big.model, "qwen3-235b-a22b");
  CHECK(total_params(big.model) == 235'093'634'560);
  check_matches_preset(import(kQwen3_30B).model, "qwen3-30b-a3b");
}

TEST_CASE("qwen3_moe: decoder_sparse_step and mlp_only_layers choose the MoE layers") {
  std::string text = kQwen3_30B;
  text.replace(text.find("\"decoder_sparse_step\": 1"), 24, "\"decoder_sparse_step\": 2");
  text.replace(text.find("\"mlp_only_layers\": []"), 21, "\"mlp_only_layers\": [1, 47]");
  const HfImport hf = import(text.c_str());
  REQUIRE(hf.model.moe_layer_pattern.size() == 48);
  CHECK(hf.model.moe_layer_pattern[0] == 0);  // (0 + 1) % 2 != 0
  CHECK(hf.model.moe_layer_pattern[1] == 0);  // listed in mlp_only_layers
  CHECK(hf.model.moe_layer_pattern[3] == 1);
  CHECK(hf.model.moe_layer_pattern[47] == 0);
}

TEST_CASE("mixtral: Mixtral-8x7B config.json imports as the preset, 46.7B parameters") {
  const HfImport hf = import(kMixtral8x7B);
  CHECK(hf.model.num_experts == 8);
  CHECK(hf.model.moe_router_topk == 2);
  CHECK(hf.model.moe_ffn_hidden_size == 14336);
  CHECK(hf.notes.empty());  // sliding_window null
  check_matches_preset(hf.model, "mixtral-8x7b");
  check_near(total_params(hf.model), 46.7e9);
}

TEST_CASE("deepseek_v2: DeepSeek-V2-Lite config.json imports as the preset (MLA, no q LoRA)") {
  const HfImport hf = import(kDeepSeekV2Lite);
  CHECK(hf.model.multi_latent_attention);
  CHECK(hf.model.q_lora_rank == 0);
  CHECK(hf.model.kv_lora_rank == 512);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 2 * 1408);
  CHECK(hf.model.position_embedding == PositionEmbedding::yarn);
  CHECK_FALSE(hf.model.moe_router_enable_expert_bias);  // topk_method greedy
  check_matches_preset(hf.model, "deepseek-v2-lite");
}

TEST_CASE("deepseek_v3: DeepSeek-V3 config.json imports as the preset with exact totals") {
  const HfImport hf = import(kDeepSeekV3);
  CHECK(hf.model.qk_layernorm);
  CHECK(hf.model.mtp_num_layers == 1);
  CHECK(hf.model.moe_router_enable_expert_bias);
  REQUIRE(hf.model.moe_layer_pattern.size() == 61);
  CHECK(hf.model.moe_layer_pattern[2] == 0);
  CHECK(hf.model.moe_layer_pattern[3] == 1);
  REQUIRE(hf.notes.size() == 1);  // the FP8 quantization_config
  CHECK(hf.notes[0].find("quantized") != std::string::npos);
  check_matches_preset(hf.model, "deepseek-v3");
  Config config = share_link_defaults();
  config.model = hf.model;
  const Expected<Estimate> e = estimate(config, {false, false});
  REQUIRE(e.has_value());
  CHECK(e->totals.params == 671'026'404'352);
  CHECK(e->totals.mtp_params == 11'610'067'968);
}

TEST_CASE("deepseek_v3: Moonlight-16B-A3B config.json imports as the preset") {
  check_matches_preset(import(kMoonlight).model, "moonlight-16b-a3b");
}

TEST_CASE("kimi_k2: Kimi-K2 config.json imports as the preset") {
  const HfImport hf = import(kKimiK2);
  CHECK(hf.model_type == "kimi_k2");
  CHECK(hf.model.num_experts == 384);
  CHECK(hf.model.mtp_num_layers == 0);
  check_matches_preset(hf.model, "kimi-k2");
}

TEST_CASE("a multimodal wrapper is read through its text_config") {
  const std::string wrapped =
      std::string(R"json({"model_type": "kimi_k25", "vision_config": {"depth": 27},
                          "text_config": )json") +
      kKimiK2 + "}";
  check_matches_preset(import(wrapped.c_str()).model, "kimi-k2");
}

TEST_CASE("every supported family is listed") {
  const std::vector<std::string> expected = {
      "llama",          "mistral",      "ministral3",       "qwen2",
      "qwen3",          "qwen2_moe",    "qwen3_moe",        "mixtral",
      "deepseek_v2",    "deepseek_v3",  "deepseek_v32",     "glm_moe_dsa",
      "kimi_k2",        "glm4_moe",     "gpt_oss",          "nemotron_h",
      "qwen3_next",     "qwen3_5_text", "qwen3_5_moe_text", "minimax_m2",
      "gemma3_text",    "gemma2",       "gemma4_text",      "olmoe",
      "ernie4_5_moe",   "exaone4",      "glm4_moe_lite",    "hy_v3",
      "bailing_moe_v2", "bailing_moe",  "mimo_v2_flash",    "step3p5",
      "kimi_linear",    "falcon_h1",    "minimax_m3",       "minimax_m3_vl_text",
      "deepseek_v4",    "sarvam_moe",   "sarvam_mla",       "llama4_text"};
  CHECK(supported_hf_model_types() == expected);
}

TEST_CASE("an unknown model_type is an error naming model_type") {
  const Error error = import_error(R"json({"model_type": "gpt2", "n_layer": 12})json");
  CHECK(error.field == "model_type");
  CHECK(error.message.find("'gpt2'") != std::string::npos);
  CHECK(error.message.find("qwen3_moe") != std::string::npos);
  CHECK(import_error(R"json({"hidden_size": 8})json").field == "model_type");
}

TEST_CASE("a missing or mistyped field is an error naming it") {
  std::string text = kQwen3_8B;
  text.replace(text.find("\"hidden_size\": 4096,"), 20, "");
  CHECK(import_error(text).field == "hidden_size");
  text = kQwen3_8B;
  text.replace(text.find("\"num_hidden_layers\": 36"), 23, "\"num_hidden_layers\": \"36\"");
  const Error type = import_error(text);
  CHECK(type.field == "num_hidden_layers");
  CHECK(type.message == "expects an integer, got string");
  text = kQwen3_8B;
  text.replace(text.find("\"vocab_size\": 151936"), 20, "\"vocab_size\": -5");
  CHECK(import_error(text).field == "vocab_size");
  text = kQwen3_8B;
  text.replace(text.find("\"hidden_act\": \"silu\""), 20, "\"hidden_act\": \"gelu\"");
  CHECK(import_error(text).field == "hidden_act");
  text = kMixtral8x7B;
  text.replace(text.find("\"num_experts_per_tok\": 2"), 24, "\"num_experts_per_tok\": 9");
  CHECK(import_error(text).field == "num_experts_per_tok");
}

TEST_CASE("text that is not a JSON object is an error") {
  CHECK(import_error("{\"model_type\": \"llama\",").field == "config.json");
  CHECK(import_error("[1, 2]").message == "is not a JSON object");
  CHECK(import_error("").field == "config.json");
}

TEST_CASE("attention_bias without mlp_bias keeps q/k/v biases and says what is left out") {
  std::string text = kLlama31_8B;
  text.replace(text.find("\"attention_bias\": false"), 23, "\"attention_bias\": true");
  const HfImport hf = import(text.c_str());
  CHECK(hf.model.add_qkv_bias);
  CHECK_FALSE(hf.model.add_bias_linear);
  REQUIRE(hf.notes.size() == 1);
  CHECK(hf.notes[0].find("o_proj") != std::string::npos);
}
