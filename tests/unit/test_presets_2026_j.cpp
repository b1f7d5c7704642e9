// Presets of #25, part j: DeepSeek-V4 (deepseek_v4, DeepseekV4ForCausalLM) as Megatron-Bridge's
// DeepSeekV4Bridge builds it on Megatron-LM dev: its config.json import, the parameter counts
// by hand, and the parts it brought, each against hand-computed tensor sizes: hyper-connections
// (hyper_connection.cpp), the hybrid compressed attention (attention_dsv4.cpp), hash routing's
// tid2eid table (persistent_buffers.cpp) and the MTP layer's e_proj / h_proj and hc_head.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "modules/module_spec.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/deepseek-ai/DeepSeek-V4-Flash/blob/main/config.json (huggingface.co
// cannot be fetched from this build), as public copies print it: every key below as a vendored
// copy of the DeepSeek-V4-Flash-DSpark config.json has it (that file adds dspark_* keys and two
// more MTP entries to compress_ratios), and a 44-entry compress_ratios as a slimmed copy of
// the Flash file in a public Rust port's tests gives it. Bridge's docstrings agree (43 layers,
// hash layers 3, num_nextn_predict_layers 1).
const char* kFlash = R"json({
  "architectures": ["DeepseekV4ForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 1, "expert_dtype": "fp4",
  "hc_eps": 1e-06, "hc_mult": 4, "hc_sinkhorn_iters": 20, "head_dim": 512,
  "hidden_act": "silu", "hidden_size": 4096, "index_head_dim": 128, "index_n_heads": 64,
  "index_topk": 512, "initializer_range": 0.02, "max_position_embeddings": 1048576,
  "model_type": "deepseek_v4", "moe_intermediate_size": 2048, "n_routed_experts": 256,
  "n_shared_experts": 1, "norm_topk_prob": true, "num_attention_heads": 64,
  "num_experts_per_tok": 6, "num_hidden_layers": 43, "num_hash_layers": 3,
  "num_key_value_heads": 1, "num_nextn_predict_layers": 1, "o_groups": 8, "o_lora_rank": 1024,
  "q_lora_rank": 1024, "qk_rope_head_dim": 64,
  "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
    "scale_fmt": "ue8m0", "weight_block_size": [128, 128]},
  "rms_norm_eps": 1e-06,
  "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 16,
    "original_max_position_embeddings": 65536, "type": "yarn"},
  "rope_theta": 10000, "routed_scaling_factor": 1.5, "scoring_func": "sqrtsoftplus",
  "sliding_window": 128, "swiglu_limit": 10.0, "tie_word_embeddings": false,
  "topk_method": "noaux_tc", "torch_dtype": "bfloat16", "transformers_version": "4.57.1",
  "use_cache": true, "vocab_size": 129280, "compress_rope_theta": 160000,
  "compress_ratios": [0, 0, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128,
    4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128,
    4, 128, 4, 0]
})json";

// https://huggingface.co/deepseek-ai/DeepSeek-V4-Pro/blob/main/config.json as a public copy
// embeds it (a serverless demo's DEEPSEEK_CONFIG, the Hub file's keys in its order).
const char* kPro = R"json({"architectures": ["DeepseekV4ForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 1, "expert_dtype": "fp4",
  "hc_eps": 1e-06, "hc_mult": 4, "hc_sinkhorn_iters": 20, "head_dim": 512, "hidden_act": "silu",
  "hidden_size": 7168, "index_head_dim": 128, "index_n_heads": 64, "index_topk": 1024,
  "initializer_range": 0.02, "max_position_embeddings": 1048576, "model_type": "deepseek_v4",
  "moe_intermediate_size": 3072, "n_routed_experts": 384, "n_shared_experts": 1,
  "norm_topk_prob": true, "num_attention_heads": 128, "num_experts_per_tok": 6,
  "num_hidden_layers": 61, "num_hash_layers": 3, "num_key_value_heads": 1,
  "num_nextn_predict_layers": 1, "o_groups": 16, "o_lora_rank": 1024, "q_lora_rank": 1536,
  "qk_rope_head_dim": 64, "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
  "quant_method": "fp8", "scale_fmt": "ue8m0", "weight_block_size": [128, 128]},
  "rms_norm_eps": 1e-06, "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 16,
  "original_max_position_embeddings": 65536, "type": "yarn"}, "rope_theta": 10000,
  "routed_scaling_factor": 2.5, "scoring_func": "sqrtsoftplus", "sliding_window": 128,
  "swiglu_limit": 10.0, "tie_word_embeddings": false, "topk_method": "noaux_tc",
  "torch_dtype": "bfloat16", "transformers_version": "4.57.1", "use_cache": true,
  "vocab_size": 129280, "compress_rope_theta": 160000, "compress_ratios": [128, 128, 4, 128, 4,
  128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128,
  4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128, 4,
  128, 4, 128, 4, 128, 4, 128, 4, 128, 4, 0]})json";

// One DeepSeek-V4 model's shape, for the hand counts below.
struct Dsv4Shape {
  std::int64_t h, heads, q_lora, o_groups, topk, experts, ffn, layers, ratio4, ratio128;
};

// hyper_connection.py: mapping_proj [24 x 4h], three alphas, bias [24]; two per layer.
std::int64_t hyper_connections(std::int64_t h) { return 2 * (24 * 4 * h + 3 + 24); }

// One layer without its compressor / indexer: 2 norms, the two hyper-connections, attention
// (q_down, q norm, q_up, kv_proj, kv norm, o_group_proj, linear_proj, attn_sink; head dim
// 512, o_lora_rank 1024), router, experts and the shared expert (3 x h x ffn each).
std::int64_t common_layer(const Dsv4Shape& s) {
  const std::int64_t q = s.heads * 512;
  const std::int64_t o = s.o_groups * 1024;
  const std::int64_t attention = s.h * s.q_lora + s.q_lora + s.q_lora * q + s.h * 512 + 512 +
                                 o * (q / s.o_groups) + o * s.h + s.heads;
  const std::int64_t moe = s.experts * s.h + (s.experts + 1) * 3 * s.h * s.ffn;
  return 2 * s.h + hyper_connections(s.h) + attention + moe;
}

// csa.py Compressor: wkv and wgate [coff d x h] (coff 2 at ratio 4), ape [ratio x coff d],
// RMSNorm [d]; the ratio-4 layers' CSAIndexer: wq_b [64 x 128 x q_lora], weights_proj
// [64 x h] and its own compressor of head dim 128 at ratio 4.
std::int64_t compressor(std::int64_t h, std::int64_t d, std::int64_t ratio) {
  const std::int64_t coff = ratio == 4 ? 2 : 1;
  return 2 * coff * d * h + ratio * coff * d + d;
}
std::int64_t indexer(const Dsv4Shape& s) {
  return s.q_lora * 64 * 128 + s.h * 64 + compressor(s.h, 128, 4);
}

std::int64_t decoder_params(const Dsv4Shape& s) {
  const std::int64_t vocabulary = 2 * std::int64_t{129280} * s.h;  // embedding, output layer
  const std::int64_t hc_head = 4 * 4 * s.h + 4 + 1;
  return vocabulary + s.h + hc_head + s.layers * common_layer(s) +
         s.ratio4 * (compressor(s.h, 512, 4) + indexer(s)) + s.ratio128 * compressor(s.h, 512, 128);
}

// The MTP layer: a window-only layer, enorm, hnorm, e_proj and h_proj [h x h], its final norm
// and its own hc_head.
std::int64_t mtp_params(const Dsv4Shape& s) {
  return common_layer(s) + 2 * s.h + 2 * s.h * s.h + s.h + 4 * 4 * s.h + 4 + 1;
}

Estimate estimate_of(const ModelConfig& model) {
  Config config = share_link_defaults();
  config.model = model;
  return testing::run(config);
}

// The tiny GPT without linear biases (DeepSeek-V4 has none), with `extra`.
Config tiny(const std::string& extra) {
  return testing::tiny_gpt("--disable-bias-linear " + extra);
}

std::pair<double, std::int64_t> saved_and_params(const Config& c) {
  const Estimate e = testing::run(c);
  return {static_cast<double>(e.ranks[0].activation_bytes_per_microbatch), e.totals.params};
}

}  // namespace

TEST_CASE("deepseek_v4: DeepSeek-V4-Flash imports as the preset, 284,332,230,231 parameters") {
  const HfImport hf = import(kFlash);
  CHECK(hf.model_type == "deepseek_v4");
  CHECK(hf.model.multi_latent_attention);
  CHECK(hf.model.v_head_dim == 512);
  CHECK(hf.model.qk_head_dim == 448);
  CHECK(hf.model.o_groups == 8);
  CHECK(hf.model.moe_n_hash_layers == 3);
  CHECK(hf.model.enable_mhc_connections);
  CHECK(hf.model.mhc_num_residual_streams == 4);
  CHECK(hf.model.mtp_num_layers == 1);
  REQUIRE(hf.model.csa_compress_ratios.size() == 44);  // 43 layers and the MTP layer
  CHECK(hf.model.csa_compress_ratios.back() == 0);
  check_matches_preset(hf.model, "deepseek-v4-flash");
  const Dsv4Shape flash{4096, 64, 1024, 8, 512, 256, 2048, 43, 21, 20};
  const Estimate e = estimate_of(hf.model);
  CHECK(e.totals.params == decoder_params(flash));
  CHECK(e.totals.params == 284'332'230'231);
  // Model card (https://huggingface.co/deepseek-ai/DeepSeek-V4-Flash): 284B total (+0.12%).
  CHECK(std::abs(static_cast<double>(e.totals.params) / 284e9 - 1.0) <= 0.005);
  CHECK(e.totals.mtp_params == mtp_params(flash));
  CHECK(e.totals.mtp_params == 6'610'048'635);
  // 13B activated: top-6 of 256 experts per token, 13,270,091,351 without the input embedding.
  CHECK(e.totals.active_params == 13'799'622'231);
  CHECK(std::llround(static_cast<double>(e.totals.active_params - 129280 * 4096) / 1e9) == 13);
}

TEST_CASE("deepseek_v4: DeepSeek-V4-Pro imports as the preset, 1,572,997,179,491 + 25.8B MTP") {
  const HfImport hf = import(kPro);
  REQUIRE(hf.model.csa_compress_ratios.size() == 62);
  check_matches_preset(hf.model, "deepseek-v4-pro");
  const Dsv4Shape pro{7168, 128, 1536, 16, 1024, 384, 3072, 61, 30, 31};
  const Estimate e = estimate_of(hf.model);
  CHECK(e.totals.params == decoder_params(pro));
  CHECK(e.totals.params == 1'572'997'179'491);
  CHECK(e.totals.mtp_params == mtp_params(pro));
  CHECK(e.totals.mtp_params == 25'840'145'595);
  // The model card's 1.6T has two significant digits: the decoder rounds to it (-1.7%), and
  // with the MTP layer the checkpoint's tensors are within 0.1% of it. 49B activated:
  // 48,852,379,747 without the input embedding.
  CHECK(std::llround(static_cast<double>(e.totals.params) / 1e11) == 16);
  CHECK(std::abs(static_cast<double>(e.totals.params + e.totals.mtp_params) / 1.6e12 - 1.0) <=
        0.001);
  CHECK(std::llround(static_cast<double>(e.totals.active_params - 129280 * 7168) / 1e9) == 49);
}

TEST_CASE("deepseek_v4: layer_types with compress_rates, mlp_layer_types and the ratio rules") {
  // Native Transformers configs: layer_types + compress_rates, hash layers as the leading
  // hash_moe entries of mlp_layer_types (deepseek_v4_bridge.py); a decoder-only ratio list
  // gets 0 for the MTP layer.
  const HfImport hf = import(R"json({"model_type": "deepseek_v4", "num_hidden_layers": 3,
    "hidden_size": 512, "num_attention_heads": 8, "vocab_size": 1000, "head_dim": 64,
    "qk_rope_head_dim": 16, "q_lora_rank": 128, "o_groups": 2, "o_lora_rank": 64,
    "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 256,
    "num_nextn_predict_layers": 1, "mlp_layer_types": ["hash_moe", "hash_moe", "moe"],
    "layer_types": ["sliding_attention", "compressed_sparse_attention",
      "heavily_compressed_attention"],
    "compress_rates": {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128}
  })json");
  CHECK(hf.model.csa_compress_ratios == std::vector<std::uint8_t>{0, 4, 128, 0});
  CHECK(hf.model.moe_n_hash_layers == 2);
  CHECK(import_error(R"json({"model_type": "deepseek_v4", "num_hidden_layers": 2,
    "hidden_size": 512, "num_attention_heads": 8, "vocab_size": 1000, "n_routed_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 256, "compress_ratios": [0, 5]})json")
            .field == "compress_ratios");
  CHECK(import_error(R"json({"model_type": "deepseek_v4", "num_hidden_layers": 2,
    "hidden_size": 512, "num_attention_heads": 8, "vocab_size": 1000, "n_routed_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 256, "compress_ratios": [0, 4],
    "mlp_layer_types": ["moe", "hash_moe"]})json")
            .field == "mlp_layer_types");
  // Megatron-LM dev: TP 1 only, no core_attn checkpoint, no TileLang.
  Config c = share_link_defaults();
  c.model = hf.model;
  c.parallel.tensor_parallel = 2;
  c.parallel.world_size = 2;
  CHECK(estimate(c, {false, false}).error().field == "tensor_parallel");
  c.parallel.tensor_parallel = 1;
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::core_attn};
  CHECK(estimate(c, {false, false}).error().field == "recompute_modules");
}

TEST_CASE("hyper-connections: 4 streams' weights per block, the streams saved, mhc frees them") {
  // 4 dense layers, h 512, one micro-batch of 4 x 1024 tokens, bf16. Per block: mapping_proj
  // [24 x 2048], three alphas, a bias [24]; per block and token the 4-stream input (2048),
  // the block's output (512) and 3 x 16 + 4 x 4 + 1 = 65 mixing coefficients in bf16; the
  // final stage's learned contraction: hc_head [4 x 2048], base [4], scale [1], and it keeps
  // the 4-stream input.
  const Config plain = tiny("");
  const Config hc = tiny("--enable-mhc-connections --mhc-num-residual-streams 4");
  const auto [plain_bytes, plain_params] = saved_and_params(plain);
  const auto [hc_bytes, hc_params] = saved_and_params(hc);
  CHECK(hc_params - plain_params == 4 * 2 * (24 * 2048 + 3 + 24) + 4 * 2048 + 4 + 1);
  // Hidden dropout (0.1 here) masks the block's output expanded to the 4 streams: 3 x 512
  // more mask bytes per block and token.
  const double tokens = 4096;
  const double per_block = tokens * (2048 + 512 + 65) * 2 + tokens * 3 * 512;
  CHECK(hc_bytes - plain_bytes == 4 * 2 * per_block + tokens * 2048 * 2);
  // mhc recompute discards the 4-stream inputs but the block's own (the one recompute
  // group's input), the aggregated inputs of the two norms and the dropout masks its
  // checkpoints make without grad (the TE-fused input norm's output stays: its norm is no
  // module of its own).
  Config recomputed = hc;
  recomputed.training.recompute.granularity = RecomputeGranularity::selective;
  recomputed.training.recompute.modules = {RecomputeModule::mhc};
  CHECK(hc_bytes - saved_and_params(recomputed).first ==
        (4 * 2 - 1) * tokens * 2048 * 2 + 4 * 2 * tokens * 512 * 2 + 4 * 2 * tokens * 2048);
  Config without = plain;
  without.training.recompute = recomputed.training.recompute;
  CHECK(estimate(without, {false, false}).error().field == "recompute_modules");
}

TEST_CASE("compressed attention: a compressor per compressed layer, an indexer at ratio 4") {
  // The tiny model as DeepSeek-V4 attention (8 heads of 64, RoPE 16, q_lora 128, 2 output
  // groups of 64, a 32-key window, an indexer of 4 x 32 picking 16), fused kernels (cudnn):
  // ratios [0, 4, 128, 0] against all 0. Compressor at ratio 4: wkv, wgate [128 x 512], ape
  // [4 x 128], norm [64]; its indexer: wq_b [128 x 128], weights_proj [4 x 512] and a
  // compressor [64 x 512] x 2, ape [4 x 64], norm [32]; at ratio 128: [64 x 512] x 2, ape
  // [128 x 64], norm [64].
  Config window = tiny(
      "--multi-latent-attention --q-lora-rank 128 --kv-lora-rank 64 "
      "--qk-head-dim 48 --qk-pos-emb-head-dim 16 --v-head-dim 64");
  window.model.csa_compress_ratios = {0, 0, 0, 0};
  window.model.csa_window_size = 32;
  window.model.o_groups = 2;
  window.model.o_lora_rank = 64;
  window.model.dsa_indexer_n_heads = 4;
  window.model.dsa_indexer_head_dim = 32;
  window.model.dsa_indexer_topk = 16;
  window.training.dsa_kernel_backend = DsaKernelBackend::cudnn;
  Config compressed = window;
  compressed.model.csa_compress_ratios = {0, 4, 128, 0};
  const auto [window_bytes, window_params] = saved_and_params(window);
  const auto [compressed_bytes, compressed_params] = saved_and_params(compressed);
  const std::int64_t ratio4 = 2 * 128 * 512 + 4 * 128 + 64;
  const std::int64_t index = 128 * 128 + 4 * 512 + 2 * 64 * 512 + 4 * 64 + 32;
  const std::int64_t ratio128 = 2 * 64 * 512 + 128 * 64 + 64;
  CHECK(compressed_params - window_params == ratio4 + index + ratio128);
  // Per micro-batch of 4,096 tokens: each compressor's kv (bf16) and fp32 gate scores, the
  // compressed keys, the indexer's query and head weights and its compressor's, and the
  // indices of the 16 (ratio 4) or 1024 / 128 = 8 (ratio 128) compressed keys beyond the window.
  const double tokens = 4096;
  const double at4 = tokens * 2 * 64 * 6 + tokens / 4 * 64 * 2 + tokens * (128 + 4) * 2 +
                     tokens * 2 * 32 * 6 + tokens * 16 * 4;
  const double at128 = tokens * 64 * 6 + tokens / 128 * 64 * 2 + tokens * 8 * 4;
  CHECK(compressed_bytes - window_bytes == at4 + at128);
  // One window-only layer by hand: q_down, q_up, kv_proj, o_group_proj [128 x 256],
  // linear_proj [512 x 128], attn_sink [8] and the input norm (LayerNorm: weight and bias).
  Config plain_mla = window;
  plain_mla.model.csa_compress_ratios.clear();
  plain_mla.model.dsa_indexer_topk = 0;  // else DeepSeek sparse attention with its indexer
  const std::int64_t dsv4_attention =
      128 * 512 + 8 * 64 * 128 + 64 * 512 + 128 * 256 + 512 * 128 + 8 + 2 * 512;
  const std::int64_t mla_attention =
      2 * 512 + 512 * 128 + 128 * 8 * 64 + 512 * 80 + 64 * 8 * (48 + 64) + 8 * 64 * 512;
  CHECK(window_params - saved_and_params(plain_mla).second == 4 * (dsv4_attention - mla_attention));
}

TEST_CASE("hash routing: an int32 vocabulary x top-k table on the embedding's stage") {
  // 4 MoE layers of 4 experts top-2, the first hash-routed: tid2eid [50257 x 2] int32 in
  // place of the expert bias (2 x 4 fp32).
  Config routed = tiny(
      "--num-experts 4 --moe-router-topk 2 --moe-ffn-hidden-size 256 "
      "--moe-router-score-function sigmoid --moe-router-enable-expert-bias");
  Config hashed = routed;
  hashed.model.moe_n_hash_layers = 1;
  const Estimate a = testing::run(routed);
  const Estimate b = testing::run(hashed);
  CHECK(static_cast<double>(b.ranks[0].persistent_buffer_bytes) -
            static_cast<double>(a.ranks[0].persistent_buffer_bytes) ==
        50257.0 * 2 * 4 - 2 * 4 * 4);
  CHECK(b.totals.params == a.totals.params);  // a buffer, not a parameter
  // All hash layers sit with the embedding (Megatron-LM dev transformer_config.py).
  hashed.model.moe_n_hash_layers = 3;
  hashed.parallel.pipeline_parallel = 4;
  CHECK(estimate(hashed, {false, false}).error().field == "moe_n_hash_layers");
}

TEST_CASE("MTP with hyper-connections: e_proj and h_proj, its own hc_head, n-stream norms saved") {
  // The tiny GPT with one MTP layer: e_proj and h_proj [512 x 512] weigh what eh_proj
  // [512 x 1024] does; the MTP layer adds its two hyper-connections (2 x 49,179) and its own
  // hc_head (4 x 2048 + 4 + 1). Saved per token: enorm's input and output (512 each), hnorm's
  // 4-stream input and output and the contraction's 4-stream input (2048 each), in bf16.
  const Config plain = tiny("--mtp-num-layers 1");
  const Config hc = tiny("--mtp-num-layers 1 --enable-mhc-connections");
  const Estimate a = testing::run(plain);
  const Estimate b = testing::run(hc);
  CHECK(b.totals.mtp_params - a.totals.mtp_params == 2 * (24 * 2048 + 27) + 4 * 2048 + 4 + 1);
  const NormalizedConfig n = testing::normalized(hc);
  const ActivationShape s = activation_shape(n);
  CHECK(mtp_saved_bytes(n.config.model, s) == 4096.0 * (2 * 512 + 3 * 2048) * 2);
  CHECK(mtp_saved_bytes(testing::normalized(plain).config.model, s) == 4096.0 * 6 * 512 * 2);
}
