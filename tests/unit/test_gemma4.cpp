// Gemma 4 (#25): the parts of Megatron-Bridge's Gemma 4 dense layer megamem prices. The
// plain-PyTorch RMSNorms (gemma/modeling_gemma4.py _gemma4_rms_norm) keep fp32 intermediates
// per element and per row, and V gets a scaleless norm (_v_norm).
#include <catch2/catch.hpp>

#include "estimate_helpers.hpp"
#include "megamem/estimate.hpp"

using namespace megamem;

namespace {

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

TEST_CASE("local layer spec: estimated as --transformer-impl local whatever the run says") {
  Config te = testing::tiny_gpt("");
  te.model.local_layer_spec = true;
  const Config local = testing::tiny_gpt("--transformer-impl local");
  CHECK(activation_bytes_per_microbatch(te) == activation_bytes_per_microbatch(local));
  CHECK(activation_bytes_per_microbatch(testing::tiny_gpt("")) !=
        activation_bytes_per_microbatch(local));
}
