// Hybrid (Nemotron-3-class) models: the current --hybrid-layer-pattern syntax by hand from the
// cited sources: '/' MTP depths (hybrid_layer_allocation.py parse_hybrid_pattern,
// multi_token_prediction.py), '+' MLA and 'G' Gated DeltaNet layers (hybrid_layer_specs.py),
// '|' pipeline segments (select_pipeline_segment), LatentMoE's saved tensors (moe_layer.py) and
// the Nemotron 3 config.json import (Megatron-Bridge nemotron_h_bridge.py).
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <string>

#include "estimate_helpers.hpp"
#include "hf_import_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/hf_config.hpp"
#include "megamem/megatron_args.hpp"
#include "memory/activations.hpp"
#include "memory/cuda_graphs.hpp"
#include "memory/fp8_memory.hpp"
#include "memory/parameter_count.hpp"
#include "model_fixtures.hpp"
#include "modules/module_spec.hpp"

using namespace megamem;
using Catch::Matchers::Contains;

namespace {

// A small Nemotron-3-like hybrid: h 1024, GQA 8/2 x 128, squared-ReLU MLP 2048, 8 experts
// top-2 of 512 with a 1024 shared expert, RMSNorm, no biases, untied; seq 1024, one GPU.
Config tiny(const std::string& pattern) {
  Config c;
  ModelConfig& m = c.model;
  // arguments.py: --num-layers is the main part's layer count (get_hybrid_total_layer_count).
  const std::string main = pattern.substr(0, pattern.find('/'));
  m.num_layers =
      static_cast<int>(main.size()) - static_cast<int>(std::count(main.begin(), main.end(), '|'));
  m.hidden_size = 1024;
  m.num_attention_heads = 8;
  m.num_query_groups = 2;
  m.kv_channels = 128;
  m.ffn_hidden_size = 2048;
  m.activation = Activation::squared_relu;
  m.normalization = Normalization::rmsnorm;
  m.add_bias_linear = false;
  m.position_embedding = PositionEmbedding::none;
  m.untie_embeddings_and_output_weights = true;
  m.vocab_size = 32000;
  m.num_experts = 8;
  m.moe_router_topk = 2;
  m.moe_ffn_hidden_size = 512;
  m.moe_shared_expert_intermediate_size = 1024;
  m.hybrid_layer_pattern = pattern;
  c.training.seq_length = 1024;
  c.training.micro_batch_size = 1;
  c.training.global_batch_size = 8;
  return fixtures::bf16_training(c);
}

NormalizedConfig normalized(const Config& c) { return testing::normalized(c); }
Error error_of(const Config& c) { return testing::normalize_error(c); }

std::int64_t elements(const std::vector<ParamTensor>& tensors) {
  return std::accumulate(tensors.begin(), tensors.end(), std::int64_t{0},
                         [](std::int64_t sum, const ParamTensor& t) { return sum + t.elements(); });
}

const SavedActivation* saved_named(const LayerActivations& layer, const std::string& name) {
  for (const SavedActivation& item : layer.saved) {
    if (name == item.tensor) return &item;
  }
  return nullptr;
}

// One "*E" MTP depth at h 1024, TP 1 (multi_token_prediction.py MultiTokenPredictionLayer):
// enorm + hnorm 2h, eh_proj 2h^2, final_layernorm h; the '*' layer's fused norm h, qkv
// (8 + 2 x 2) x 128 x h and proj h^2; the 'E' layer's pre-MLP norm h, router 8h, experts
// 8 x 2 x 512 x h (squared ReLU: no GLU) and the shared expert 2 x 1024 x h.
constexpr std::int64_t kOwn = 2 * 1024 + 2 * 1024 * 1024 + 1024;
constexpr std::int64_t kAttention = 1024 + 12 * 128 * 1024 + 1024 * 1024;
constexpr std::int64_t kMoe = 1024 + 8 * 1024 + 8 * 2 * 512 * 1024 + 2 * 1024 * 1024;

}  // namespace

TEST_CASE("hybrid MTP: '/' parts are MTP depths built from the part's layers") {
  const NormalizedConfig n = normalized(tiny("MEM*E/*E/*E"));
  CHECK(n.config.model.num_layers == 5);  // MTP layers are not in --num-layers
  CHECK(n.config.model.mtp_num_layers == 2);
  CHECK(n.mtp_layer_kinds == std::vector<LayerKind>{LayerKind::attention, LayerKind::moe_only});
  CHECK_FALSE(n.mtp_layers_graphable);
  REQUIRE(n.stages.size() == 1);
  CHECK(n.stages[0].num_mtp_layers == 2);
  // Each depth builds its own weights: two of 15,217,664.
  CHECK(kOwn + kAttention + kMoe == 15217664);
  CHECK(count_model_totals(n).mtp_params == 2 * 15217664);
}

TEST_CASE("hybrid MTP: --mtp-use-repeated-layer counts the depth's weights once") {
  Config c = tiny("MEM*E/*E/*E");
  c.model.mtp_use_repeated_layer = true;
  const NormalizedConfig repeated = normalized(c);
  CHECK(count_model_totals(repeated).mtp_params == kOwn + kAttention + kMoe);
  // ... and the activations once per depth (MultiTokenPredictionBlock.forward).
  const NormalizedConfig distinct = normalized(tiny("MEM*E/*E/*E"));
  const double repeated_saved =
      chunk_activations(repeated, repeated.stages[0], layer_profiles(repeated)).saved_bytes;
  const double distinct_saved =
      chunk_activations(distinct, distinct.stages[0], layer_profiles(distinct)).saved_bytes;
  CHECK(repeated_saved == Approx(distinct_saved));
}

TEST_CASE("hybrid MTP: each depth saves the MTP's own tensors, its layers and a loss") {
  const NormalizedConfig one = normalized(tiny("MEM*E/*E"));
  const NormalizedConfig two = normalized(tiny("MEM*E/*E/*E"));
  const double saved_one = chunk_activations(one, one.stages[0], layer_profiles(one)).saved_bytes;
  const double saved_two = chunk_activations(two, two.stages[0], layer_profiles(two)).saved_bytes;
  const ActivationShape s = activation_shape(two);
  const LossActivations loss = loss_activations(two, s);
  const double depth = mtp_saved_bytes(two.config.model, s) +
                       layer_activations(two, LayerKind::attention).kept_bytes +
                       layer_activations(two, LayerKind::moe_only).kept_bytes + loss.norm_saved +
                       loss.loss_saved;
  CHECK(saved_two - saved_one == Approx(depth));
  CHECK(mtp_saved_bytes(two.config.model, s) == 6.0 * 2 * 1024 * 1024);
}

TEST_CASE("MTP under full uniform recompute keeps each depth's two inputs only") {
  // multi_token_prediction.py MultiTokenPredictionLayer._checkpointed_forward: the depth is one
  // checkpoint of its hidden states and embedding output, 2 x 2 bytes x 1024 tokens x 1024.
  auto depth_saved = [](const std::string& recompute) {
    Config one = tiny("MEM*E/*E");
    Config two = tiny("MEM*E/*E/*E");
    for (Config* c : {&one, &two}) {
      c->training.recompute.granularity = RecomputeGranularity::full;
      c->training.recompute.method =
          recompute == "block" ? RecomputeMethod::block : RecomputeMethod::uniform;
      c->training.recompute.num_layers = recompute == "uniform 2" ? 2 : 1;
    }
    const NormalizedConfig a = normalized(one), b = normalized(two);
    return chunk_activations(b, b.stages[0], layer_profiles(b)).saved_bytes -
           chunk_activations(a, a.stages[0], layer_profiles(a)).saved_bytes;
  };
  const NormalizedConfig n = normalized(tiny("MEM*E/*E"));
  const LossActivations loss = loss_activations(n, activation_shape(n));
  CHECK(depth_saved("uniform 1") ==
        Approx(2.0 * 2 * 1024 * 1024 + loss.norm_saved + loss.loss_saved));
  // Megatron-Core recomputes no MTP layer under the block method (and asserts one layer per
  // group under uniform; earlier releases ran such depths whole): the depth keeps everything.
  const ActivationShape s = activation_shape(n);
  const double whole =
      mtp_saved_bytes(n.config.model, s) + layer_activations(n, LayerKind::attention).kept_bytes +
      layer_activations(n, LayerKind::moe_only).kept_bytes + loss.norm_saved + loss.loss_saved;
  CHECK(depth_saved("block") == Approx(whole));
  CHECK(depth_saved("uniform 2") == Approx(whole));
  Config two_per_group = tiny("MEM*E/*E");
  two_per_group.training.recompute.granularity = RecomputeGranularity::full;
  two_per_group.training.recompute.num_layers = 2;
  const Estimate e = testing::run(two_per_group);
  CHECK(std::any_of(e.warnings.begin(), e.warnings.end(), [](const std::string& w) {
    return w.find("recompute_num_layers == 1 for MTP") != std::string::npos;
  }));
}

TEST_CASE("fused weighted squared ReLU: the experts keep no probability-weighted copy") {
  // experts.py with use_fused_weighted_squared_relu: WeightedSquaredReLUFunction saves fc1's
  // output and the probabilities (fusions/fused_weighted_squared_relu.py), not the activation
  // output times the probabilities: 2 x 1024 routed tokens x 512 x 2 bytes less per layer.
  Config c = tiny("MEM*E");
  const double unfused = layer_activations(normalized(c), LayerKind::moe_only).kept_bytes;
  c.training.moe_fused_weighted_squared_relu = true;
  CHECK(unfused - layer_activations(normalized(c), LayerKind::moe_only).kept_bytes ==
        Approx(2.0 * 1024 * 512 * 2));
  c.model.add_bias_linear = true;  // experts.py asserts no bias with the fused kernel
  CHECK(error_of(c).field == "use_fused_weighted_squared_relu");
}

TEST_CASE("hybrid MTP: the pattern's depth count overrides --mtp-num-layers with a warning") {
  Config c = tiny("MEM*E/*E/*E");
  c.model.mtp_num_layers = 3;
  const NormalizedConfig n = normalized(c);
  CHECK(n.config.model.mtp_num_layers == 2);
  REQUIRE(n.warnings.size() == 1);
  CHECK_THAT(n.warnings[0], Contains("conflicts with the MTP depth count (2)"));
  c = tiny("MEM*E");
  c.model.mtp_num_layers = 1;
  CHECK(error_of(c).field == "mtp_num_layers");
  CHECK(normalized(tiny("MEM*E/")).config.model.mtp_num_layers == 0);  // no depth after '/'
}

TEST_CASE("hybrid MTP: all MTP parts must be identical (parse_hybrid_pattern)") {
  const Error error = error_of(tiny("MEM*E/*E/E*"));
  CHECK(error.field == "hybrid_layer_pattern");
  CHECK_THAT(error.message, Contains("All MTP patterns must be identical. Pattern 1 is '*E', "
                                     "but pattern 2 is 'E*'"));
  CHECK_THAT(error_of(tiny("MEM*E/*|E")).message, Contains("In MTP pattern, '|'"));
}

TEST_CASE("hybrid MTP: the MTP stack is never in a TE CUDA graph") {
  Config with = tiny("MEM*E/*E/*E");
  Config without = tiny("MEM*E");
  for (Config* c : {&with, &without})
    c->training.cuda_graph_impl = CudaGraphImpl::transformer_engine;
  CHECK(graph_static_bytes(normalized(with), 0) == graph_static_bytes(normalized(without), 0));
  const NormalizedConfig n = normalized(with);
  const LayerProfiles graphed = layer_profiles(n, GraphPart::graphed);
  const LayerProfiles eager = layer_profiles(n, GraphPart::eager);
  REQUIRE(graphed.mtp.size() == 2);
  CHECK(graphed.mtp[0].full_bytes == 0);
  CHECK(eager.mtp[1].full_bytes == Approx(layer_activations(n, LayerKind::moe_only).full_bytes));
}

TEST_CASE("hybrid '+': an attention-only layer with multi-latent attention") {
  const NormalizedConfig n = normalized(tiny("M+M-"));
  CHECK(n.config.model.multi_latent_attention);
  CHECK(n.layer_kinds[1] == LayerKind::attention);
  // MLA with q_lora_rank 0, kv_lora_rank 32, qk 128 + rope 64, v 128, 8 heads, bf16 per token:
  // standalone input norm in and out 2h + 2h, kv_down output 2 x 96, Q and K 2 x 2 x 8 x 192,
  // V 2 x 8 x 128, fp32 softmax statistics 4 x 8, linear_proj input 2 x 8 x 128.
  const double per_token = 2048 + 2048 + 192 + 6144 + 2048 + 32 + 2048;
  CHECK(layer_activations(n, LayerKind::attention).full_bytes == Approx(1024 * per_token));
}

TEST_CASE("hybrid '*' cannot be combined with '+' or 'D' (_validate_pattern)") {
  CHECK_THAT(error_of(tiny("M*M+")).message,
             Contains("Not supported to have both Attention and MLA/DSA in one model"));
  CHECK_THAT(error_of(tiny("M+M-/*E")).message, Contains("both Attention and MLA/DSA"));
  CHECK_THAT(error_of(tiny("MDM-")).message, Contains("DeepSeek sparse attention"));
  CHECK_THAT(error_of(tiny("MXM-")).message, Contains("'X' is not a valid layer symbol"));
}

TEST_CASE("hybrid 'G': a Gated DeltaNet mixer layer without an MLP") {
  const NormalizedConfig n = normalized(tiny("MGM-"));
  CHECK(n.layer_kinds[1] == LayerKind::gdn_mixer);
  // Defaults: 16 key heads, 32 value heads, head dims 128, conv 4 (qk 2048, v 4096, conv_dim
  // 8192). Params: fused norm h, in_proj (2 qk + 2 v + 2 Hv) h, conv1d 4 x 8192, dt_bias and
  // A_log 32 each, out_norm 128, out_proj v x h.
  const LayerTemplates templates = layer_templates(n);
  const std::int64_t params = 1024 + 12352 * 1024 + 4 * 8192 + 64 + 128 + 4096 * 1024;
  CHECK(elements(templates.hybrid[static_cast<std::size_t>(LayerKind::gdn_mixer)]) == params);
  // Saved per token (gated_deltanet.cpp): bf16 norm in and out 2h each, the whole in_proj
  // output 12352 (conv1d keeps a view of it),
  // l2norm q, k 4096, delta-rule q, k 8192, v 4096, beta 32, A 32 x 64, z, gated norm input,
  // output and out_proj input 4096 each; fp32 l2norm rstd 32, g cumsum 32, gated rstd 32.
  const double bf16 = 1024 + 1024 + 12352 + 4096 + 8192 + 4096 + 32 + 2048 + 4 * 4096;
  const double per_token = 2 * bf16 + 4 * 96;
  CHECK(layer_activations(n, LayerKind::gdn_mixer).full_bytes == Approx(1024 * per_token));
  CHECK(model_module_flops(n).gdn > 0);
  Config c = tiny("MGM-");
  c.model.linear_num_key_heads = 12;  // 32 value heads are not a multiple of 12 key heads
  CHECK(error_of(c).field == "linear_num_value_heads");
}

TEST_CASE("hybrid '|': segment i on rank i mod PP, virtual stage i div PP") {
  Config c = tiny("M*||MM|*-/*-");
  c.model.num_experts = 0;
  c.parallel.world_size = 2;
  c.parallel.pipeline_parallel = 2;
  const NormalizedConfig n = normalized(c);
  CHECK(n.config.parallel.virtual_stages_per_pipeline_rank == 2);
  REQUIRE(n.stages.size() == 4);
  const int layers[] = {2, 0, 2, 2}, first[] = {0, 2, 2, 4}, rank[] = {0, 1, 0, 1};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(n.stages[i].num_layers == layers[i]);
    CHECK(n.stages[i].first_layer == first[i]);
    CHECK(n.stages[i].pp_rank == rank[i]);
    CHECK(n.stages[i].vpp_chunk == static_cast<int>(i / 2));
  }
  CHECK(n.stages[0].has_embedding);
  CHECK(n.stages[3].has_loss);
  CHECK(n.stages[3].num_mtp_layers == 1);
  c.parallel.pipeline_parallel = 3;
  c.parallel.world_size = 3;
  CHECK(error_of(c).field == "hybrid_layer_pattern");
  CHECK_THAT(error_of(c).message, Contains("The number of pipe-delimited segments (4)"));
  c.parallel.pipeline_parallel = 4;
  c.parallel.world_size = 4;
  c.parallel.decoder_last_pipeline_num_layers = 2;
  CHECK(error_of(c).field == "decoder_first_pipeline_num_layers");
}

TEST_CASE("hybrid flags: '/' and '|' patterns in and out, the legacy MTP pattern flag") {
  const char* base =
      "--hidden-size 1024 --num-attention-heads 8 --seq-length 1024 --micro-batch-size 1 "
      "--num-experts 8 --mtp-num-layers 2 ";
  const Expected<MegatronArgs> unified =
      parse_megatron_args(std::string(base) + "--hybrid-layer-pattern 'M*|ME/*E/*E'", 1, 32000);
  REQUIRE(unified.has_value());
  CHECK(unified->config.model.num_layers == 4);
  CHECK(unified->config.model.hybrid_layer_pattern == "M*|ME/*E/*E");
  // Only the unified flag knows '/' and '|' (arguments.py): written under that name.
  const std::string flags = to_megatron_args(unified->config);
  CHECK_THAT(flags, Contains("--hybrid-layer-pattern 'M*|ME/*E/*E'"));
  CHECK_THAT(flags, !Contains("--hybrid-override-pattern"));
  const Expected<MegatronArgs> back = parse_megatron_args(flags, 1, 32000);
  REQUIRE(back.has_value());
  CHECK(back->config.model.hybrid_layer_pattern == "M*|ME/*E/*E");
  const Expected<MegatronArgs> legacy = parse_megatron_args(
      std::string(base) + "--hybrid-layer-pattern M*ME --mtp-hybrid-override-pattern '*E'", 1,
      32000);
  REQUIRE(legacy.has_value());
  CHECK(legacy->config.model.hybrid_layer_pattern == "M*ME/*E/*E");
}

TEST_CASE("LatentMoE: fc2_latent_proj's input, and under FP8 fc1_latent_proj's FP8 copy") {
  Config c = tiny("MEM*E");
  c.model.moe_latent_size = 256;
  const LayerActivations bf16 = layer_activations(normalized(c), LayerKind::moe_only);
  const SavedActivation* fc2 = saved_named(bf16, "fc2_latent_proj input (combined tokens)");
  REQUIRE(fc2 != nullptr);
  CHECK(fc2->bytes == 1024.0 * 256 * 2);
  CHECK(fc2->freed_by.has(RecomputeModule::moe));
  CHECK(saved_named(bf16, "fc1_latent_proj input (FP8 copy of the pre-MLP norm output)") ==
        nullptr);
  c.training.fp8_recipe = Fp8Recipe::tensorwise;
  const LayerActivations fp8 = layer_activations(normalized(c), LayerKind::moe_only);
  const SavedActivation* fc1 =
      saved_named(fp8, "fc1_latent_proj input (FP8 copy of the pre-MLP norm output)");
  REQUIRE(fc1 != nullptr);
  CHECK(fc1->bytes ==
        Approx(1024.0 * 1024 * fp8_saved_input_bytes_per_element(Fp8Recipe::tensorwise)));
}

TEST_CASE("LatentMoE: shared-expert overlap is refused in training (moe_layer.py)") {
  Config c = tiny("MEM*E");
  c.model.moe_latent_size = 256;
  c.training.moe_shared_expert_overlap = true;
  CHECK(error_of(c).field == "moe_shared_expert_overlap");
}

namespace {

// A Nemotron-3-like config.json (tests/cli/fixtures/hf/Nemotron-3-tiny/config.json): the
// fields nemotron_h_bridge.py provider_bridge reads, with MoE 'E' layers, a latent size and
// one shared MTP block of "*E" run twice.
constexpr const char* kNemotron3Tiny = R"json({
  "architectures": ["NemotronHForCausalLM"],
  "model_type": "nemotron_h",
  "hidden_size": 1024,
  "num_hidden_layers": 8,
  "hybrid_override_pattern": "MEM*EMEM",
  "mtp_hybrid_override_pattern": "*E",
  "num_nextn_predict_layers": 2,
  "num_attention_heads": 8,
  "num_key_value_heads": 2,
  "head_dim": 128,
  "intermediate_size": 2048,
  "mamba_num_heads": 32,
  "mamba_head_dim": 64,
  "n_groups": 8,
  "ssm_state_size": 128,
  "conv_kernel": 4,
  "use_conv_bias": true,
  "mamba_proj_bias": false,
  "n_routed_experts": 16,
  "num_experts_per_tok": 4,
  "moe_intermediate_size": 512,
  "moe_shared_expert_intermediate_size": 1024,
  "moe_latent_size": 256,
  "moe_shared_expert_overlap": false,
  "n_group": 1,
  "topk_group": 1,
  "routed_scaling_factor": 5.0,
  "norm_topk_prob": true,
  "mlp_hidden_act": "relu2",
  "attention_bias": false,
  "mlp_bias": false,
  "use_bias": false,
  "layer_norm_epsilon": 1e-05,
  "residual_in_fp32": false,
  "hidden_dropout": 0.0,
  "attention_dropout": 0.0,
  "max_position_embeddings": 4096,
  "tie_word_embeddings": false,
  "vocab_size": 32000
})json";

}  // namespace

TEST_CASE("nemotron_h: a Nemotron 3 config.json imports its MoE, latent size and MTP") {
  const Expected<HfImport> imported = import_hf_config(kNemotron3Tiny);
  INFO((imported ? std::string() : imported.error().field + ": " + imported.error().message));
  REQUIRE(imported.has_value());
  const ModelConfig& m = imported->model;
  CHECK(m.hybrid_layer_pattern == "MEM*EMEM/*E/*E");
  CHECK(m.mtp_num_layers == 2);
  CHECK(m.mtp_use_repeated_layer);  // the bridge's default
  CHECK(m.num_experts == 16);
  CHECK(m.moe_router_topk == 4);
  CHECK(m.moe_ffn_hidden_size == 512);
  CHECK(m.moe_shared_expert_intermediate_size == 1024);
  CHECK(m.moe_latent_size == 256);
  CHECK(m.moe_router_enable_expert_bias);
  CHECK(imported->notes.empty());
  Config c = tiny("");
  c.model = m;
  const NormalizedConfig n = normalized(fixtures::bf16_training(c));
  // One shared "*E" depth: own 2,100,224; attention 2,622,464; the 'E' layer with latent 256:
  // norm h, router 16h, latent projections 2 x 256h, experts 16 x 2 x 512 x 256, shared 2 x 1024h.
  const std::int64_t moe = 1024 + 16 * 1024 + 2 * 256 * 1024 + 16 * 2 * 512 * 256 + 2 * 1024 * 1024;
  CHECK(count_model_totals(n).mtp_params == kOwn + kAttention + moe);
}

TEST_CASE("nemotron_h: MTP needs its pattern, and the bridge's overlap default is noted") {
  std::string text = kNemotron3Tiny;
  const std::string mtp = R"("mtp_hybrid_override_pattern": "*E",)";
  std::string without_mtp = text;
  without_mtp.erase(without_mtp.find(mtp), mtp.size());
  const Expected<HfImport> missing = import_hf_config(without_mtp);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().field == "mtp_hybrid_override_pattern");
  const std::string overlap = R"("moe_shared_expert_overlap": false,)";
  text.erase(text.find(overlap), overlap.size());
  const Expected<HfImport> noted = import_hf_config(text);
  REQUIRE(noted.has_value());
  REQUIRE(noted->notes.size() == 1);
  CHECK_THAT(noted->notes[0], Contains("moe_shared_expert_overlap"));
}

// nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16's config.json is the nemotron-3-nano-30b-a3b
// preset. By hand: a Mamba-2 layer 38,744,896 (in_proj 2688 x 10304 for z, x, B, C and dt of
// 64 heads x 64, 8 groups, state 128; conv1d 6144 x 4 with its bias; dt_bias, A_log, D; the
// gated norm of 4096; out_proj 4096 x 2688; the layer norm), an attention layer 23,399,040
// (q 2688 x 4096, k and v 2688 x 256, o 4096 x 2688, the norm), a MoE layer 1,297,468,032
// (128 squared-ReLU experts of 2 x 2688 x 1856, the shared expert 2 x 2688 x 3712, a 128 x 2688
// router, the norm); 23 Mamba, 6 attention and 23 MoE layers; 2 x 131072 x 2688 vocabulary
// matrices and the final norm.
TEST_CASE("nemotron_h: Nemotron-3-Nano-30B-A3B is its preset, 31,577,937,344 parameters") {
  const Expected<HfImport> hf = import_hf_config(R"json({
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "vocab_size": 131072, "hidden_size": 2688, "intermediate_size": 1856,
    "num_hidden_layers": 52, "tie_word_embeddings": false,
    "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "attention_bias": false, "mamba_num_heads": 64, "mamba_head_dim": 64,
    "ssm_state_size": 128, "conv_kernel": 4, "chunk_size": 128, "n_groups": 8,
    "use_conv_bias": true, "use_bias": false, "mlp_bias": false, "n_routed_experts": 128,
    "n_shared_experts": 1, "num_experts_per_tok": 6, "routed_scaling_factor": 2.5,
    "norm_topk_prob": true, "moe_intermediate_size": 1856,
    "moe_shared_expert_intermediate_size": 3712, "norm_eps": 1e-5})json");
  INFO((hf ? std::string() : hf.error().field + ": " + hf.error().message));
  REQUIRE(hf.has_value());
  hf_test::check_matches_preset(hf->model, "nemotron-3-nano-30b-a3b");
  const std::int64_t expected = 2 * std::int64_t{131072} * 2688 + 2688 + 23 * 38'744'896 +
                                6 * 23'399'040 + 23 * std::int64_t{1'297'468'032};
  CHECK(expected == 31'577'937'344);
  CHECK(hf_test::total_params(hf->model) == expected);
  hf_test::check_near(hf_test::total_params(hf->model), 31.6e9);  // model card: 31.6B
}

// nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16 is Nemotron-3-Nano's architecture with one
// MTP depth of "*E" (Megatron-Bridge 067f987 examples/models/nemotron/nemotron_3/lightning/
// README.md), in transformers' list form as public copies of its config.json print it. Its
// model verification card counts the BF16 checkpoint: 32,913,266,240 parameters. By hand: the
// main stack is Nano's 31,577,937,344; the MTP layer an attention layer 23,399,040 and a MoE
// layer 1,297,468,032 (as in the Nano test above), eh_proj 2 x 2688 x 2688 and three norms of
// 2688: 1,335,325,824; the 24 x 128 fp32 e_score_correction_bias buffers make up the rest.
TEST_CASE("nemotron_h: Nemotron-3.5-Lightning-30B-A3B is its preset, the checkpoint's count") {
  std::string types;
  for (const char symbol :
       std::string_view("MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME")) {
    types += std::string(types.empty() ? "" : ", ") + (symbol == 'M'   ? "\"mamba\""
                                                       : symbol == 'E' ? "\"moe\""
                                                                       : "\"attention\"");
  }
  const Expected<HfImport> hf = import_hf_config(R"json({
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "vocab_size": 131072, "hidden_size": 2688, "intermediate_size": 1856,
    "num_hidden_layers": 52, "tie_word_embeddings": false, "layers_block_type": [)json" +
                                                 types + R"json(],
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "mamba_num_heads": 64, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8,
    "conv_kernel": 4, "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 6,
    "moe_intermediate_size": 1856, "moe_shared_expert_intermediate_size": 3712,
    "moe_latent_size": null, "num_nextn_predict_layers": 1,
    "mtp_layers_block_type": ["attention", "moe"], "moe_shared_expert_overlap": false})json");
  INFO((hf ? std::string() : hf.error().field + ": " + hf.error().message));
  REQUIRE(hf.has_value());
  hf_test::check_matches_preset(hf->model, "nemotron-3.5-lightning-30b-a3b");
  CHECK(hf_test::total_params(hf->model) == 31'577'937'344);
  Config c = share_link_defaults();
  c.model = hf->model;
  const Expected<Estimate> e = estimate(c, {false, false});
  REQUIRE(e.has_value());
  const std::int64_t mtp_layer = 23'399'040 + 1'297'468'032 + 2 * 2688 * 2688 + 3 * 2688;
  CHECK(e->totals.mtp_params == mtp_layer);
  CHECK(31'577'937'344 + mtp_layer + 24 * 128 == 32'913'266'240);
}

// nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16's config.json is the
// nemotron-3-super-120b-a12b preset, and the count is the checkpoint's: its safetensors headers
// hold 123,611,012,096 BF16 weights, 2,942,324,736 of them in the MTP layer. By hand: a Mamba-2
// layer 109,640,064 (in_proj 4096 x 18560 for 128 heads x 64, 8 groups, state 128; conv1d
// 10240 x 4 with its bias; dt_bias, A_log, D; the gated norm of 8192; out_proj 8192 x 4096;
// the layer norm), an attention layer 35,655,680, a latent MoE layer 2,873,102,336 (a
// 512 x 4096 router, the latent projections 2 x 4096 x 1024, 512 experts of 2 x 1024 x 2688,
// the shared expert 2 x 4096 x 5376, the norm); 40 Mamba, 8 attention and 40 MoE layers; the
// vocabulary matrices and the final norm.
TEST_CASE("nemotron_h: Nemotron-3-Super-120B-A12B is its preset, the checkpoint's count") {
  const Expected<HfImport> hf = import_hf_config(R"json({
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "hidden_size": 4096, "num_hidden_layers": 88, "vocab_size": 131072,
    "hybrid_override_pattern":
      "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
    "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128,
    "conv_kernel": 4, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "n_routed_experts": 512, "n_shared_experts": 1, "num_experts_per_tok": 22,
    "moe_latent_size": 1024, "moe_intermediate_size": 2688, "intermediate_size": 2688,
    "moe_shared_expert_intermediate_size": 5376, "mlp_hidden_act": "relu2",
    "mtp_hybrid_override_pattern": "*E", "num_nextn_predict_layers": 1,
    "moe_shared_expert_overlap": false, "tie_word_embeddings": false})json");
  INFO((hf ? std::string() : hf.error().field + ": " + hf.error().message));
  REQUIRE(hf.has_value());
  hf_test::check_matches_preset(hf->model, "nemotron-3-super-120b-a12b");
  const std::int64_t expected = 2 * std::int64_t{131072} * 4096 + 4096 +
                                std::int64_t{40} * 109'640'064 + 8 * 35'655'680 +
                                40 * std::int64_t{2'873'102'336};
  CHECK(expected == std::int64_t{123'611'012'096} - 2'942'324'736);
  CHECK(hf_test::total_params(hf->model) == expected);
  Config c = share_link_defaults();
  c.model = hf->model;
  const Expected<Estimate> e = estimate(c, {false, false});
  REQUIRE(e.has_value());
  CHECK(e->totals.mtp_params == 2'942'324'736);
}

// Nemotron-3-Ultra-550B-A55B as transformers' NemotronHConfig writes it: layers_block_type and
// mtp_layers_block_type lists, num_hidden_layers null. Sizes from Megatron-LM's
// examples/post_training/modelopt/conf/nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.sh. By
// hand: a Mamba layer 8192 x (2 x 16384 + 2 x 8 x 128 + 256) in_proj, the conv1d's 18432 x 4
// weights and 18432 biases, A_log, D and dt_bias of 256, the gated norm 16384, out_proj
// 16384 x 8192 and its input norm: 421,645,056; attention 8192 x (64 + 2 x 2) x 128 +
// 8192 x 8192 and its norm: 138,420,224; a MoE layer (router 512 x 8192, latent projections
// 2 x 8192 x 2048, 512 experts of 2 x 2048 x 5120, the shared expert 2 x 8192 x 10240, the
// norm): 10,942,947,328. 48 Mamba, 12 attention, 48 MoE layers and two 131072 x 8192 matrices:
// 549,308,968,960 (-0.13 % from the card's 550B). The shared MTP layer: eh_proj 2 x 8192 x
// 8192, three norms, an attention and a MoE layer.
TEST_CASE("nemotron_h: the list form of the pattern; Nemotron-3-Ultra-550B-A55B is its preset") {
  std::string types;
  for (const char symbol : std::string_view(
           "MEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*"
           "EMEMEM*EMEMEMEM*EMEMEMEME")) {
    types += std::string(types.empty() ? "" : ", ") + (symbol == 'M'   ? "\"mamba\""
                                                       : symbol == 'E' ? "\"moe\""
                                                                       : "\"attention\"");
  }
  const Expected<HfImport> hf = import_hf_config(R"json({
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "hidden_size": 8192, "num_hidden_layers": null, "vocab_size": 131072,
    "layers_block_type": [)json" + types + R"json(],
    "mamba_num_heads": 256, "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128,
    "conv_kernel": 4, "num_attention_heads": 64, "num_key_value_heads": 2, "head_dim": 128,
    "n_routed_experts": 512, "n_shared_experts": 1, "num_experts_per_tok": 22,
    "moe_latent_size": 2048, "moe_intermediate_size": 5120, "intermediate_size": 5120,
    "moe_shared_expert_intermediate_size": 10240, "mlp_hidden_act": "relu2",
    "mtp_layers_block_type": ["attention", "moe"], "num_nextn_predict_layers": 1,
    "moe_shared_expert_overlap": false, "tie_word_embeddings": false})json");
  INFO((hf ? std::string() : hf.error().field + ": " + hf.error().message));
  REQUIRE(hf.has_value());
  hf_test::check_matches_preset(hf->model, "nemotron-3-ultra-550b-a55b");
  const std::int64_t expected = 2 * std::int64_t{131072} * 8192 + 8192 +
                                48 * std::int64_t{421'645'056} + 12 * 138'420'224 +
                                48 * std::int64_t{10'942'947'328};
  CHECK(expected == 549'308'968'960);
  CHECK(hf_test::total_params(hf->model) == expected);
  Config c = share_link_defaults();
  c.model = hf->model;
  const Expected<Estimate> e = estimate(c, {false, false});
  REQUIRE(e.has_value());
  CHECK(e->totals.mtp_params ==
        2 * std::int64_t{8192} * 8192 + 3 * 8192 + 138'420'224 + std::int64_t{10'942'947'328});
}

TEST_CASE("nemotron_h: a block type the list form does not know is refused, by name") {
  const Expected<HfImport> hf = import_hf_config(R"json({
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "hidden_size": 1024, "vocab_size": 32000, "layers_block_type": ["mamba", "conv"],
    "mamba_num_heads": 32, "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
    "intermediate_size": 4096})json");
  REQUIRE_FALSE(hf.has_value());
  CHECK(hf.error().field == "layers_block_type");
}
