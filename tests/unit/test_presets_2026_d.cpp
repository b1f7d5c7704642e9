// Presets of #25, part d: Ministral-3-14B (mistral3 wrapping a ministral3 text_config) and
// Ling-mini-2.0 (bailing_moe, BailingMoeV2ForCausalLM) import from their config.json as the
// presets, with the parameter counts derived by hand (test_presets_2026.cpp estimates them on
// 8 to 1,024 GPUs).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "hf_import_helpers.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/mistralai/Ministral-3-14B-Base-2512/blob/main/config.json (revision
// 5b0ceedb, pinned by Megatron-Bridge's examples/models/mistral/ministral3/README.md), the
// fields of its text_config the bridge reads (ministral3_bridge.py provider_bridge): layers,
// hidden and heads as Bridge's docs/models/mistral/ministral3.md lists them, intermediate_size
// and vocab_size as apxml.com/models/ministral-3-14b tabulates config.json. rope_parameters,
// which change no memory: the keys as other projects' Ministral 3 fixtures spell them, with
// Ministral3ModelProvider's YaRN defaults (factor 16 over 16384) and apxml's rope_theta. The
// vision_config is cut to its model_type: megamem does not estimate it.
const char* kMinistral3_14B = R"json({
  "architectures": ["Mistral3ForConditionalGeneration"],
  "model_type": "mistral3",
  "image_token_index": 10,
  "text_config": {
    "model_type": "ministral3",
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 5120,
    "intermediate_size": 16384,
    "max_position_embeddings": 262144,
    "num_attention_heads": 32,
    "num_hidden_layers": 40,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05,
    "rope_parameters": {
      "beta_fast": 32.0,
      "beta_slow": 1.0,
      "factor": 16.0,
      "llama_4_scaling_beta": 0.1,
      "mscale": 1.0,
      "mscale_all_dim": 1.0,
      "original_max_position_embeddings": 16384,
      "rope_theta": 1000000000.0,
      "rope_type": "yarn",
      "type": "yarn"
    },
    "sliding_window": null,
    "vocab_size": 131072
  },
  "vision_config": {"model_type": "pixtral"}
})json";

// https://huggingface.co/inclusionAI/Ling-mini-2.0/blob/main/config.json as a public Swift test
// fixture transcribes it ("values are transcribed from the published config"), trimmed to the
// architecture keys.
const char* kLingMini20 = R"json({
  "model_type": "bailing_moe",
  "architectures": ["BailingMoeV2ForCausalLM"],
  "num_hidden_layers": 20,
  "hidden_size": 2048,
  "intermediate_size": 5120,
  "first_k_dense_replace": 1,
  "moe_intermediate_size": 512,
  "moe_shared_expert_intermediate_size": 512,
  "num_shared_experts": 1,
  "num_experts": 256,
  "num_experts_per_tok": 8,
  "n_group": 8,
  "topk_group": 4,
  "norm_topk_prob": true,
  "routed_scaling_factor": 2.5,
  "score_function": "sigmoid",
  "moe_router_enable_expert_bias": true,
  "num_attention_heads": 16,
  "num_key_value_heads": 4,
  "head_dim": 128,
  "use_qk_norm": true,
  "partial_rotary_factor": 0.5,
  "rope_theta": 600000,
  "hidden_act": "silu",
  "rms_norm_eps": 1e-6,
  "tie_word_embeddings": false,
  "vocab_size": 157184,
  "max_position_embeddings": 32768
})json";

}  // namespace

TEST_CASE("ministral3: Ministral-3-14B's language model imports as the preset, 13,506,073,600") {
  const HfImport hf = import(kMinistral3_14B);
  CHECK(hf.model_type == "ministral3");
  CHECK(hf.model.position_embedding == PositionEmbedding::yarn);
  CHECK(hf.model.num_query_groups == 8);
  CHECK(hf.model.kv_channels == 128);
  CHECK(hf.model.untie_embeddings_and_output_weights);  // text_config has no tie_word_embeddings
  REQUIRE(hf.notes.size() == 1);
  CHECK(hf.notes[0].find("vision encoder") != std::string::npos);
  check_matches_preset(hf.model, "ministral-3-14b");
  // Per layer: q 5120x4096, k and v 5120x1024, o 4096x5120, SwiGLU 3 x 5120x16384, two 5120
  // norms. Plus two 131072 x 5120 vocabulary matrices and the final norm.
  const std::int64_t layer =
      2 * 5120 * 4096 + 2 * 5120 * 1024 + std::int64_t{3} * 5120 * 16384 + 2 * 5120;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 40 * layer + 2 * std::int64_t{131072} * 5120 + 5120);
  CHECK(total == 13'506'073'600);
  // Model card: "13.5B Language Model" (+0.04%), within the 0.5% aim.
  CHECK(std::abs(static_cast<double>(total) / 13.5e9 - 1.0) <= 0.005);
}

TEST_CASE("ministral3: a text-only ministral3 config imports, tied when it says so") {
  const HfImport hf = import(R"json({"model_type": "ministral3", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "intermediate_size": 128, "vocab_size": 100, "tie_word_embeddings": true,
      "attention_dropout": 0.1})json");
  CHECK(hf.model.position_embedding == PositionEmbedding::yarn);  // the provider's, always
  CHECK_FALSE(hf.model.untie_embeddings_and_output_weights);
  CHECK(hf.model.attention_dropout == 0.0);  // ministral3_provider.py: attention_dropout 0.0
}

TEST_CASE("bailing_moe: Ling-mini-2.0 imports as the preset, 16,255,638,528 parameters") {
  const HfImport hf = import(kLingMini20);
  CHECK(hf.model_type == "bailing_moe");
  CHECK(hf.model.num_experts == 256);
  CHECK(hf.model.moe_router_topk == 8);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 512);
  CHECK(hf.model.qk_layernorm);
  CHECK(hf.model.moe_router_enable_expert_bias);
  CHECK(hf.model.mtp_num_layers == 0);
  REQUIRE(hf.model.moe_layer_pattern.size() == 20);
  CHECK(hf.model.moe_layer_pattern[0] == 0);
  CHECK(hf.model.moe_layer_pattern[1] == 1);
  REQUIRE(hf.notes.size() == 1);
  CHECK(hf.notes[0].find("--moe-router-dtype fp32") != std::string::npos);
  check_matches_preset(hf.model, "ling-mini-2.0");
  // Per layer: q 2048x2048, k and v 2048x512, o 2048x2048, per-head q/k norms 2 x 128, two 2048
  // norms. Layer 0 a SwiGLU MLP 3 x 2048x5120; layers 1-19 256 experts and one shared expert
  // of 3 x 2048x512 and a 256x2048 router. Plus two 157184 x 2048 vocabulary matrices and the
  // final norm.
  const std::int64_t attention = 2 * 2048 * 2048 + 2 * 2048 * 512 + 2 * 128 + 2 * 2048;
  const std::int64_t dense = std::int64_t{3} * 2048 * 5120;
  const std::int64_t expert = std::int64_t{3} * 2048 * 512;
  const std::int64_t moe = 257 * expert + 256 * 2048;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 20 * attention + dense + 19 * moe + 2 * std::int64_t{157184} * 2048 + 2048);
  CHECK(total == 16'255'638'528);
  // Ling-V2 README: 16.26B total (-0.03%); 1.43B activated, 789M without embeddings (top-8
  // and the shared expert per MoE layer): 789,142,528.
  CHECK(std::abs(static_cast<double>(total) / 16.26e9 - 1.0) <= 0.005);
  CHECK(20 * attention + dense + 19 * (9 * expert + 256 * 2048) + 2048 == 789'142'528);
}

TEST_CASE("bailing_moe: the bridge's choices, MTP layers, and Ling 1.x refused") {
  const std::string text = R"json({"model_type": "bailing_moe_v2", "num_hidden_layers": 3,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "intermediate_size": 128, "vocab_size": 100, "num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "num_shared_experts": 2, "first_k_dense_replace": 2,
      "num_nextn_predict_layers": 1, "use_qkv_bias": true, "tie_word_embeddings": true})json";
  const HfImport hf = import(text.c_str());
  CHECK(hf.model.moe_shared_expert_intermediate_size == 32);  // one, whatever the count
  CHECK(hf.model.mtp_num_layers == 1);
  CHECK(hf.model.add_qkv_bias);
  CHECK(hf.model.untie_embeddings_and_output_weights);  // the bridge never ties them
  REQUIRE(hf.model.moe_layer_pattern.size() == 3);
  CHECK(hf.model.moe_layer_pattern[1] == 0);
  CHECK(hf.model.moe_layer_pattern[2] == 1);
  REQUIRE(hf.notes.size() == 2);
  CHECK(hf.notes[0].find("num_shared_experts 2") != std::string::npos);
  // Ling-lite-1.5 (BailingMoeForCausalLM, model_type bailing_moe) has no bridge.
  CHECK(import_error(R"json({"model_type": "bailing_moe", "architectures":
      ["BailingMoeForCausalLM"], "num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
      "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32})json")
            .field == "architectures");
}
