// Gemma 4 (#25): the parts of Megatron-Bridge's Gemma 4 dense layer megamem prices. The
// plain-PyTorch RMSNorms (gemma/modeling_gemma4.py _gemma4_rms_norm) keep fp32 intermediates
// per element and per row, and V gets a scaleless norm (_v_norm); the layer is the local spec.
// Gemma-4-31B (gemma4 wrapping gemma4_text) imports as the preset gemma-4-31b (E2B and E4B:
// test_gemma4_e.cpp; the MoE layer and 26B-A4B: test_gemma4_moe.cpp).
#include <catch2/catch.hpp>
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

// https://huggingface.co/google/gemma-4-31B-it/blob/main/config.json: the gemma4 wrapper with
// its text_config as public copies print it (a Go MLX port's TestParseTextConfig31B gives the
// sizes and all 60 layer_types; a Rust port's test writes the 31B's whole text_config with
// num_hidden_layers cut to 1); vision_config left out.
std::string gemma4_31b_config() {
  const std::string layer_types = gemma4_layer_types(60);
  return R"json({
  "architectures": ["Gemma4ForConditionalGeneration"],
  "model_type": "gemma4",
  "tie_word_embeddings": true,
  "text_config": {
    "attention_bias": false, "attention_dropout": 0.0, "attention_k_eq_v": true,
    "dtype": "bfloat16", "enable_moe_block": false, "final_logit_softcapping": 30.0,
    "global_head_dim": 512, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "hidden_size": 5376, "hidden_size_per_layer_input": 0, "intermediate_size": 21504,
    "max_position_embeddings": 262144, "model_type": "gemma4_text",
    "num_attention_heads": 32, "num_global_key_value_heads": 4, "num_hidden_layers": 60,
    "num_key_value_heads": 16, "num_kv_shared_layers": 0, "rms_norm_eps": 1e-6,
    "rope_parameters": {
      "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                         "rope_type": "proportional"},
      "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}},
    "sliding_window": 1024, "tie_word_embeddings": true, "use_cache": true,
    "use_double_wide_mlp": false, "vocab_size": 262144, "vocab_size_per_layer_input": 262144,
    "layer_types": [)json" +
         layer_types + R"json(]
  }
})json";
}

double activation_bytes_per_microbatch(const Config& c) {
  const Expected<Estimate> e = estimate(c, {false, false});
  REQUIRE(e.has_value());
  return static_cast<double>(e->ranks[0].activation_bytes_per_microbatch);
}

std::int64_t params(const Config& c) {
  const Expected<Estimate> e = estimate(c, {false, false});
  REQUIRE(e.has_value());
  return e->totals.params;
}

}  // namespace

TEST_CASE("plain-PyTorch RMSNorms keep two fp32 copies of the input and the fp32 product") {
  // 4 layers, h 512, 8 heads of 64 (MHA: 8 groups), one micro-batch of 4 x 1024 = 4096 tokens in
  // bf16, TP 1. A weighted norm keeps x.float() twice and the normed fp32 product (12 bytes per
  // element, of which megamem's norm entry already counts the bf16 input: +10) and per row the
  // fp32 mean + eps and its -0.5 power (+8). Per layer: the input and pre-MLP norms over
  // 4096 x 512, and V's scaleless norm over 4096 x 8 groups of 64 (one fp32 copy, +4 per
  // element, +8 per row). No weights are added.
  Config plain = testing::tiny_gpt("");
  Config torch_norms = plain;
  torch_norms.model.torch_rms_norms = true;
  const double hidden_norm = 4096.0 * 512 * 10 + 4096.0 * 8;
  const double v_norm = 4096.0 * 8 * 64 * 4 + 4096.0 * 8 * 8;
  CHECK(params(torch_norms) == params(plain));
  CHECK(activation_bytes_per_microbatch(torch_norms) - activation_bytes_per_microbatch(plain) ==
        4 * (2 * hidden_norm + v_norm));
  // With QK norm (per head: 16 rows of 64 per token) and the post-sublayer norms (two more
  // hidden-size norms), each is plain PyTorch too.
  for (Config* c : {&plain, &torch_norms}) {
    c->model.qk_layernorm = true;
    c->model.post_sublayer_norms = true;
  }
  const double qk_norm = 4096.0 * 16 * 64 * 10 + 4096.0 * 16 * 8;
  CHECK(activation_bytes_per_microbatch(torch_norms) - activation_bytes_per_microbatch(plain) ==
        4 * (4 * hidden_norm + v_norm + qk_norm));
}

TEST_CASE("plain-PyTorch RMSNorms on the sequence shard under sequence parallelism") {
  // TP 2 with SP: the hidden-size norms see 2048 of the 4096 tokens; V's norm sees all tokens
  // but 4 of the 8 groups.
  Config plain = testing::tiny_gpt("--tensor-model-parallel-size 2 --sequence-parallel");
  Config torch_norms = plain;
  torch_norms.model.torch_rms_norms = true;
  const double hidden_norm = 2048.0 * 512 * 10 + 2048.0 * 8;
  const double v_norm = 4096.0 * 4 * 64 * 4 + 4096.0 * 4 * 8;
  CHECK(activation_bytes_per_microbatch(torch_norms) - activation_bytes_per_microbatch(plain) ==
        4 * (2 * hidden_norm + v_norm));
}

TEST_CASE("gemma4: Gemma-4-31B imports as the preset, 30,807,445,760 parameters") {
  const HfImport hf = import(gemma4_31b_config().c_str());
  CHECK(hf.model_type == "gemma4_text");
  const ModelConfig& m = hf.model;
  CHECK(m.kv_channels == 512);  // global_head_dim on the full-attention layers
  CHECK(m.num_query_groups == 4);
  CHECK(m.window_kv_channels == 256);
  CHECK(m.window_num_query_groups == 16);
  CHECK(m.window_size == 1023);  // Bridge: (sliding_window - 1, 0)
  CHECK(m.window_attn_skip_freq == 6);
  CHECK(m.final_logit_softcapping == 30.0);
  CHECK(m.torch_rms_norms);
  CHECK(m.local_layer_spec);
  CHECK(m.fast_gelu);
  CHECK(m.qk_layernorm);
  CHECK(m.post_sublayer_norms);
  check_matches_preset(m, "gemma-4-31b");
  // Sliding layers (50): q 5376 x 8192, k and v 5376 x 4096, o 8192 x 5376, QK norms of 256.
  // Full layers (10): q 5376 x 16384, k and v 5376 x 2048 (v unused: attention_k_eq_v, but
  // Megatron's linear_qkv keeps the rows), o 16384 x 5376, QK norms of 512. Each: four norms
  // of 5376 and the gated MLP 3 x 5376 x 21504. Plus the tied 262144 x 5376 embedding and the
  // final norm.
  const std::int64_t common = 4 * 5376 + std::int64_t{3} * 5376 * 21504;
  const std::int64_t sliding = std::int64_t{16384} * 5376 + 8192 * 5376 + 2 * 256 + common;
  const std::int64_t full = std::int64_t{20480} * 5376 + 16384 * 5376 + 2 * 512 + common;
  const std::int64_t total = total_params(m);
  CHECK(total == 50 * sliding + 10 * full + std::int64_t{262144} * 5376 + 5376);
  CHECK(total == 30'807'445'760);
  // The checkpoint has no v_proj on the full layers: 30,697,345,280, the card's 30.7B.
  const std::int64_t checkpoint = total - std::int64_t{10} * 5376 * 2048;
  CHECK(checkpoint == 30'697'345'280);
  CHECK(std::abs(static_cast<double>(total) / 30.7e9 - 1.0) <= 0.005);
}

TEST_CASE("local layer spec: estimated as --transformer-impl local whatever the run says") {
  Config te = testing::tiny_gpt("");
  te.model.local_layer_spec = true;
  const Config local = testing::tiny_gpt("--transformer-impl local");
  CHECK(activation_bytes_per_microbatch(te) == activation_bytes_per_microbatch(local));
  CHECK(activation_bytes_per_microbatch(testing::tiny_gpt("")) !=
        activation_bytes_per_microbatch(local));
}

namespace {

Expected<Estimate> estimated(const Config& c) { return estimate(c, {false, false}); }

bool warns(const Config& c, const std::string& words) {
  const Expected<Estimate> e = estimated(c);
  REQUIRE(e.has_value());
  for (const std::string& warning : e->warnings) {
    if (warning.find(words) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

// mlp.py glu() without bias-activation fusion: activation_func(x_glu) * (x_linear + 0.0). The
// activation keeps its input (a view of fc1's output, already counted); its output and
// x_linear + 0.0 are new bf16 tensors the product saves. 4 layers x 4096 tokens x FFN 2048.
TEST_CASE("unfused GLU keeps the gate activation's output and the up half + offset") {
  const Config fused = testing::tiny_gpt("--swiglu --ffn-hidden-size 2048");
  const Config unfused =
      testing::tiny_gpt("--swiglu --ffn-hidden-size 2048 --no-bias-swiglu-fusion");
  CHECK(activation_bytes_per_microbatch(unfused) - activation_bytes_per_microbatch(fused) ==
        4 * 2 * 4096.0 * 2048 * 2);
  // A plain GELU keeps only its input, fc1's output, fused or not.
  CHECK(activation_bytes_per_microbatch(testing::tiny_gpt("--no-bias-gelu-fusion")) ==
        activation_bytes_per_microbatch(testing::tiny_gpt("")));
}

// experts.py bias_act_func without the fused weighted SwiGLU: glu() as above, then the product
// with the permuted probabilities keeps glu()'s output. Against the fused kernel, which keeps
// fc1's output and the probabilities: glu()'s output, the gate activation's output and the up
// half + 0.0, each top-2 x 4096 routed tokens x expert FFN 256 in bf16, in 4 layers.
TEST_CASE("unfused GLU experts keep glu()'s output and both of its product's inputs") {
  const std::string moe =
      "--swiglu --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 256 --moe-grouped-gemm";
  const Config fused = testing::tiny_gpt(moe);
  const Config unfused = testing::tiny_gpt(moe + " --no-bias-swiglu-fusion");
  CHECK(activation_bytes_per_microbatch(unfused) - activation_bytes_per_microbatch(fused) ==
        4 * 3 * 2 * 4096.0 * 256 * 2);
}

TEST_CASE("fast_gelu: Megatron does not fuse it, so the GLU runs unfused") {
  Config gemma = testing::tiny_gpt("--swiglu --ffn-hidden-size 2048");
  gemma.model.fast_gelu = true;
  const Config unfused =
      testing::tiny_gpt("--swiglu --ffn-hidden-size 2048 --no-bias-swiglu-fusion");
  CHECK(activation_bytes_per_microbatch(gemma) == activation_bytes_per_microbatch(unfused));
  CHECK(warns(gemma, "fast_gelu"));
  CHECK_FALSE(warns(unfused, "fast_gelu"));
}

// Gemma4DenseTransformerLayer._forward_mlp calls the MLP outside TransformerLayer's
// checkpoint (mlp: nothing saved) and starts the pre-MLP norm's CheckpointWithoutOutput
// without finishing it (layernorm: the first backward fails).
TEST_CASE("gemma4 layer: selective mlp recompute saves nothing, layernorm is refused") {
  Config none = testing::tiny_gpt("--swiglu");
  none.model.local_layer_spec = true;
  Config mlp =
      testing::tiny_gpt("--swiglu --recompute-granularity selective --recompute-modules mlp");
  mlp.model.local_layer_spec = true;
  CHECK(activation_bytes_per_microbatch(mlp) == activation_bytes_per_microbatch(none));
  CHECK(warns(mlp, "'mlp' has no effect"));
  Config layernorm = testing::tiny_gpt(
      "--swiglu --recompute-granularity selective --recompute-modules core_attn layernorm");
  layernorm.model.local_layer_spec = true;
  const Expected<Estimate> refused = estimated(layernorm);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().field == "recompute_modules");
  for (const WhatIfOption& option : what_if_options(none)) {
    INFO(option.label);
    CHECK(option.label.find("mlp") == std::string::npos);
    CHECK(option.label.find("layernorm") == std::string::npos);
  }
}

TEST_CASE("gemma4 layer: pipeline parallelism above 1 is a warning (Bridge builds PP 1)") {
  Config pp2 = testing::tiny_gpt("--pipeline-model-parallel-size 2");
  pp2.model.local_layer_spec = true;
  CHECK(warns(pp2, "pipeline parallelism 1 only"));
  Config pp1 = testing::tiny_gpt("");
  pp1.model.local_layer_spec = true;
  CHECK_FALSE(warns(pp1, "pipeline parallelism 1 only"));
}

// Gemma-4-31B on 64 H100s at TP4 with SP off (mbs 1, seq 4096): the unfused GLU adds two bf16
// tensors of 4096 tokens x 21504 / 4 per layer, 88,080,384 bytes, over 60 layers.
TEST_CASE("gemma4: the 31B's unfused GELU-tanh GLU by hand") {
  Config c = fixtures::preset_training("gemma-4-31b");
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 4;
  Config fused = c;
  fused.model.fast_gelu = false;
  CHECK(activation_bytes_per_microbatch(c) - activation_bytes_per_microbatch(fused) ==
        60 * 2 * 4096.0 * (21504 / 4) * 2);
}
