// DeepSeek sparse attention (--experimental-attention-variant dsa, DeepSeek-V3.2 and GLM-5) as
// Megatron-Core builds it: absorbed MLA plus a top-k indexer (attention_dsa.cpp cites the
// sources). The indexer's parameters, one layer's saved tensors by hand with what each
// recompute module frees, the reference kernels' dense scores, the flags and the config.json
// import.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "activation_helpers.hpp"
#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/hf_config.hpp"
#include "megamem/megatron_args.hpp"
#include "memory/activations.hpp"
#include "modules/module_spec.hpp"

using namespace megamem;
using megamem::testing::attention_saved_bytes;
using megamem::testing::normalized;
using namespace megamem::hf_test;

namespace {

// DeepSeek-V3.2's attention (HF deepseek-ai/DeepSeek-V3.2-Exp config.json: h 7168, 128 heads,
// q_lora 1536, kv_lora 512, rope 64, qk 128, v 128, index_n_heads 64, index_head_dim 128,
// index_topk 2048) on a dense toy layer, seq 4096, micro-batch 1, no dropout.
const std::string kV32 =
    "--num-layers 2 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 "
    "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 "
    "--qk-pos-emb-head-dim 64 --v-head-dim 128 --qk-layernorm --swiglu --normalization RMSNorm "
    "--disable-bias-linear --position-embedding-type rope --seq-length 4096 "
    "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 8 --bf16 "
    "--vocab-size 129280 --hidden-dropout 0 --attention-dropout 0 "
    "--experimental-attention-variant dsa --dsa-indexer-topk 2048 --dsa-indexer-n-heads 64 "
    "--dsa-indexer-head-dim 128 ";

Config parse(const std::string& flags, int world = 1) {
  Expected<MegatronArgs> args = parse_megatron_args(flags, world);
  INFO((args ? std::string() : args.error().field + ": " + args.error().message));
  REQUIRE(args.has_value());
  return args->config;
}

constexpr double kTokens = 4096;
// Per token (bytes): input norm input and output 2 x 14,336; q_down output and q norm output
// 2 x 3,072; kv_down output 1,152; q up-projection output 128 x 192 x 2 = 49,152; absorbed
// query 128 x 576 x 2 = 147,456; latent key 576 x 2 = 1,152; latent output 128 x 512 x 2 =
// 131,072; log-sum-exp 128 x 4 = 512; top-k indices 2048 x 4 = 8,192; linear_proj input
// 128 x 128 x 2 = 32,768. Per layer: the V up-projection weight copy 128 x 128 x 512 x 2.
constexpr double kCudnnPerToken =
    2 * 14336 + 2 * 3072 + 1152 + 49152 + 147456 + 1152 + 131072 + 512 + 8192 + 32768;
constexpr double kUpVCopy = 128.0 * 128 * 512 * 2;

}  // namespace

TEST_CASE("DSA adds the indexer's parameters, whole on every TP rank") {
  // DSAIndexer: wq_b 64 x 128 x 1536, wk 128 x 7168, k_norm 2 x 128, weights_proj 64 x 7168.
  const double indexer = 64.0 * 128 * 1536 + 128.0 * 7168 + 2 * 128 + 64.0 * 7168;
  REQUIRE(indexer == 13'959'424.0);
  const auto params = [](const std::string& flags, int world) {
    Expected<Estimate> e = estimate(parse(flags, world));
    REQUIRE(e.has_value());
    return static_cast<double>(e->totals.params);
  };
  const std::string mla = kV32.substr(0, kV32.find("--experimental-attention-variant"));
  CHECK(params(kV32, 1) - params(mla, 1) == 2 * indexer);
  // One layer in two computes its top-k (offset 1: layers 1 and 3 of 4 ... here layer 1 of 2).
  CHECK(dsa_computing_layer_fraction(
            normalized(parse(kV32 + "--dsa-indexer-topk-freq 2")).config.model) == 0.5);
}

TEST_CASE("one DSA layer's saved tensors with the fused kernels, and what recompute frees") {
  Config c = parse(kV32 + "--dsa-kernel-backend cudnn");
  const LayerActivations full = layer_activations(normalized(c), LayerKind::dense);
  CHECK(attention_saved_bytes(full) == kCudnnPerToken * kTokens + kUpVCopy);
  // core_attn checkpoints the whole DSAttention: latent output, log-sum-exp, indices and the
  // weight copy go; the absorbed query and key are its inputs and stay.
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::core_attn};
  LayerActivations selective = layer_activations(normalized(c), LayerKind::dense);
  CHECK(full.kept_bytes - selective.kept_bytes == (131072 + 512 + 8192) * kTokens + kUpVCopy);
  // mla_up_proj frees the q up-projection output, the query and (CP 1) the key, and keeps its
  // inputs, the normed kv latent and the RoPE slice (576 x 2 per token).
  c.training.recompute.modules = {RecomputeModule::mla_up_proj};
  selective = layer_activations(normalized(c), LayerKind::dense);
  CHECK(full.kept_bytes - selective.kept_bytes == (49152 + 147456 + 1152 - 1152) * kTokens);
}

TEST_CASE("DSA's reference kernels keep every head's dense fp32 scores") {
  const Config c = parse(kV32 + "--dsa-kernel-backend none");
  const LayerActivations a = layer_activations(normalized(c), LayerKind::dense);
  // 13 bytes per score of 128 heads x 4096 x 4096, fp32 query and key (576 wide).
  const double scores = 128.0 * kTokens * kTokens;
  const double expected =
      (2 * 14336 + 2 * 3072 + 1152 + 49152 + 147456 + 1152 + 131072 + 32768) * kTokens +
      13 * scores + 4 * (128 + 1) * 576 * kTokens;
  CHECK(attention_saved_bytes(a) == expected);
}

TEST_CASE("DSA needs MLA, no linear biases and SP under TP; the default kernels are warned") {
  Expected<MegatronArgs> args = parse_megatron_args(
      "--num-layers 2 --hidden-size 512 --num-attention-heads 8 --seq-length 512 "
      "--max-position-embeddings 512 --micro-batch-size 1 --vocab-size 1000 "
      "--experimental-attention-variant dsa --dsa-indexer-topk 64",
      1);
  REQUIRE(args.has_value());
  Expected<Estimate> e = estimate(args->config);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().field == "multi_latent_attention");
  Config c = parse(kV32);
  c.model.add_bias_linear = true;
  e = estimate(c);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().field == "add_bias_linear");
  c = parse(kV32 + "--tensor-model-parallel-size 2", 2);
  e = estimate(c);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().field == "sequence_parallel");
  e = estimate(parse(kV32));
  REQUIRE(e.has_value());
  CHECK_THAT(e->warnings.front(), Catch::Matchers::Contains("--dsa-kernel-backend none"));
  // Without the top-k the indexer cannot be built.
  const Expected<MegatronArgs> missing =
      parse_megatron_args(kV32.substr(0, kV32.find("--dsa-indexer-topk")), 1);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().field == "--dsa-indexer-topk");
}

TEST_CASE("DSA flags round-trip and config.json's index_* keys turn it on") {
  const Config c = parse(kV32 +
                         "--dsa-kernel-backend cudnn --dsa-indexer-loss-coeff 0.001 "
                         "--dsa-indexer-use-sparse-loss --dsa-indexer-topk-freq 2");
  const std::string flags = to_megatron_args(c);
  CHECK_THAT(flags, Catch::Matchers::Contains("--experimental-attention-variant dsa"));
  const Config back = parse(flags);
  CHECK(back.model.dsa_indexer_topk == 2048);
  CHECK(back.model.dsa_indexer_topk_freq == 2);
  CHECK(back.training.dsa_kernel_backend == DsaKernelBackend::cudnn);
  CHECK(back.training.dsa_indexer_loss_coeff == 0.001);
  CHECK(back.training.dsa_indexer_use_sparse_loss);
  const Expected<HfImport> glm5 = import_hf_config(R"json({
    "model_type": "glm_moe_dsa", "hidden_size": 6144, "num_hidden_layers": 78,
    "num_attention_heads": 64, "intermediate_size": 12288, "vocab_size": 154880,
    "q_lora_rank": 2048, "kv_lora_rank": 512, "qk_nope_head_dim": 192,
    "qk_rope_head_dim": 64, "v_head_dim": 256, "n_routed_experts": 256,
    "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "n_shared_experts": 1,
    "first_k_dense_replace": 3, "index_topk": 2048, "index_n_heads": 32,
    "index_head_dim": 128, "rms_norm_eps": 1e-5, "tie_word_embeddings": false})json");
  INFO((glm5 ? std::string() : glm5.error().field + ": " + glm5.error().message));
  REQUIRE(glm5.has_value());
  CHECK(glm5->model.multi_latent_attention);
  CHECK(glm5->model.dsa_indexer_topk == 2048);
  CHECK(glm5->model.dsa_indexer_n_heads == 32);
  CHECK_FALSE(glm5->model.add_bias_linear);
}

namespace {

// zai-org/GLM-5's config.json, with `extra` members (", ..." text) added.
std::string glm5_config(const std::string& extra = "") {
  const std::string text = R"json({
    "architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa",
    "vocab_size": 154880, "hidden_size": 6144, "tie_word_embeddings": false,
    "num_hidden_layers": 78, "intermediate_size": 12288, "num_attention_heads": 64,
    "num_key_value_heads": 64, "attention_bias": false, "q_lora_rank": 2048,
    "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "v_head_dim": 256,
    "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "moe_intermediate_size": 2048, "n_group": 1, "topk_group": 1, "norm_topk_prob": true,
    "first_k_dense_replace": 3, "moe_layer_freq": 1, "num_nextn_predict_layers": 1,
    "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32, "hidden_act": "silu",
    "rms_norm_eps": 1e-5, "scoring_func": "sigmoid", "topk_method": "noaux_tc"})json";
  return text.substr(0, text.size() - 1) + extra + "}";
}

}  // namespace

// GLM-5's config.json (zai-org/GLM-5; the report's architecture table agrees) is the glm-5
// preset. By hand: the embedding and output layer 2 x 154880 x 6144; per layer MLA 165,022,208
// (q_a 6144x2048 and its norm, q_b 2048x64x256, kv_a 6144x576 and its norm, kv_b 512x64x448,
// o 16384x6144), the indexer 9,371,904 (wq_b 2048x32x128, wk 6144x128, k_norm weight and bias,
// weights_proj 6144x32) and two norms; 3 dense MLPs of 3x6144x12288; 75 MoE layers of 256 + 1
// experts of 3x6144x2048 and a 256x6144 router; the final norm. The MTP layer is not counted,
// as in the report's 744B.
TEST_CASE("GLM-5's config.json is the glm-5 preset, 743,911,199,232 parameters") {
  const Expected<HfImport> glm5 = import_hf_config(glm5_config());
  INFO((glm5 ? std::string() : glm5.error().field + ": " + glm5.error().message));
  REQUIRE(glm5.has_value());
  check_matches_preset(glm5->model, "glm-5");
  const std::int64_t layer = 165'022'208 + 9'371'904 + 2 * 6144;
  const std::int64_t expected = 2 * std::int64_t{154880} * 6144 + 6144 +
                                3 * (layer + 3 * std::int64_t{6144} * 12288) +
                                75 * (layer + 257 * 3 * std::int64_t{6144} * 2048 + 256 * 6144);
  CHECK(expected == 743'911'199'232);
  CHECK(total_params(glm5->model) == expected);
  check_near(total_params(glm5->model), 744e9);  // GLM-5 technical report: 744B
}

// GLM-5.2: GLM-5's config.json with IndexCache (index_topk_freq 4, index_skip_topk_offset 3, as
// sglang's GLM-5.2 indexer test and Bridge's glm5_bridge.py read them). dsa.py
// is_dsa_skip_topk_layer: layer L (1-based) builds an indexer when max(L - 3, 0) % 4 == 0,
// layers 1-3 and 7, 11, ..., 75: 21 of 78, so 57 x 9,371,904 fewer parameters than GLM-5,
// 743,377,000,704, the count Megatron-Bridge's GLM-5.2 card gives (transformers' reload). megamem
// spreads the indexers evenly over the layers: within a few parameters of rounding.
TEST_CASE("GLM-5.2: 21 of 78 layers hold an indexer, the card's 743,377,000,704 parameters") {
  const Expected<HfImport> glm52 = import_hf_config(
      glm5_config(R"json(, "index_topk_freq": 4, "index_skip_topk_offset": 3)json"));
  INFO((glm52 ? std::string() : glm52.error().field + ": " + glm52.error().message));
  REQUIRE(glm52.has_value());
  check_matches_preset(glm52->model, "glm-5.2");
  CHECK(dsa_computing_layer_fraction(glm52->model) == Approx(21.0 / 78.0));
  const std::int64_t expected = 743'911'199'232 - 57 * std::int64_t{9'371'904};
  CHECK(expected == 743'377'000'704);
  CHECK(std::llabs(total_params(glm52->model) - expected) <= 78 * 2);
}

TEST_CASE("a hybrid pattern's D layers are DeepSeek sparse attention") {
  // hybrid_layer_specs.py dsa_layer: AbsorbedMLASelfAttention with DSAttention, sized by the
  // dsa_indexer_* fields without the variant flag.
  const std::string flags =
      "--num-layers 4 --hidden-size 2048 --num-attention-heads 16 --kv-lora-rank 512 "
      "--q-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 "
      "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --bf16 "
      "--vocab-size 32000 --disable-bias-linear --mamba-num-heads 64 --mamba-head-dim 64 "
      "--position-embedding-type none --hybrid-layer-pattern MDMD --dsa-kernel-backend cudnn ";
  const Config c = parse(flags + "--dsa-indexer-topk 256");
  const Expected<Estimate> e = estimate(c);
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  CHECK(e->normalized.config.model.multi_latent_attention);
  const LayerActivations d = layer_activations(e->normalized, LayerKind::attention);
  bool indices = false;
  for (const SavedActivation& saved : d.saved) {
    indices |= std::string(saved.tensor) == "top-k indices (int32)";
  }
  CHECK(indices);
  CHECK_THAT(to_megatron_args(c), !Catch::Matchers::Contains("--experimental-attention-variant"));
  CHECK(parse(to_megatron_args(c)).model.dsa_indexer_topk == 256);
  // Without the indexer's top-k, or beside '+' layers: refused, naming why.
  Expected<Estimate> refused = estimate(parse(flags));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().field == "dsa_indexer_topk");
  Config mixed = c;
  mixed.model.hybrid_layer_pattern = "M+MD";
  refused = estimate(mixed);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().field == "hybrid_layer_pattern");
}
