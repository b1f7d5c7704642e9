// Gemma 4 E2B and E4B (#25): the per-layer embeddings and the K/V shared across the last
// layers, as Megatron-Bridge's Gemma4DenseProvider builds them (gemma/modeling_gemma4.py
// _attach_ple_modules, _compute_per_layer_inputs, Gemma4DenseTransformerLayer.forward,
// Gemma4DenseSelfAttention, wire_gemma4_kv_sharing, _gemma4_dense_ffn_hidden_size), the
// rules that refuse what Bridge cannot build, the import of both config.json files and the
// presets gemma-4-e4b and gemma-4-e2b with Bridge's E4B recipe.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/presets.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// A gemma4 wrapper whose text_config is a Gemma 4 E model's: every field the released files
// write (the keys the 31B's text_config has, test_gemma4.cpp), with the E model's values.
std::string gemma4_e_config(int layers, int hidden, int ffn, int kv_heads, int kv_shared,
                            int full_every, bool double_wide) {
  const std::string layer_types = gemma4_layer_types(layers, full_every);
  const auto n = [](int v) { return std::to_string(v); };
  return R"json({
  "architectures": ["Gemma4ForConditionalGeneration"],
  "model_type": "gemma4",
  "tie_word_embeddings": true,
  "text_config": {
    "attention_bias": false, "attention_dropout": 0.0, "attention_k_eq_v": false,
    "dtype": "bfloat16", "enable_moe_block": false, "final_logit_softcapping": 30.0,
    "global_head_dim": 512, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "hidden_size": )json" +
         n(hidden) + R"json(, "hidden_size_per_layer_input": 256, "intermediate_size": )json" +
         n(ffn) + R"json(,
    "max_position_embeddings": 131072, "model_type": "gemma4_text",
    "num_attention_heads": 8, "num_global_key_value_heads": null, "num_hidden_layers": )json" +
         n(layers) + R"json(,
    "num_key_value_heads": )json" +
         n(kv_heads) + R"json(, "num_kv_shared_layers": )json" + n(kv_shared) +
         R"json(, "rms_norm_eps": 1e-6,
    "rope_parameters": {
      "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                         "rope_type": "proportional"},
      "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}},
    "sliding_window": 512, "tie_word_embeddings": true, "use_cache": true,
    "use_double_wide_mlp": )json" +
         std::string(double_wide ? "true" : "false") +
         R"json(, "vocab_size": 262144, "vocab_size_per_layer_input": 262144,
    "layer_types": [)json" +
         layer_types + R"json(]
  }
})json";
}

// https://huggingface.co/google/gemma-4-E4B-it/blob/main/config.json text_config, as public
// copies print it (a JAX port's test transcribing gemma-4-E4B-it-qat-w4a16-ct's config.json; an
// engine's check of the live E4B weights): 42 layers of 2560, MLP 10240, 8 heads, 2 KV heads,
// every 6th layer full, the last 18 sharing K/V, per-layer embeddings of 256.
std::string gemma4_e4b_config() { return gemma4_e_config(42, 2560, 10240, 2, 18, 6, false); }

// https://huggingface.co/google/gemma-4-E2B-it/blob/main/config.json text_config, as Swift, Rust
// and Python ports' tests print it: 35 layers of 1536, MLP 6144 (12288 on the shared layers:
// use_double_wide_mlp), 8 heads, 1 KV head, every 5th layer full, the last 20 sharing K/V.
std::string gemma4_e2b_config() { return gemma4_e_config(35, 1536, 6144, 1, 20, 5, true); }

Estimate estimated(const Config& c) {
  const Expected<Estimate> e = estimate(c, {false, false});
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  return *e;
}

double activation_bytes(const Config& c) {
  return static_cast<double>(estimated(c).ranks[0].activation_bytes_per_microbatch);
}

Error refused(const Config& c) {
  const Expected<Estimate> e = estimate(c, {false, false});
  REQUIRE_FALSE(e.has_value());
  return e.error();
}

}  // namespace

TEST_CASE("per-layer embeddings: a table and projection on the first stage, a gate per layer") {
  // 4 layers, h 512, vocabulary 50257, TP 1, P 64. First stage: the [50257 x 4·64] table,
  // the [4·64 x 512] projection and a norm of 64. Every layer: gate 512 x 64, projection
  // 64 x 512 and a norm of 512.
  Config plain = testing::tiny_gpt("");
  Config ple = plain;
  ple.model.per_layer_input_size = 64;
  const std::int64_t model_level = std::int64_t{50257} * 256 + 512 * 256 + 64;
  const std::int64_t per_layer = 2 * 512 * 64 + 512;
  CHECK(model_level == 12'996'928);
  CHECK(estimated(ple).totals.params - estimated(plain).totals.params ==
        model_level + 4 * per_layer);
}

TEST_CASE("per-layer embeddings: what each layer and the first stage keep for backward") {
  // One micro-batch of 4 x 1024 = 4096 tokens in bf16, TP 1, P 64, 4 layers. Per layer: the
  // gate's input (4096 x 512 bf16), the gate output, GELU output and product (3 x 4096 x 64
  // bf16), the post norm's fp32 intermediates (12 bytes x 4096 x 512) and row statistics
  // (8 bytes x 4096). First stage: the projection's input (4096 x 512 bf16),
  // per_layer_inputs (4096 x 4 x 64 bf16) and the projection norm's fp32 intermediates (12
  // bytes per element, 8 per row of 64).
  Config plain = testing::tiny_gpt("");
  Config ple = plain;
  ple.model.per_layer_input_size = 64;
  const double per_layer = 4096.0 * 512 * 2 + 3 * 4096.0 * 64 * 2 + 4096.0 * 512 * 12 + 4096.0 * 8;
  const double first_stage = 4096.0 * 512 * 2 + 4096.0 * 256 * (2 + 12) + 4096.0 * 4 * 8;
  CHECK(per_layer == 30'965'760);
  CHECK(first_stage == 19'005'440);
  CHECK(activation_bytes(ple) - activation_bytes(plain) == 4 * per_layer + first_stage);
}

TEST_CASE("shared K/V: the last layers keep their K/V weights and save no K or V norm") {
  // 4 layers, h 512, 8 heads of 64 in 8 groups, plain-PyTorch norms, 4096 tokens in bf16,
  // the last 2 layers sharing K/V. Each shared layer drops its K norm input (4096 x 8 x 64
  // bf16) and fp32 intermediates (+10 bytes per element, 8 per row), V's norm (4 bytes per
  // element, 8 per row) and its own V among the core attention's inputs (bf16): 38,273,024
  // bytes. The weights stay (gemma4_bridge.py synthesizes the checkpoint's missing K/V).
  Config plain = testing::tiny_gpt("");
  plain.model.torch_rms_norms = true;
  plain.model.qk_layernorm = true;
  Config shared = plain;
  shared.model.kv_shared_layers = 2;
  const double rows = 4096.0 * 8;
  const double per_layer =
      rows * 64 * (2 + 10) + rows * 8 + rows * 64 * 4 + rows * 8 + rows * 64 * 2;
  CHECK(per_layer == 38'273'024);
  CHECK(activation_bytes(plain) - activation_bytes(shared) == 2 * per_layer);
  CHECK(estimated(shared).totals.params == estimated(plain).totals.params);
}

TEST_CASE("shared K/V under the local spec: expanded K and V stay, the norms go") {
  // GQA 8 heads in 2 groups, local spec (unfused attention repeat_interleaves K and V to the
  // 8 heads in every layer, shared or not): a shared layer drops only the K norm input and
  // intermediates and V's norm, 4096 x 2 rows of 64.
  Config plain = testing::tiny_gpt("--group-query-attention --num-query-groups 2");
  plain.model.torch_rms_norms = true;
  plain.model.qk_layernorm = true;
  plain.model.local_layer_spec = true;
  Config shared = plain;
  shared.model.kv_shared_layers = 1;
  const double rows = 4096.0 * 2;
  CHECK(activation_bytes(plain) - activation_bytes(shared) ==
        rows * 64 * (2 + 10) + rows * 8 + rows * 64 * 4 + rows * 8);
}

TEST_CASE("double-wide MLP: the shared layers' MLPs are twice ffn_hidden_size") {
  // ffn 4 x 512 = 2048; each of the 2 shared layers' gated MLP grows by 3 x 512 x 2048.
  Config shared = testing::tiny_gpt("--swiglu --ffn-hidden-size 2048 --disable-bias-linear");
  shared.model.kv_shared_layers = 2;
  Config wide = shared;
  wide.model.double_wide_shared_mlp = true;
  CHECK(estimated(wide).totals.params - estimated(shared).totals.params ==
        2 * std::int64_t{3} * 512 * 2048);
}

TEST_CASE("shared K/V needs an earlier layer of the same attention type") {
  Config all = testing::tiny_gpt("");
  all.model.kv_shared_layers = 4;
  CHECK(refused(all).field == "kv_shared_layers");
  // Layers 1-3 windowed, layer 4 full: shared layer 4 finds no full-attention source.
  Config no_full = testing::tiny_gpt("--window-size 128,0 --window-attn-skip-freq 4");
  no_full.model.kv_shared_layers = 1;
  CHECK(refused(no_full).field == "kv_shared_layers");
}

TEST_CASE("per-layer embeddings and shared K/V only on dense attention + MLP layers") {
  Config moe = testing::tiny_gpt("--num-experts 8 --moe-router-topk 2");
  moe.model.per_layer_input_size = 64;
  CHECK(refused(moe).field == "per_layer_input_size");
  moe.model.per_layer_input_size = 0;
  moe.model.kv_shared_layers = 1;
  CHECK(refused(moe).field == "kv_shared_layers");
}

TEST_CASE("per-layer embeddings: the unpadded vocabulary splits over TP") {
  // VocabParallelEmbedding divides 50257 rows by TP 2: refused; 50304 splits.
  Config c = testing::tiny_gpt("--tensor-model-parallel-size 2");
  c.model.per_layer_input_size = 64;
  CHECK(refused(c).field == "vocab_size");
  c.model.vocab_size = 50304;
  CHECK(estimated(c).totals.params > 0);
}

TEST_CASE("gemma4: Gemma-4-E4B imports as the preset, 7,518,068,992 parameters") {
  const HfImport hf = import(gemma4_e4b_config().c_str());
  const ModelConfig& m = hf.model;
  CHECK(m.per_layer_input_size == 256);
  CHECK(m.kv_shared_layers == 18);
  CHECK_FALSE(m.double_wide_shared_mlp);
  CHECK(m.num_query_groups == 2);  // num_global_key_value_heads null: num_key_value_heads
  for (const std::string& note : hf.notes)
    CHECK(note.find("attention_k_eq_v") == std::string::npos);
  check_matches_preset(m, "gemma-4-e4b");
  // Sliding layers (35): q 2560 x 2048, k and v 2560 x 512 each, o 2048 x 2560, QK norms of
  // 256. Full layers (7): q 2560 x 4096, k and v 2560 x 1024 each, o 4096 x 2560, QK norms of
  // 512. Each: four norms of 2560, the gated MLP 3 x 2560 x 10240, the per-layer gate and
  // projection 2 x 2560 x 256 with their norm of 2560. Plus the tied 262144 x 2560 embedding,
  // the final norm, the per-layer table 262144 x 42·256, its projection 2560 x 42·256 and norm.
  const std::int64_t common = 5 * 2560 + std::int64_t{3} * 2560 * 10240 + 2 * 2560 * 256;
  const std::int64_t sliding = std::int64_t{3072} * 2560 + 2048 * 2560 + 2 * 256 + common;
  const std::int64_t full = std::int64_t{6144} * 2560 + 4096 * 2560 + 2 * 512 + common;
  const std::int64_t table = std::int64_t{262144} * 10752;
  const std::int64_t total = total_params(m);
  CHECK(total == 35 * sliding + 7 * full + std::int64_t{262144} * 2560 + 2560 + table +
                     std::int64_t{2560} * 10752 + 256);
  CHECK(total == 7'518'068'992);
  // The checkpoint has no k_proj/v_proj on the 18 shared layers (15 sliding, 3 full).
  const std::int64_t checkpoint = total - 15 * std::int64_t{1024} * 2560 - 3 * 2048 * 2560;
  CHECK(checkpoint == 7'463'018'752);
  // The card's "8B with embeddings" adds a ~150M vision and a ~300M audio encoder: -1.1%, a
  // two-digit figure the exact count is pinned against instead (docs/presets.md).
  CHECK(std::abs(static_cast<double>(checkpoint + 450'000'000) / 8e9 - 1.0) < 0.011);
}

TEST_CASE("gemma4: Gemma-4-E2B imports as the preset, 4,647,449,856 parameters") {
  const HfImport hf = import(gemma4_e2b_config().c_str());
  const ModelConfig& m = hf.model;
  CHECK(m.kv_shared_layers == 20);
  CHECK(m.double_wide_shared_mlp);
  check_matches_preset(m, "gemma-4-e2b");
  // Sliding layers: q 1536 x 2048, k and v 1536 x 256, o 2048 x 1536; full: q 1536 x 4096, k
  // and v 1536 x 512, o 4096 x 1536; QK norms of the head dim. The first 15 layers (12
  // sliding, 3 full) have the MLP 3 x 1536 x 6144, the 20 shared ones (16 sliding, 4 full)
  // 3 x 1536 x 12288. Each: five norms of 1536 and the per-layer gate and projection.
  const std::int64_t common = 5 * 1536 + 2 * 1536 * 256;
  const std::int64_t sliding = std::int64_t{2560} * 1536 + 2048 * 1536 + 2 * 256 + common;
  const std::int64_t full = std::int64_t{5120} * 1536 + 4096 * 1536 + 2 * 512 + common;
  const std::int64_t mlp = std::int64_t{3} * 1536 * 6144;
  const std::int64_t total = total_params(m);
  CHECK(total == 28 * sliding + 7 * full + 15 * mlp + 20 * 2 * mlp + std::int64_t{262144} * 1536 +
                     1536 + std::int64_t{262144} * 8960 + std::int64_t{1536} * 8960 + 256);
  CHECK(total == 4'647'449'856);
  const std::int64_t checkpoint = total - 16 * std::int64_t{512} * 1536 - 4 * 1024 * 1536;
  CHECK(checkpoint == 4'628'575'488);
  // The card: 5.1B with embeddings, a ~150M vision and a ~300M audio encoder: -0.42%.
  CHECK(std::abs(static_cast<double>(checkpoint + 450'000'000) / 5.1e9 - 1.0) <= 0.005);
}

TEST_CASE("gemma4: E4B at Bridge's recipe layout holds 3,786,842,368 parameters per rank") {
  // recipes/gemma/h100/gemma4.py gemma4_e4b_pretrain_2gpu_h100_bf16_config: TP 2, PP 1 on 2
  // GPUs (DP 1). Replicated on both ranks: per layer five norms of 2560, the QK norms (2 x 256
  // sliding, 2 x 512 full) and the per-layer gate and projection 2 x 2560 x 256; the final norm
  // and the per-layer projection's norm of 256. The rest splits in two.
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  Config c = share_link_defaults();
  c.model = catalog->find_model("gemma-4-e4b")->model;
  c.parallel.world_size = 2;
  c.parallel.tensor_parallel = 2;
  c.parallel.sequence_parallel = false;
  c.training.seq_length = 4096;
  c.training.micro_batch_size = 1;
  c.training.global_batch_size = 8;
  const std::int64_t per_layer = 5 * 2560 + 2 * 2560 * 256;
  const std::int64_t replicated =
      35 * (per_layer + 2 * 256) + 7 * (per_layer + 2 * 512) + 2560 + 256;
  CHECK(replicated == 55'615'744);
  const Estimate e = estimated(c);
  REQUIRE(e.ranks.size() == 1);
  const std::int64_t rank_params = (7'518'068'992 - replicated) / 2 + replicated;
  CHECK(rank_params == 3'786'842'368);
  // Adam with fp32 main grads and params and no data parallelism to shard them over: 2 + 4 +
  // 12 bytes a parameter, 63.5 GiB before any activation; why the recipe is not a preset
  // (docs/presets.md).
  const RankMemory& r = e.ranks[0];
  CHECK(r.weight_bytes + r.gradient_bytes + r.optimizer_bytes ==
        static_cast<std::uint64_t>(18 * rank_params));
}

TEST_CASE("gemma4: the other keys the E models' import reads") {
  const auto with = [](std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  // A per-layer table of another vocabulary than vocab_size is not priced.
  CHECK(import_error(with(gemma4_e4b_config(), R"("vocab_size_per_layer_input": 262144)",
                          R"("vocab_size_per_layer_input": 1024)"))
            .field == "vocab_size_per_layer_input");
  // null (26B-A4B writes it) and 0 (31B) mean none.
  CHECK(import(with(gemma4_e4b_config(), R"("hidden_size_per_layer_input": 256)",
                    R"("hidden_size_per_layer_input": null)")
                   .c_str())
            .model.per_layer_input_size == 0);
}
