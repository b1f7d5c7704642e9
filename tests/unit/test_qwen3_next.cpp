// Qwen3-Next (HF qwen3_next) as Megatron-Core builds it: GPT layers with Gated DeltaNet
// linear attention every layer but each --linear-attention-freq-th, the GDN module's saved
// tensors by hand from the cited sources (gated_deltanet.cpp), the config.json import, the
// preset's parameter total, Megatron flags, share links and the planner on 64 H100s.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "activation_helpers.hpp"
#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/hf_config.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/planner.hpp"
#include "megamem/share_link.hpp"
#include "memory/activations.hpp"
#include "model_fixtures.hpp"
#include "modules/module_spec.hpp"

using namespace megamem;
using megamem::testing::normalized;

namespace {

// https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/config.json, its text as
// published (checked against a verbatim public copy of the file; no GitHub repository with
// the file could be cited, so the model page is the source).
constexpr const char* kQwen3Next80B = R"json({
  "architectures": [
    "Qwen3NextForCausalLM"
  ],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "decoder_sparse_step": 1,
  "eos_token_id": 151645,
  "full_attention_interval": 4,
  "head_dim": 256,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 5120,
  "linear_conv_kernel_dim": 4,
  "linear_key_head_dim": 128,
  "linear_num_key_heads": 16,
  "linear_num_value_heads": 32,
  "linear_value_head_dim": 128,
  "max_position_embeddings": 262144,
  "mlp_only_layers": [],
  "model_type": "qwen3_next",
  "moe_intermediate_size": 512,
  "norm_topk_prob": true,
  "num_attention_heads": 16,
  "num_experts": 512,
  "num_experts_per_tok": 10,
  "num_hidden_layers": 48,
  "num_key_value_heads": 2,
  "output_router_logits": false,
  "partial_rotary_factor": 0.25,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 10000000,
  "router_aux_loss_coef": 0.001,
  "shared_expert_intermediate_size": 512,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.57.0.dev0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})json";

Config next(int tp = 1, int world = 1) {
  Config c = fixtures::preset_training("qwen3-next-80b-a3b");
  c.parallel.world_size = world;
  c.parallel.tensor_parallel = tp;
  c.parallel.sequence_parallel = tp > 1;
  return c;
}

double gdn_saved_bytes(const LayerActivations& a) {
  return testing::module_saved_bytes(a, {ModuleKind::gated_deltanet});
}

}  // namespace

TEST_CASE("qwen3_next: every fourth layer is full attention, the rest Gated DeltaNet") {
  const NormalizedConfig n = normalized(next());
  REQUIRE(n.layer_kinds.size() == 48);
  for (std::size_t i = 0; i < 48; ++i) {
    CHECK(n.layer_kinds[i] == ((i + 1) % 4 == 0 ? LayerKind::moe : LayerKind::gdn_moe));
  }
}

// One GDN layer, seq 4096, micro-batch 1, TP 1, bf16 (N = 4096, h = 2048, 16 key / 32 value
// heads of 128: qk 2048, v 4096, conv_dim 8192), in bytes:
//   fused norm input, output     2 x N h 2           = 33,554,432
//   in_proj output, whole        N 12352 2           = 101,187,584
//     (q, k, v, z, beta, alpha: conv1d keeps a view of it; fla 0.4.2+)
//   l2norm q, k and rstd         N 4096 2 + N 32 4   = 34,078,720
//   delta rule q, k (32 heads)   N 2 32 128 2        = 67,108,864
//   v                            N 4096 2            = 33,554,432
//   g (fp32), beta               N 32 4 + N 32 2     =    786,432
//   A                            N 32 64 2           = 16,777,216
//   z, gated norm input          2 x N 4096 2        = 67,108,864
//   gated norm rstd, output      N 32 4 + N 4096 2   = 34,078,720
//   out_proj input               N 4096 2            = 33,554,432
//   total                                            = 421,789,696
// gdn_norm_out frees the last three (rstd, norm output, out_proj input): 67,633,152.
TEST_CASE("qwen3_next: one Gated DeltaNet layer's saved tensors by hand") {
  Config c = next();
  c.training.seq_length = 4096;
  c.training.micro_batch_size = 1;
  const LayerActivations full = layer_activations(normalized(c), LayerKind::gdn_moe);
  CHECK(gdn_saved_bytes(full) == 421'789'696.0);
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::gdn_norm_out};
  const LayerActivations selective = layer_activations(normalized(c), LayerKind::gdn_moe);
  CHECK(full.kept_bytes - selective.kept_bytes == 67'633'152.0);
  CHECK(selective.recompute_bytes >= 67'633'152.0);
  // TP 2 with sequence parallelism halves every tensor.
  Config tp2 = next(2, 2);
  tp2.training.seq_length = 4096;
  tp2.training.micro_batch_size = 1;
  const LayerActivations half = layer_activations(normalized(tp2), LayerKind::gdn_moe);
  CHECK(gdn_saved_bytes(half) == 421'789'696.0 / 2);
  // --deterministic-mode convolves a contiguous copy of q, k, v (N 8192 2 = 67,108,864) with
  // F.conv1d, and silu keeps its output, kernel - 1 = 3 tokens longer (8192 (4096 + 3) 2).
  c.training.recompute = {};
  c.training.deterministic_mode = true;
  const LayerActivations deterministic = layer_activations(normalized(c), LayerKind::gdn_moe);
  CHECK(gdn_saved_bytes(deterministic) - gdn_saved_bytes(full) == 67'108'864.0 + 67'158'016.0);
}

// Per layer from common.py / attention.py / moe shapes (h 2048):
//   GDN: norm 2048 + in_proj 12352 x 2048 + conv1d 8192 x 4 + dt_bias, A_log 2 x 32
//        + out_norm 128 + out_proj 2048 x 4096 = 33,720,512
//   attention: norm 2048 + qkv with gate (2 x 4096 + 2 x 2 x 256) x 2048 + proj 4096 x 2048
//        + q/k norms 2 x 256 = 27,265,536
//   MoE: norm 2048 + router 512 x 2048 + 512 experts x 3 x 512 x 2048 + shared 3 x 512 x 2048
//        + shared gate 2048 = 1,614,811,136
//   36 GDN + 12 attention + 48 MoE + untied 2 x 151936 x 2048 + final norm 2048
//        = 79,674,391,296 (the published "80B")
//   MTP layer: enorm, hnorm 2 x 2048 + eh_proj 4096 x 2048 + attention + MoE + norm 2048
//        = 1,650,471,424 (counted apart, totals.mtp_params).
TEST_CASE("qwen3_next: config.json imports as the preset; 80B without the MTP layer") {
  const Expected<HfImport> hf = import_hf_config(kQwen3Next80B);
  INFO((hf ? std::string() : hf.error().field + ": " + hf.error().message));
  REQUIRE(hf.has_value());
  CHECK(hf->model_type == "qwen3_next");
  CHECK(hf->model.linear_attention_freq == 4);
  CHECK(hf->model.attention_output_gate);
  CHECK(hf->model.moe_shared_expert_gate);
  Config a = share_link_defaults();
  Config b = a;
  a.model = hf->model;
  b.model = fixtures::preset_model("qwen3-next-80b-a3b");
  CHECK(share_link_differences(a, b).empty());
  CHECK(with_detected_presets(a).model_id == "qwen3-next-80b-a3b");
  a.training.seq_length = 4096;
  const Expected<Estimate> e = estimate(a, {false, false});
  REQUIRE(e.has_value());
  CHECK(e->totals.params == 79'674'391'296);
  CHECK(e->totals.mtp_params == 1'650'471'424);
  CHECK(std::abs(static_cast<double>(e->totals.params) - 80e9) < 0.5e9);
}

TEST_CASE("qwen3_next: Megatron flags in and out, share links, and the GDN rules") {
  const std::string flags = to_megatron_args(next());
  CHECK(flags.find("--experimental-attention-variant gated_delta_net") != std::string::npos);
  CHECK(flags.find("--linear-attention-freq 4") != std::string::npos);
  const Expected<MegatronArgs> back = parse_megatron_args(flags, 1, 1000);
  INFO((back ? std::string() : back.error().field + ": " + back.error().message));
  REQUIRE(back.has_value());
  CHECK(back->config.model.linear_attention_freq == 4);
  CHECK(back->config.model.linear_num_value_heads == 32);
  const Expected<MegatronArgs> no_freq = parse_megatron_args(
      "--num-layers 4 --hidden-size 256 --num-attention-heads 4 --seq-length 128 "
      "--micro-batch-size 1 --experimental-attention-variant gdn",
      1, 1000);
  CHECK_FALSE(no_freq.has_value());
  const Expected<MegatronArgs> no_variant = parse_megatron_args(
      "--num-layers 4 --hidden-size 256 --num-attention-heads 4 --seq-length 128 "
      "--micro-batch-size 1 --linear-attention-freq 4",
      1, 1000);
  REQUIRE(no_variant.has_value());
  CHECK(no_variant->config.model.linear_attention_freq == 0);
  CHECK_FALSE(no_variant->warnings.empty());
  SharedConfig shared;
  shared.config = next(2, 8);
  shared.config.model.linear_num_key_heads = 8;
  const Expected<SharedConfig> link = decode_share_link(share_link(shared, ""));
  REQUIRE(link.has_value());
  CHECK(link->config.model.linear_attention_freq == 4);
  CHECK(share_link_differences(link->config, shared.config).empty());
  Config bad = next(2, 2);  // 3 key heads over TP 2
  bad.model.linear_num_key_heads = 3;
  bad.model.linear_num_value_heads = 6;
  const Expected<NormalizedConfig> n = normalize(bad);
  REQUIRE_FALSE(n.has_value());
  CHECK(n.error().field == "linear_num_key_heads");
}

TEST_CASE("qwen3_next: the planner finds layouts for Qwen3-Next-80B-A3B on 64 H100s") {
  const PlanResult result = testing::plan_on_64_h100(next(1, 64));
  REQUIRE_FALSE(result.top.empty());
  CHECK(result.stats.fitting > 0);
  for (const PlanCandidate& candidate : result.top) {
    CHECK(estimate(candidate.config, {false, false}).has_value());
  }
}

namespace {

// Qwen/Qwen3.5-397B-A17B's config.json, the language model's fields (the vision_config is
// not estimated). Its text_config has no intermediate_size: every layer is MoE.
constexpr const char* kQwen35_397B = R"json({
  "architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
  "tie_word_embeddings": false,
  "text_config": {
    "model_type": "qwen3_5_moe_text", "attention_bias": false, "attn_output_gate": true,
    "full_attention_interval": 4, "head_dim": 256, "hidden_act": "silu", "hidden_size": 4096,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 64, "linear_value_head_dim": 128,
    "max_position_embeddings": 262144, "moe_intermediate_size": 1024,
    "mtp_num_hidden_layers": 1, "num_attention_heads": 32, "num_experts": 512,
    "num_experts_per_tok": 10, "num_hidden_layers": 60, "num_key_value_heads": 2,
    "rms_norm_eps": 1e-6, "shared_expert_intermediate_size": 1024,
    "tie_word_embeddings": false, "vocab_size": 248320},
  "vision_config": {"model_type": "qwen3_5_vision", "depth": 27}})json";

}  // namespace

// By hand: a gated attention layer 104,862,208 (q_proj 4096 x 2 x 32 x 256 with the gate, k
// and v 4096 x 512 each, o 8192 x 4096, q/k norms of 256, the input norm); a Gated DeltaNet
// layer 118,018,304 (in_proj_qkvz 4096 x 20480, in_proj_ba 4096 x 128, conv1d 12288 x 4,
// A_log and dt_bias of 64, the output norm of 128, out_proj 8192 x 4096, the input norm); the
// MoE 6,457,139,200 (512 + 1 experts of 3 x 4096 x 1024, the shared gate, a 512 x 4096 router,
// the pre-MLP norm); 15 attention and 45 Gated DeltaNet layers; 2 x 248320 x 4096 vocabulary
// matrices and the final norm. The MTP layer is counted apart.
TEST_CASE("Qwen3.5-397B-A17B's config.json is the qwen3.5-397b-a17b preset") {
  const Expected<HfImport> hf = import_hf_config(kQwen35_397B);
  INFO((hf ? std::string() : hf.error().field + ": " + hf.error().message));
  REQUIRE(hf.has_value());
  CHECK(hf->model.linear_attention_freq == 4);
  CHECK(hf->model.attention_output_gate);
  CHECK(hf->model.mtp_num_layers == 1);
  CHECK(hf->model.moe_shared_expert_gate);
  hf_test::check_matches_preset(hf->model, "qwen3.5-397b-a17b");
  const std::int64_t moe = 6'457'139'200;
  const std::int64_t expected =
      2 * std::int64_t{248320} * 4096 + 4096 + 15 * (104'862'208 + moe) + 45 * (118'018'304 + moe);
  CHECK(expected == 396'346'350'336);
  CHECK(hf_test::total_params(hf->model) == expected);
  hf_test::check_near(hf_test::total_params(hf->model), 397e9);  // model card, vision included
}

TEST_CASE("Qwen3.5's dense text model and an all-MoE model's missing intermediate_size") {
  std::string dense = kQwen35_397B;
  for (const char* moe_key :
       {"\"moe_intermediate_size\": 1024,", "\"num_experts\": 512,", "\"num_experts_per_tok\": 10,",
        "\"shared_expert_intermediate_size\": 1024,"}) {
    dense.erase(dense.find(moe_key), std::string(moe_key).size());
  }
  const std::string without_ffn = dense;
  dense.replace(dense.find("qwen3_5_moe_text"), 16, "qwen3_5_text");
  dense.replace(dense.find("\"head_dim\""), 0, "\"intermediate_size\": 17408, ");
  const Expected<HfImport> hf = import_hf_config(dense);
  INFO((hf ? std::string() : hf.error().field + ": " + hf.error().message));
  REQUIRE(hf.has_value());
  CHECK(hf->model.num_experts == 0);
  CHECK(hf->model.ffn_hidden_size == 17408);
  CHECK(hf->model.linear_attention_freq == 4);
  CHECK(hf->model.qk_layernorm);
  // A dense model needs its MLP width; only an all-MoE Qwen config may leave it out.
  std::string dense_without_ffn = without_ffn;
  dense_without_ffn.replace(dense_without_ffn.find("qwen3_5_moe_text"), 16, "qwen3_5_text");
  const Expected<HfImport> missing = import_hf_config(dense_without_ffn);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().field == "intermediate_size");
}
