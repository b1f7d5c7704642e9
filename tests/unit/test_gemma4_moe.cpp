// Gemma 4's MoE layer (#25): what Megatron-Bridge's Gemma4TransformerLayer, Gemma4MoELayer and
// Gemma4TopKRouter (gemma/modeling_gemma4.py) keep beside a Megatron-Core MoE layer
// (ModelConfig::gemma4_moe_layer, modules/gemma4_moe.cpp), the rules Bridge's provider imposes,
// and Gemma-4-26B-A4B imported as the preset gemma-4-26b-a4b with its count by hand.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/what_if.hpp"
#include "model_fixtures.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/google/gemma-4-26B-A4B-it/blob/main/config.json (gated): the gemma4
// wrapper with its text_config as public copies print it. A Go MLX port's
// TestParseTextConfig26B gives the sizes and all 30 layer_types; a Rust port's test writes the
// whole text_config cut to 12 layers (enable_moe_block, hidden_activation,
// hidden_size_per_layer_input 0, num_kv_shared_layers 0, max_position_embeddings 262144); a
// Swift test trimmed from mlx-community/gemma-4-26b-a4b-it-4bit (revision 0d77464e) agrees on
// every size. vision_config left out.
std::string gemma4_26b_config() {
  const std::string layer_types = gemma4_layer_types(30);
  return R"json({
  "architectures": ["Gemma4ForConditionalGeneration"],
  "model_type": "gemma4",
  "tie_word_embeddings": true,
  "text_config": {
    "attention_k_eq_v": true, "enable_moe_block": true, "final_logit_softcapping": 30.0,
    "global_head_dim": 512, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "hidden_size": 2816, "hidden_size_per_layer_input": 0, "intermediate_size": 2112,
    "max_position_embeddings": 262144, "model_type": "gemma4_text",
    "moe_intermediate_size": 704, "num_attention_heads": 16, "num_experts": 128,
    "num_global_key_value_heads": 2, "num_hidden_layers": 30, "num_key_value_heads": 8,
    "num_kv_shared_layers": 0, "rms_norm_eps": 1e-6,
    "rope_parameters": {
      "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                         "rope_type": "proportional"},
      "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}},
    "sliding_window": 1024, "tie_word_embeddings": true, "top_k_experts": 8,
    "use_double_wide_mlp": false, "vocab_size": 262144,
    "layer_types": [)json" +
         layer_types + R"json(]
  }
})json";
}

Expected<Estimate> estimated(const Config& c) { return estimate(c, {false, false}); }

double activation_bytes_per_microbatch(const Config& c) {
  const Expected<Estimate> e = estimated(c);
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  return static_cast<double>(e->ranks[0].activation_bytes_per_microbatch);
}

std::int64_t params(const Config& c) {
  const Expected<Estimate> e = estimated(c);
  REQUIRE(e.has_value());
  return e->totals.params;
}

// A tiny MoE GPT: 4 layers, h 512, 8 heads of 64 (MHA: 8 groups), 8 experts top-2 of 256 and a
// shared expert of 256, one micro-batch of 4 x 1024 = 4096 tokens in bf16.
Config tiny_moe(const std::string& extra) {
  return testing::tiny_gpt(
      "--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 256 "
      "--moe-shared-expert-intermediate-size 256 --swiglu " +
      extra);
}

}  // namespace

TEST_CASE("gemma4 MoE layer: its norms, router input and probability rescale, by hand") {
  // Per layer and token (N 4096, h 512, E 8, bf16, the router in bf16), beside what the
  // Megatron-Core layer keeps, less its pre-MLP norm's input and output (2 x 2 bytes per
  // element), which nothing keeps here: five weighted plain-PyTorch norms (the two pre-norms,
  // post_moe, post_shared_expert, post_ffn: 12 bytes per element, 8 per row), the router's
  // scaleless norm (8 and 8), the shared expert's own input, the router's normalised and
  // rescaled inputs (2 bytes each), two [N x E] probability tensors and two values per token
  // (2 bytes each); in attention V's norm: the fp32 copy of V (8 groups x 64) and the root.
  Config plain = tiny_moe("");
  Config gemma = plain;
  gemma.model.gemma4_moe_layer = true;
  const double n = 4096, h = 512, experts = 8;
  const double moe_block =
      n * h * (5 * 12 + 8 + 3 * 2 - 2 * 2) + n * 6 * 8 + n * 2 * experts * 2 + n * 2 * 2;
  const double v_norm = n * 8 * 64 * 4 + n * 8 * 4;
  CHECK(activation_bytes_per_microbatch(gemma) - activation_bytes_per_microbatch(plain) ==
        4 * (moe_block + v_norm));
  // Weights: pre_shared_expert_layernorm, post_moe_layernorm, post_shared_expert_layernorm,
  // post_ffn_layernorm (h each), the router's scale (h) and per_expert_scale (E) per layer.
  CHECK(params(gemma) - params(plain) == 4 * (5 * 512 + 8));
}

TEST_CASE("gemma4 MoE layer: moe recompute keeps the checkpoint's three inputs") {
  // forward_with_separate_inputs checkpoints the shared expert, router, experts and the two
  // post-norms; outside it stay the two pre-norms' intermediates, post_ffn_layernorm's, the
  // shared expert's input, and the checkpoint keeps expert_input and the residual stream too.
  // The Megatron-Core layer keeps its pre-MLP norm's input and output under moe recompute.
  Config plain = tiny_moe("--recompute-granularity selective --recompute-modules moe");
  Config gemma = plain;
  gemma.model.gemma4_moe_layer = true;
  const double n = 4096, h = 512;
  const double moe_block = n * h * (3 * 12 + 2 + 2 * 2 - 2 * 2) + n * 3 * 8;
  const double v_norm = n * 8 * 64 * 4 + n * 8 * 4;
  CHECK(activation_bytes_per_microbatch(gemma) - activation_bytes_per_microbatch(plain) ==
        4 * (moe_block + v_norm));
}

TEST_CASE("gemma4 MoE layer: hidden-size norms on the sequence shard under SP") {
  // TP 2 with SP: the MoE block's tensors cover 2048 of the 4096 tokens; V's norm all tokens
  // but 4 of the 8 groups.
  Config plain = tiny_moe("--tensor-model-parallel-size 2 --sequence-parallel");
  Config gemma = plain;
  gemma.model.gemma4_moe_layer = true;
  const double n = 2048, h = 512, experts = 8;
  const double moe_block = n * h * 70 + n * 48 + n * 4 * experts + n * 4;
  const double v_norm = 4096.0 * 4 * 64 * 4 + 4096.0 * 4 * 4;
  CHECK(activation_bytes_per_microbatch(gemma) - activation_bytes_per_microbatch(plain) ==
        4 * (moe_block + v_norm));
}

TEST_CASE("gemma4 MoE layer: what fails is refused, what Bridge's provider refuses warns") {
  // modeling_gemma4.py calls forward_with_separate_inputs, which only Gemma4MoELayer has, and
  // the pre-MLP norm's layernorm recompute finds no saved inputs: errors. gemma4_provider.py
  // _validate_gemma4_moe_orchestration refuses the rest: only that launcher's check, a warning.
  const auto refused = [](Config c) {
    c.model.gemma4_moe_layer = true;
    const Expected<Estimate> e = estimated(c);
    REQUIRE_FALSE(e.has_value());
    return e.error().field;
  };
  CHECK(refused(tiny_moe("--recompute-granularity selective --recompute-modules layernorm")) ==
        "recompute_modules");
  const auto warned = [](Config c) {
    c.model.gemma4_moe_layer = true;
    const Expected<Estimate> e = estimated(c);
    REQUIRE(e.has_value());
    return std::count_if(e->warnings.begin(), e->warnings.end(), [](const std::string& w) {
      return w.find("Gemma 4 MoE provider refuses") != std::string::npos;
    });
  };
  CHECK(warned(tiny_moe("--moe-shared-expert-overlap")) == 1);
  CHECK(warned(tiny_moe("--fine-grained-activation-offloading --offload-modules mlp_norm")) == 1);
  CHECK(warned(tiny_moe("")) == 0);
  CHECK(refused(tiny_moe("--moe-layer-freq 2")) == "gemma4_moe_layer");
  CHECK(refused(testing::tiny_gpt("")) == "gemma4_moe_layer");
  Config ok = tiny_moe("");
  ok.model.gemma4_moe_layer = true;
  for (const WhatIfOption& option : what_if_options(ok)) {
    INFO(option.label);
    CHECK(option.label.find("layernorm") == std::string::npos);
    CHECK(option.label.find("mlp_norm") == std::string::npos);
  }
}

TEST_CASE("gemma4: Gemma-4-26B-A4B imports as the preset, 25,247,559,680 parameters") {
  const HfImport hf = import(gemma4_26b_config().c_str());
  CHECK(hf.model_type == "gemma4_text");
  const ModelConfig& m = hf.model;
  CHECK(m.gemma4_moe_layer);
  CHECK_FALSE(m.torch_rms_norms);  // Transformer Engine's spec (gemma4_block_spec)
  CHECK_FALSE(m.local_layer_spec);
  CHECK(m.num_experts == 128);
  CHECK(m.moe_router_topk == 8);
  CHECK(m.moe_ffn_hidden_size == 704);
  CHECK(m.moe_shared_expert_intermediate_size == 2112);
  CHECK(m.kv_channels == 512);
  CHECK(m.num_query_groups == 2);
  CHECK(m.window_kv_channels == 256);
  CHECK(m.window_num_query_groups == 8);
  CHECK(m.window_size == 1023);
  CHECK(m.window_attn_skip_freq == 6);
  check_matches_preset(m, "gemma-4-26b-a4b");
  // Sliding layers (25): q 2816 x 4096, k and v 2816 x 2048, o 4096 x 2816, QK norms of 256.
  // Full layers (5): q 2816 x 8192, k and v 2816 x 1024 (v unused: attention_k_eq_v, kept by
  // linear_qkv), o 8192 x 2816, QK norms of 512. Each: the input and post-attention norms; 128
  // experts of 3 x 704 x 2816, the shared expert 3 x 2112 x 2816, the router 128 x 2816 with
  // its scale (2816) and per_expert_scale (128), and five norms of 2816 (pre-MLP,
  // pre-shared-expert, post-MoE, post-shared-expert, post-FFN). Plus the tied 262144 x 2816
  // embedding and the final norm.
  const std::int64_t h = 2816;
  const std::int64_t moe = 128 * 3 * 704 * h + 3 * 2112 * h + 128 * h + h + 128 + 5 * h;
  const std::int64_t sliding = 8192 * h + 4096 * h + 2 * 256 + 2 * h + moe;
  const std::int64_t full = 10240 * h + 8192 * h + 2 * 512 + 2 * h + moe;
  const std::int64_t total = total_params(m);
  CHECK(total == 25 * sliding + 5 * full + 262144 * h + h);
  CHECK(total == 25'247'559'680);
  CHECK(std::abs(static_cast<double>(total) / 25.2e9 - 1.0) <= 0.005);  // +0.19 %
  // The checkpoint has no v_proj on the full layers: 25,233,141,760 (+0.13 %).
  CHECK(total - 5 * 1024 * h == 25'233'141'760);
  // Active per token (8 of 128 experts): 3,836,948,480, the card's 3.8B (two digits, +0.97 %).
  CHECK(total - std::int64_t{30} * 120 * 3 * 704 * h == 3'836'948'480);
}

TEST_CASE("gemma4: the 26B-A4B's new tensors by hand at TP 2 with SP") {
  // Gemma-4-26B-A4B, TP 2 with SP, EP 8 on 64 GPUs, one micro-batch of 4096 tokens in bf16:
  // per layer and sequence-parallel token (2048 of them) 70 x 2816 + 48 + 4 x 128 + 4 = 197,684
  // bytes in the MoE block (404,856,832 per layer); V's norm keeps 4 groups x (256 x 4 + 4)
  // bytes per token on the 25 sliding layers and 1 x (512 x 4 + 4) on the 5 full ones.
  Config c = fixtures::preset_training("gemma-4-26b-a4b");
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 2;
  c.parallel.expert_parallel = 8;
  c.parallel.sequence_parallel = true;
  Config plain = c;
  plain.model.gemma4_moe_layer = false;
  const double moe_block = 2048.0 * 197'684;
  CHECK(moe_block == 404'856'832);
  const double v_sliding = 4096.0 * 4 * (256 * 4 + 4), v_full = 4096.0 * (512 * 4 + 4);
  CHECK(activation_bytes_per_microbatch(c) - activation_bytes_per_microbatch(plain) ==
        30 * moe_block + 25 * v_sliding + 5 * v_full);
}

TEST_CASE("gemma4: top_k_experts or num_experts_per_tok") {
  std::string text = gemma4_26b_config();
  const std::string from = R"("top_k_experts": 8)";
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), R"("num_experts_per_tok": 4)");
  CHECK(import(text.c_str()).model.moe_router_topk == 4);
}
