// Presets of #25, part g: Gemma-2-27B (gemma2, Gemma2ForCausalLM) imports from its config.json
// as the preset, and the two soft-caps Megatron-Bridge's Gemma 2 adds are priced: the output
// layer's logit cap (tanh's kept output) and the attention score cap (FlexAttention's own
// output beside linear_proj's copy, or the capped scores when the unfused parent runs).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "hf_import_helpers.hpp"
#include "megamem/megatron_args.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/google/gemma-2-27b/blob/main/config.json (gated; the same fields as
// public copies of it, e.g. Megatron-Bridge's Gemma 2 bridge unit-test fixture).
const char* kGemma2_27B = R"json({
  "architectures": ["Gemma2ForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "attn_logit_softcapping": 50.0,
  "bos_token_id": 2,
  "cache_implementation": "hybrid",
  "eos_token_id": 1,
  "final_logit_softcapping": 30.0,
  "head_dim": 128,
  "hidden_act": "gelu_pytorch_tanh",
  "hidden_activation": "gelu_pytorch_tanh",
  "hidden_size": 4608,
  "initializer_range": 0.02,
  "intermediate_size": 36864,
  "max_position_embeddings": 8192,
  "model_type": "gemma2",
  "num_attention_heads": 32,
  "num_hidden_layers": 46,
  "num_key_value_heads": 16,
  "pad_token_id": 0,
  "query_pre_attn_scalar": 144,
  "rms_norm_eps": 1e-06,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "sliding_window_size": 4096,
  "torch_dtype": "float32",
  "transformers_version": "4.42.0.dev0",
  "use_cache": true,
  "vocab_size": 256000
})json";

// 2 layers, h 1024, 8 heads of 128 in 2 groups, TP 1, PP 1, one micro-batch of 2 x 512
// tokens in bf16, vocabulary 32000 (padded: 32000).
const char* kSmallFlags =
    "--num-layers 2 --hidden-size 1024 --num-attention-heads 8 --group-query-attention "
    "--num-query-groups 2 --kv-channels 128 --seq-length 512 --max-position-embeddings 512 "
    "--micro-batch-size 2 --global-batch-size 16 --vocab-size 32000 --bf16 "
    "--disable-bias-linear --swiglu --normalization RMSNorm --position-embedding-type rope "
    "--attention-dropout 0.0 --hidden-dropout 0.0";

Config small_config() {
  const Expected<MegatronArgs> parsed = parse_megatron_args(kSmallFlags, 8);
  REQUIRE(parsed.has_value());
  return parsed->config;
}

double saved_per_microbatch(const Config& config) {
  const Expected<Estimate> e = estimate(config, {false, false});
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  return static_cast<double>(e->ranks[0].activation_bytes_per_microbatch);
}

}  // namespace

TEST_CASE("gemma2: Gemma-2-27B imports as the preset, 27,227,128,320 parameters") {
  const HfImport hf = import(kGemma2_27B);
  CHECK(hf.model_type == "gemma2");
  CHECK(hf.model.final_logit_softcapping == 30.0);
  CHECK(hf.model.attn_logit_softcapping == 50.0);
  CHECK(hf.model.window_size == 4095);  // Bridge: (sliding_window - 1, 0)
  CHECK(hf.model.window_attn_skip_freq == 2);
  CHECK_FALSE(hf.model.qk_layernorm);
  CHECK(hf.model.post_sublayer_norms);
  CHECK(hf.model.fast_gelu);  // gemma2_bridge.py: activation_func = fast_gelu, left unfused
  CHECK_FALSE(hf.model.untie_embeddings_and_output_weights);
  check_matches_preset(hf.model, "gemma-2-27b");
  // Per layer: q 4608x4096, k and v 4608x2048, o 4096x4608, four norms of 4608 (input,
  // post-attention, pre-MLP, post-MLP); gated MLP 3 x 4608x36864. Plus one tied
  // 256000 x 4608 embedding and the final norm.
  const std::int64_t layer =
      4608 * 4096 + 2 * 4608 * 2048 + 4096 * 4608 + 4 * 4608 + std::int64_t{3} * 4608 * 36864;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 46 * layer + std::int64_t{256000} * 4608 + 4608);
  CHECK(total == 27'227'128'320);
  // The Gemma 2 report's Table 2 counts 26,047,480,320 non-embedding parameters, as here, and
  // its embedding with the 256,128-entry Gemini vocabulary: 27,227,718,144 (-0.002%).
  CHECK(total - std::int64_t{256000} * 4608 == 26'047'480'320);
  check_near(total, 27'227'718'144.0);
}

TEST_CASE("gemma2: defaults, layer_types, and negative soft-caps") {
  const HfImport bare = import(R"json({"model_type": "gemma2"})json");
  CHECK(bare.model.vocab_size == 256000);  // configuration_gemma2.py defaults
  CHECK(bare.model.final_logit_softcapping == 30.0);
  CHECK(bare.model.attn_logit_softcapping == 50.0);
  CHECK(bare.model.window_size == 4095);
  const HfImport typed = import(R"json({"model_type": "gemma2", "num_hidden_layers": 2,
      "layer_types": ["sliding_attention", "sliding_attention"]})json");
  CHECK(typed.model.window_attn_skip_freq == 0);
  CHECK(import_error(R"json({"model_type": "gemma2", "final_logit_softcapping": -1})json").field ==
        "final_logit_softcapping");
}

TEST_CASE("logit soft-cap: the last stage keeps tanh's output, tokens x vocabulary / TP") {
  Config capped = small_config();
  capped.model.final_logit_softcapping = 30.0;
  // bf16 tanh output of 2 x 512 tokens x 32000 logits.
  CHECK(saved_per_microbatch(capped) - saved_per_microbatch(small_config()) ==
        2.0 * (2 * 512) * 32000);
  // Under TP 2 the logits are split: half as much per rank.
  Config capped_tp = capped;
  Config plain_tp = small_config();
  capped_tp.parallel.tensor_parallel = plain_tp.parallel.tensor_parallel = 2;
  CHECK(saved_per_microbatch(capped_tp) - saved_per_microbatch(plain_tp) ==
        2.0 * (2 * 512) * 32000 / 2);
}

TEST_CASE("attention soft-cap: FlexAttention's output, or the unfused parent's capped scores") {
  Config flex = small_config();
  flex.model.attn_logit_softcapping = 50.0;
  // Per layer, bf16: FlexAttention's own output of 2 x 512 tokens x 8 heads x 128.
  const double tokens = 2.0 * 512;
  CHECK(saved_per_microbatch(flex) - saved_per_microbatch(small_config()) ==
        2 * (2 * tokens * 8 * 128));
  // With attention dropout the unfused parent runs whatever the backend: per layer the
  // capped scores (b x heads x s x s, bf16) beside what unfused attention keeps anyway.
  Config dropout = flex;
  dropout.model.attention_dropout = 0.1;
  Config unfused = small_config();
  unfused.model.attention_dropout = 0.1;
  unfused.training.attention_backend = AttentionBackend::unfused;
  CHECK(saved_per_microbatch(dropout) - saved_per_microbatch(unfused) ==
        2 * (2 * 2.0 * 8 * 512 * 512));
  // Gemma2DotProductAttention raises for context parallelism.
  flex.parallel.context_parallel = 2;
  const Expected<Estimate> cp = estimate(flex, {false, false});
  REQUIRE_FALSE(cp.has_value());
  CHECK(cp.error().field == "attn_logit_softcapping");
}
