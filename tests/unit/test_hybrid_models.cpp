// Hybrid models (Megatron-Core's MambaModel / HybridModel, Nemotron-H): the layer pattern's
// rules, the Mamba-2 mixer's parameters and saved tensors by hand from the cited sources, the
// HF config.json import, Megatron flags and share links, and the planner on 64 H100s.
#include <catch2/catch.hpp>
#include <string>

#include "estimate_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/hf_config.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/planner.hpp"
#include "megamem/share_link.hpp"
#include "memory/activations.hpp"
#include "memory/cuda_graphs.hpp"
#include "model_fixtures.hpp"

using namespace megamem;
using Catch::Matchers::Contains;

namespace {

constexpr const char* kNanoPattern = "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-";

// NVIDIA-Nemotron-Nano-9B-v2 in bf16 training, seq 4096, one GPU per TP rank.
Config nano(int tp = 1, int world = 1) {
  Config c = fixtures::preset_training("nemotron-nano-9b-v2");
  c.parallel.world_size = world;
  c.parallel.tensor_parallel = tp;
  c.parallel.sequence_parallel = tp > 1;
  return c;
}

NormalizedConfig normalized(const Config& c) { return testing::normalized(c); }
Error error_of(const Config& c) { return testing::normalize_error(c); }

// https://huggingface.co/nvidia/NVIDIA-Nemotron-Nano-9B-v2/blob/main/config.json
// (auto_map and the token ids trimmed; "time_step_limit" keeps Python's bare Infinity).
constexpr const char* kNemotronNano9Bv2 = R"json({
  "architectures": ["NemotronHForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "attention_head_dim": 128,
  "chunk_size": 128,
  "conv_kernel": 4,
  "head_dim": 128,
  "hidden_dropout": 0.0,
  "hidden_size": 4480,
  "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
  "initializer_range": 0.02,
  "intermediate_size": 15680,
  "layer_norm_epsilon": 1e-05,
  "mamba_head_dim": 80,
  "mamba_hidden_act": "silu",
  "mamba_num_heads": 128,
  "mamba_proj_bias": false,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "mlp_hidden_act": "relu2",
  "model_type": "nemotron_h",
  "n_groups": 8,
  "num_attention_heads": 40,
  "num_hidden_layers": 56,
  "num_key_value_heads": 8,
  "num_logits_to_keep": 1,
  "rescale_prenorm_residual": true,
  "residual_in_fp32": false,
  "rms_norm_eps": 1e-05,
  "sliding_window": null,
  "ssm_state_size": 128,
  "tie_word_embeddings": false,
  "time_step_floor": 0.0001,
  "time_step_limit": [0.0, Infinity],
  "time_step_max": 0.1,
  "time_step_min": 0.001,
  "torch_dtype": "bfloat16",
  "use_bias": false,
  "use_cache": true,
  "use_conv_bias": true,
  "use_mamba_kernels": true,
  "vocab_size": 131072
})json";

}  // namespace

// Per layer, hand-counted from mamba_mixer.py / mlp.py / attention.py shapes:
//   Mamba: norm 4480 + in_proj 4480 x (2*10240 + 2*8*128 + 128) + conv1d 12288 x 4 + 12288
//          + 3 x 128 + norm 10240 + out_proj 10240 x 4480 = 147,450,624
//   MLP:   norm 4480 + 2 x 15680 x 4480 = 140,497,280
//   attention: norm 4480 + (40 + 2 x 8) x 128 x 4480 + 5120 x 4480 = 55,054,720
//   27 M + 25 - + 4 * + untied 2 x 131072 x 4480 + final norm 4480 = 8,888,227,328.
TEST_CASE("nemotron_h: Nemotron-Nano-9B-v2 config.json imports as the preset, 8.89B") {
  const Expected<HfImport> hf = import_hf_config(kNemotronNano9Bv2);
  INFO((hf ? std::string() : hf.error().field + ": " + hf.error().message));
  REQUIRE(hf.has_value());
  CHECK(hf->model_type == "nemotron_h");
  CHECK(hf->model.hybrid_layer_pattern == kNanoPattern);
  CHECK(hf->model.activation == Activation::squared_relu);
  CHECK(hf->model.position_embedding == PositionEmbedding::none);
  Config a = share_link_defaults();
  Config b = a;
  a.model = hf->model;
  b.model = fixtures::preset_model("nemotron-nano-9b-v2");
  CHECK(share_link_differences(a, b).empty());
  CHECK(with_detected_presets(a).model_id == "nemotron-nano-9b-v2");
  a.training.seq_length = 4096;
  const Expected<Estimate> e = estimate(a, {false, false});
  REQUIRE(e.has_value());
  CHECK(e->totals.params == 8'888'227'328);
}

// transformers' NemotronHConfig and some exports spell the Mamba sizes differently; the same
// model results whichever spelling the file uses.
TEST_CASE("nemotron_h: the Mamba sizes under their other spellings import the same model") {
  std::string other = kNemotronNano9Bv2;
  const auto rename = [&](const std::string& from, const std::string& to) {
    REQUIRE(other.find(from) != std::string::npos);
    other.replace(other.find(from), from.size(), to);
  };
  rename("\"n_groups\"", "\"mamba_n_groups\"");
  rename("\"ssm_state_size\"", "\"mamba_state_dim\"");
  rename("\"conv_kernel\": 4", "\"mamba_d_conv\": 3");
  const Expected<HfImport> renamed = import_hf_config(other);
  REQUIRE_FALSE(renamed.has_value());  // the conv width is read under its other name too
  CHECK(renamed.error().field == "mamba_d_conv");
  rename("\"mamba_d_conv\": 3", "\"mamba_d_conv\": 4");
  const Expected<HfImport> hf = import_hf_config(other);
  const Expected<HfImport> original = import_hf_config(kNemotronNano9Bv2);
  REQUIRE(hf.has_value());
  REQUIRE(original.has_value());
  CHECK(hf->model.mamba_num_groups == 8);
  CHECK(hf->model.mamba_state_dim == 128);
  Config a = share_link_defaults();
  Config b = a;
  a.model = hf->model;
  b.model = original->model;
  CHECK(share_link_differences(a, b).empty());
}

TEST_CASE("nemotron_h: a family Megatron-Core does not build is named with the supported ones") {
  // (falcon_h1 was this example until its import: test_presets_2026_i.cpp.)
  const Expected<HfImport> hf = import_hf_config(R"({"model_type": "jamba"})");
  REQUIRE_FALSE(hf.has_value());
  CHECK_THAT(hf.error().message, Contains("nemotron_h"));
  std::string moe = kNemotronNano9Bv2;
  moe.replace(moe.find("M-M-M-MM"), 8, "MEM-MM-M");
  // Nemotron 3's 'E' layers need their experts (nemotron_h_bridge.py reads n_routed_experts).
  const Expected<HfImport> nemotron3 = import_hf_config(moe);
  REQUIRE_FALSE(nemotron3.has_value());
  CHECK(nemotron3.error().field == "n_routed_experts");
}

// mamba_split_conv1d_scan_combined saves zxbcdt and out_x; ExtendedRMSNorm its input and fp32
// rstd per group; out_proj its input; the fused in_proj norm its input and output.
TEST_CASE("mamba: a Mamba-2 layer's saved tensors, by hand (TP 1 and TP 2 with SP)") {
  const NormalizedConfig one = normalized(nano());
  // N = 4096 tokens, h = 4480, d_inner = 10240, in_proj out 22656, G = 8.
  const double n = 4096, h = 4480, inner = 10240, zx = 22656, g = 8;
  const double tp1 = 2 * (2 * n * h) + 2 * n * zx + 3 * (2 * n * inner) + 4 * n * g;
  CHECK(tp1 == 510'787'584.0);
  CHECK(layer_activations(one, LayerKind::mamba).full_bytes == Approx(tp1));
  const NormalizedConfig two = normalized(nano(2, 2));
  const double tp2 = 2 * (2 * n / 2 * h) + 2 * n * zx / 2 + 3 * (2 * n * inner / 2) + 4 * n * g / 2;
  CHECK(tp2 == 255'393'792.0);
  CHECK(layer_activations(two, LayerKind::mamba).full_bytes == Approx(tp2));
}

TEST_CASE("mamba: the SSD kernel's chunk states are the forward transient at long sequences") {
  Config c = nano();
  c.training.seq_length = 8192;
  const LayerActivations layer = layer_activations(normalized(c), LayerKind::mamba);
  // 64 chunks x 128 heads x 80 x 128 states, fp32 + bf16 copy; conv output 8192 x 12288 bf16;
  // dt, dA_cumsum 2 x 4 x 8192 x 128; CB 4 x 64 x 8 x 128 x 128.
  const double states = 64.0 * 128 * 80 * 128;
  const double kernel =
      2 * 8192.0 * 12288 + 8 * 8192.0 * 128 + 6 * states + 4 * 64.0 * 8 * 128 * 128;
  CHECK(layer.forward_transient_bytes == Approx(kernel));
}

TEST_CASE("hybrid: attention and MLP layers keep one block and one dropout mask") {
  Config c = nano();
  c.model.hidden_dropout = 0.1;
  const NormalizedConfig n = normalized(c);
  const double mask = 4096.0 * 4480;  // 1 byte per element of the hidden states
  const double mlp_only = layer_activations(n, LayerKind::mlp).full_bytes;
  // pre-MLP norm input and output, fc1 output and activation output (squared ReLU), mask.
  CHECK(mlp_only == Approx(2 * (2 * 4096.0 * 4480) + 2 * (2 * 4096.0 * 15680) + mask));
  const double attention = layer_activations(n, LayerKind::attention).full_bytes;
  const double dense = layer_activations(n, LayerKind::dense).full_bytes;
  CHECK(attention + mlp_only == Approx(dense));
}

TEST_CASE("hybrid: the pattern is the layer list and sets num_layers") {
  const NormalizedConfig n = normalized(nano());
  REQUIRE(n.layer_kinds.size() == 56);
  CHECK(n.layer_kinds[0] == LayerKind::mamba);
  CHECK(n.layer_kinds[1] == LayerKind::mlp);
  CHECK(n.layer_kinds[14] == LayerKind::attention);
  Config c = nano();
  c.model.num_layers = 52;
  const NormalizedConfig resized = normalized(c);
  CHECK(resized.config.model.num_layers == 56);
  REQUIRE(resized.warnings.size() == 1);
  CHECK_THAT(resized.warnings[0], Contains("56"));
}

TEST_CASE("hybrid: layer symbols Megatron-Core does not know, or combines wrongly") {
  Config c = nano();
  c.model.hybrid_layer_pattern = "M*X-";
  CHECK(error_of(c).field == "hybrid_layer_pattern");
  CHECK_THAT(error_of(c).message, Contains("hybrid_layer_allocation.py"));
  c.model.hybrid_layer_pattern = "MD*-";  // attention beside DSA (_validate_pattern)
  CHECK_THAT(error_of(c).message, Contains("both Attention and MLA/DSA"));
  c.model.hybrid_layer_pattern = "MDM-";  // DSA without the indexer's sizes
  CHECK(error_of(c).field == "dsa_indexer_topk");
  c.model.hybrid_layer_pattern = "M*|M-";  // two segments need two pipeline ranks
  CHECK(error_of(c).field == "virtual_stages_per_pipeline_rank");
  c.model.hybrid_layer_pattern = "M*E-";
  CHECK_THAT(error_of(c).message, Contains("--num-experts"));
}

TEST_CASE("mamba: heads and groups split over TP and heads over groups (mamba_mixer.py)") {
  Config c = nano(16, 16);
  CHECK(error_of(c).field == "mamba_num_groups");
  c = nano(4, 4);
  c.model.mamba_num_heads = 124;
  CHECK(error_of(c).field == "mamba_num_groups");  // 124 heads are not 8 equal groups
  c.model.mamba_num_heads = 0;                     // 2 x 4480 / 80 = 112 heads
  CHECK(normalized(c).config.model.mamba_num_heads == 112);
}

TEST_CASE("mamba: under FP8 the in_proj width is a multiple of 16 (mamba_mixer.py)") {
  Config c = nano();
  c.training.fp8_recipe = Fp8Recipe::tensorwise;
  CHECK(normalize(c).has_value());  // 2 x 10240 + 2 x 8 x 128 + 128 = 22656 = 16 x 1416
  c.model.mamba_num_heads = 120;    // 19200 + 2048 + 120 = 21368
  CHECK_THAT(error_of(c).message, Contains("FP8"));
}

TEST_CASE("hybrid: pipeline flags the hybrid stack does not read") {
  Config c = nano(1, 8);
  c.parallel.pipeline_parallel = 8;
  c.parallel.virtual_stages_per_pipeline_rank = 7;
  CHECK(error_of(c).field == "virtual_stages_per_pipeline_rank");
  c.parallel.virtual_stages_per_pipeline_rank = 1;
  c.parallel.account_for_loss_in_pipeline_split = true;
  const NormalizedConfig n = normalized(c);
  CHECK_FALSE(n.config.parallel.account_for_loss_in_pipeline_split);
  CHECK(n.warnings.size() == 1);
  c.parallel.pipeline_parallel = 5;  // 56 layers do not split evenly over 5 stages
  c.parallel.world_size = 5;
  CHECK_FALSE(normalize(c).has_value());
}

TEST_CASE("hybrid: Megatron flags in and out, and the ratio flags of earlier releases") {
  const Config c = nano(2, 8);
  const std::string flags = to_megatron_args(c);
  CHECK_THAT(flags, Contains("--hybrid-override-pattern"));
  CHECK_THAT(flags, Contains("--mamba-head-dim 80"));
  CHECK_THAT(flags, Contains("--mamba-num-heads 128"));
  const Expected<MegatronArgs> parsed = parse_megatron_args(flags, 8, 131072);
  INFO(flags);
  REQUIRE(parsed.has_value());
  CHECK(parsed->config.model.hybrid_layer_pattern == kNanoPattern);
  CHECK(parsed->config.model.mamba_head_dim == 80);
  // pattern_from_ratios: 2 of 10 layers attention, evenly among Mamba layers.
  const Expected<MegatronArgs> ratios = parse_megatron_args(
      "--num-layers 10 --hidden-size 256 --num-attention-heads 4 --seq-length 128 "
      "--micro-batch-size 1 --hybrid-attention-ratio 0.2",
      1, 1000);
  REQUIRE(ratios.has_value());
  CHECK(ratios->config.model.hybrid_layer_pattern == "MMM*MM*MMM");
  const Expected<MegatronArgs> both = parse_megatron_args(
      "--num-layers 2 --hidden-size 256 --num-attention-heads 4 --seq-length 128 "
      "--micro-batch-size 1 --hybrid-override-pattern M* --hybrid-layer-pattern M*",
      1, 1000);
  CHECK_FALSE(both.has_value());
}

TEST_CASE("hybrid: the pattern and Mamba sizes round-trip through a share link") {
  SharedConfig shared;
  shared.config = nano(2, 8);
  shared.config.model.mamba_state_dim = 64;
  const Expected<SharedConfig> back = decode_share_link(share_link(shared, ""));
  REQUIRE(back.has_value());
  CHECK(back->config.model.hybrid_layer_pattern == kNanoPattern);
  CHECK(back->config.model.mamba_state_dim == 64);
  CHECK(share_link_differences(back->config, shared.config).empty());
}

TEST_CASE("hybrid: the planner finds layouts for Nemotron-Nano-9B-v2 on 64 H100s") {
  const PlanResult result = testing::plan_on_64_h100(nano(1, 64));
  REQUIRE_FALSE(result.top.empty());
  CHECK(result.stats.fitting > 0);
  for (const PlanCandidate& candidate : result.top) {
    const Expected<Estimate> e = estimate(candidate.config, {false, false});
    CHECK(e.has_value());
    CHECK(candidate.config.parallel.virtual_stages_per_pipeline_rank == 1);
  }
}

TEST_CASE("TE graphs of a hybrid model capture Mamba layers under mamba, attention under attn") {
  // cuda_graphs.py _layer_is_graphable; transformer_layer.py get_layer_static_inputs: each
  // graphed callable keeps a [s, b, h] input set, an attention layer also a [b, 1, s, s] mask.
  Config c = nano();
  c.training.cuda_graph_impl = CudaGraphImpl::transformer_engine;
  const double hidden = 2.0 * 4096 * 4480;
  const double mask = 4096.0 * 4096;
  auto graph_bytes = [&](CudaGraphModules modules) {
    c.training.cuda_graph_modules = modules;
    auto e = estimate(c);
    REQUIRE(e.has_value());
    return static_cast<double>(e->ranks[0].cuda_graph_bytes);
  };
  // 27 M and 4 * layers; the 25 MLP layers stay eager. One grad-output set; no RoPE table
  // (Nemotron-H has no position embedding).
  CHECK(graph_bytes({CudaGraphModule::attn, CudaGraphModule::mamba}) ==
        Approx(31 * hidden + 4 * mask + hidden));
  CHECK(graph_bytes({CudaGraphModule::attn}) == Approx(4 * hidden + 4 * mask + hidden));
  CHECK(graph_bytes({CudaGraphModule::mamba}) == Approx(27 * hidden + hidden));
  // The Mamba mixer's saved tensors are in the graph's pool while it replays.
  const NormalizedConfig n = normalized(c);
  CHECK(module_graphed(n, ModuleKind::mamba_mixer, LayerKind::mamba));
  CHECK_FALSE(layer_graphed(n, LayerKind::mlp));
}
