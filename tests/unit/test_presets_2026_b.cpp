// The 2026 presets, second batch (#25): OLMoE-1B-7B (olmoe) and ERNIE-4.5-300B-A47B
// (ernie4_5_moe) and Mistral-7B-v0.3 (mistral) import from their config.json as the presets, with
// the parameter counts derived by hand, and every new preset estimates on 8 to 1,024 GPUs.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "hf_import_helpers.hpp"
#include "megamem/suggestions.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/allenai/OLMoE-1B-7B-0125/blob/main/config.json: the fields public
// test fixtures repeat for OLMoE-1B-7B (sizes as Megatron-Bridge's olmoe.mdx lists them); the
// rest are transformers' OlmoeConfig defaults (configuration_olmoe.py).
const char* kOlmoe1B7B = R"json({
  "architectures": ["OlmoeForCausalLM"],
  "model_type": "olmoe",
  "hidden_act": "silu",
  "hidden_size": 2048,
  "intermediate_size": 1024,
  "max_position_embeddings": 4096,
  "num_hidden_layers": 16,
  "num_experts": 64,
  "num_experts_per_tok": 8,
  "num_attention_heads": 16,
  "num_key_value_heads": 16,
  "router_aux_loss_coef": 0.01,
  "norm_topk_prob": false,
  "clip_qkv": null,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "tie_word_embeddings": false,
  "vocab_size": 50304
})json";

// https://huggingface.co/baidu/ERNIE-4.5-300B-A47B-PT/blob/main/config.json as the Ascend
// MindIE ERNIE-MoE test fixtures print its sizes (there under MindIE's model_type ernie_moe).
const char* kErnie45_300B = R"json({
  "architectures": ["Ernie4_5_MoeForCausalLM"],
  "model_type": "ernie4_5_moe",
  "hidden_act": "silu",
  "hidden_size": 8192,
  "intermediate_size": 28672,
  "max_position_embeddings": 131072,
  "num_attention_heads": 64,
  "num_key_value_heads": 8,
  "num_hidden_layers": 54,
  "pad_token_id": 0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "rms_norm_eps": 1e-05,
  "use_cache": false,
  "vocab_size": 103424,
  "rope_theta": 500000.0,
  "moe_num_experts": 64,
  "moe_num_shared_experts": 0,
  "moe_layer_start_index": 3,
  "moe_layer_end_index": 53,
  "moe_intermediate_size": 3584,
  "moe_gate": "topk_fused",
  "moe_k": 8,
  "moe_layer_interval": 1,
  "tie_word_embeddings": true
})json";

// https://huggingface.co/mistralai/Mistral-7B-v0.3/blob/main/config.json: the sizes Megatron-
// Bridge's MistralModelProvider defaults to (mistral_provider.py, for Mistral-7B-Instruct-v0.3)
// and litgpt's config.py lists for Mistral-7B-v0.3; v0.3's sliding_window is null.
const char* kMistral7Bv03 = R"json({
  "architectures": ["MistralForCausalLM"],
  "model_type": "mistral",
  "hidden_act": "silu",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "head_dim": 128,
  "rms_norm_eps": 1e-05,
  "rope_theta": 1000000.0,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "vocab_size": 32768
})json";

}  // namespace

TEST_CASE("olmoe: OLMoE-1B-7B imports as the preset, 6,919,100,416 parameters") {
  const HfImport hf = import(kOlmoe1B7B);
  CHECK(hf.model_type == "olmoe");
  CHECK(hf.model.num_experts == 64);
  CHECK(hf.model.moe_router_topk == 8);
  CHECK(hf.model.moe_ffn_hidden_size == 1024);
  CHECK(hf.model.num_query_groups == 0);  // multi-head attention
  CHECK(hf.model.kv_channels == 128);     // hidden_size / num_attention_heads
  CHECK(hf.model.qk_layernorm);
  CHECK_FALSE(hf.model.moe_router_enable_expert_bias);
  REQUIRE(hf.notes.size() == 1);
  CHECK(hf.notes[0].find("full-dimension QK norm") != std::string::npos);
  check_matches_preset(hf.model, "olmoe-1b-7b");
  // Per layer: q, k, v, o 4 x 2048x2048, per-head q/k norms 2 x 128, two 2048 norms; 64
  // experts of 3 x 2048x1024 and a 64x2048 router. Plus two 50304 x 2048 vocabulary matrices
  // and the final norm.
  const std::int64_t attention = 4 * 2048 * 2048 + 2 * 128 + 2 * 2048;
  const std::int64_t moe = std::int64_t{64} * 3 * 2048 * 1024 + 64 * 2048;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 16 * (attention + moe) + 2 * std::int64_t{50304} * 2048 + 2048);
  CHECK(total == 6'919'100'416);
  // config.json's tensors: the full-dimension norms are 2 x 2048 per layer, not 2 x 128.
  CHECK(total + 16 * 2 * (2048 - 128) == 6'919'161'856);
  check_near(total, 6.9e9);  // OLMoE paper, table 1: 6.9B (+0.28%)
}

TEST_CASE("olmoe: a scoring function other than softmax is refused, as the bridge does") {
  const std::string text = R"json({"model_type": "olmoe", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 32, "vocab_size": 100,
      "num_experts": 4, "num_experts_per_tok": 2, "scoring_func": "sigmoid"})json";
  CHECK(import_error(text).field == "scoring_func");
}

TEST_CASE("ernie4_5_moe: ERNIE-4.5-300B-A47B imports as the preset, 298.6B parameters") {
  const HfImport hf = import(kErnie45_300B);
  CHECK(hf.model_type == "ernie4_5_moe");
  CHECK(hf.model.num_experts == 64);
  CHECK(hf.model.moe_router_topk == 8);
  CHECK(hf.model.moe_ffn_hidden_size == 3584);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 0);
  CHECK(hf.model.moe_router_enable_expert_bias);
  CHECK_FALSE(hf.model.untie_embeddings_and_output_weights);
  CHECK(hf.model.mtp_num_layers == 0);
  REQUIRE(hf.model.moe_layer_pattern.size() == 54);
  CHECK(hf.model.moe_layer_pattern[2] == 0);
  CHECK(hf.model.moe_layer_pattern[3] == 1);
  CHECK(hf.notes.empty());
  check_matches_preset(hf.model, "ernie-4.5-300b-a47b");
  // Per layer: q 8192x8192, k and v 8192x1024, o 8192x8192, two 8192 norms. 3 dense layers
  // with a 3 x 8192x28672 MLP, 51 MoE layers with 64 experts of 3 x 8192x3584 and a 64x8192
  // router. Plus the tied 103424 x 8192 embedding and the final norm.
  const std::int64_t attention = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 2 * 8192;
  const std::int64_t dense = std::int64_t{3} * 8192 * 28672;
  const std::int64_t moe = std::int64_t{64} * 3 * 8192 * 3584 + 64 * 8192;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 54 * attention + 3 * dense + 51 * moe + std::int64_t{103424} * 8192 + 8192);
  CHECK(total == 298'636'910'592);
  check_near(total, 300e9);  // model card: 300B (-0.45%)
}

TEST_CASE("ernie4_5_moe: list-valued sizes, shared experts, MTP and the bridge's defaults") {
  const std::string text = R"json({"model_type": "ernie4_5_moe", "num_hidden_layers": 4,
      "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1,
      "intermediate_size": 128, "vocab_size": 100, "moe_num_experts": [8, 8],
      "moe_intermediate_size": [32, 16], "moe_num_shared_experts": 2, "moe_k": 2,
      "moe_layer_start_index": [1, 1], "moe_layer_interval": 2,
      "num_nextn_predict_layers": 1, "use_bias": true})json";
  const HfImport hf = import(text.c_str());
  CHECK(hf.model.num_experts == 8);
  CHECK(hf.model.moe_ffn_hidden_size == 32);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 64);
  CHECK(hf.model.mtp_num_layers == 0);
  CHECK_FALSE(hf.model.add_bias_linear);
  REQUIRE(hf.model.moe_layer_pattern.size() == 4);
  CHECK(hf.model.moe_layer_pattern[0] == 0);
  CHECK(hf.model.moe_layer_pattern[1] == 1);
  CHECK(hf.model.moe_layer_pattern[2] == 1);  // moe_layer_interval is not read by the bridge
  REQUIRE(hf.notes.size() == 3);
  CHECK(hf.notes[0].find("use_bias") != std::string::npos);
  CHECK(hf.notes[1].find("num_nextn_predict_layers 1") != std::string::npos);
  CHECK(hf.notes[2].find("moe_layer_interval") != std::string::npos);
  // Without the MoE fields: ernie_45_bridge.py's getattr defaults, 64 experts top-6, 2 shared,
  // layer 0 dense.
  const HfImport defaults = import(R"json({"model_type": "ernie4_5_moe", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128,
      "vocab_size": 100})json");
  CHECK(defaults.model.num_experts == 64);
  CHECK(defaults.model.moe_router_topk == 6);
  CHECK(defaults.model.moe_shared_expert_intermediate_size == 256);
  REQUIRE(defaults.model.moe_layer_pattern.size() == 2);
  CHECK(defaults.model.moe_layer_pattern[0] == 0);
}

TEST_CASE("mistral: Mistral-7B-v0.3 imports as the preset, 7,248,023,552 parameters") {
  const HfImport hf = import(kMistral7Bv03);
  CHECK(hf.model_type == "mistral");
  CHECK(hf.model.window_size == 0);
  CHECK(hf.notes.empty());  // sliding_window null: no window to note
  check_matches_preset(hf.model, "mistral-7b-v0.3");
  // Per layer: q 4096x4096, k and v 4096x1024, o 4096x4096, SwiGLU 3 x 4096x14336, two 4096
  // norms. Plus two 32768 x 4096 vocabulary matrices and the final norm.
  const std::int64_t layer =
      2 * 4096 * 4096 + 2 * 4096 * 1024 + std::int64_t{3} * 4096 * 14336 + 2 * 4096;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 32 * layer + 2 * std::int64_t{32768} * 4096 + 4096);
  CHECK(total == 7'248'023'552);
  check_near(total, 7.3e9);  // Mistral AI's announcement: 7.3B (-0.71%)
}
