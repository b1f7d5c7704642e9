// #25, part i: Falcon-H1 (falcon_h1, FalconH1ForCausalLM) as Megatron-Bridge builds it
// (src/megatron/bridge/models/falcon_h1/, commit 067f987): every layer a parallel 'P' layer
// (mamba_hybrid_layer_allocation.py Symbols.PARALLEL, falconh1_ratio 1.0) that runs a Mamba-2
// mixer and self-attention on one shared input norm and sums their scaled outputs, then an
// MLP (falconh1_layer.py FalconH1Layer). Checked by hand: the layer's tensors against the
// Mamba, attention and MLP layers it reuses, its saved tensors, the stack's rules, and the
// import of the bridge's own Falcon-H1-0.5B-Instruct config.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "estimate_helpers.hpp"
#include "formats/hybrid_allocation.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/bridge_config.hpp"
#include "megamem/estimate.hpp"
#include "megamem/hf_config.hpp"
#include "memory/activations.hpp"
#include "memory/parameter_count.hpp"
#include "model_fixtures.hpp"
#include "modules/module_spec.hpp"

using namespace megamem;
using namespace megamem::hf_test;
using Catch::Matchers::Contains;

namespace {

// Megatron-Bridge tests/unit_tests/models/falcon_h1/test_falcon_h1_bridge.py
// FALCON_H1_500M_CONFIG (commit 067f987): the bridge's copy of
// https://huggingface.co/tiiuae/Falcon-H1-0.5B-Instruct/blob/main/config.json, the checkpoint its
// examples convert (examples/models/falcon_h1/README.md); also tests/cli/fixtures/hf.
const char* kFalconH1_05B = R"json({
  "architectures": ["FalconH1ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "attention_in_multiplier": 1.0, "attention_out_multiplier": 0.9375, "attn_layer_indices": null,
  "embedding_multiplier": 5.656854249492381, "head_dim": 64, "hidden_act": "silu",
  "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 2048,
  "key_multiplier": 0.39062499999999994, "lm_head_multiplier": 0.0390625,
  "mamba_chunk_size": 128, "mamba_conv_bias": true, "mamba_d_conv": 4, "mamba_d_head": 64,
  "mamba_d_state": 128, "mamba_expand": 2, "mamba_n_groups": 1, "mamba_n_heads": 24,
  "mamba_norm_before_gate": false, "mamba_proj_bias": false, "mamba_rms_norm": false,
  "mamba_use_mlp": true, "max_position_embeddings": 16384, "mlp_bias": false,
  "mlp_multipliers": [0.8838834764831844, 0.5859375], "model_type": "falcon_h1",
  "num_attention_heads": 8, "num_hidden_layers": 36, "num_key_value_heads": 2,
  "projectors_bias": false, "rms_norm_eps": 1e-5, "rope_scaling": null,
  "rope_theta": 100000000000.0, "ssm_in_multiplier": 1.25,
  "ssm_multipliers": [0.3535533905932738, 0.25, 0.3535533905932738, 0.5, 0.3535533905932738],
  "ssm_out_multiplier": 0.23570226039551587, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "vocab_size": 32784
})json";

// https://huggingface.co/tiiuae/Falcon-H1-34B-Instruct/blob/main/config.json as
// Sahil170595/Chimeraforge tests/fixtures/hybrid_configs/tiiuae_Falcon-H1-34B-Instruct.json
// holds it (an HTTP GET of the Hub's raw file, captured 2026-09-05 per its MANIFEST.json).
const char* kFalconH1_34B = R"json({
  "architectures": ["FalconH1ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "attention_in_multiplier": 1.0, "attention_out_multiplier": 0.0375, "attn_layer_indices": null,
  "bos_token_id": 1, "embedding_multiplier": 5.656854249492381, "eos_token_id": 11,
  "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120, "initializer_range": 0.02,
  "intermediate_size": 21504, "key_multiplier": 0.011048543456039804,
  "lm_head_multiplier": 0.0078125, "mamba_chunk_size": 128, "mamba_conv_bias": true,
  "mamba_d_conv": 4, "mamba_d_head": 128, "mamba_d_ssm": 4096, "mamba_d_state": 256,
  "mamba_expand": 2, "mamba_n_groups": 2, "mamba_n_heads": 32, "mamba_norm_before_gate": false,
  "mamba_proj_bias": false, "mamba_rms_norm": true, "mamba_use_mlp": true,
  "max_position_embeddings": 262144, "mlp_bias": false, "mlp_expansion_factor": 8,
  "mlp_multipliers": [0.1767766952966369, 0.011160714285714284], "model_type": "falcon_h1",
  "num_attention_heads": 20, "num_hidden_layers": 72, "num_key_value_heads": 4,
  "num_logits_to_keep": 1, "pad_token_id": 0, "projectors_bias": false, "rms_norm_eps": 1e-05,
  "rope_scaling": null, "rope_theta": 100000000000.0, "ssm_in_multiplier": 0.25,
  "ssm_multipliers": [0.3535533905932738, 0.25, 0.1767766952966369, 0.5, 0.3535533905932738],
  "ssm_out_multiplier": 0.08838834764831845, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "transformers_version": "4.52.0.dev0", "use_cache": true,
  "vocab_size": 261120
})json";

// A small Falcon-H1-like model: h 1024, GQA 8/2 x 128, SwiGLU MLP 2048, Mamba-2 16 heads x 64
// (d_inner 1024), 1 group, state 64; RMSNorm, no biases, untied; seq 1024, one micro-batch of
// 1 in bf16 on one GPU, no dropout.
Config tiny(const std::string& pattern) {
  Config c;
  ModelConfig& m = c.model;
  m.num_layers = static_cast<int>(pattern.size());
  m.hidden_size = 1024;
  m.num_attention_heads = 8;
  m.num_query_groups = 2;
  m.kv_channels = 128;
  m.ffn_hidden_size = 2048;
  m.activation = Activation::swiglu;
  m.normalization = Normalization::rmsnorm;
  m.add_bias_linear = false;
  m.position_embedding = PositionEmbedding::rope;
  m.untie_embeddings_and_output_weights = true;
  m.hidden_dropout = 0.0;
  m.attention_dropout = 0.0;
  m.vocab_size = 32000;
  m.hybrid_layer_pattern = pattern;
  m.mamba_num_heads = 16;
  m.mamba_head_dim = 64;
  m.mamba_num_groups = 1;
  m.mamba_state_dim = 64;
  c.training.seq_length = 1024;
  c.training.micro_batch_size = 1;
  c.training.global_batch_size = 8;
  return fixtures::bf16_training(c);
}

std::int64_t elements(const std::vector<ParamTensor>& tensors) {
  return std::accumulate(tensors.begin(), tensors.end(), std::int64_t{0},
                         [](std::int64_t sum, const ParamTensor& t) { return sum + t.elements(); });
}

std::int64_t kind_params(const NormalizedConfig& n, LayerKind kind) {
  return elements(layer_templates(n).hybrid[static_cast<std::size_t>(kind)]);
}

double saved(const NormalizedConfig& n, LayerKind kind) {
  return layer_activations(n, kind).full_bytes;
}

}  // namespace

TEST_CASE("falcon-h1 'P' layer: one shared norm, then Mamba-2, attention and MLP tensors") {
  const NormalizedConfig n = testing::normalized(tiny("M*-P"));
  REQUIRE(n.layer_kinds[3] == LayerKind::parallel_hybrid);
  // falconh1_layer_specs.py: norm TENorm [h]; Mamba in_proj (2 x 1024 + 2 x 64 + 16) x h and
  // linear_qkv (8 + 2 + 2) x 128 x h without fused norms; conv1d (1024 + 128) x 4 and bias,
  // dt_bias, A_log, D (16 each), the gated norm [1024], out_proj and linear_proj h x 1024;
  // fc1 with its fused pre-MLP norm, 2 x 2048 x h, fc2 2048 x h.
  const std::int64_t h = 1024;
  const std::int64_t mamba = 2192 * h + 1152 * 4 + 1152 + 3 * 16 + 1024 + 1024 * h;
  const std::int64_t attention = 1536 * h + 1024 * h;
  const std::int64_t mlp = h + 2 * 2048 * h + 2048 * h;
  CHECK(kind_params(n, LayerKind::parallel_hybrid) == h + mamba + attention + mlp);
  CHECK(kind_params(n, LayerKind::parallel_hybrid) == 12'214'960);
  // The 'M', '*' and '-' layers each bring their own norm: the 'P' layer has one fewer.
  CHECK(kind_params(n, LayerKind::parallel_hybrid) == kind_params(n, LayerKind::mamba) +
                                                          kind_params(n, LayerKind::attention) +
                                                          kind_params(n, LayerKind::mlp) - h);
}

TEST_CASE("falcon-h1 'P' layer: the saved tensors per micro-batch, by hand") {
  const NormalizedConfig n = testing::normalized(tiny("M*-P"));
  // Per token, bf16: the shared norm's input h; Mamba's in_proj input (norm x
  // ssm_in_multiplier) h, zxBCdt 2192, out_x, the gated norm input and out_proj input 1024
  // each; linear_qkv's input (norm x attention_in_multiplier) h, Q, K, V 1536, linear_proj's
  // input 1024; fc1's norm input and output h each, FalconH1MLP's gate x multiplier, SiLU
  // output and up + offset 2048 each, fc2's input 2048. fp32: the gated norm's rstd (1 group)
  // and flash attention's log-sum-exp (8 heads).
  const double bf16 =
      1024 + (1024 + 2192 + 3 * 1024) + (1024 + 1536 + 1024) + (2 * 1024 + 4 * 2048);
  const double per_token = 2 * bf16 + 4 * (1 + 8);
  CHECK(saved(n, LayerKind::parallel_hybrid) == Approx(1024 * per_token));
  // Against the separate layers: one norm output fewer kept (3 h against 2 x 2 h), one more
  // ffn-wide tensor (the unfused SwiGLU keeps 3 x ffn where the fused one keeps fc1's 2 x ffn).
  CHECK(saved(n, LayerKind::parallel_hybrid) -
            (saved(n, LayerKind::mamba) + saved(n, LayerKind::attention) +
             saved(n, LayerKind::mlp)) ==
        Approx(2.0 * 1024 * (2048 - 1024)));
}

TEST_CASE("falcon-h1 'P' layer: mlp recompute frees nothing (FalconH1Layer calls its MLP)") {
  Config c = tiny("-P");
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::mlp};
  const NormalizedConfig n = testing::normalized(c);
  const LayerActivations parallel = layer_activations(n, LayerKind::parallel_hybrid);
  const LayerActivations mlp = layer_activations(n, LayerKind::mlp);
  CHECK(parallel.kept_bytes == Approx(parallel.full_bytes));
  CHECK(mlp.kept_bytes < mlp.full_bytes);  // transformer_layer.py recompute_mlp in '-' layers
}

TEST_CASE("falcon-h1 stack: FalconH1Stack's rules") {
  // mamba_hybrid_layer_allocation.py: M, *, - and P only.
  const Error moe = testing::normalize_error(tiny("PEP-"));
  CHECK(moe.field == "hybrid_layer_pattern");
  CHECK_THAT(moe.message, Contains("'E' cannot be combined with Falcon-H1's 'P' layers"));
  CHECK(testing::normalize_error(tiny("PP|PP")).field == "hybrid_layer_pattern");
  CHECK(testing::normalize_error(tiny("PP/P")).field == "hybrid_layer_pattern");
  // falconh1_provider.py asserts no virtual pipeline; falconh1_block.py splits evenly.
  Config vpp = tiny("PPPP");
  vpp.parallel.pipeline_parallel = 2;
  vpp.parallel.virtual_stages_per_pipeline_rank = 2;
  CHECK(testing::normalize_error(vpp).field == "virtual_stages_per_pipeline_rank");
  Config uneven = tiny("PPP");
  uneven.parallel.pipeline_parallel = 2;
  CHECK(testing::normalize_error(uneven).field == "num_layers");
  // Full recompute: FalconH1Stack.forward has no checkpointing, so nothing is recomputed.
  Config full = tiny("PPPP");
  full.training.recompute.granularity = RecomputeGranularity::full;
  const NormalizedConfig n = testing::normalized(full);
  CHECK(n.config.training.recompute.granularity == RecomputeGranularity::none);
  REQUIRE_FALSE(n.warnings.empty());
  CHECK_THAT(n.warnings.back(), Contains("FalconH1Stack runs its layers without checkpointing"));
  CHECK(testing::run(full).ranks[0].activation_bytes_per_microbatch ==
        testing::run(tiny("PPPP")).ranks[0].activation_bytes_per_microbatch);
}

TEST_CASE("falcon-h1 'P' layer: forward FLOPs are its Mamba, attention and MLP") {
  const NormalizedConfig n = testing::normalized(tiny("M*-P"));
  const ModuleFlops f = model_module_flops(n);
  CHECK(layer_forward_flops(f, LayerKind::parallel_hybrid) ==
        Approx(layer_forward_flops(f, LayerKind::mamba) +
               layer_forward_flops(f, LayerKind::attention) +
               layer_forward_flops(f, LayerKind::mlp)));
  CHECK(f.mamba > 0);
}

TEST_CASE("falcon_h1: Megatron-Bridge's Falcon-H1-0.5B-Instruct imports as 36 'P' layers") {
  const HfImport hf = import(kFalconH1_05B);
  CHECK(hf.model_type == "falcon_h1");
  const ModelConfig& m = hf.model;
  CHECK(m.hybrid_layer_pattern == std::string(36, 'P'));
  CHECK(m.num_layers == 36);
  CHECK(m.hidden_size == 1024);
  CHECK(m.num_attention_heads == 8);
  CHECK(m.num_query_groups == 2);
  CHECK(m.kv_channels == 64);
  CHECK(m.ffn_hidden_size == 2048);
  CHECK(m.activation == Activation::swiglu);
  CHECK(m.mamba_num_heads == 24);
  CHECK(m.mamba_head_dim == 64);
  CHECK(m.mamba_num_groups == 1);
  CHECK(m.mamba_state_dim == 128);
  CHECK(m.vocab_size == 32784);
  CHECK(m.untie_embeddings_and_output_weights);
  CHECK_FALSE(m.add_bias_linear);
  // Per layer: the shared norm 1024; q 512 + k, v 2 x 128 rows of 1024 and o 1024 x 512;
  // Mamba in_proj (2 x 1536 + 2 x 128 + 24) x 1024, conv1d (1536 + 256) x 4 and bias, dt_bias,
  // A_log, D 24 each, the gated norm 1536 (priced though mamba_rms_norm is false: a note),
  // out_proj 1024 x 1536; pre-MLP norm 1024, fc1 2 x 2048 x 1024, fc2 2048 x 1024. Plus two
  // 32784 x 1024 vocabulary matrices and the final norm.
  const std::int64_t layer = 1024 + 768 * 1024 + 1024 * 512 + 3352 * 1024 + 1792 * 5 + 72 + 1536 +
                             1024 * 1536 + 1024 + 3 * 2048 * 1024;
  const std::int64_t total = total_params(m);
  CHECK(total == 36 * layer + 2 * std::int64_t{32784} * 1024 + 1024);
  CHECK(total == 521'466'400);
  const std::string notes = Catch::Detail::stringify(hf.notes);
  CHECK_THAT(notes, Contains("mamba_rms_norm false"));
  CHECK_THAT(notes, Contains("attention_backend unfused"));
  CHECK_THAT(notes, Contains("muP multipliers"));
}

TEST_CASE("falcon_h1: Falcon-H1-34B imports as the preset, 33,642,516,224 parameters") {
  const HfImport hf = import(kFalconH1_34B);
  CHECK(hf.model.hybrid_layer_pattern == std::string(72, 'P'));
  check_matches_preset(hf.model, "falcon-h1-34b");
  // Per layer: the shared norm 5120; q 20 x 128 + k, v 2 x 4 x 128 rows of 5120 and o
  // 5120 x 2560; Mamba in_proj (2 x 4096 + 2 x 2 x 256 + 32) x 5120, conv1d (4096 + 1024) x 4
  // and bias, dt_bias, A_log, D 32 each, the gated norm 4096 (mamba_rms_norm true),
  // out_proj 5120 x 4096; pre-MLP norm 5120, fc1 2 x 21504 x 5120, fc2 21504 x 5120. Plus two
  // 261120 x 5120 vocabulary matrices and the final norm.
  const std::int64_t h = 5120;
  const std::int64_t layer =
      h + 3584 * h + h * 2560 + 9248 * h + 5120 * 5 + 3 * 32 + 4096 + h * 4096 + h + 3 * 21504 * h;
  CHECK(layer == 430'120'032);
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 72 * layer + 2 * std::int64_t{261120} * h + h);
  CHECK(total == 33'642'516'224);
  // The model card's "34B" is a name of two significant digits, to which the count rounds
  // (-1.05%).
  CHECK(std::llround(static_cast<double>(total) / 1e9) == 34);
  CHECK_THAT(Catch::Detail::stringify(hf.notes), !Contains("mamba_rms_norm false"));
}

TEST_CASE("falcon_h1: the bridge's 0.5B estimates on 8 to 1,024 GPUs") {
  const HfImport hf = import(kFalconH1_05B);
  for (const int gpus : {8, 64, 1024}) {
    Config c = share_link_defaults();
    c.model = hf.model;
    c.parallel.world_size = gpus;
    c.training.global_batch_size = 2 * gpus;
    INFO(gpus << " GPUs");
    const Estimate e = testing::run(c);
    CHECK(e.totals.params == 521'466'400);
    CHECK(e.ranks[0].peak_allocated_bytes > 0);
  }
}

TEST_CASE("falcon_h1: the Mamba sizes' spellings, defaults and refusals") {
  // configuration_falcon_h1.py: mamba_d_head "auto" is mamba_d_ssm / mamba_n_heads.
  const HfImport automatic = import(R"json({"model_type": "falcon_h1", "num_hidden_layers": 2,
      "hidden_size": 512, "num_attention_heads": 4, "intermediate_size": 1024, "vocab_size": 1000,
      "mamba_d_ssm": 768, "mamba_n_heads": 24, "mamba_d_head": "auto"})json");
  CHECK(automatic.model.mamba_head_dim == 32);
  CHECK(automatic.model.hybrid_layer_pattern == "PP");
  CHECK(automatic.model.mamba_num_groups == 1);  // the defaults: 1 group, state 256
  CHECK(automatic.model.mamba_state_dim == 256);
  const std::string base = R"json({"model_type": "falcon_h1", "num_hidden_layers": 2,
      "hidden_size": 512, "num_attention_heads": 4, "intermediate_size": 1024, "vocab_size": 1000,
      "mamba_n_heads": 24, )json";
  // Megatron's d_inner is mamba_n_heads x mamba_d_head: 768, not the checkpoint's 1024.
  CHECK(import_error(base + R"json("mamba_d_head": 32, "mamba_d_ssm": 1024})json").field ==
        "mamba_d_ssm");
  CHECK(import_error(base + R"json("mamba_d_head": 32, "mamba_d_conv": 3})json").field ==
        "mamba_d_conv");
  CHECK(import_error(base + R"json("mamba_d_head": 32, "mamba_proj_bias": true})json").field ==
        "mamba_proj_bias");
  CHECK(import_error(base + R"json("mamba_d_head": "x"})json").field == "mamba_d_head");
}

TEST_CASE("falcon-h1 allocation: falconh1_ratio places 'P' after attention and MLP layers") {
  // mamba_hybrid_layer_allocation.py allocate_layers, run on these ratios (Megatron-Bridge
  // 067f987): the Bridge's Falcon-H1 provider uses (L, 0, 0, 1.0).
  CHECK(formats::pattern_from_ratios(4, 0.0, 0.0, 1.0) == "PPPP");
  CHECK(formats::pattern_from_ratios(10, 0.2, 0.1, 0.2) == "MMM*PM*MP-");
  CHECK(formats::pattern_from_ratios(12, 0.25, 0.0, 0.5) == "MP*PMP*PM*PP");
  CHECK(formats::pattern_from_ratios(9, 1.0 / 3, 1.0 / 3) == "M-*M*-M*-");
}

TEST_CASE("falcon-h1: a Megatron-Bridge run's falconh1_ratio becomes the 'P' pattern") {
  const std::string model =
      "model.num_layers=4 model.hidden_size=1024 model.num_attention_heads=8 "
      "model.num_query_groups=2 model.kv_channels=128 model.ffn_hidden_size=2048 "
      "model.seq_length=1024 model.vocab_size=32000 model.mamba_num_heads=16 "
      "model.mamba_head_dim=64 model.mamba_num_groups=1 model.mamba_state_dim=64 "
      "model.hybrid_attention_ratio=0.0 model.hybrid_mlp_ratio=0.0 train.micro_batch_size=1 ";
  const Expected<BridgeNode> tree = parse_bridge_overrides(model + "model.falconh1_ratio=1.0");
  REQUIRE(tree.has_value());
  const Expected<BridgeImport> imported = import_bridge_config(*tree, 8);
  INFO((imported ? std::string() : imported.error().field + ": " + imported.error().message));
  REQUIRE(imported.has_value());
  CHECK(imported->args.config.model.hybrid_layer_pattern == "PPPP");
  // An explicit hybrid_override_pattern wins over the ratios (allocate_layers).
  const Expected<BridgeNode> explicit_tree =
      parse_bridge_overrides(model + "model.falconh1_ratio=1.0 model.hybrid_override_pattern=MP-P");
  REQUIRE(explicit_tree.has_value());
  const Expected<BridgeImport> explicit_pattern = import_bridge_config(*explicit_tree, 8);
  REQUIRE(explicit_pattern.has_value());
  CHECK(explicit_pattern->args.config.model.hybrid_layer_pattern == "MP-P");
}
