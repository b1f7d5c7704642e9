// Presets of #25, part k: Kimi-K3 (kimi_k3 wrapping a kimi_linear text_config) as
// Megatron-Bridge's KimiK3Bridge builds it, with the parts it brought: Kimi Delta Attention
// (kimi_delta_attention.cpp), Attention Residuals (attention_residuals.cpp), the MLA output
// gate and the routed-expert norm, each with a hand-checked size; the config.json import as
// the preset, the parameter count against the model card, and the Bridge rules.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "activation_helpers.hpp"
#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/estimate.hpp"
#include "memory/activations.hpp"
#include "model_fixtures.hpp"
#include "modules/module_spec.hpp"

using namespace megamem;
using namespace megamem::hf_test;
using megamem::testing::attention_saved_bytes;
using megamem::testing::normalize_error;
using megamem::testing::normalized;

namespace {

// https://huggingface.co/moonshotai/Kimi-K3/blob/main/config.json (huggingface.co cannot be
// fetched from this build; checked against public copies that quote it, which spell
// linear_attn_config's lists as full_attn_layers 4, 8, ..., 92, 93 and kda_layers the other
// 69, as Megatron-Bridge's examples/conversion/create_hf_toy_model.py describes them). The
// language model's keys as published; vision_config and quantization_config shortened.
const char* kKimiK3 = R"json({
  "architectures": ["KimiK3ForConditionalGeneration"],
  "model_type": "kimi_k3",
  "tie_word_embeddings": false,
  "vision_config": {"vt_hidden_size": 1024, "vt_num_hidden_layers": 27,
    "mm_projector_type": "patchmergerv2", "text_hidden_size": 7168},
  "text_config": {
    "activation_situ_beta": 4.0,
    "activation_situ_linear_beta": 25.0,
    "architectures": ["KimiLinearForCausalLM"],
    "attn_res_block_size": 12,
    "bos_token_id": 163584,
    "dtype": "bfloat16",
    "eos_token_id": 163586,
    "first_k_dense_replace": 1,
    "hidden_act": "situ",
    "hidden_size": 7168,
    "initializer_range": 0.02,
    "intermediate_size": 33792,
    "kv_lora_rank": 512,
    "latent_moe_use_norm": true,
    "linear_attn_config": {
      "full_attn_layers": [4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72,
        76, 80, 84, 88, 92, 93],
      "gate_lower_bound": -5.0,
      "head_dim": 128,
      "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26, 27,
        29, 30, 31, 33, 34, 35, 37, 38, 39, 41, 42, 43, 45, 46, 47, 49, 50, 51, 53, 54, 55, 57,
        58, 59, 61, 62, 63, 65, 66, 67, 69, 70, 71, 73, 74, 75, 77, 78, 79, 81, 82, 83, 85, 86,
        87, 89, 90, 91],
      "num_heads": 96,
      "short_conv_kernel_size": 4,
      "use_full_rank_gate": true
    },
    "max_position_embeddings": 1048576,
    "mla_use_nope": true,
    "mla_use_output_gate": true,
    "model_type": "kimi_linear",
    "moe_intermediate_size": 3072,
    "moe_layer_freq": 1,
    "moe_renormalize": true,
    "moe_router_activation_func": "sigmoid",
    "num_attention_heads": 96,
    "num_expert_group": 1,
    "num_experts": 896,
    "num_experts_per_token": 16,
    "num_hidden_layers": 93,
    "num_key_value_heads": 96,
    "num_nextn_predict_layers": 0,
    "num_shared_experts": 2,
    "pad_token_id": 163839,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "quantization_config": {"format": "mxfp4-pack-quantized", "quant_method": "compressed-tensors"},
    "rms_norm_eps": 0.00001,
    "routed_expert_hidden_size": 3584,
    "routed_scaling_factor": 1.0,
    "tie_word_embeddings": false,
    "topk_group": 1,
    "topk_method": "noaux_tc",
    "use_cache": true,
    "use_grouped_topk": true,
    "v_head_dim": 128,
    "vocab_size": 163840
  }
})json";

Config k3(int tp = 1, int world = 1) {
  Config c = fixtures::preset_training("kimi-k3");
  c.parallel.world_size = world;
  c.parallel.tensor_parallel = tp;
  c.parallel.sequence_parallel = tp > 1;
  c.parallel.expert_parallel = 1;
  c.training.seq_length = 4096;
  c.training.micro_batch_size = 1;
  return c;
}

}  // namespace

// Per layer (h 7168, P = 96 x 128 = 12288), from kimi_k3_layers.py and the MoE shapes:
//   KDA: input norm h + q/k/v_proj 3 P h + conv1d 3 P 4 + f_a_proj h 128 + f_b_proj 128 P
//        + b_proj 96 h + g_proj P h + A_log 96 + dt_bias P + o_norm 128 + o_proj h P
//        = 443,747,552
//   MLA: input norm h + q_a 1536 h + q_a norm 1536 + q_b 96 x 192 x 1536 + kv_a 576 h
//        + kv_a norm 512 + kv_b 96 x 256 x 512 + g_proj P h + o_proj h P = 232,203,264
//   every layer: AttnRes norms and score vectors 4 h, the pre-MLP norm h
//   layer 0: SiTU-GLU MLP 3 x h x 33792; layers 1-92: router 896 h (its 896 expert biases
//        are buffers, not parameters), latent projections 2 x h x 3584, routed_expert_norm 3584,
//        896 experts 3 x 3584 x 3072, shared experts 3 x h x 6144
//   untied 2 x 163840 x h, final norm h and the last layer's output mix 2 h.
TEST_CASE("kimi_k3: Kimi-K3 imports as the preset, 2,779,484,393,568 parameters") {
  const HfImport hf = import(kKimiK3);
  CHECK(hf.model_type == "kimi_linear");
  CHECK(hf.model.attn_res_block_size == 12);
  CHECK(hf.model.moe_latent_size == 3584);
  CHECK(hf.model.position_embedding == PositionEmbedding::none);
  REQUIRE(hf.model.kda_layer_pattern.size() == 93);
  int kda = 0;
  for (const auto bit : hf.model.kda_layer_pattern) kda += bit;
  CHECK(kda == 69);
  CHECK(hf.model.kda_layer_pattern[92] == 0);  // layer 93 is MLA
  check_matches_preset(hf.model, "kimi-k3");
  const std::int64_t h = 7168, p = 12288;
  const std::int64_t kda_layer =
      h + 3 * p * h + 3 * p * 4 + h * 128 + 128 * p + 96 * h + p * h + 96 + p + 128 + h * p;
  const std::int64_t mla_layer =
      h + 1536 * h + 1536 + 96 * 192 * 1536 + 576 * h + 512 + 96 * 256 * 512 + p * h + h * p;
  CHECK(kda_layer == 443'747'552);
  CHECK(mla_layer == 232'203'264);
  const std::int64_t expert = 3 * std::int64_t{3584} * 3072;
  const std::int64_t moe = 896 * h + 2 * h * 3584 + 3584 + 896 * expert + 3 * h * 6144;
  const std::int64_t embeddings = 2 * std::int64_t{163840} * h;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 69 * kda_layer + 24 * mla_layer + 93 * 5 * h + 3 * h * 33792 + 92 * moe +
                     embeddings + 3 * h);
  CHECK(total == 2'779'484'393'568);
  // Kimi K3 technical report (arXiv 2607.24653), Table 1: 2.78T total (-0.02%), 104.2B
  // activated; the model card rounds them to 2.8T and 104B. Activated: top-16 of 896 experts,
  // without the input embedding (a lookup): 104,189,530,208 (-0.01%).
  CHECK(std::abs(static_cast<double>(total) / 2.78e12 - 1.0) <= 0.005);
  CHECK(std::llround(static_cast<double>(total) / 1e11) == 28);
  const std::int64_t active = total - 92 * 880 * expert - embeddings / 2;
  CHECK(active == 104'189'530'208);
  CHECK(std::abs(static_cast<double>(active) / 104.2e9 - 1.0) <= 0.005);
  CHECK(std::llround(static_cast<double>(active) / 1e9) == 104);
  REQUIRE_FALSE(hf.notes.empty());
  CHECK(hf.notes[0].find("situ") != std::string::npos);
}

TEST_CASE("kimi_k3: KimiK3Bridge's reads of kimi_linear fail on what it needs") {
  std::string text = kKimiK3;
  text.replace(text.find("\"attn_res_block_size\": 12,"), 26, "");
  CHECK(import_error(text).field == "attn_res_block_size");
  std::string out_of_range = kKimiK3;
  out_of_range.replace(out_of_range.find("[1, 2, 3, 5,"), 12, "[94, 2, 3, 5,");
  CHECK(import_error(out_of_range).field == "kda_layers");
  std::string gelu = kKimiK3;
  gelu.replace(gelu.find("\"hidden_act\": \"situ\""), 20, "\"hidden_act\": \"gelu\"");
  CHECK(import_error(gelu).field == "hidden_act");
}

TEST_CASE("kimi_k3: layers follow the KDA list; MLA every fourth and the last") {
  const NormalizedConfig n = normalized(k3());
  REQUIRE(n.layer_kinds.size() == 93);
  CHECK(n.layer_kinds[0] == LayerKind::gdn);  // the dense layer is KDA
  CHECK(n.layer_kinds[1] == LayerKind::gdn_moe);
  CHECK(n.layer_kinds[3] == LayerKind::moe);
  CHECK(n.layer_kinds[92] == LayerKind::moe);
}

// One KDA layer, seq 4096, micro-batch 1, TP 1, bf16 (N = 4096, h = 7168, 96 heads of 128,
// P = 12288), in bytes (kimi_delta_attention.cpp):
//   input norm input, rstd            N h 2 + N 4               =    58,736,640
//   gathered input (projections')     N h 2                     =    58,720,256
//   short-convolution inputs q, k, v  3 N P 2                   =   301,989,888
//   f_b_proj input                    N 128 2                   =     1,048,576
//   chunk_kda q, k and rstd           2 N P 2 + 2 N 96 4        =   204,472,320
//   v, raw gate g                     2 x N P 2                 =   201,326,592
//   beta (fp32)                       N 96 4                    =     1,572,864
//   Aqk, Akk                          2 N 96 64 2               =   100,663,296
//   gated norm inputs, rstd           2 N P 2 + N 96 4          =   202,899,456
//   o_proj input                      N P 2                     =   100,663,296
//   total                                                       = 1,232,093,184
TEST_CASE("kimi_k3: one Kimi Delta Attention layer's saved tensors by hand") {
  const LayerActivations one = layer_activations(normalized(k3()), LayerKind::gdn_moe);
  CHECK(attention_saved_bytes(one) == 1'232'093'184.0);
  // TP 2 with sequence parallelism: the norm's input and rstd halve; the gathered input (the
  // linears run with sequence_parallel off) and f_b_proj's input (f_a_proj is duplicated) stay
  // whole; the rest halves.
  const LayerActivations two = layer_activations(normalized(k3(2, 2)), LayerKind::gdn_moe);
  CHECK(attention_saved_bytes(two) ==
        58'736'640.0 / 2 + 58'720'256.0 + 1'048'576.0 + (1'114'636'288.0 - 1'048'576.0) / 2);
}

// Attention Residuals, seq 4096, micro-batch 1, TP 1 (h 7168, block 12), per mix of r rows
// 4 N (2 r h + 2 r) bytes: layer 0 mixes only for its MLP, over the bank it just wrote and the
// prefix (2 rows, 469,827,584); layer 13 twice over 3 rows (1,409,482,752); layer 84 writes a
// snapshot first (8 rows for attention, 9 for the MLP: 3,993,534,464); the last layer (92)
// mixes three times over 9 rows (6,342,672,384). A stage starting at layer 47 receives the
// prefix and 4 snapshots: 2 N h x 5 = 293,601,280.
TEST_CASE("kimi_k3: Attention Residuals' saved mixes and stage input by hand") {
  const NormalizedConfig n = normalized(k3());
  const ActivationShape s = activation_shape(n);
  const ModelConfig& m = n.config.model;
  CHECK(attn_res_saved_bytes(m, s, 0) == 469'827'584.0);
  CHECK(attn_res_saved_bytes(m, s, 13) == 1'409'482'752.0);
  CHECK(attn_res_saved_bytes(m, s, 84) == 3'993'534'464.0);
  CHECK(attn_res_saved_bytes(m, s, 92) == 6'342'672'384.0);
  CHECK(attn_res_stage_input_bytes(m, s, 47) == 293'601'280.0);
  CHECK(attn_res_stage_input_bytes(m, s, 0) == 0.0);
  ModelConfig plain = m;
  plain.attn_res_block_size = 0;
  CHECK(attn_res_saved_bytes(plain, s, 13) == 0.0);
}

// KimiK3Attention._forward_mla, seq 4096, TP 1, per token: the gate's sigmoid output and gated
// output 2 x 96 x 128 x 2 = 49,152 bytes; KimiRMSNorm as q_a/kv_a norms keeps an fp32 copy, an
// fp32 rsqrt, the bf16 normalised input and output, 1536 x 8 + 4 and 512 x 8 + 4, where
// Megatron's MLA keeps the bf16 down-projection outputs and norm outputs, 1536 x 4 and
// (512 + 64) x 2 + 512 x 2: 8,072 more; in all 4096 x 57,224 = 234,389,504 bytes.
// KimiK3MoELayer's routed_expert_norm: N 3584 (4 + 2) + N 4.
TEST_CASE(
    "kimi_k3: the MLA output gate, its KimiRMSNorm norms and the routed-expert norm by hand") {
  const NormalizedConfig n = normalized(k3());
  Config c = k3();
  c.model.attn_res_block_size = 0;
  const NormalizedConfig plain = normalized(c);
  const LayerActivations with = layer_activations(n, LayerKind::moe);
  const LayerActivations without = layer_activations(plain, LayerKind::moe);
  const auto bytes = [](const LayerActivations& a, ModuleKind module) {
    return testing::module_saved_bytes(a, {module});
  };
  CHECK(bytes(with, ModuleKind::self_attention) - bytes(without, ModuleKind::self_attention) ==
        234'389'504.0);
  CHECK(bytes(with, ModuleKind::moe_latent_projection) -
            bytes(without, ModuleKind::moe_latent_projection) ==
        4096.0 * 3584 * 6 + 4096.0 * 4);
  CHECK(total_params(n.config.model) - total_params(plain.config.model) ==
        24 * std::int64_t{7168} * 12288 + 92 * 3584 + 93 * 4 * 7168 + 2 * 7168);
}

// SiTU-GLU (kimi_k3_ops.py situ_and_mul), seq 4096, TP 1, EP 1: six fp32 tensors of the output
// width in place of unfused SwiGLU's bf16 fc1 output (twice the width) and glu()'s two product
// inputs (mlp.py). Layer 0's dense MLP (33792): 4096 x 33792 x (24 - 8) = 2,214,592,512 more
// bytes; the shared experts (6144) the same per element. The routed experts (16 x 4096 tokens of
// 3072): 65536 x 3072 x (24 - 4) more, and the probability product keeps one bf16 copy of the
// activation output instead of an unfused GLU's three (glu()'s two product inputs and its
// output), 65536 x 3072 x 2 x 2 fewer: 3,221,225,472 more (both without bias-activation fusion,
// as the bridge sets it). Under
// moe_act recompute the activation's checkpoint keeps fc1's output instead.
TEST_CASE("kimi_k3: SiTU-GLU's fp32 intermediates by hand") {
  Config k = k3();
  k.training.bias_activation_fusion = false;  // KimiK3Bridge.provider_bridge
  const NormalizedConfig n = normalized(k);
  Config c = k;
  c.model.attn_res_block_size = 0;
  const NormalizedConfig plain = normalized(c);
  const auto diff = [&](LayerKind kind, ModuleKind module) {
    return testing::module_saved_bytes(layer_activations(n, kind), {module}) -
           testing::module_saved_bytes(layer_activations(plain, kind), {module});
  };
  CHECK(diff(LayerKind::gdn, ModuleKind::mlp) == 2'214'592'512.0);
  CHECK(diff(LayerKind::moe, ModuleKind::routed_experts) == 3'221'225'472.0);
  CHECK(diff(LayerKind::moe, ModuleKind::shared_experts) == 4096.0 * 6144 * 16);
  Config act = k;
  act.training.moe_grouped_gemm = true;
  act.training.recompute.granularity = RecomputeGranularity::selective;
  act.training.recompute.modules = {RecomputeModule::moe_act};
  const LayerActivations checkpointed = layer_activations(normalized(act), LayerKind::moe);
  bool fc1_output = false;
  for (const SavedActivation& saved : checkpointed.saved) {
    fc1_output = fc1_output || std::string(saved.tensor) == "expert fc1 output";
  }
  CHECK(fc1_output);
}

// KimiK3TransformerLayer.forward calls its norms, attention and MLP directly and KimiK3Attention
// its core attention directly: TransformerLayer's layernorm and mlp checkpoints and Megatron
// attention's core_attn and mla_up_proj never run (a warning says so); moe_act still does.
TEST_CASE("kimi_k3: selective recompute the K3 layer never reaches changes nothing") {
  const LayerActivations none = layer_activations(normalized(k3()), LayerKind::moe);
  Config c = k3();
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::core_attn, RecomputeModule::mla_up_proj,
                                  RecomputeModule::layernorm, RecomputeModule::mlp};
  const NormalizedConfig n = normalized(c);
  CHECK(layer_activations(n, LayerKind::moe).kept_bytes == none.kept_bytes);
  CHECK(layer_activations(n, LayerKind::gdn).kept_bytes ==
        layer_activations(normalized(k3()), LayerKind::gdn).kept_bytes);
  CHECK(n.warnings.size() >= 4);
  c.training.moe_grouped_gemm = true;
  c.training.recompute.modules = {RecomputeModule::moe_act};
  CHECK(layer_activations(normalized(c), LayerKind::moe).kept_bytes < none.kept_bytes);
}

TEST_CASE("kimi_k3: the Bridge's rules for KDA and Attention Residuals") {
  Config cp = k3(1, 2);
  cp.parallel.context_parallel = 2;
  CHECK(normalize_error(cp).field == "context_parallel");
  Config heads = k3(2, 2);
  heads.model.kda_num_heads = 95;
  CHECK(normalize_error(heads).field == "kda_num_heads");
  Config dropout = k3();
  dropout.model.hidden_dropout = 0.1;
  CHECK(normalize_error(dropout).field == "hidden_dropout");
  Config both = k3();
  both.model.linear_attention_freq = 4;
  CHECK(normalize_error(both).field == "kda_layer_pattern");
}
