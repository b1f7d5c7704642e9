// Presets of #25, part h: MiniMax-M3's text backbone (minimax_m3_vl's text_config) imports from
// its config.json as the preset, with the parameter count derived by hand, and the part it
// brought: the fp32 router weight Megatron-Bridge's MiniMax-M3 provider keeps
// (test_presets_2026.cpp estimates the preset on 8 to 1,024 GPUs).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/MiniMaxAI/MiniMax-M3/blob/main/config.json's text_config
// (huggingface.co cannot be fetched from this build) as a public copy prints it: lablup/mlxcel's
// MiniMax-M3 text-decoder tests (REAL_TEXT_CONFIG, "the real MiniMaxAI/MiniMax-M3 text_config"
// laid out flat, with model_type minimax_m3). The 60 layers, 3 dense, 128 experts top-4, GQA
// 64/4 and the 6144/1280 text/vision widths agree with Megatron-Bridge's
// docs/models/minimax/minimax-m3.md; its verification card counts 57 lightning-indexer layers.
//
// How the layouts are spelled: the released config's 0/1 lists (moe_layer_freq and
// sparse_attention_config.sparse_attention_freq), or transformers' native MiniMaxM3VL text
// config's mlp_layer_types and layer_types, which minimax_m3_bridge.py reads when the lists are
// absent. `model_type` empty leaves the field out (the wrapper's text_config).
std::string text_config(const std::string& model_type, bool native = false, int dense = 3) {
  std::string bits = "[0,0,0", mlp = "[\"dense\",\"dense\",\"dense\"";
  std::string attention = "[\"full_attention\",\"full_attention\",\"full_attention\"";
  for (int i = 3; i < 60; ++i) {
    bits += ",1";
    mlp += ",\"sparse\"";
    attention += ",\"minimax_m3_sparse\"";
  }
  if (dense != 3) mlp.erase(mlp.find(",\"dense\""), 8);  // one entry short
  std::string text = "{";
  if (!model_type.empty()) text += "\"model_type\": \"" + model_type + "\", ";
  text += R"("hidden_size": 6144, "intermediate_size": 3072, "num_hidden_layers": 60,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 200064,
    "max_position_embeddings": 1048576, "rms_norm_eps": 1e-06, "use_gemma_norm": true,
    "attention_output_gate": false, "rope_theta": 5000000, "rotary_dim": 64,
    "partial_rotary_factor": 0.5, "hidden_act": "swigluoai", "use_qk_norm": true,
    "qk_norm_type": "per_head", "tie_word_embeddings": false, "dense_intermediate_size": 12288,
    "shared_intermediate_size": 3072, "num_local_experts": 128, "num_experts_per_tok": 4,
    "n_shared_experts": 1, "scoring_func": "sigmoid", "use_routing_bias": true,
    "routed_scaling_factor": 2.0, "swiglu_alpha": 1.702, "swiglu_limit": 7.0,
    "num_mtp_modules": 7, "num_nextn_predict_layers": 1, )";
  if (native) {
    return text + "\"mlp_layer_types\": " + mlp + "], \"layer_types\": " + attention + "]}";
  }
  text += "\"moe_layer_freq\": " + bits + R"(], "sparse_attention_config": {
    "use_sparse_attention": true, "sparse_index_dim": 128, "sparse_num_index_heads": 4,
    "sparse_topk_blocks": 16, "sparse_block_size": 128, "sparse_score_type": "max",
    "sparse_init_block": 0, "sparse_local_block": 1, "sparse_attention_freq": )";
  return text + bits + "], \"sparse_disable_index_value\": " + bits + "]}}";
}

// The wrapper as Megatron-Bridge's bridge names it (register_bridge model_type minimax_m3_vl,
// architectures MiniMaxM3SparseForConditionalGeneration; its unit test's toy config has a
// text_config without a model_type of its own). Vision fields are not read.
std::string wrapped_config() {
  return R"({"architectures": ["MiniMaxM3SparseForConditionalGeneration"],
    "model_type": "minimax_m3_vl", "tie_word_embeddings": false, "text_config": )" +
         text_config("") + R"(, "vision_config": {"hidden_size": 1280, "num_hidden_layers": 32}})";
}

bool has_note(const HfImport& hf, const std::string& text) {
  for (const std::string& note : hf.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("minimax_m3: MiniMax-M3's text backbone imports as the preset, 425,950,417,920") {
  const HfImport hf = import(text_config("minimax_m3").c_str());
  CHECK(hf.model_type == "minimax_m3");
  CHECK(hf.model.ffn_hidden_size == 12288);     // dense_intermediate_size
  CHECK(hf.model.moe_ffn_hidden_size == 3072);  // intermediate_size: the expert's
  CHECK(hf.model.moe_shared_expert_intermediate_size == 3072);
  CHECK(hf.model.moe_router_fp32_params);
  CHECK(hf.model.moe_router_enable_expert_bias);
  CHECK(hf.model.mtp_num_layers == 0);  // the bridge forces mtp_num_layers None
  CHECK(has_note(hf, "57 lightning-indexer layers"));
  CHECK(has_note(hf, "num_nextn_predict_layers 1"));
  CHECK(has_note(hf, "swigluoai"));
  check_matches_preset(hf.model, "minimax-m3");
  // Per layer: QKV 6144 x (64 + 2 x 4) x 128, linear_proj 8192 x 6144, the per-head q/k norms
  // (128 each) and the input norm; layers 0-2 a SwiGLU MLP 3 x 6144 x 12288 and its norm;
  // layers 3-59 128 routed experts and the shared one, 3 x 6144 x 3072 each, the 128 x 6144
  // router and the pre-MLP norm; two 200064 x 6144 vocabulary matrices and the final norm.
  const std::int64_t attention =
      std::int64_t{6144} * 72 * 128 + std::int64_t{8192} * 6144 + 2 * 128 + 6144;
  const std::int64_t dense = std::int64_t{3} * 6144 * 12288 + 6144;
  const std::int64_t expert = std::int64_t{3} * 6144 * 3072;
  const std::int64_t moe = 129 * expert + 128 * 6144 + 6144;
  const std::int64_t embeddings = 2 * std::int64_t{200064} * 6144;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == embeddings + 60 * attention + 3 * dense + 57 * moe + 6144);
  CHECK(total == 425'950'417'920);
  // Model card: ~428B total, the vision tower, its projectors and the 57 lightning indexers
  // (4 x 128 x 6144 + 128 x 6144 + 2 x 128 = 3,932,416 each) included: -0.48%.
  CHECK(std::abs(static_cast<double>(total) / 428e9 - 1.0) <= 0.005);
  // ~23B activated: with top-4 of 128 routed experts the tensors count 25,738,318,848 per
  // token, 23,279,932,416 without the two vocabulary matrices, which the card rounds.
  const std::int64_t active = total - 57 * 124 * expert;
  CHECK(active == 25'738'318'848);
  CHECK(std::llround(static_cast<double>(active - embeddings) / 1e9) == 23);
}

TEST_CASE("minimax_m3: the minimax_m3_vl wrapper and the native spellings import the same") {
  // The wrapper's text_config has no model_type; the vision tower is named as not estimated.
  const HfImport wrapped = import(wrapped_config().c_str());
  CHECK(wrapped.model_type == "minimax_m3");
  CHECK(has_note(wrapped, "vision encoder"));
  check_matches_preset(wrapped.model, "minimax-m3");
  // Transformers' native config (model_type minimax_m3_vl_text) spells the layouts as
  // mlp_layer_types and layer_types, which minimax_m3_bridge.py reads when moe_layer_freq and
  // sparse_attention_config are absent.
  const HfImport hf = import(text_config("minimax_m3_vl_text", true).c_str());
  CHECK(hf.model_type == "minimax_m3_vl_text");
  CHECK(has_note(hf, "57 lightning-indexer layers"));
  check_matches_preset(hf.model, "minimax-m3");
  // A layout list of the wrong length is named.
  CHECK(import_error(text_config("minimax_m3_vl_text", true, 2)).field == "mlp_layer_types");
  // Only MiniMax-M3 takes swigluoai.
  CHECK(import_error(R"json({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
    "hidden_act": "swigluoai"})json")
            .field == "hidden_act");
}

namespace {

struct Bytes {
  double weight, gradient, optimizer, step, activation;
};

Bytes bytes_of(const Config& c) {
  const Expected<Estimate> e = estimate(c, {false, false});
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  const auto& r = e->ranks[0];
  return {static_cast<double>(r.weight_bytes), static_cast<double>(r.gradient_bytes),
          static_cast<double>(r.optimizer_bytes), static_cast<double>(r.optimizer_step_bytes),
          static_cast<double>(r.activation_bytes_per_microbatch)};
}

// testing::tiny_gpt's 4 layers as MoE layers of 8 experts top-2 without biases (DP 8), with
// `extra`: its routers in the params dtype and as fp32 parameters.
struct RouterPair {
  Config plain, fp32;
};

RouterPair tiny_moe(const std::string& extra) {
  RouterPair pair;
  pair.plain =
      testing::tiny_gpt("--disable-bias-linear --num-experts 8 --moe-router-topk 2 " + extra);
  pair.fp32 = pair.plain;
  pair.fp32.model.moe_router_fp32_params = true;
  return pair;
}

// 4 routers of 8 x 512.
constexpr double kRouters = 4 * 8 * 512;

}  // namespace

TEST_CASE("fp32 router weight: a 4-byte parameter with an fp32 grad and no master copy") {
  // 4 routers of 8 x 512 = 16,384 elements. As fp32 parameters (minimax_m3_bridge.py
  // _promote_router_weights_to_float32) each weighs 4 bytes instead of 2; its grad is fp32 as
  // the bf16 routers' accumulated grads are; Float16OptimizerWithFloat16Params steps it in
  // place (fp32_from_fp32_groups): Adam's 8 bytes without the 4-byte master.
  // No distributed optimizer: no padding.
  auto [plain, fp32] = tiny_moe("");
  const Bytes a = bytes_of(plain), b = bytes_of(fp32);
  CHECK(b.weight - a.weight == 2 * kRouters);
  CHECK(b.gradient == a.gradient);
  CHECK(a.optimizer - b.optimizer == 4 * kRouters);
  // MiniMaxM3TopKRouter.gating widens its input to fp32 and RouterGatingLinearFunction saves
  // it: 4096 tokens x 512 x 4 bytes more per layer and micro-batch.
  CHECK(b.activation - a.activation == 4 * 4096.0 * 512 * 4);
  // With bf16 grads the others reduce in bf16, the fp32 router in fp32 (group_params_for_buffers:
  // its own dtype), and the step's fp32 copy of a 16-bit grad is not made for it.
  plain.optimizer.grad_reduce_in_bf16 = true;
  fp32.optimizer.grad_reduce_in_bf16 = true;
  const Bytes c = bytes_of(plain), d = bytes_of(fp32);
  CHECK(d.gradient - c.gradient == 2 * kRouters);
  CHECK(c.step - d.step == 4 * kRouters);
}

TEST_CASE("fp32 router weight: a DDP buffer of its own, and TE FusedAdam's master state") {
  // With the distributed optimizer the fp32 routers are a third buffer of the chunk, padded on
  // their own: 4 x 4,096 elements, each 64-aligned, the buffer's end to lcm(DP 8, 128) = 128:
  // already aligned, so no padding is added and the dense buffer loses exactly the routers.
  auto [plain, fp32] = tiny_moe("--use-distributed-optimizer");
  const Bytes a = bytes_of(plain), b = bytes_of(fp32);
  CHECK(b.weight - a.weight == 2 * kRouters);
  CHECK(a.optimizer - b.optimizer == 4 * kRouters / 8);
  // The precision-aware optimizer with TE owning the masters (no FP8 recipe): TE FusedAdam's
  // initialize_state makes a master_param for every parameter, a bf16 router's as a 2-byte
  // remainder, the fp32 routers' whole (the remainder form is for bf16 parameters): 2 bytes
  // more each beside the same fp32 moments, sharded over DP 8.
  plain.optimizer.use_precision_aware_optimizer = true;
  fp32.optimizer.use_precision_aware_optimizer = true;
  CHECK(bytes_of(fp32).optimizer - bytes_of(plain).optimizer == 2 * kRouters / 8);
  // With MCore keeping the masters (opt-fp8-recipe tensorwise, as Bridge's bf16 runs) the fp32
  // routers have none: 4 bytes fewer each, sharded over DP 8.
  plain.optimizer.fp8_recipe = Fp8Recipe::tensorwise;
  fp32.optimizer.fp8_recipe = Fp8Recipe::tensorwise;
  CHECK(bytes_of(plain).optimizer - bytes_of(fp32).optimizer == 4 * kRouters / 8);
}
