// Gemma 4's MoE layer (#25): what Megatron-Bridge's Gemma4TransformerLayer, Gemma4MoELayer and
// Gemma4TopKRouter (gemma/modeling_gemma4.py) keep beside a Megatron-Core MoE layer
// (ModelConfig::gemma4_moe_layer, modules/gemma4_moe.cpp), and the rules Bridge's provider
// imposes.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "estimate_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/what_if.hpp"

using namespace megamem;

namespace {

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

TEST_CASE("gemma4 MoE layer: what Bridge's provider refuses is refused") {
  // gemma4_provider.py _validate_gemma4_moe_orchestration; modeling_gemma4.py calls
  // forward_with_separate_inputs, which only Gemma4MoELayer has.
  const auto refused = [](Config c) {
    c.model.gemma4_moe_layer = true;
    const Expected<Estimate> e = estimated(c);
    REQUIRE_FALSE(e.has_value());
    return e.error().field;
  };
  CHECK(refused(tiny_moe("--recompute-granularity selective --recompute-modules layernorm")) ==
        "recompute_modules");
  CHECK(refused(tiny_moe("--moe-shared-expert-overlap")) == "moe_shared_expert_overlap");
  CHECK(refused(tiny_moe("--fine-grained-activation-offloading --offload-modules mlp_norm")) ==
        "offload_modules");
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
