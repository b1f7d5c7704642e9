// The 2026 presets (#25): MiniMax-M2 (minimax_m2) and Gemma-3-27B (gemma3, its gemma3_text
// language model) import from their config.json as the presets, with the parameter counts
// derived by hand, and every new preset estimates on 8 to 1,024 GPUs; the parts the new presets
// brought (sandwich norms, windowed layers' own shape, the head-wise attention gate) on one tiny
// GPT.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>

#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/suggestions.hpp"
#include "memory/activations.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/MiniMaxAI/MiniMax-M2/blob/main/config.json without its
// quantization_config and with attn_type_list (62 x 1, full attention) left out, as a public
// Ascend msmodelslim guide prints the BF16 config.json of MiniMax-M2.5 (the same architecture;
// vLLM plugin fixtures repeat the same fields for MiniMax-M2 and M2.7).
const char* kMiniMaxM2 = R"json({
  "architectures": ["MiniMaxM2ForCausalLM"],
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 3072,
  "intermediate_size": 1536,
  "max_position_embeddings": 196608,
  "model_type": "minimax_m2",
  "mtp_transformer_layers": 1,
  "num_attention_heads": 48,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 62,
  "num_key_value_heads": 8,
  "num_local_experts": 256,
  "num_mtp_modules": 3,
  "qk_norm_type": "per_layer",
  "rms_norm_eps": 1e-06,
  "rope_theta": 5000000,
  "rotary_dim": 64,
  "scoring_func": "sigmoid",
  "shared_intermediate_size": 0,
  "tie_word_embeddings": false,
  "transformers_version": "4.46.1",
  "use_cache": true,
  "use_mtp": true,
  "use_qk_norm": true,
  "use_routing_bias": true,
  "vocab_size": 200064,
  "torch_dtype": "bfloat16"
})json";

// https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json (the vision_config cut
// to its sizes): its text_config lists only what differs from Gemma3TextConfig's defaults.
const char* kGemma3_27B = R"json({
  "architectures": ["Gemma3ForConditionalGeneration"],
  "boi_token_index": 255999,
  "eoi_token_index": 256000,
  "eos_token_id": [1, 106],
  "image_token_index": 262144,
  "initializer_range": 0.02,
  "mm_tokens_per_image": 256,
  "model_type": "gemma3",
  "text_config": {
    "head_dim": 128,
    "hidden_size": 5376,
    "intermediate_size": 21504,
    "model_type": "gemma3_text",
    "num_attention_heads": 32,
    "num_hidden_layers": 62,
    "num_key_value_heads": 16,
    "query_pre_attn_scalar": 168,
    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "sliding_window": 1024
  },
  "torch_dtype": "bfloat16",
  "transformers_version": "4.50.0.dev0",
  "vision_config": {
    "hidden_size": 1152,
    "image_size": 896,
    "intermediate_size": 4304,
    "model_type": "siglip_vision_model",
    "num_attention_heads": 16,
    "num_hidden_layers": 27,
    "patch_size": 14,
    "vision_use_head": false
  }
})json";

}  // namespace

TEST_CASE("minimax_m2: MiniMax-M2 imports as the preset, 228,689,320,448 parameters") {
  const HfImport hf = import(kMiniMaxM2);
  CHECK(hf.model_type == "minimax_m2");
  CHECK(hf.model.num_experts == 256);
  CHECK(hf.model.moe_router_topk == 8);
  CHECK(hf.model.moe_ffn_hidden_size == 1536);
  CHECK(hf.model.moe_shared_expert_intermediate_size == 0);
  CHECK(hf.model.moe_router_enable_expert_bias);
  CHECK(hf.model.qk_layernorm);
  CHECK(hf.model.mtp_num_layers == 0);  // the Bridge maps no MTP modules
  // The full-dimension QK norm and the unmapped MTP modules are named.
  REQUIRE(hf.notes.size() == 2);
  CHECK(hf.notes[0].find("full-dimension QK norm") != std::string::npos);
  CHECK(hf.notes[1].find("num_mtp_modules 3") != std::string::npos);
  check_matches_preset(hf.model, "minimax-m2");
  // Per layer: q 3072x6144, k and v 3072x1024, o 6144x3072, per-head q/k norms 2 x 128, two
  // 3072 norms; 256 experts of 3 x 3072x1536 and a 256x3072 router. Plus two 200064 x 3072
  // vocabulary matrices and the final norm.
  const std::int64_t attention = 3072 * 6144 + 2 * 3072 * 1024 + 6144 * 3072 + 2 * 128 + 2 * 3072;
  const std::int64_t moe = std::int64_t{256} * 3 * 3072 * 1536 + 256 * 3072;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 62 * (attention + moe) + 2 * std::int64_t{200064} * 3072 + 3072);
  CHECK(total == 228'689'320'448);
  check_near(total, 230e9);  // model card: 230B (-0.57%)
}

TEST_CASE("gemma3: Gemma-3-27B's text_config imports as the preset, 27.0B parameters") {
  const HfImport hf = import(kGemma3_27B);
  CHECK(hf.model_type == "gemma3_text");
  CHECK(hf.model.vocab_size == 262208);  // Gemma3TextConfig's default
  CHECK_FALSE(hf.model.untie_embeddings_and_output_weights);
  CHECK(hf.model.num_query_groups == 16);
  CHECK(hf.model.kv_channels == 128);
  CHECK(hf.model.window_size == 1023);  // TE window (sliding_window - 1, 0)
  CHECK(hf.model.window_attn_skip_freq == 6);
  CHECK(hf.model.activation == Activation::swiglu);
  CHECK(hf.model.qk_layernorm);
  CHECK(hf.model.post_sublayer_norms);
  REQUIRE(hf.notes.size() == 2);  // the gated GELU, and the wrapper's SigLIP vision_config
  CHECK(hf.notes[1].find("vision encoder (vision_config) is not estimated") != std::string::npos);
  check_matches_preset(hf.model, "gemma-3-27b");
  // Per layer: q 5376x4096, k and v 5376x2048, o 4096x5376, q/k norms 2 x 128, the input,
  // post-attention, pre-MLP and post-MLP norms 4 x 5376; gated MLP 3 x 5376x21504. Plus one
  // tied 262208 x 5376 embedding and the final norm.
  const std::int64_t layer = 5376 * 4096 + 2 * 5376 * 2048 + 4096 * 5376 + 2 * 128 + 4 * 5376 +
                             std::int64_t{3} * 5376 * 21504;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 62 * layer + std::int64_t{262208} * 5376 + 5376);
  CHECK(total == 27'009'346'304);
  check_near(total, 27e9);  // model card: 27B
}

TEST_CASE("gemma3: a layer_types list sets the interleave, a missing one sliding_window_pattern") {
  const std::string text = R"json({"model_type": "gemma3_text", "num_hidden_layers": 4,
      "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
      "intermediate_size": 128, "vocab_size": 1000, "sliding_window": 16,
      "sliding_window_pattern": 2})json";
  const HfImport by_pattern = import(text.c_str());
  CHECK(by_pattern.model.window_size == 15);
  CHECK(by_pattern.model.window_attn_skip_freq == 2);
  const std::string typed = text.substr(0, text.size() - 1) +
                            R"json(, "layer_types": ["sliding_attention", "sliding_attention",
      "sliding_attention", "sliding_attention"]})json";
  CHECK(import(typed.c_str()).model.window_attn_skip_freq == 0);
  CHECK(
      import_error(R"json({"model_type": "gemma3_text", "hidden_activation": "relu"})json").field ==
      "hidden_activation");
}

TEST_CASE("the 2026 presets estimate on 8 to 1,024 GPUs") {
  // Every preset added for issue 25 (this file, test_presets_2026_b.cpp, _c.cpp ... _h.cpp,
  // _j.cpp, _k.cpp, _l.cpp, _m.cpp, _n.cpp, test_gemma4_e.cpp,
  // test_gemma4_moe.cpp, Nemotron-3-Ultra in test_hybrid_mtp.cpp, GLM-5.2 in test_dsa.cpp).
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  const Config base = testing::recipe_config_of("llama-3-70b-h100-64");
  for (const char* id : {"minimax-m2",
                         "gemma-3-27b",
                         "olmoe-1b-7b",
                         "ernie-4.5-300b-a47b",
                         "mistral-7b-v0.3",
                         "exaone-4.0-32b",
                         "glm-4.7-flash",
                         "hy3-preview",
                         "ministral-3-14b",
                         "ling-mini-2.0",
                         "mimo-v2-flash",
                         "step-3.5-flash",
                         "gemma-2-27b",
                         "minimax-m3",
                         "deepseek-v4-flash",
                         "deepseek-v4-pro",
                         "kimi-k3",
                         "sarvam-30b",
                         "sarvam-105b",
                         "gemma-4-31b",
                         "falcon-h1-34b",
                         "llama-4-scout-17b-16e",
                         "llama-4-maverick-17b-128e",
                         "qwen3.5-35b-a3b",
                         "qwen3.5-9b",
                         "qwen3.6-27b",
                         "nemotron-3-ultra-550b-a55b",
                         "glm-5.2",
                         "gemma-4-e4b",
                         "gemma-4-e2b",
                         "gemma-4-26b-a4b"}) {
    const ModelPreset* preset = catalog->find_model(id);
    REQUIRE(preset != nullptr);
    for (const std::int64_t gpus : {8, 16, 64, 128, 256, 512, 1024}) {
      INFO(id << " on " << gpus << " GPUs");
      Config c = base;
      c.model = preset->model;
      c.parallel.world_size = gpus;
      const Expected<Suggestion> layout = valid_layout_for(c);
      REQUIRE(layout.has_value());
      const Expected<Estimate> e = estimate(layout->config, {false, false});
      INFO((e ? std::string() : e.error().field + ": " + e.error().message));
      REQUIRE(e.has_value());
      CHECK(e->totals.params == total_params(preset->model));
    }
  }
}

TEST_CASE(
    "post-sublayer norms: a norm weight each and their inputs saved, mlp recompute frees one") {
  // 4 dense layers, h 512, one micro-batch of 4 x 1024 tokens, bf16, TP 1: each norm saves its
  // input, 4096 x 512 x 2 bytes, and adds a LayerNorm's 512 weights and 512 biases (te_layers.py
  // TERowParallelLinearLayerNorm: a TENorm over linear_proj's and fc2's outputs).
  const auto per_microbatch = [](Config c) {
    const Expected<Estimate> e = estimate(c, {false, false});
    REQUIRE(e.has_value());
    return std::pair{static_cast<double>(e->ranks[0].activation_bytes_per_microbatch),
                     e->totals.params};
  };
  Config plain = testing::tiny_gpt("");
  Config sandwich = plain;
  sandwich.model.post_sublayer_norms = true;
  const auto [plain_bytes, plain_params] = per_microbatch(plain);
  const auto [sandwich_bytes, sandwich_params] = per_microbatch(sandwich);
  const double norm_input = 4096.0 * 512 * 2;
  CHECK(sandwich_params - plain_params == 4 * 2 * (512 + 512));
  CHECK(sandwich_bytes - plain_bytes == 4 * 2 * norm_input);
  for (Config* c : {&plain, &sandwich}) {
    c->training.recompute.granularity = RecomputeGranularity::selective;
    c->training.recompute.modules = {RecomputeModule::mlp};
  }
  CHECK(per_microbatch(sandwich).first - per_microbatch(plain).first == 4 * norm_input);
}

TEST_CASE("windowed layers with their own attention shape: weights, saved tensors and TP rules") {
  // 4 layers, h 512, 8 heads of 64 (MHA), a 128-token window on layers 0 and 2 (every 2nd
  // keeps full attention) whose attention has 16 heads in 4 groups (Step35DecoderLayer's
  // sliding_attention_setting). Per windowed layer: the output projection 1024 x 512 instead of
  // 512 x 512 (QKV stays 1536 x 512); one micro-batch of 4 x 1024 tokens saves 8 more heads'
  // fp32 softmax statistics and a 1024- instead of 512-wide attention output, in bf16.
  Config full = testing::tiny_gpt("--window-size 128,0 --window-attn-skip-freq 2");
  Config shaped = full;
  shaped.model.window_num_attention_heads = 16;
  shaped.model.window_num_query_groups = 4;
  const Expected<Estimate> a = estimate(full, {false, false});
  const Expected<Estimate> b = estimate(shaped, {false, false});
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(b->totals.params - a->totals.params == 2 * 512 * 512);
  const double extra = 4096.0 * 8 * 4 + 4096.0 * 512 * 2;
  CHECK(static_cast<double>(b->ranks[0].activation_bytes_per_microbatch) -
            static_cast<double>(a->ranks[0].activation_bytes_per_microbatch) ==
        2 * extra);
  // The windowed layers' heads split over TP as the full layers' do (transformer_config.py).
  shaped.model.window_num_attention_heads = 12;
  shaped.model.window_num_query_groups = 12;
  shaped.parallel.tensor_parallel = 8;
  const Expected<Estimate> split = estimate(shaped, {false, false});
  REQUIRE_FALSE(split.has_value());
  CHECK(split.error().field == "window_num_attention_heads");
}

TEST_CASE("head-wise attention gate: a row per head in linear_qkv, the gate's tensors saved") {
  // Megatron-LM dev attention.py: linear_qkv grows by num_attention_heads rows (8 x 512
  // weights per layer); core_attn_out * sigmoid(gate.float()).to(bf16) keeps, per token and
  // layer, the sigmoid's fp32 output (8 x 4 bytes), its bf16 cast (8 x 2) and the ungated
  // output (8 x 64 x 2) beside the product, which is linear_proj's input as the ungated output
  // was. One micro-batch holds 4096 tokens.
  Config plain = testing::tiny_gpt("--disable-bias-linear");
  Config gated = plain;
  gated.model.head_wise_attn_gate = true;
  const Expected<Estimate> a = estimate(plain, {false, false});
  const Expected<Estimate> b = estimate(gated, {false, false});
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(b->totals.params - a->totals.params == 4 * 8 * 512);
  CHECK(static_cast<double>(b->ranks[0].activation_bytes_per_microbatch) -
            static_cast<double>(a->ranks[0].activation_bytes_per_microbatch) ==
        4 * 4096.0 * (8 * 4 + 8 * 2 + 8 * 64 * 2));
}

TEST_CASE("head-wise attention gate: the fused output outlives its QKV copy in the forward") {
  // attention.py get_query_key_value_tensors: the gate is a view of linear_qkv's output, so the
  // whole output (8 x 64 x 3 QKV and 8 gate columns per token) stays beside the contiguous QKV
  // copy: 2 x 4096 x (2 x 1536 + 8) bytes against the output alone, 2 x 4096 x 1536. A narrow
  // MLP (128) keeps the attention's transient the layer's largest.
  Config c = testing::tiny_gpt("--disable-bias-linear --ffn-hidden-size 128");
  const auto transient = [](const Config& config) {
    return layer_activations(testing::normalized(config), LayerKind::dense).forward_transient_bytes;
  };
  CHECK(transient(c) == 2 * 4096.0 * 1536);
  c.model.head_wise_attn_gate = true;
  CHECK(transient(c) == 2 * 4096.0 * (2 * 1536 + 8));
}

TEST_CASE("output gate: the compiled product keeps the 16-bit gate and the ungated output") {
  // attention.py: --attention-output-gate adds a query's worth of rows to linear_qkv (8 x 64 x
  // 512 weights per layer); _apply_output_gate, torch.compile'd (megatron/core/jit.py), keeps
  // its two bf16 inputs per token and layer: the gate (8 x 64 x 2) and the ungated output
  // (8 x 64 x 2), the sigmoid recomputed in backward. The product is linear_proj's input as
  // the ungated output was. The gate's rows widen the fused output while it lives beside its
  // copies: 2 x 4096 x (1536 + 512) against 2 x 4096 x 1536.
  Config plain = testing::tiny_gpt("--disable-bias-linear --ffn-hidden-size 128");
  Config gated = plain;
  gated.model.attention_output_gate = true;
  const Expected<Estimate> a = estimate(plain, {false, false});
  const Expected<Estimate> b = estimate(gated, {false, false});
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(b->totals.params - a->totals.params == 4 * 512 * 512);
  CHECK(static_cast<double>(b->ranks[0].activation_bytes_per_microbatch) -
            static_cast<double>(a->ranks[0].activation_bytes_per_microbatch) ==
        4 * 4096.0 * (8 * 64 * 2 + 8 * 64 * 2));
  const auto transient = [](const Config& config) {
    return layer_activations(testing::normalized(config), LayerKind::dense).forward_transient_bytes;
  };
  CHECK(transient(gated) == 2 * 4096.0 * (1536 + 512));
}

TEST_CASE("head-wise attention gate: Megatron-LM's TP and FP8 rules, one gate at a time") {
  // transformer_config.py (dev): at least as many query groups as TP ranks; under FP8 each
  // rank's linear_qkv width a multiple of 16: (512 + 8 + 2 x 2 x 64) / 2 = 388 is not.
  Config gated =
      testing::tiny_gpt("--disable-bias-linear --group-query-attention --num-query-groups 2");
  gated.model.head_wise_attn_gate = true;
  gated.parallel.tensor_parallel = 4;
  const Expected<Estimate> wide = estimate(gated, {false, false});
  REQUIRE_FALSE(wide.has_value());
  CHECK(wide.error().field == "head_wise_attn_gate");
  gated.parallel.tensor_parallel = 2;
  REQUIRE(estimate(gated, {false, false}).has_value());
  gated.training.fp8_recipe = Fp8Recipe::tensorwise;
  const Expected<Estimate> fp8 = estimate(gated, {false, false});
  REQUIRE_FALSE(fp8.has_value());
  CHECK(fp8.error().field == "head_wise_attn_gate");
  gated.parallel.tensor_parallel = 1;  // 776 = 48 x 16 + 8: still not
  CHECK_FALSE(estimate(gated, {false, false}).has_value());
  gated.training.fp8_recipe = Fp8Recipe::none;
  gated.model.attention_output_gate = true;
  const Expected<Estimate> both = estimate(gated, {false, false});
  REQUIRE_FALSE(both.has_value());
  CHECK(both.error().field == "head_wise_attn_gate");
}
