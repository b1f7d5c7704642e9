// Presets of #25, part n: the Qwen3.5 family's smaller sizes, Qwen3.5-35B-A3B (with Megatron-
// Bridge's GB200 recipe for it, recipes/qwen/gb200/qwen35.py) and the dense Qwen3.6-27B, imported
// from their config.json's text_config as public copies print it, with the parameter counts
// derived by hand (the language model, and the vision encoder apart).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/presets.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// "full_attention" on every 4th of `layers` layers, "linear_attention" elsewhere.
std::string layer_types(int layers) {
  std::string out;
  for (int i = 0; i < layers; ++i) {
    out += i > 0 ? ", " : "";
    out += (i + 1) % 4 == 0 ? "\"full_attention\"" : "\"linear_attention\"";
  }
  return out;
}

// Qwen3.6-35B-A3B's text_config as a public C++ port's test transcribes it from the released
// checkpoints (its `text_json()`, "both carry the same one"); slime's model script for it
// (scripts/models/qwen36-35B-A3B.sh) sources qwen3.5-35B-A3B.sh, "the same language/MoE
// topology", whose flags give these sizes too. The vision_config is not estimated.
std::string qwen35_35b_a3b() {
  return std::string(R"json({
  "architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
  "tie_word_embeddings": false,
  "text_config": {
    "attention_bias": false, "attention_dropout": 0.0, "attn_output_gate": true,
    "dtype": "bfloat16", "full_attention_interval": 4, "head_dim": 256, "hidden_act": "silu",
    "hidden_size": 2048, "layer_types": [)json") +
         layer_types(40) + R"json(],
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32",
    "max_position_embeddings": 262144, "model_type": "qwen3_5_moe_text",
    "moe_intermediate_size": 512, "mtp_num_hidden_layers": 1,
    "mtp_use_dedicated_embeddings": false, "num_attention_heads": 16, "num_experts": 256,
    "num_experts_per_tok": 8, "num_hidden_layers": 40, "num_key_value_heads": 2,
    "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06,
    "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": 512,
    "tie_word_embeddings": false, "vocab_size": 248320},
  "vision_config": {"deepstack_visual_indexes": [], "depth": 27, "hidden_size": 1152,
                    "out_hidden_size": 2048}
})json";
}

// Qwen/Qwen3.6-27B's config.json at revision 6a9e13bd as a public test kit embeds it verbatim
// ("fetched 8 October 2026"), its text_config's fields; slime's Qwen3.5-27B flags
// (scripts/models/qwen3.5-27B.sh) give the same attention and MLP sizes.
std::string qwen36_27b() {
  return std::string(R"json({
  "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
  "tie_word_embeddings": false,
  "text_config": {
    "attention_bias": false, "attention_dropout": 0.0, "attn_output_gate": true,
    "full_attention_interval": 4, "head_dim": 256, "hidden_act": "silu", "hidden_size": 5120,
    "intermediate_size": 17408, "layer_types": [)json") +
         layer_types(64) + R"json(],
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 48, "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32",
    "max_position_embeddings": 262144, "model_type": "qwen3_5_text", "mtp_num_hidden_layers": 1,
    "mtp_use_dedicated_embeddings": false, "num_attention_heads": 24, "num_hidden_layers": 64,
    "num_key_value_heads": 4, "output_gate_type": "swish", "partial_rotary_factor": 0.25,
    "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "vocab_size": 248320},
  "vision_config": {"deepstack_visual_indexes": [], "depth": 27, "hidden_size": 1152,
                    "out_hidden_size": 5120}
})json";
}

// Qwen/Qwen3.5-9B's text_config as a public test fixture prints "the real Qwen3.5-9B config"
// (its checkpoint index total_size 19,306,216,416 bytes, revision c2022362); radixark/miles's
// scripts/models/qwen3.5-9B.sh gives the same layers, widths and vocabulary.
std::string qwen35_9b() {
  return std::string(R"json({
  "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
  "text_config": {
    "attention_bias": false, "attn_output_gate": true, "full_attention_interval": 4,
    "head_dim": 256, "hidden_size": 4096, "intermediate_size": 12288, "layer_types": [)json") +
         layer_types(32) + R"json(],
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "num_attention_heads": 16,
    "num_key_value_heads": 4, "num_hidden_layers": 32, "rms_norm_eps": 1e-06,
    "vocab_size": 248320, "mamba_ssm_dtype": "float32", "mtp_num_hidden_layers": 1,
    "mtp_use_dedicated_embeddings": false, "tie_word_embeddings": false},
  "vision_config": {"depth": 27, "hidden_size": 1152, "out_hidden_size": 4096}
})json";
}

// The Qwen3.5 vision encoder (Qwen3_5VisionModel: a Conv3d patch embedding of 3 x 2 x 16 x 16
// with bias, 2304 learned positions, 27 blocks of 1152 with LayerNorms, a biased QKV and output
// projection and a biased GELU MLP of 4304, and the patch merger: a LayerNorm of 1152, 4608 x
// 4608 and 4608 x out_hidden_size, both biased), counted by hand; megamem does not estimate it.
std::int64_t vision_encoder(std::int64_t out_hidden) {
  const std::int64_t h = 1152, ffn = 4304, merged = 4 * h;
  const std::int64_t block =
      2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * ffn + ffn) + (ffn * h + h);
  const std::int64_t merger =
      2 * h + (merged * merged + merged) + (merged * out_hidden + out_hidden);
  return 27 * block + (3 * 2 * 16 * 16 * h + h) + 2304 * h + merger;
}

}  // namespace

// By hand: a Gated DeltaNet layer of hidden 2048 is 33,720,512 (in_proj 2048 x (2 x 2048 + 2 x
// 4096 + 2 x 32), conv1d 8192 x 4, A_log and dt_bias of 32, the output norm of 128, out_proj
// 4096 x 2048, the input norm), a gated attention layer 27,265,536 (q with its gate 2048 x 8192,
// k and v 2048 x 512 each, o 4096 x 2048, q/k norms of 256, the input norm), the MoE 808,980,480
// (256 + 1 experts of 3 x 2048 x 512, the shared gate, a 256 x 2048 router, the pre-MLP norm);
// two 248320 x 2048 vocabulary matrices and the final norm. The MTP layer is counted apart.
TEST_CASE("Qwen3.5-35B-A3B's config.json is the qwen3.5-35b-a3b preset") {
  const HfImport hf = import(qwen35_35b_a3b().c_str());
  CHECK(hf.model.linear_attention_freq == 4);
  CHECK(hf.model.linear_num_value_heads == 32);
  CHECK(hf.model.num_experts == 256);
  CHECK(hf.model.moe_router_topk == 8);
  CHECK(hf.model.mtp_num_layers == 1);
  check_matches_preset(hf.model, "qwen3.5-35b-a3b");
  const std::int64_t expected = 30 * std::int64_t{33'720'512} + 10 * std::int64_t{27'265'536} +
                                40 * std::int64_t{808'980'480} + 2 * std::int64_t{248320} * 2048 +
                                2048;
  CHECK(expected == 34'660'610'688);
  CHECK(total_params(hf.model) == expected);
  // Model card: 35B with the vision encoder (-0.97 % without it).
  CHECK(vision_encoder(2048) == 446'571'248);
  CHECK(std::abs(static_cast<double>(expected + vision_encoder(2048)) / 35e9 - 1.0) <= 0.005);
}

// By hand at hidden 5120: a Gated DeltaNet layer 115,881,184 (in_proj 5120 x (2 x 2048 + 2 x 6144
// + 2 x 48), conv1d 10240 x 4, A_log and dt_bias of 48, the output norm of 128, out_proj 6144 x
// 5120, the input norm), a gated attention layer 104,863,232 (q with its gate 5120 x 12288, k and
// v 5120 x 1024 each, o 6144 x 5120, q/k norms, the input norm), the MLP 267,392,000 (3 x 5120 x
// 17408 and the pre-MLP norm); the vocabulary matrices and the final norm.
TEST_CASE("Qwen3.6-27B's config.json is the qwen3.6-27b preset") {
  const HfImport hf = import(qwen36_27b().c_str());
  CHECK(hf.model.num_experts == 0);
  CHECK(hf.model.ffn_hidden_size == 17408);
  CHECK(hf.model.linear_num_value_heads == 48);
  check_matches_preset(hf.model, "qwen3.6-27b");
  const std::int64_t expected = 48 * std::int64_t{115'881'184} + 16 * std::int64_t{104'863'232} +
                                64 * std::int64_t{267'392'000} + 2 * std::int64_t{248320} * 5120 +
                                5120;
  CHECK(expected == 26'895'998'464);
  CHECK(total_params(hf.model) == expected);
  CHECK(vision_encoder(5120) == 460'730'096);
  // Model card: 27B (-0.39 % for the language model).
  check_near(expected, 27e9);
}

TEST_CASE("Megatron-Bridge's Qwen3.5-35B-A3B GB200 recipe fits at micro-batch 1, not at 4") {
  // recipes/qwen/gb200/qwen35.py: "MBS4 ... OOMs with learned routing. MBS1 was validated with
  // real RP2 data on GB200."
  Config c = testing::recipe_config_of("qwen3.5-35b-a3b-gb200-8");
  CHECK(c.parallel.expert_parallel == 8);
  CHECK(c.training.cuda_graph_impl == CudaGraphImpl::transformer_engine);
  CHECK_FALSE(c.training.moe_router_force_load_balancing);
  CHECK(testing::run(c).verdict.status == FitStatus::fits);
  c.training.micro_batch_size = 4;
  CHECK(testing::run(c).verdict.status == FitStatus::does_not_fit);
}

// By hand at hidden 4096: a Gated DeltaNet layer 67,408,064 (in_proj 4096 x (2 x 2048 + 2 x 4096
// + 2 x 32), conv1d 8192 x 4, A_log and dt_bias of 32, the output norm of 128, out_proj 4096 x
// 4096, the input norm), a gated attention layer 58,724,864 (q with its gate 4096 x 8192, k and
// v 4096 x 1024 each, o 4096 x 4096, q/k norms, the input norm), the MLP 150,999,040 (3 x 4096
// x 12288 and the pre-MLP norm); the vocabulary matrices and the final norm. The MTP layer:
// eh_proj 8192 x 4096, two norms, a gated attention layer, the MLP and its final norm.
TEST_CASE("Qwen3.5-9B's config.json is the qwen3.5-9b preset; the checkpoint's count adds up") {
  const HfImport hf = import(qwen35_9b().c_str());
  CHECK(hf.model.num_experts == 0);
  CHECK(hf.model.linear_num_value_heads == 32);
  CHECK(hf.model.mtp_num_layers == 1);
  check_matches_preset(hf.model, "qwen3.5-9b");
  const std::int64_t expected = 24 * std::int64_t{67'408'064} + 8 * std::int64_t{58'724'864} +
                                32 * std::int64_t{150'999'040} + 2 * std::int64_t{248320} * 4096 +
                                4096;
  CHECK(expected == 8'953'803'264);
  CHECK(total_params(hf.model) == expected);
  const std::int64_t mtp =
      2 * std::int64_t{4096} * 4096 + 2 * 4096 + 58'724'864 + 150'999'040 + 4096;
  CHECK(model_totals(hf.model).mtp_params == mtp);
  // The checkpoint (BF16 9,653,100,528 + FP32 3,840) is this, its MTP layer and the encoder.
  CHECK(vision_encoder(4096) == 456'010'480);
  CHECK(expected + mtp + vision_encoder(4096) == 9'653'104'368);
}

TEST_CASE("Megatron-Bridge's Qwen3.5-9B GB200 recipe: DP 8, MTP included, fits") {
  const Config c = testing::recipe_config_of("qwen3.5-9b-gb200-8");
  CHECK(c.model.mtp_num_layers == 1);
  CHECK(c.training.micro_batch_size == 2);
  CHECK(c.training.cuda_graph_impl == CudaGraphImpl::transformer_engine);
  const Estimate e = testing::run(c);
  CHECK(e.normalized.data_parallel == 8);
  CHECK(e.verdict.status == FitStatus::fits);
}
