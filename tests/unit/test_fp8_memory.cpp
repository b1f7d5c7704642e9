// FP8 as Transformer Engine holds it (fp8_memory.hpp): saved GEMM inputs, FP8 weight copies,
// --fp8-param-gather and --first-last-layers-bf16. Expected values are computed by hand.
#include <catch2/catch.hpp>

#include "estimate_helpers.hpp"
#include "megamem/estimate.hpp"
#include "megamem/megatron_args.hpp"
#include "memory/activations.hpp"
#include "memory/fp8_memory.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

using testing::normalized;
using testing::run;

namespace {
Config llama_fp8(Fp8Recipe recipe) {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.training.fp8_recipe = recipe;
  return c;
}
// Llama-3-70B TP8 SP, N = 4096: bf16 layer 140,640,256 B (test_activations.cpp). FP8 GEMM
// inputs: the two fused-norm outputs (Nsp*h = 512*8192 each) and fc2's input (N*f/t).
constexpr double kBf16Layer = 140'640'256.0;
constexpr double kNormOutputs = 2 * 512.0 * 8192.0;
constexpr double kFc2Input = 4096.0 * 28672.0 / 8.0;
// GEMM parameters per layer per GPU: QKV (64+16)*128*8192/8, proj, fc1 2*28672*8192/8, fc2.
constexpr double kGemmParamsPerLayer = 10'485'760.0 + 8'388'608.0 + 58'720'256.0 + 29'360'128.0;
}  // namespace

TEST_CASE("an FP8 GEMM input is one byte plus its recipe's scale share") {
  CHECK(fp8_saved_input_bytes_per_element(Fp8Recipe::none) == 2.0);
  CHECK(fp8_saved_input_bytes_per_element(Fp8Recipe::delayed) == 1.0);
  CHECK(fp8_saved_input_bytes_per_element(Fp8Recipe::tensorwise) == 1.0);
  CHECK(fp8_saved_input_bytes_per_element(Fp8Recipe::mxfp8) == 1.0 + 1.0 / 32);       // E8M0 / 32
  CHECK(fp8_saved_input_bytes_per_element(Fp8Recipe::blockwise) == 1.0 + 4.0 / 128);  // fp32/128
}

TEST_CASE("TE's FP8 weight copies per parameter: transpose on Hopper only, two MXFP8 copies") {
  // bf16 weights: the cached workspace.
  CHECK(fp8_weight_copy_bytes_per_param(Fp8Recipe::tensorwise, false, false) == 2.0);
  CHECK(fp8_weight_copy_bytes_per_param(Fp8Recipe::tensorwise, false, true) == 1.0);
  CHECK(fp8_weight_copy_bytes_per_param(Fp8Recipe::delayed, false, false) == 2.0);
  CHECK(fp8_weight_copy_bytes_per_param(Fp8Recipe::mxfp8, false, true) == 2.0 + 2.0 / 32);
  CHECK(fp8_weight_copy_bytes_per_param(Fp8Recipe::blockwise, false, false) ==
        Approx(2.0 + 8.0 / 16384));
  // FP8 parameters: only what sits beside the param buffer.
  CHECK(fp8_weight_copy_bytes_per_param(Fp8Recipe::tensorwise, true, false) == 1.0);
  CHECK(fp8_weight_copy_bytes_per_param(Fp8Recipe::tensorwise, true, true) == 0.0);
  CHECK(fp8_weight_copy_bytes_per_param(Fp8Recipe::blockwise, true, false) ==
        Approx(1.0 + 8.0 / 16384));
  CHECK(fp8_weight_copy_bytes_per_param(Fp8Recipe::none, false, false) == 0.0);
  CHECK(fp8_param_buffer_bytes_per_param(Fp8Recipe::tensorwise) == 1.0);
  CHECK(fp8_param_buffer_bytes_per_param(Fp8Recipe::mxfp8) == 0.0);
}

TEST_CASE("first and last layers stay in bf16 by global layer index") {
  TrainingConfig t;
  CHECK_FALSE(fp8_layer(t, 10, 5));  // FP8 off
  t.fp8_recipe = Fp8Recipe::tensorwise;
  CHECK(fp8_layer(t, 10, 0));
  t.fp8_bf16_layers_at_start = 2;
  t.fp8_bf16_layers_at_end = 1;
  CHECK_FALSE(fp8_layer(t, 10, 1));
  CHECK(fp8_layer(t, 10, 2));
  CHECK(fp8_layer(t, 10, 8));
  CHECK_FALSE(fp8_layer(t, 10, 9));
  t.transformer_impl = TransformerImpl::local;  // FP8 needs Transformer Engine modules
  CHECK_FALSE(fp8_enabled(t));
  CHECK_FALSE(fp8_layer(t, 10, 5));
}

TEST_CASE("tensorwise FP8 saves the norm outputs and fc2's input in one byte") {
  const LayerActivations layer =
      layer_activations(normalized(llama_fp8(Fp8Recipe::tensorwise)), false);
  CHECK(layer.kept_bytes == Approx(kBf16Layer - kNormOutputs - kFc2Input));
  // The activation gradients in backward stay bf16.
  const LayerActivations bf16 =
      layer_activations(normalized(fixtures::llama3_70b_tp8_pp4()), false);
  CHECK(layer.backward_transient_bytes == Approx(bf16.backward_transient_bytes));
}

// Under FP8 autocast the GEMM inputs stay one byte whatever the params dtype; in fp32 training
// every other tensor of the layer doubles, except the fp32 softmax statistics (131,072 B).
TEST_CASE("fp32 training under FP8 keeps the saved GEMM inputs at one byte") {
  Config c = llama_fp8(Fp8Recipe::tensorwise);
  const double bf16 = layer_activations(normalized(c), false).kept_bytes;
  c.training.params_dtype = DType::fp32;
  const double fp32 = layer_activations(normalized(c), false).kept_bytes;
  CHECK(fp32 - bf16 == Approx(bf16 - kNormOutputs - kFc2Input - 131'072.0));
}

TEST_CASE("delayed scaling keeps linear_proj's own FP8 copy of the attention output") {
  const LayerActivations layer =
      layer_activations(normalized(llama_fp8(Fp8Recipe::delayed)), false);
  const double proj_copy = 4096.0 * 64 * 128 / 8;
  CHECK(layer.kept_bytes == Approx(kBf16Layer - kNormOutputs - kFc2Input + proj_copy));
}

TEST_CASE("MXFP8 saved inputs carry one scale byte per 32 elements") {
  const LayerActivations layer = layer_activations(normalized(llama_fp8(Fp8Recipe::mxfp8)), false);
  const double elements = kNormOutputs + kFc2Input;
  CHECK(layer.kept_bytes == Approx(kBf16Layer - 2 * elements + elements * (1 + 1.0 / 32)));
}

TEST_CASE("FP8 MoE layer: dispatched tokens and the expert fc2 input in one byte") {
  // Qwen3-235B TP4 SP EP8: Nsp = 1024, k*Nsp = 8192 routed tokens, expert ffn 1536.
  Config c = fixtures::qwen3_235b_tp4_pp4_ep8();
  const double bf16 = layer_activations(normalized(c), true).kept_bytes;
  c.training.fp8_recipe = Fp8Recipe::tensorwise;
  const double fp8 = layer_activations(normalized(c), true).kept_bytes;
  const double input_norm = 1024.0 * 4096;  // the pre-MLP norm output stays bf16 (router)
  CHECK(bf16 - fp8 == Approx(input_norm + 8192.0 * 4096 + 8192.0 * 1536));
}

TEST_CASE("bf16 weights under FP8 compute keep a cached FP8 copy and its transpose (Hopper)") {
  const Estimate bf16 = run(fixtures::llama3_70b_tp8_pp4());
  const Estimate fp8 = run(llama_fp8(Fp8Recipe::tensorwise));
  // Rank 1: 20 decoder layers, no embedding or output layer.
  const double extra = static_cast<double>(fp8.ranks[1].weight_bytes) -
                       static_cast<double>(bf16.ranks[1].weight_bytes);
  CHECK(extra == Approx(20 * kGemmParamsPerLayer * 2));
  Config blackwell = llama_fp8(Fp8Recipe::tensorwise);
  blackwell.device.fp8_gemm_any_layout = true;
  const double extra_blackwell = static_cast<double>(run(blackwell).ranks[1].weight_bytes) -
                                 static_cast<double>(bf16.ranks[1].weight_bytes);
  CHECK(extra_blackwell == Approx(20 * kGemmParamsPerLayer));
}

TEST_CASE("--fp8-param-gather: 1-byte params plus the Hopper transpose") {
  Config c = llama_fp8(Fp8Recipe::tensorwise);
  c.training.fp8_param_gather = true;
  const Estimate bf16 = run(fixtures::llama3_70b_tp8_pp4());
  const double saved = static_cast<double>(bf16.ranks[1].weight_bytes) -
                       static_cast<double>(run(c).ranks[1].weight_bytes);
  // 2-byte weights become 1 byte in the buffer + 1 byte of transpose: the same total
  // (up to the fp8 buffer's own 64-element alignment).
  CHECK(saved == Approx(0.0).margin(1e6));
  c.device.fp8_gemm_any_layout = true;
  const double saved_blackwell = static_cast<double>(bf16.ranks[1].weight_bytes) -
                                 static_cast<double>(run(c).ranks[1].weight_bytes);
  CHECK(saved_blackwell == Approx(20 * kGemmParamsPerLayer).margin(1e6));
}

TEST_CASE("--fp8-param-gather: the step's 16-bit copies of the FP8 master shards") {
  // TE cast_master_weights_to_fp8 (tensor/utils.py, >= 2.2) makes master.to(bf16) of every
  // FP8 weight's shard before it casts any: 2 bytes per FP8 GEMM parameter of the rank's
  // shard, on top of the fp32 grad copy, gone after the step.
  Config c = llama_fp8(Fp8Recipe::tensorwise);
  c.training.fp8_param_gather = true;
  c.optimizer.use_distributed_optimizer = true;
  const Estimate fp8 = run(c);
  const RankMemory& middle = fp8.ranks[1];  // 20 layers, DP 2 (64 GPUs / TP8 / PP4)
  CHECK(static_cast<double>(middle.fp8_master_casts.all_bytes) ==
        Approx(2.0 * 20 * kGemmParamsPerLayer / 2).margin(1));
  CHECK(middle.fp8_master_casts.expert_bytes == 0);
  // The step's peak holds them; memory after the step (what a log's allocated shows) does not.
  CHECK(middle.peak_allocated_bytes >=
        middle.static_bytes + middle.optimizer_step_bytes + middle.fp8_master_casts.all_bytes);
  CHECK(allocated_after_step_bytes(middle) == middle.static_bytes + middle.optimizer_step_bytes);
  // Without FP8 parameters, or without the distributed optimizer's cast, there are none.
  CHECK(run(llama_fp8(Fp8Recipe::tensorwise)).ranks[1].fp8_master_casts.all_bytes == 0);
  // The dense and the expert optimizer step one after the other: the larger one's count.
  CHECK(optimizer_step_peak_bytes(10, {.all_bytes = 7, .expert_bytes = 3}, false) == 14);
  CHECK(optimizer_step_peak_bytes(10, {.all_bytes = 7, .expert_bytes = 5}, false) == 15);
}

TEST_CASE(
    "--overlap-param-gather-with-optimizer-step: the larger chunk group's casts, no buckets") {
  // get_megatron_optimizer (optimizer/__init__.py) builds one dense optimizer for the first
  // model chunk and one for the rest, which ChainedOptimizer.step steps in turn.
  Config c = llama_fp8(Fp8Recipe::tensorwise);
  c.training.fp8_param_gather = true;
  c.optimizer.use_distributed_optimizer = true;
  c.parallel.virtual_stages_per_pipeline_rank = 5;  // 4 layers per chunk, 20 per rank
  c.optimizer.overlap_param_gather_with_optimizer_step = true;
  const Estimate split = run(c);
  const RankMemory& middle = split.ranks[1];
  const double layer_casts = 2.0 * kGemmParamsPerLayer / 2;  // bf16 copy of a DP-2 shard
  CHECK(static_cast<double>(middle.fp8_master_casts.first_chunk_dense_bytes) ==
        Approx(4 * layer_casts).margin(1));
  const Fp8MasterCasts& casts = middle.fp8_master_casts;
  CHECK(static_cast<double>(optimizer_step_peak_bytes(0, casts, true)) ==
        Approx(16 * layer_casts).margin(1));
  CHECK(static_cast<double>(optimizer_step_peak_bytes(0, casts, false)) ==
        Approx(20 * layer_casts).margin(1));
  CHECK(optimizer_step_peak_bytes(
            10, {.all_bytes = 9, .expert_bytes = 2, .first_chunk_dense_bytes = 5}, true) == 15);
}

TEST_CASE("--overlap-param-gather-with-optimizer-step: no DDP buckets") {
  // dist_utils.py _ddp_wrap disables bucketing on every chunk: rank 0's first chunk pads as
  // without --overlap-grad-reduce. DP 3 pads each bucket's end to lcm(3, 128) = 384 elements.
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.parallel.world_size = 96;
  c.training.global_batch_size = 96;
  c.optimizer.use_distributed_optimizer = true;
  const Estimate unbucketed = run(c);
  c.optimizer.overlap_grad_reduce = true;
  const Estimate bucketed = run(c);
  c.optimizer.overlap_param_gather_with_optimizer_step = true;
  const Estimate split = run(c);
  CHECK(bucketed.ranks[0].gradient_bytes != unbucketed.ranks[0].gradient_bytes);
  CHECK(split.ranks[0].gradient_bytes == unbucketed.ranks[0].gradient_bytes);
}

TEST_CASE("--first-last-layers-bf16 layers keep bf16 weights and activations") {
  Config c = llama_fp8(Fp8Recipe::tensorwise);
  c.training.fp8_bf16_layers_at_start = 1;
  c.training.fp8_bf16_layers_at_end = 1;
  const Estimate all_fp8 = run(llama_fp8(Fp8Recipe::tensorwise));
  const Estimate edges = run(c);
  // Rank 0 holds layer 0 (bf16): one layer fewer of FP8 weight copies; rank 1 none.
  CHECK(static_cast<double>(all_fp8.ranks[0].weight_bytes) -
            static_cast<double>(edges.ranks[0].weight_bytes) ==
        Approx(kGemmParamsPerLayer * 2));
  CHECK(all_fp8.ranks[1].weight_bytes == edges.ranks[1].weight_bytes);
  // Per micro-batch, layer 0 saves bf16 GEMM inputs.
  CHECK(static_cast<double>(edges.ranks[0].activation_bytes_per_microbatch) -
            static_cast<double>(all_fp8.ranks[0].activation_bytes_per_microbatch) ==
        Approx(kNormOutputs + kFc2Input));
  const LayerProfiles profiles = layer_profiles(normalized(c));
  CHECK(profiles.dense_bf16.kept_bytes == Approx(kBf16Layer));
  // The module tree shows layer 0 in bf16 and layer 1 in FP8.
  const std::vector<ModuleMemory>& blocks = edges.ranks[0].chunks[0].modules.children;
  auto block = [&](const std::string& name) {
    for (const ModuleMemory& b : blocks) {
      if (b.name == name) return static_cast<double>(b.activation_bytes);
    }
    return -1.0;
  };
  CHECK(block("layer 0") == Approx(kBf16Layer));
  CHECK(block("layer 1") == Approx(kBf16Layer - kNormOutputs - kFc2Input));
}

TEST_CASE("Megatron flags: --first-last-layers-bf16 and its layer counts") {
  const std::string base =
      "--num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 1 --vocab-size 1024 --bf16 ";
  auto parse = [&](const std::string& extra) { return parse_megatron_args(base + extra, 8); };
  const auto on = parse("--fp8-format hybrid --fp8-recipe tensorwise --first-last-layers-bf16");
  REQUIRE(on.has_value());
  CHECK(on->config.training.fp8_bf16_layers_at_start == 1);
  CHECK(on->config.training.fp8_bf16_layers_at_end == 1);
  const auto counts = parse(
      "--fp8-format hybrid --fp8-recipe mxfp8 --first-last-layers-bf16 "
      "--num-layers-at-start-in-bf16 2 --num-layers-at-end-in-bf16 0");
  REQUIRE(counts.has_value());
  CHECK(counts->config.training.fp8_bf16_layers_at_start == 2);
  CHECK(counts->config.training.fp8_bf16_layers_at_end == 0);
  // transformer_config.py refuses it with delayed scaling: a rule of normalize().
  const auto delayed = parse("--fp8-format hybrid --first-last-layers-bf16");
  REQUIRE(delayed.has_value());
  const auto refused = normalize(delayed->config);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().field == "fp8_bf16_layers_at_start");
  const auto no_fp8 = parse("--first-last-layers-bf16");
  REQUIRE(no_fp8.has_value());
  CHECK(no_fp8->config.training.fp8_bf16_layers_at_start == 0);
}

TEST_CASE("alltoall dispatch keeps its permutation maps; experts keep the probabilities") {
  // Qwen3-235B TP4 SP EP8: Nsp = 1024, E = 128 (16 local), k = 8, 8192 routed tokens;
  Config c = fixtures::qwen3_235b_tp4_pp4_ep8();
  c.training.moe_token_dispatcher = TokenDispatcher::allgather;
  const double allgather = layer_activations(normalized(c), true).kept_bytes;
  c.training.moe_token_dispatcher = TokenDispatcher::alltoall;
  const double unfused = layer_activations(normalized(c), true).kept_bytes;
  // Two int64 index tensors of k*Nsp entries.
  CHECK(unfused - allgather == Approx(2 * 8 * 1024 * 8.0));
  c.training.moe_permute_fusion = true;
  const double fused = layer_activations(normalized(c), true).kept_bytes;
  // int32 row_id_map [Nsp, 2E+1] and two int32 chunk-sort maps of the routed tokens.
  CHECK(fused - allgather == Approx(1024 * 257 * 4.0 + 2 * 8192 * 4.0));
  // The experts keep the permuted probabilities in the router's dtype (2 -> 4 bytes).
  c.training.moe_router_fp32 = true;
  CHECK(layer_activations(normalized(c), true).kept_bytes - fused == Approx(8192 * 2.0));
}
