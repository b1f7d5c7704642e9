// HuggingFace config.json import of the 2025 MoE families: GLM-4.5, GLM-4.5-Air and GLM-4.6
// (glm4_moe), DeepSeek-V3.1 and Qwen3-Coder-480B-A35B. One real config.json each, from the
// model repository named above it, checked against its preset and its parameter count.
#include <catch2/catch.hpp>
#include <string>

#include "hf_import_helpers.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/zai-org/GLM-4.5/blob/main/config.json
const char* kGlm45 = R"json({
  "architectures": [
    "Glm4MoeForCausalLM"
  ],
  "attention_bias": true,
  "attention_dropout": 0.0,
  "pad_token_id": 151329,
  "eos_token_id": [
    151329,
    151336,
    151338
  ],
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 5120,
  "partial_rotary_factor": 0.5,
  "initializer_range": 0.02,
  "intermediate_size": 12288,
  "max_position_embeddings": 131072,
  "model_type": "glm4_moe",
  "moe_intermediate_size": 1536,
  "norm_topk_prob": true,
  "num_attention_heads": 96,
  "n_group": 1,
  "topk_group": 1,
  "n_routed_experts": 160,
  "n_shared_experts": 1,
  "routed_scaling_factor": 2.5,
  "num_experts_per_tok": 8,
  "first_k_dense_replace": 3,
  "num_hidden_layers": 92,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "num_nextn_predict_layers": 1,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.54.0",
  "use_cache": true,
  "use_qk_norm": true,
  "vocab_size": 151552
})json";

// https://huggingface.co/zai-org/GLM-4.5-Air/blob/main/config.json; every field agrees with
// the Glm4MoeConfig that transformers printed when ms-swift loaded the model
// (github.com/laocheyujie/ms-swift note/参数.md at aa07786a, "HuggingFace config"; the print
// gives the running transformers_version, 4.54.1).
const char* kGlm45Air = R"json({
  "architectures": [
    "Glm4MoeForCausalLM"
  ],
  "attention_bias": true,
  "attention_dropout": 0.0,
  "pad_token_id": 151329,
  "eos_token_id": [
    151329,
    151336,
    151338
  ],
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "partial_rotary_factor": 0.5,
  "initializer_range": 0.02,
  "intermediate_size": 10944,
  "max_position_embeddings": 131072,
  "model_type": "glm4_moe",
  "moe_intermediate_size": 1408,
  "norm_topk_prob": true,
  "num_attention_heads": 96,
  "n_group": 1,
  "topk_group": 1,
  "n_routed_experts": 128,
  "n_shared_experts": 1,
  "routed_scaling_factor": 1.0,
  "num_experts_per_tok": 8,
  "first_k_dense_replace": 1,
  "num_hidden_layers": 46,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "num_nextn_predict_layers": 1,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.54.0",
  "use_cache": true,
  "use_qk_norm": false,
  "vocab_size": 151552
})json";

// https://huggingface.co/zai-org/GLM-4.6/blob/main/config.json
const char* kGlm46 = R"json({
  "architectures": [
    "Glm4MoeForCausalLM"
  ],
  "attention_bias": true,
  "attention_dropout": 0.0,
  "pad_token_id": 151329,
  "eos_token_id": [
    151329,
    151336,
    151338
  ],
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 5120,
  "partial_rotary_factor": 0.5,
  "initializer_range": 0.02,
  "intermediate_size": 12288,
  "max_position_embeddings": 202752,
  "model_type": "glm4_moe",
  "moe_intermediate_size": 1536,
  "norm_topk_prob": true,
  "num_attention_heads": 96,
  "n_group": 1,
  "topk_group": 1,
  "n_routed_experts": 160,
  "n_shared_experts": 1,
  "routed_scaling_factor": 2.5,
  "num_experts_per_tok": 8,
  "first_k_dense_replace": 3,
  "num_hidden_layers": 92,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "num_nextn_predict_layers": 1,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.54.0",
  "use_cache": true,
  "use_qk_norm": true,
  "vocab_size": 151552
})json";

// https://huggingface.co/deepseek-ai/DeepSeek-V3.1/blob/main/config.json (auto_map left out)
const char* kDeepSeekV31 = R"json({
  "architectures": [
    "DeepseekV3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
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
  "q_lora_rank": 1536,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "quantization_config": {
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "scale_fmt": "ue8m0",
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
  "tie_word_embeddings": false,
  "topk_group": 4,
  "topk_method": "noaux_tc",
  "torch_dtype": "bfloat16",
  "transformers_version": "4.44.2",
  "use_cache": true,
  "v_head_dim": 128,
  "vocab_size": 129280
})json";

// https://huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct/blob/main/config.json; all 35
// fields as in the file pasted into github.com/baidu/vLLM-Kunlun
// docs/source/tutorials/multi_xpu_Qwen3-Coder-480B-A35B(W8A8).md at 4ac5214c (which adds a
// quantization_config of its own).
const char* kQwen3Coder480B = R"json({
  "architectures": [
    "Qwen3MoeForCausalLM"
  ],
  "attention_dropout": 0.0,
  "decoder_sparse_step": 1,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 6144,
  "initializer_range": 0.02,
  "intermediate_size": 8192,
  "max_position_embeddings": 262144,
  "max_window_layers": 62,
  "mlp_only_layers": [],
  "model_type": "qwen3_moe",
  "moe_intermediate_size": 2560,
  "norm_topk_prob": true,
  "num_attention_heads": 96,
  "num_experts": 160,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 62,
  "num_key_value_heads": 8,
  "output_router_logits": false,
  "qkv_bias": false,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 10000000,
  "router_aux_loss_coef": 0.0,
  "shared_expert_intermediate_size": 0,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_qk_norm": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})json";

}  // namespace

TEST_CASE("glm4_moe: GLM-4.5 config.json imports as the preset, 352,797,814,784 parameters") {
  const HfImport hf = import(kGlm45);
  CHECK(hf.model_type == "glm4_moe");
  CHECK(hf.model.num_query_groups == 8);
  CHECK(hf.model.kv_channels == 128);
  CHECK(hf.model.qk_layernorm);  // use_qk_norm
  CHECK(hf.model.add_qkv_bias);  // attention_bias: q/k/v only
  CHECK_FALSE(hf.model.add_bias_linear);
  CHECK(hf.notes.empty());  // o_proj has no bias in GLM: nothing left out
  CHECK(hf.model.num_experts == 160);
  CHECK(hf.model.moe_ffn_hidden_size == 1536);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 1536);
  CHECK_FALSE(hf.model.moe_shared_expert_gate);
  CHECK(hf.model.moe_router_enable_expert_bias);  // no topk_method: always noaux_tc
  REQUIRE(hf.model.moe_layer_pattern.size() == 92);
  CHECK(hf.model.moe_layer_pattern[2] == 0);  // first_k_dense_replace 3
  CHECK(hf.model.moe_layer_pattern[3] == 1);
  CHECK(hf.model.mtp_num_layers == 1);
  check_matches_preset(hf.model, "glm-4.5");
  // config.json's tensors without the MTP layer and the e_score_correction_bias buffers:
  // per layer attention and norms 136,339,712 (q 5120x12288, k and v 5120x1024 with their biases, o
  // 12288x5120, q/k norms of 128, two 5120 norms); 3 dense layers add a 3x5120x12288 MLP, 89 MoE
  // layers 160 + 1 experts of 3x5120x1536 and a 160x5120 router; 2 x 151552 x 5120 vocabulary
  // matrices and the final norm.
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 352'797'814'784);
  CHECK(total == 3 * std::int64_t{325'083'392} + 89 * std::int64_t{3'935'625'472} +
                     2 * std::int64_t{151'552} * 5120 + 5120);
  check_near(total, 355e9);  // model card: 355B
}

TEST_CASE("glm4_moe: GLM-4.5-Air has no QK-norm and 106.85B parameters") {
  const HfImport hf = import(kGlm45Air);
  CHECK_FALSE(hf.model.qk_layernorm);  // use_qk_norm false
  CHECK(hf.model.add_qkv_bias);
  CHECK(hf.model.num_experts == 128);
  REQUIRE(hf.model.moe_layer_pattern.size() == 46);
  CHECK(hf.model.moe_layer_pattern[0] == 0);
  CHECK(hf.model.moe_layer_pattern[1] == 1);
  check_matches_preset(hf.model, "glm-4.5-air");
  CHECK(total_params(hf.model) == 106'852'245'504);
  check_near(total_params(hf.model), 106e9);  // model card: 106B
}

TEST_CASE("glm4_moe: GLM-4.6 has GLM-4.5's tensors and opens its preset") {
  check_matches_preset(import(kGlm46).model, "glm-4.5");
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  REQUIRE(catalog->find_model("glm-4.6") != nullptr);
  CHECK(catalog->find_model("glm-4.6")->id == "glm-4.5");
}

TEST_CASE("glm4_moe: attention_bias false leaves the q/k/v biases out") {
  std::string text = kGlm45Air;
  text.replace(text.find("\"attention_bias\": true"), 22, "\"attention_bias\": false");
  const HfImport hf = import(text.c_str());
  CHECK_FALSE(hf.model.add_qkv_bias);
  CHECK(hf.notes.empty());
}

TEST_CASE("deepseek_v3: DeepSeek-V3.1 has DeepSeek-V3's tensors and opens its preset") {
  const HfImport hf = import(kDeepSeekV31);
  check_matches_preset(hf.model, "deepseek-v3");
  CHECK(total_params(hf.model) == 671'026'404'352);
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  REQUIRE(catalog->find_model("deepseek-v3.1") != nullptr);
  CHECK(catalog->find_model("deepseek-v3.1")->id == "deepseek-v3");
}

TEST_CASE("qwen3_moe: Qwen3-Coder-480B-A35B imports as the preset, 480.15B parameters") {
  const HfImport hf = import(kQwen3Coder480B);
  CHECK(hf.model.num_experts == 160);
  CHECK(hf.model.moe_ffn_hidden_size == 2560);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 0);
  CHECK(hf.model.qk_layernorm);
  CHECK(hf.notes.empty());
  check_matches_preset(hf.model, "qwen3-coder-480b-a35b");
  CHECK(total_params(hf.model) == 480'154'875'392);
  check_near(total_params(hf.model), 480e9);  // model card: 480B
}
