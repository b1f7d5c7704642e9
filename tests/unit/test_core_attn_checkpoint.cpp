// What --recompute-modules core_attn keeps of linear_qkv's output (attention.py
// _checkpointed_attention_forward, tensor_parallel/random.py CheckpointFunction), and what the
// Q/K norms keep of it (TE's norm modules before 1.13 save views, te.ops norms copies).
// The tiny GPT: 8 heads of 64, 4 x 1024 tokens per micro-batch, bf16, TP 1, TE flash attention.
#include <catch2/catch.hpp>

#include "estimate_helpers.hpp"
#include "memory/activations.hpp"

using namespace megamem;
using testing::normalized;

namespace {

constexpr double kTokens = 4 * 1024;

double kept(const Config& c) { return layer_activations(normalized(c), false).kept_bytes; }

Config core_attn_recompute(Config c) {
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::core_attn};
  return c;
}

// What core_attn recompute changes in one layer: its checkpoint's new Q and K and linear_qkv's
// output in place of TE's contiguous Q, K and V, and no fp32 log-sum-exp (8 heads x 4 bytes).
double recompute_delta(const Config& c) { return kept(core_attn_recompute(c)) - kept(c); }

}  // namespace

TEST_CASE("core_attn recompute: V's view keeps linear_qkv's output beside RoPE'd Q and K") {
  // GQA 8 heads / 2 groups of 64, RoPE: the checkpoint saves new Q (8 x 64) and K (2 x 64) and
  // V, a view of the output (8 + 2 + 2) x 64 wide, where TE kept contiguous Q, K and V:
  // 2 x 4096 x ((8 + 2) x 64 + 12 x 64 - 12 x 64) more, less the statistics.
  const Config c = testing::tiny_gpt(
      "--group-query-attention --num-query-groups 2 --position-embedding-type rope");
  CHECK(recompute_delta(c) == 2 * kTokens * (8 + 2) * 64 - 4 * kTokens * 8);
}

TEST_CASE("core_attn recompute: Q and K slices that stay views add nothing twice") {
  // No RoPE, no norm (Nemotron-H's attention layers): K and V reach the checkpoint as views;
  // Q is the reshape's copy (2 groups of 4 heads), so only its rows are held twice.
  const Config gqa = testing::tiny_gpt(
      "--group-query-attention --num-query-groups 2 --position-embedding-type none");
  CHECK(recompute_delta(gqa) == 2 * kTokens * 8 * 64 - 4 * kTokens * 8);
  // MHA without RoPE: Q, K and V are all views; the output is exactly what TE copied.
  const Config mha = testing::tiny_gpt("--position-embedding-type none");
  CHECK(recompute_delta(mha) == -4 * kTokens * 8);
}

TEST_CASE("Q/K norms: copies from TE 1.13, views of linear_qkv's output before") {
  // Qwen3-style GQA with QK norms and RoPE. TE >= 1.13: the norms keep copies of Q and K
  // (2 x 4096 x (8 + 2) x 64), and core_attn recompute adds the output again beside them.
  Config c = testing::tiny_gpt(
      "--group-query-attention --num-query-groups 2 --position-embedding-type rope "
      "--qk-layernorm");
  const double copies = kept(c);
  CHECK(recompute_delta(c) == 2 * kTokens * (8 + 2) * 64 - 4 * kTokens * 8);
  // TE 1.10 (NGC 24.09): the K norm's view keeps the whole output (12 x 64) alive, and the Q
  // norm's the reshape's copy of Q (8 x 64), in place of the two copies: + 2 x 4096 x
  // (12 + 8 - 10) x 64. Recompute then holds nothing more of the output and saves TE's copy of
  // V (2 x 64) and the statistics.
  c.training.te_norm_saves_input_view = true;
  CHECK(kept(c) - copies == 2 * kTokens * (12 + 8 - 10) * 64);
  CHECK(recompute_delta(c) == -2 * kTokens * 2 * 64 - 4 * kTokens * 8);
}

TEST_CASE("core_attn recompute with fewer query groups than TP ranks keeps the gathered output") {
  // 2 query groups on TP 4: attention.py all-gathers linear_qkv's output and slices each rank's
  // group out of it, so V's view keeps the whole gathered output, (8 + 2 + 2) x 64 per token,
  // where TE kept this rank's contiguous V (1 x 64); the rank's 2 heads' statistics go.
  Config c = testing::tiny_gpt(
      "--group-query-attention --num-query-groups 2 --position-embedding-type rope");
  c.parallel.tensor_parallel = 4;
  CHECK(recompute_delta(c) == 2 * kTokens * (12 - 1) * 64 - 4 * kTokens * 2);
}
