// Presets of #25, part m: Llama-4 Scout and Maverick as Megatron-LM's ModelOpt entry point builds
// them (examples/post_training/modelopt/conf/meta-llama/Llama-4-*.sh, post_training/
// model_builder.py), imported from their config.json and from those flags, with the parameter
// counts derived by hand; and the two Llama-4 parts, the QK L2 norm and the routing
// probabilities applied on the experts' input.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/megatron_args.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// Llama-4-Maverick's config.json as NVIDIA/TensorRT-LLM's tests copy it
// (tests/unittest/_torch/modeling/test_modeling_llama_min_latency.py,
// LLAMA_4_MAVERICK_TWO_LAYER_CONFIG, with its two changes undone: num_hidden_layers back to the
// 48 its comment names and no no_rope_layer_interval), the vision_config left out.
const char* kMaverick = R"json({
  "architectures": ["Llama4ForConditionalGeneration"],
  "model_type": "llama4",
  "text_config": {
    "attention_bias": false, "attention_chunk_size": 8192, "attention_dropout": 0.0,
    "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120,
    "interleave_moe_layer_step": 2, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
    "max_position_embeddings": 1048576, "model_type": "llama4_text", "num_attention_heads": 40,
    "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8,
    "num_local_experts": 128, "rms_norm_eps": 1e-05, "rope_scaling": null,
    "rope_theta": 500000.0, "tie_word_embeddings": false, "use_qk_norm": false,
    "vocab_size": 202048
  },
  "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408}
})json";

// Scout differs from Maverick where Megatron-LM's Scout flags do: 16 experts in every layer
// and the QK norm (--num-experts 16 without --moe-layer-freq, --export-qk-l2-norm).
std::string scout_config() {
  std::string text = kMaverick;
  const auto replace = [&](const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("\"interleave_moe_layer_step\": 2", "\"interleave_moe_layer_step\": 1");
  replace("\"num_local_experts\": 128", "\"num_local_experts\": 16");
  replace("\"use_qk_norm\": false", "\"use_qk_norm\": true");
  return text;
}

// Per layer: input and pre-MLP norms (5,120 each), linear_qkv (40 + 2 x 8 heads of 128 over
// 5,120: 36,700,160) and linear_proj (26,214,400); an expert or the shared expert is a SwiGLU
// MLP of 8,192 (3 x 8,192 x 5,120 = 125,829,120), the router one row per expert; a dense layer's
// MLP is 3 x 16,384 x 5,120 = 251,658,240; two 202,048 x 5,120 vocabulary matrices and the
// final norm.
constexpr std::int64_t kAttentionAndNorms = 5'120 + 36'700'160 + 26'214'400 + 5'120;
constexpr std::int64_t kExpert = 125'829'120;
constexpr std::int64_t kVocabularyAndFinalNorm = 2 * 1'034'485'760 + 5'120;

// The vision encoder the cards' totals include and megamem does not estimate, counted from
// modeling_llama4.py with the vision_config above (Llama4VisionConfig: 34 layers of 1408,
// intermediate 5632, 336-pixel images in 14-pixel patches): the patch projection 588 x 1408,
// class embedding 1408, 577 x 1408 positions, two LayerNorms of 1408; per layer q, k, v, o
// 1408 x 1408 with biases, fc1 1408 x 5632 and fc2 5632 x 1408 with biases, two LayerNorms; the
// pixel-shuffle MLP 5632 x 4096 and 4096 x 4096, the projector 4096 x 5120, without biases.
constexpr std::int64_t kVisionLayer =
    4 * (1408 * 1408 + 1408) + (1408 * 5632 + 5632) + (5632 * 1408 + 1408) + 2 * 2 * 1408;
constexpr std::int64_t kVisionEncoder = 588 * 1408 + 1408 + 577 * 1408 + 2 * 2 * 1408 +
                                        34 * kVisionLayer + 5632 * 4096 + 4096 * 4096 + 4096 * 5120;

}  // namespace

TEST_CASE("llama4: Maverick imports as the preset, MoE on every second layer") {
  const HfImport hf = import(kMaverick);
  CHECK(hf.model.num_experts == 128);
  CHECK(hf.model.moe_router_topk == 1);
  CHECK(hf.model.moe_ffn_hidden_size == 8192);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 8192);
  CHECK(hf.model.ffn_hidden_size == 16384);
  CHECK(hf.model.moe_apply_probs_on_input);
  CHECK_FALSE(hf.model.qk_l2_norm);
  REQUIRE(hf.model.moe_layer_pattern.size() == 48);
  CHECK(hf.model.moe_layer_pattern[0] == 0);
  CHECK(hf.model.moe_layer_pattern[1] == 1);
  CHECK(hf.model.moe_layer_pattern[47] == 1);
  check_matches_preset(hf.model, "llama-4-maverick-17b-128e");
  const std::int64_t moe_mlp = std::int64_t{128} * 5'120 + 129 * kExpert;
  const std::int64_t expected = 48 * kAttentionAndNorms + 24 * moe_mlp +
                                std::int64_t{24} * 251'658'240 + kVocabularyAndFinalNorm;
  CHECK(expected == 400'711'848'960);
  CHECK(total_params(hf.model) == expected);
  // Model card: 400B with the vision encoder, which is not estimated.
  CHECK(kVisionEncoder == 871'932'416);
  CHECK(std::abs(static_cast<double>(expected + kVisionEncoder) / 400e9 - 1.0) <= 0.005);
  bool chunking_noted = false;
  for (const std::string& note : hf.notes) {
    chunking_noted = chunking_noted || note.find("attention_chunk_size") != std::string::npos;
  }
  CHECK(chunking_noted);
}

TEST_CASE("llama4: Scout imports as the preset, the QK L2 norm without weights") {
  const HfImport hf = import(scout_config().c_str());
  CHECK(hf.model.qk_l2_norm);
  CHECK(hf.model.moe_layer_pattern.empty());  // every layer MoE
  check_matches_preset(hf.model, "llama-4-scout-17b-16e");
  const std::int64_t expected =
      48 * (kAttentionAndNorms + 16 * 5'120 + 17 * kExpert) + kVocabularyAndFinalNorm;
  CHECK(expected == 107'769'861'120);
  CHECK(total_params(hf.model) == expected);
  // Model card: 109B with the vision encoder (108,641,793,536: -0.33 %).
  CHECK(std::abs(static_cast<double>(expected + kVisionEncoder) / 109e9 - 1.0) <= 0.005);
  // A bare llama4_text config is the same language model.
  const std::string text = scout_config();
  const std::size_t begin = text.find("{", text.find("\"text_config\""));
  const std::size_t end = text.find("}", begin);
  CHECK(total_params(import(text.substr(begin, end - begin + 1).c_str()).model) == expected);
  CHECK(import_error(R"json({"model_type": "llama4_text", "num_hidden_layers": 4,
      "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 32, "vocab_size": 100,
      "num_local_experts": 4, "num_experts_per_tok": 1, "moe_layers": [7]})json")
            .field == "moe_layers");
}

TEST_CASE("llama4: Megatron-LM's Scout flags are the preset's model") {
  // examples/post_training/modelopt/conf/meta-llama/Llama-4-Scout-17B-16E-Instruct.sh (its
  // memory-relevant flags): --qk-layernorm with --export-qk-l2-norm builds L2Norm.
  const Expected<MegatronArgs> args = parse_megatron_args(
      "--bf16 --disable-bias-linear --untie-embeddings-and-output-weights "
      "--position-embedding-type rope --normalization RMSNorm --swiglu --num-layers 48 "
      "--hidden-size 5120 --ffn-hidden-size 16384 --num-attention-heads 40 "
      "--group-query-attention --num-query-groups 8 --qk-layernorm --num-experts 16 "
      "--moe-ffn-hidden-size 8192 --moe-router-score-function sigmoid --moe-router-topk 1 "
      "--moe-shared-expert-intermediate-size 8192 --moe-token-dispatcher-type alltoall "
      "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --sequence-parallel "
      "--tensor-model-parallel-size 4 --expert-model-parallel-size 8 "
      "--export-qk-l2-norm --export-moe-apply-probs-on-input --padded-vocab-size 202048",
      64);
  INFO((args ? std::string() : args.error().field + ": " + args.error().message));
  REQUIRE(args.has_value());
  CHECK(args->config.model.qk_l2_norm);
  CHECK(args->config.model.moe_apply_probs_on_input);
  CHECK(total_params(args->config.model) == 107'769'861'120);
}

TEST_CASE("QK L2 norm: no weights; its compiled backward keeps views of linear_qkv's output") {
  const Estimate plain = testing::run(testing::tiny_gpt(""));
  const Estimate layernorm = testing::run(testing::tiny_gpt("--qk-layernorm"));
  const Estimate l2 = testing::run(testing::tiny_gpt("--qk-l2-norm"));
  const Estimate both = testing::run(testing::tiny_gpt("--qk-layernorm --qk-l2-norm"));
  CHECK(l2.totals.params == plain.totals.params);
  CHECK(both.totals.params == plain.totals.params);
  // TE's QK layernorm keeps copies of Q and K, 8 heads of 64 each on 4 x 1024 tokens, bf16, in
  // each of 4 layers. L2Norm (torch_norm.py, jit_fuser) keeps its inputs, the MHA's Q and K
  // slices, which hold linear_qkv's whole output (Q, K and V) alive.
  CHECK(layernorm.ranks[0].activation_bytes_per_microbatch -
            plain.ranks[0].activation_bytes_per_microbatch ==
        4 * 4096 * (8 + 8) * 64 * 2);
  CHECK(l2.ranks[0].activation_bytes_per_microbatch -
            plain.ranks[0].activation_bytes_per_microbatch ==
        4 * 4096 * (8 + 8 + 8) * 64 * 2);
  const Error mla = testing::normalize_error(
      testing::tiny_gpt("--qk-l2-norm --multi-latent-attention --kv-lora-rank 64"));
  CHECK(mla.field == "qk_l2_norm");
}

TEST_CASE("routing probabilities on the input: the product keeps the dispatched tokens") {
  const std::string moe = "--swiglu --num-experts 4 --moe-router-topk 1 ";
  const Estimate output = testing::run(testing::tiny_gpt(moe));
  const Estimate input = testing::run(testing::tiny_gpt(moe + "--moe-apply-probs-on-input"));
  // 4 MoE layers, 4 x 1024 tokens each routed once, h 512, bf16.
  CHECK(input.ranks[0].activation_bytes_per_microbatch -
            output.ranks[0].activation_bytes_per_microbatch ==
        4 * 4096 * 512 * 2);
  CHECK(input.totals.params == output.totals.params);
  const Error top2 = testing::normalize_error(
      testing::tiny_gpt("--swiglu --num-experts 4 --moe-router-topk 2 --moe-apply-probs-on-input"));
  CHECK(top2.field == "moe_apply_probs_on_input");
}
