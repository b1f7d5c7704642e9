// Presets of #25, part c: EXAONE-4.0-32B (exaone4), GLM-4.7-Flash (glm4_moe_lite) and
// Hy3-preview (hy_v3) import from their config.json as the presets, with the parameter counts
// derived by hand, and every new preset estimates on 8 to 1,024 GPUs.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "hf_import_helpers.hpp"
#include "megamem/suggestions.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/LGAI-EXAONE/EXAONE-4.0-32B/blob/main/config.json as TensorRT-LLM's
// tests/unittest/_torch/modeling/test_modeling_exaone4.py copies it, with the two values the
// test shrinks restored as its comments give them (num_hidden_layers 64, sliding_window 4096)
// and its attn_implementation left out.
const char* kExaone4_32B = R"json({
  "architectures": ["Exaone4ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 361,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 5120,
  "initializer_range": 0.02,
  "intermediate_size": 27392,
  "max_position_embeddings": 131072,
  "model_type": "exaone4",
  "num_attention_heads": 40,
  "num_hidden_layers": 64,
  "num_key_value_heads": 8,
  "pad_token_id": 0,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 16.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 1000000,
  "sliding_window": 4096,
  "sliding_window_pattern": 4,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.54.0.dev0",
  "use_cache": true,
  "vocab_size": 102400
})json";

// https://huggingface.co/zai-org/GLM-4.7-Flash/blob/main/config.json as vLLM's
// tests/transformers_utils/test_glm4_moe_lite_config.py copies its fields, with
// num_nextn_predict_layers 1 (other projects' GLM-4.7-Flash fixtures; slime's
// scripts/models/glm4.7-30B-A3B.sh agrees on every size).
const char* kGlm47Flash = R"json({
  "model_type": "glm4_moe_lite",
  "architectures": ["Glm4MoeLiteForCausalLM"],
  "vocab_size": 154880,
  "hidden_size": 2048,
  "intermediate_size": 10240,
  "moe_intermediate_size": 1536,
  "num_hidden_layers": 47,
  "num_nextn_predict_layers": 1,
  "num_attention_heads": 20,
  "num_key_value_heads": 20,
  "hidden_act": "silu",
  "rms_norm_eps": 1e-5,
  "attention_dropout": 0.0,
  "attention_bias": false,
  "max_position_embeddings": 202752,
  "rope_theta": 1000000.0,
  "rope_scaling": null,
  "partial_rotary_factor": 1.0,
  "q_lora_rank": 768,
  "kv_lora_rank": 512,
  "qk_nope_head_dim": 192,
  "qk_rope_head_dim": 64,
  "v_head_dim": 256,
  "n_routed_experts": 64,
  "n_shared_experts": 1,
  "num_experts_per_tok": 4,
  "norm_topk_prob": true,
  "routed_scaling_factor": 1.8,
  "n_group": 1,
  "topk_group": 1,
  "topk_method": "noaux_tc",
  "first_k_dense_replace": 1,
  "tie_word_embeddings": false,
  "dtype": "bfloat16",
  "pad_token_id": 154820,
  "eos_token_id": [154820, 154827, 154829]
})json";

// https://huggingface.co/tencent/Hy3-preview/blob/main/config.json: the sizes of the model
// card's table (layers, hidden, heads, KV heads, head dim, intermediate, vocabulary, experts
// top-8, one MTP layer), the expert width, shared experts and dense layers as a public hy3 C
// port's constants give them, the field names as MLX ports' hy_v3 fixtures spell them.
const char* kHy3Preview = R"json({
  "model_type": "hy_v3",
  "architectures": ["HYV3ForCausalLM"],
  "hidden_size": 4096,
  "num_hidden_layers": 80,
  "num_attention_heads": 64,
  "num_key_value_heads": 8,
  "head_dim": 128,
  "intermediate_size": 13312,
  "moe_intermediate_size": 1536,
  "expert_hidden_dim": 1536,
  "first_k_dense_replace": 1,
  "num_experts": 192,
  "num_experts_per_tok": 8,
  "num_shared_experts": 1,
  "qk_norm": true,
  "rms_norm_eps": 1e-5,
  "rope_parameters": {"rope_theta": 11158840.0, "rope_type": "default"},
  "max_position_embeddings": 262144,
  "route_norm": true,
  "moe_router_enable_expert_bias": true,
  "moe_router_use_sigmoid": true,
  "tie_word_embeddings": false,
  "vocab_size": 120832,
  "num_nextn_predict_layers": 1
})json";

}  // namespace

TEST_CASE("exaone4: EXAONE-4.0-32B imports as the preset, 32,003,871,744 parameters") {
  const HfImport hf = import(kExaone4_32B);
  CHECK(hf.model_type == "exaone4");
  CHECK(hf.model.qk_layernorm);
  CHECK(hf.model.post_sublayer_norms);
  CHECK(hf.model.window_size == 0);  // the Bridge builds full attention on every layer
  CHECK(hf.model.untie_embeddings_and_output_weights);
  // The pre-norms EXAONE lacks, the unfused attention and the unbuilt window are named.
  REQUIRE(hf.notes.size() == 3);
  CHECK(hf.notes[0].find("no pre-norms") != std::string::npos);
  CHECK(hf.notes[1].find("--attention-backend local") != std::string::npos);
  CHECK(hf.notes[2].find("sliding_window 4096") != std::string::npos);
  check_matches_preset(hf.model, "exaone-4.0-32b");
  // Per layer: q 5120x5120, k and v 5120x1024, o 5120x5120, q/k norms 2 x 128, SwiGLU 3 x
  // 5120x27392, the two post norms 2 x 5120 and the two pre-norms megamem prices 2 x 5120.
  // Plus two 102400 x 5120 vocabulary matrices and the final norm.
  const std::int64_t layer = 5120 * 5120 + 2 * 5120 * 1024 + 5120 * 5120 + 2 * 128 +
                             std::int64_t{3} * 5120 * 27392 + 4 * 5120;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 64 * layer + 2 * std::int64_t{102400} * 5120 + 5120);
  CHECK(total == 32'003'871'744);
  // Model card: 30.95B without embeddings; config.json's tensors 30,954,635,264 + 5120.
  CHECK(total - 2 * std::int64_t{102400} * 5120 - 64 * 2 * 5120 == 30'954'640'384);
  check_near(total, 32e9);
}

TEST_CASE("glm4_moe_lite: GLM-4.7-Flash imports as the preset, 29,943,390,976 parameters") {
  const HfImport hf = import(kGlm47Flash);
  CHECK(hf.model_type == "glm4_moe_lite");
  CHECK(hf.model.multi_latent_attention);
  CHECK(hf.model.moe_router_enable_expert_bias);
  CHECK(hf.model.mtp_num_layers == 1);
  check_matches_preset(hf.model, "glm-4.7-flash");
  // Per layer MLA: q_a 2048x768 and its norm, q_b 768 x 20 x 256, kv_a 2048 x 576 and the
  // 512 norm, kv_b 512 x 20 x (192 + 256), o 20 x 256 x 2048; two 2048 norms. Layer 0 a dense
  // SwiGLU of 3 x 2048x10240; layers 1-46 64 routed and 1 shared expert of 3 x 2048x1536 and a
  // 64 x 2048 router. Plus two 154880 x 2048 vocabulary matrices and the final norm.
  const std::int64_t mla = 2048 * 768 + 768 + 768 * 20 * 256 + 2048 * 576 + 512 + 512 * 20 * 448 +
                           20 * 256 * 2048 + 2 * 2048;
  const std::int64_t moe = std::int64_t{65} * 3 * 2048 * 1536 + 64 * 2048;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 47 * mla + 3 * 2048 * 10240 + 46 * moe + 2 * std::int64_t{154880} * 2048 + 2048);
  CHECK(total == 29'943'390'976);
  check_near(total, 30e9);  // model card: 30B-A3B (-0.19%)
}

TEST_CASE("hy_v3: Hy3-preview imports as the preset, 295,033,528,320 parameters") {
  const HfImport hf = import(kHy3Preview);
  CHECK(hf.model_type == "hy_v3");
  CHECK(hf.model.num_experts == 192);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 1536);
  CHECK(hf.model.moe_layer_pattern.size() == 80);
  CHECK(hf.model.moe_layer_pattern[0] == 0);
  CHECK(hf.model.mtp_num_layers == 1);
  CHECK(hf.notes.empty());
  check_matches_preset(hf.model, "hy3-preview");
  // Per layer: q 4096x8192, k and v 4096x1024, o 8192x4096, q/k norms 2 x 128, two 4096 norms.
  // Layer 0 a dense SwiGLU of 3 x 4096x13312; layers 1-79 192 routed and 1 shared expert of
  // 3 x 4096x1536 and a 192 x 4096 router. Plus two 120832 x 4096 matrices and the final norm.
  const std::int64_t attention = 4096 * 8192 + 2 * 4096 * 1024 + 8192 * 4096 + 2 * 128 + 2 * 4096;
  const std::int64_t moe = std::int64_t{193} * 3 * 4096 * 1536 + 192 * 4096;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 80 * attention + std::int64_t{3} * 4096 * 13312 + 79 * moe +
                     2 * std::int64_t{120832} * 4096 + 4096);
  CHECK(total == 295'033'528'320);
  check_near(total, 295e9);  // model card: 295B (+0.01%)
}

TEST_CASE("hy_v3: expert_hidden_dim stands in for moe_intermediate_size") {
  std::string text = kHy3Preview;
  const std::string key = "\"moe_intermediate_size\": 1536,";
  text.erase(text.find(key), key.size());
  CHECK(import(text.c_str()).model.moe_ffn_hidden_size == 1536);
}
