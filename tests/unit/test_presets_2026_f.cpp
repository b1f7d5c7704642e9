// Presets of #25, part f: Step-3.5-Flash (step3p5, Step3p5ForCausalLM) imports from its
// config.json as the preset, with the parameter count derived by hand (test_presets_2026.cpp
// estimates it on 8 to 1,024 GPUs and tests the part it brought, Megatron-LM dev's head-wise
// attention output gate).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "hf_import_helpers.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/stepfun-ai/Step-3.5-Flash/blob/main/config.json (huggingface.co cannot
// be fetched from this build) as a public Megatron-Bridge fork vendors it for its tests
// (github.com/yevvonlim/Megatron-Bridge, tests/unit_tests/models/step3p5/_reference/config.json
// at commit 2023060258425968ad5401c99153723cee8cd114): the same JSON, lists re-wrapped. Its
// shapes agree with Megatron-Bridge's verification card for the Hub checkpoint
// (examples/model_verification_cards/step35-flash/card.yaml; see the count below).
const char* kStep35Flash = R"json({
  "architectures": ["Step3p5ForCausalLM"],
  "model_type": "step3p5",
  "auto_map": {"AutoConfig": "configuration_step3p5.Step3p5Config",
    "AutoModelForCausalLM": "modeling_step3p5.Step3p5ForCausalLM"},
  "rope_scaling": {"rope_type": "llama3", "factor": 2.0,
    "original_max_position_embeddings": 131072, "low_freq_factor": 1.0, "high_freq_factor": 32.0},
  "yarn_only_types": ["full_attention"],
  "hidden_size": 4096,
  "intermediate_size": 11264,
  "num_hidden_layers": 45,
  "max_seq_len": 262144,
  "vocab_size": 128896,
  "torch_dtype": "bfloat16",
  "use_qk_norm": true,
  "moe_layers_enum": "3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44",
  "num_attention_heads": 64,
  "num_attention_groups": 8,
  "head_dim": 128,
  "use_moe": true,
  "moe_num_experts": 288,
  "moe_top_k": 8,
  "moe_intermediate_size": 1280,
  "share_expert_dim": 1280,
  "moe_layer_offset": 0,
  "moe_every_n_layer": 1,
  "norm_expert_weight": true,
  "moe_router_activation": "sigmoid",
  "moe_router_scaling_factor": 3.0,
  "att_impl_type": "GQA",
  "tie_word_embeddings": false,
  "rope_theta": [5000000.0, 10000.0, 10000.0, 10000.0, 5000000.0, 10000.0, 10000.0, 10000.0,
    5000000.0, 10000.0, 10000.0, 10000.0, 5000000.0, 10000.0, 10000.0, 10000.0, 5000000.0,
    10000.0, 10000.0, 10000.0, 5000000.0, 10000.0, 10000.0, 10000.0, 5000000.0, 10000.0, 10000.0,
    10000.0, 5000000.0, 10000.0, 10000.0, 10000.0, 5000000.0, 10000.0, 10000.0, 10000.0,
    5000000.0, 10000.0, 10000.0, 10000.0, 5000000.0, 10000.0, 10000.0, 10000.0, 5000000.0,
    10000.0, 10000.0, 10000.0],
  "use_head_wise_attn_gate": true,
  "sliding_window": 512,
  "use_moe_router_bias": true,
  "need_fp32_gate": true,
  "sink": false,
  "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention",
    "full_attention", "sliding_attention", "sliding_attention", "sliding_attention"],
  "use_rope_layers": [],
  "num_nextn_predict_layers": 3,
  "partial_rotary_factors": [0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0,
    1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5,
    1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0],
  "eos_token_id": [1, 2, 128007],
  "bos_token_id": 0,
  "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 96,
    "num_attention_groups": 8, "head_dim": 128, "true_head_dim": 128},
  "swiglu_limits": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7, 7, 0.0, 0.0, 0.0],
  "swiglu_limits_shared": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 16, 0.0, 0.0, 0.0],
  "zero_centered": true,
  "max_position_embeddings": 262144
})json";

// One layer's attention weights: QKV with `gate` rows (per head: 1 head-wise, 128 full), the
// output projection, the q/k norms (128 each) and the input norm.
std::int64_t attention(std::int64_t heads, std::int64_t gate_per_head) {
  const std::int64_t q = heads * 128;
  return 4096 * (q + heads * gate_per_head + 2 * 8 * 128) + q * 4096 + 2 * 128 + 4096;
}

}  // namespace

TEST_CASE("step3p5: Step-3.5-Flash imports as the preset, 196,956,118,272 parameters") {
  const HfImport hf = import(kStep35Flash);
  CHECK(hf.model_type == "step3p5");
  CHECK(hf.model.num_query_groups == 8);  // num_attention_groups (Step35Bridge CONFIG_MAPPING)
  CHECK(hf.model.window_size == 512);     // Step35Bridge: TE window [sliding_window, 0]
  CHECK(hf.model.window_num_attention_heads == 96);
  CHECK(hf.model.window_num_query_groups == 0);  // 8, as the full layers
  CHECK(hf.model.head_wise_attn_gate);
  CHECK_FALSE(hf.model.attention_output_gate);
  CHECK(hf.model.mtp_num_layers == 3);
  CHECK(hf.model.mtp_layer_kind == MtpLayerKind::dense_by_layer_index);
  REQUIRE(hf.model.window_attn_pattern.size() == 45);  // the 3 MTP entries split off
  int full_layers = 0;
  for (const auto windowed : hf.model.window_attn_pattern) full_layers += windowed == 0;
  CHECK(full_layers == 12);
  REQUIRE(hf.notes.size() == 4);
  CHECK(hf.notes[0].find("use_head_wise_attn_gate") != std::string::npos);
  CHECK(hf.notes[1].find("need_fp32_gate") != std::string::npos);
  CHECK(hf.notes[2].find("swiglu_limits") != std::string::npos);
  check_matches_preset(hf.model, "step-3.5-flash");
  // 12 full layers of 64 heads and 33 sliding of 96, each with a pre-MLP norm; layers 0-2 a
  // SwiGLU MLP 3 x 4096x11264, layers 3-44 288 experts and a shared expert of 3 x 4096x1280
  // and a 288x4096 router; two 128896 x 4096 vocabulary matrices and the final norm.
  const std::int64_t dense = std::int64_t{3} * 4096 * 11264;
  const std::int64_t expert = std::int64_t{3} * 4096 * 1280;
  const std::int64_t moe = 289 * expert + 288 * 4096;
  const std::int64_t embeddings = 2 * std::int64_t{128896} * 4096;
  const auto decoder = [&](std::int64_t gate_per_head) {
    return embeddings + 12 * attention(64, gate_per_head) + 33 * attention(96, gate_per_head) +
           45 * 4096 + 3 * dense + 42 * moe + 4096;
  };
  const std::int64_t total = total_params(hf.model);
  CHECK(total == decoder(1));
  CHECK(total == 196'956'118'272);
  // Model card: 196B (+0.49%, within the 0.5% aim). The Hub checkpoint holds these tensors,
  // the 3 MTP layers (enorm, hnorm, eh_proj 4096 x 8192, a sliding layer with the dense MLP,
  // a final norm, an output head each) and 42 x 288 fp32 router biases: Bridge's card reads
  // 398,768,626,944 serialized bytes.
  CHECK(std::abs(static_cast<double>(total) / 196e9 - 1.0) <= 0.005);
  const std::int64_t mtp =
      3 * (2 * 4096 + 2 * std::int64_t{4096} * 4096 + attention(96, 1) + dense + 4096 + 4096);
  CHECK(2 * (total + mtp + embeddings / 2 * 3) + 4 * 42 * 288 == 398'768'626'944);
  // build_step35_layer_spec: megamem builds those dense layers, sliding where the MTP stage
  // starts at layer 0 (Step35DecoderLayer indexes layer_types' appended MTP entries).
  CHECK(model_totals(hf.model).mtp_params == mtp);
  // Bridge's card also counts the Megatron model it built on a Megatron-Core without the
  // head-wise gate (the full output gate, 128 rows per head) with the MTP layers sharing the
  // output layer: 199,997,706,240.
  const std::int64_t mtp_full_gate = mtp + 3 * (attention(96, 128) - attention(96, 1));
  CHECK(decoder(128) + mtp_full_gate == 199'997'706'240);
  ModelConfig fallback = hf.model;
  fallback.head_wise_attn_gate = false;
  fallback.attention_output_gate = true;
  CHECK(total_params(fallback) == decoder(128));
  // Model card: 11B active. With top-8 of 288 experts the tensors count 11,987,311,872 per
  // token, 10,931,395,840 without the two vocabulary matrices; the card rounds to the billion.
  const std::int64_t active = total - 42 * 280 * expert;
  CHECK(active == 11'987'311'872);
  CHECK(std::llround(static_cast<double>(active - embeddings) / 1e9) == 11);
}

TEST_CASE("step3p5: Step35Config's defaults fill what config.json leaves out") {
  // Without layer_types no layer slides; without moe_layers_enum layers 3-44 are MoE; the list
  // form of moe_layers_enum is read too; the gate defaults to head-wise.
  const HfImport hf = import(R"json({"model_type": "step3p5", "num_hidden_layers": 6,
    "hidden_size": 512, "num_attention_heads": 16, "intermediate_size": 1024,
    "vocab_size": 1000, "moe_layers_enum": [2, 3, 5, 9]})json");
  CHECK(hf.model.window_size == 0);
  CHECK(hf.model.window_attn_pattern.empty());
  CHECK(hf.model.kv_channels == 128);
  CHECK(hf.model.num_query_groups == 8);
  CHECK(hf.model.num_experts == 288);
  CHECK(hf.model.moe_layer_pattern == std::vector<std::uint8_t>{0, 0, 1, 1, 0, 1});
  CHECK(hf.model.head_wise_attn_gate);
  std::string text = kStep35Flash;
  text.replace(text.find("\"use_head_wise_attn_gate\": true"), 31,
               "\"use_head_wise_attn_gate\": false");
  CHECK_FALSE(import(text.c_str()).model.head_wise_attn_gate);
  std::string short_types = kStep35Flash;
  short_types.replace(short_types.find("\"layer_types\": [\"full_attention\", "), 34,
                      "\"layer_types\": [");
  CHECK(import_error(short_types).field == "layer_types");
  CHECK(import_error(R"json({"model_type": "step3p5", "num_hidden_layers": 6,
    "hidden_size": 512, "num_attention_heads": 8, "intermediate_size": 1024,
    "vocab_size": 1000, "moe_layers_enum": "2,x"})json")
            .field == "moe_layers_enum");
}

TEST_CASE("step3p5: Step-3.7-Flash's text_config imports as Step-3.5's language model") {
  std::string wrapped = R"json({"model_type": "step3p7", "text_config": )json";
  wrapped += kStep35Flash;
  wrapped += "}";
  const HfImport hf = import(wrapped.c_str());
  CHECK(hf.model_type == "step3p5");
  check_matches_preset(hf.model, "step-3.5-flash");
}

TEST_CASE("step3p5: the MTP layers' attention by layer index, sliding only on a stage at layer 0") {
  // Step35DecoderLayer indexes layer_types with the MTP layer's number + num_layers + its
  // stage's layer offset - 1. At PP 1 that reaches the appended MTP entries (sliding: 96
  // heads); on the last of 5 stages (offset 36) it runs past the list, and the layer is built
  // with full attention (64 heads). Per MTP layer: the same dense MLP and eh_proj, an
  // attention of 64 heads instead of 96 (attention() above).
  const HfImport hf = import(kStep35Flash);
  Config config = share_link_defaults();
  config.model = hf.model;
  config.parallel.world_size = 8;
  config.parallel.expert_parallel = 8;
  const Expected<Estimate> one = estimate(config, {false, false});
  config.parallel.world_size = 40;
  config.parallel.pipeline_parallel = 5;
  const Expected<Estimate> five = estimate(config, {false, false});
  REQUIRE(one.has_value());
  REQUIRE(five.has_value());
  CHECK(one->totals.mtp_params - five->totals.mtp_params ==
        3 * (attention(96, 1) - attention(64, 1)));
  // The dense MTP spec is Megatron-Bridge's for a GPT model of standard attention: with a
  // hybrid layer pattern it is refused by name.
  config.model.hybrid_layer_pattern = std::string(45, '*');
  const Expected<Estimate> hybrid = estimate(config, {false, false});
  REQUIRE_FALSE(hybrid.has_value());
  CHECK(hybrid.error().field == "mtp_layer_kind");
}
