// Saved activations and the step peak (memory-model.md 4, 5, 6 and worked example 9.2).
#include <catch2/catch.hpp>

#include "estimate_helpers.hpp"
#include "megamem/estimate.hpp"
#include "memory/activations.hpp"
#include "model_fixtures.hpp"

using namespace megamem;
using Catch::Matchers::WithinRel;

using testing::normalized;
using testing::run;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / kGiB; }
// The worked examples leave out workspaces and other persistent buffers.
std::uint64_t peak_without_buffers(const RankMemory& rank) {
  return rank.peak_allocated_bytes - rank.persistent_buffer_bytes;
}
}  // namespace

TEST_CASE("a TE GQA layer with flash attention saves 140,640,256 bytes (Llama-3-70B TP8 SP)") {
  const LayerActivations layer =
      layer_activations(normalized(fixtures::llama3_70b_tp8_pp4()), false);
  CHECK(layer.kept_bytes == Approx(140'640'256.0));
  CHECK(layer.full_bytes == Approx(140'640'256.0));
}

TEST_CASE("hidden dropout adds a 1-byte mask per residual add") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.model.hidden_dropout = 0.1;
  const LayerActivations layer = layer_activations(normalized(c), false);
  CHECK(layer.kept_bytes == Approx(140'640'256.0 + 2 * 512.0 * 8192.0));
}

TEST_CASE("unfused attention keeps 5 b (n/t) s^2 bytes of scores with dropout (Korthikanti)") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.model.attention_dropout = 0.1;
  const double flash = layer_activations(normalized(c), false).kept_bytes;
  c.training.attention_backend = AttentionBackend::unfused;
  const double unfused = layer_activations(normalized(c), false).kept_bytes;
  const double scores = 1.0 * (64.0 / 8.0) * 4096.0 * 4096.0;
  // Unfused: + 5 bytes per score, - the LSE, + K/V expanded from 8 groups to 64 heads.
  const double kv_expansion = 2.0 * 4096 * 2 * (64 - 8) * 128 / 8;
  CHECK(unfused - flash == Approx(5 * scores - 4.0 * 4096 * 64 / 8 + kv_expansion));
}

// --delay-wgrad-compute keeps a node's grad outputs until its backward_dw (linear.py
// wgrad_store.put): the MLP node's fc1 [N, 2f/TP] and fc2 [Nsp, h] outweigh the attention
// node's QKV [N, (n + 2g) dh / TP] and proj [Nsp, h]; bf16, Llama-3-70B TP8 SP, N = 4096.
TEST_CASE("delayed wgrad adds the larger node's grad outputs to the layer's backward") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  const double normal = layer_activations(normalized(c), false).backward_transient_bytes;
  c.training.delay_wgrad_compute = true;  // without the EP overlap: a warning, still delayed
  const LayerActivations delayed = layer_activations(normalized(c), false);
  const double mlp_node = 2.0 * (4096.0 * 2 * 28672 / 8 + 512.0 * 8192);
  CHECK(mlp_node > 2.0 * (4096.0 * 80 * 128 / 8 + 512.0 * 8192));
  CHECK(delayed.backward_transient_bytes - normal == Approx(mlp_node));
  CHECK(delayed.kept_bytes == layer_activations(normalized(c), false).kept_bytes);
}

// Without --bf16/--fp16 the layers run in fp32 (arguments.py params_dtype): every tensor in the
// activation dtype doubles; the fp32 softmax statistics (131,072 bytes) do not.
TEST_CASE("fp32 training saves the activation-dtype tensors in 4 bytes") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.training.params_dtype = DType::fp32;
  const LayerActivations layer = layer_activations(normalized(c), false);
  CHECK(layer.kept_bytes == Approx(2 * (140'640'256.0 - 131'072.0) + 131'072.0));
}

TEST_CASE("selective core_attn recompute under flash: statistics and V's copy for the output") {
  // Per rank 8 heads and 1 query group of 128, 4096 tokens: the checkpoint keeps RoPE'd Q and K
  // and V's view of linear_qkv's output, (8 + 1 + 1) x 128 wide (2 x 4096 x 1280 bytes), in place
  // of TE's contiguous V (2 x 4096 x 128) and the fp32 statistics (4 x 4096 x 8), which the
  // recomputed forward makes again.
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.training.recompute.granularity = RecomputeGranularity::selective;
  const LayerActivations layer = layer_activations(normalized(c), false);
  CHECK(layer.kept_bytes == Approx(140'640'256.0 - 131'072.0 - 1'048'576.0 + 10'485'760.0));
  CHECK(layer.recompute_bytes == Approx(131'072.0 + 1'048'576.0));
}

TEST_CASE("selective mlp recompute frees the LN output, fc1 and activation outputs") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::mlp};
  const LayerActivations layer = layer_activations(normalized(c), false);
  CHECK(layer.kept_bytes == Approx(140'640'256.0 - 8'388'608.0 - 58'720'256.0 - 29'360'128.0));
}

TEST_CASE("1F1B peak: rank 0 holds 4 micro-batches, 36.00 GiB (memory-model.md 9.2)") {
  const Estimate e = run(fixtures::llama3_70b_tp8_pp4());
  const double expected_gib[] = {36.00, 31.90, 29.28, 28.39};
  const double activations_gib[] = {10.48, 7.86, 5.24};
  for (int r = 0; r < 4; ++r) {
    const RankMemory& rank = e.ranks[static_cast<std::size_t>(r)];
    CHECK_THAT(gib(peak_without_buffers(rank)), WithinRel(expected_gib[r], 2e-3));
    if (r < 3) CHECK_THAT(gib(rank.activation_peak_bytes), WithinRel(activations_gib[r], 2e-3));
    CHECK(rank.max_inflight_microbatches == 4 - r);
  }
  CHECK(e.limiting_pp_rank == 0);
}

TEST_CASE("the last stage's forward peak holds 6 bytes per logit (fp32 upcast of bf16 logits)") {
  const Estimate e = run(fixtures::llama3_70b_tp8_pp4());
  const RankMemory& last = e.ranks[3];
  const double layers = 20.0 * 140'640'256.0;
  const double final_norm = 4.0 * 512 * 8192;
  const double logits = 6.0 * 4096 * 16128;
  CHECK(static_cast<double>(last.peak_allocated_bytes - last.static_bytes) ==
        Approx(layers + final_norm + logits));
}

TEST_CASE("full uniform recompute stashes one SP-sharded input per layer") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.training.recompute.granularity = RecomputeGranularity::full;
  c.training.recompute.method = RecomputeMethod::uniform;
  c.training.recompute.num_layers = 1;
  const Estimate e = run(c);
  // Rank 0: 4 micro-batches x 20 stashes of 2 Nsp h, plus the working set of one layer
  // (its activations and their gradients) in backward: 0.89 GiB.
  const RankMemory& first = e.ranks[0];
  CHECK_THAT(gib(first.peak_allocated_bytes - first.static_bytes), WithinRel(0.887, 2e-3));
  // Rank 3: the forward peak (stash + final norm + 6 bytes per logit): 0.54 GiB.
  const RankMemory& last = e.ranks[3];
  CHECK_THAT(gib(last.peak_allocated_bytes - last.static_bytes), WithinRel(0.541, 2e-3));
}

TEST_CASE("full block recompute of k layers keeps the other layers' activations") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.training.recompute.granularity = RecomputeGranularity::full;
  c.training.recompute.method = RecomputeMethod::block;
  c.training.recompute.num_layers = 5;
  const Estimate e = run(c);
  const double per_microbatch = 5 * 2.0 * 512 * 8192 + 15 * 140'640'256.0;
  CHECK(static_cast<double>(e.ranks[1].activation_bytes_per_microbatch) == Approx(per_microbatch));
}

TEST_CASE("interleaved rank peaks follow the simulated chunk mix, not an average") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.model.num_layers = 16;
  c.parallel.virtual_stages_per_pipeline_rank = 2;
  c.training.global_batch_size = 16;  // M = 8
  const Estimate e = run(c);
  const int outstanding[] = {11, 9, 7, 5};
  for (int r = 0; r < 4; ++r) {
    CHECK(e.ranks[static_cast<std::size_t>(r)].max_inflight_microbatches == outstanding[r]);
  }
}

TEST_CASE("MoE routed tokens are top-k copies of the SP tokens, all-gathered over ETP") {
  Config c = fixtures::qwen3_235b_tp4_pp4_ep8();
  const NormalizedConfig n = normalized(c);
  // memory-model.md 9.3: 67.2 MiB attention + 153.0 MiB MoE per layer = 220.2 MiB.
  const double mib = 1024.0 * 1024.0;
  CHECK_THAT(layer_activations(n, true).kept_bytes / mib, WithinRel(220.2, 2e-3));
}

TEST_CASE("legacy CPU offloading moves the first layers' activations to the host") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.model.num_layers = 8;
  c.parallel.pipeline_parallel = 1;
  c.parallel.world_size = 8;
  c.training.global_batch_size = 1;
  const Estimate base = run(c);
  c.training.offload.cpu_offloading = true;
  c.training.offload.cpu_offloading_num_layers = 3;
  const Estimate offloaded = run(c);
  const double layer = 140'640'256.0;
  CHECK(static_cast<double>(base.ranks[0].activation_bytes_per_microbatch -
                            offloaded.ranks[0].activation_bytes_per_microbatch) ==
        Approx(3 * layer));
  CHECK(static_cast<double>(offloaded.ranks[0].host_activation_bytes) == Approx(3 * layer));
}

TEST_CASE("fine-grained offloading moves every tensor saved inside the module to the host") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.training.offload.fine_grained_activation_offloading = true;
  c.training.offload.offload_modules = {OffloadModule::core_attn};
  const Estimate e = run(c);
  // Inside core attention TE saves Q, K and V apart: Q, 2 N n dh / t = 8,388,608 bytes
  // (4,194,304 elements, over the 1 Mi threshold); K and V, 524,288 elements each, and the
  // 65,536-element statistics stay on the GPU.
  const std::uint64_t base =
      run(fixtures::llama3_70b_tp8_pp4()).ranks[1].activation_bytes_per_microbatch;
  CHECK(static_cast<double>(base - e.ranks[1].activation_bytes_per_microbatch) ==
        Approx(20 * 8'388'608.0));
}

TEST_CASE("fine-grained offloading keeps the last layer's groups of the next backward chunk") {
  // fine_grained_activation_offload.py: after its first iteration a chunk whose backward comes
  // next keeps its last layer's groups on the GPU (should_bulk_offload); at PP 1 every
  // micro-batch's chunk is the next, so the loss runs with that layer's core_attn inputs.
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.model.num_layers = 8;
  c.parallel.pipeline_parallel = 1;
  c.parallel.world_size = 8;
  c.training.micro_batch_size = 8;  // activations above the optimizer step's peak
  c.training.global_batch_size = 8;
  c.training.offload.fine_grained_activation_offloading = true;
  c.training.offload.offload_modules = {OffloadModule::core_attn};
  const Estimate e = run(c);
  const RankMemory& rank = e.ranks[0];
  const double group = 8 * 10'485'760.0;  // one layer's Q, K, V (previous test) x 8 sequences
  CHECK(static_cast<double>(rank.host_activation_bytes) == Approx(7 * group));
  CHECK(static_cast<double>(rank.activation_peak_bytes - rank.activation_bytes_per_microbatch) ==
        Approx(group));
  // The first iteration moves every group (its warm-up): one group less at the same peak.
  CHECK(static_cast<double>(rank.peak_allocated_bytes - rank.lazy_optimizer_bytes -
                            rank.first_iteration_peak_allocated_bytes) == Approx(group));
}

TEST_CASE("native fused cross entropy holds one more fp32 copy of the logits (jit-fused ops)") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  const Estimate unfused = run(c);
  c.training.cross_entropy = CrossEntropyImpl::native_fused;
  const Estimate fused = run(c);
  const double logits = 4096.0 * 16128;  // N x Vp / TP on the last stage
  CHECK(static_cast<double>(fused.ranks[3].peak_allocated_bytes -
                            unfused.ranks[3].peak_allocated_bytes) == Approx(4 * logits));
  CHECK(fused.ranks[0].peak_allocated_bytes == unfused.ranks[0].peak_allocated_bytes);
}

namespace {
// Qwen3-235B-A22B's MoE layer on one node: EP8, ETP1, N = 4096 tokens per GPU.
Config qwen3_moe_on_8_gpus() {
  Config c = fixtures::qwen3_235b_a22b();
  c.model.num_layers = 4;
  c.parallel.world_size = 8;
  c.parallel.expert_parallel = 8;
  c.parallel.expert_tensor_parallel = 1;
  return c;
}
}  // namespace

TEST_CASE("unfused expert activations keep the probability-weighted copy") {
  Config c = qwen3_moe_on_8_gpus();
  const double fused = layer_activations(normalized(c), true).kept_bytes;
  c.training.bias_activation_fusion = false;
  const double unfused = layer_activations(normalized(c), true).kept_bytes;
  // Ne = k * N = 8 * 4096 tokens; expert FFN 1536: glu()'s product keeps the silu output and
  // the up half + 0.0, the product with the probabilities glu()'s output (experts.py).
  CHECK(unfused - fused == Approx(3 * 2.0 * 8 * 4096 * 1536));
}

// moe_utils.py unpermute: deterministic mode combines with index_add_, whose backward keeps
// its source (the experts' output, Ne x h); the fused permutation and scatter_add_ do not.
TEST_CASE("deterministic unpermute keeps the experts' output for index_add_'s backward") {
  Config c = qwen3_moe_on_8_gpus();
  c.training.moe_permute_fusion = false;
  const double scatter_add = layer_activations(normalized(c), true).kept_bytes;
  c.training.deterministic_mode = true;
  const double index_add = layer_activations(normalized(c), true).kept_bytes;
  CHECK(index_add - scatter_add == Approx(2.0 * 8 * 4096 * 4096));  // Ne = k N, h = 4096
  c.training.moe_permute_fusion = true;
  const double fused_deterministic = layer_activations(normalized(c), true).kept_bytes;
  c.training.deterministic_mode = false;
  CHECK(fused_deterministic == layer_activations(normalized(c), true).kept_bytes);
}

TEST_CASE("unfused attention's backward holds the probabilities' and the scores' gradients") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.training.attention_backend = AttentionBackend::unfused;
  const LayerActivations layer = layer_activations(normalized(c), false);
  const double scores = 1.0 * (64.0 / 8.0) * 4096.0 * 4096.0;  // b (n/t) s^2
  CHECK(layer.backward_transient_bytes == Approx(std::max(layer.full_bytes, 2 * 2 * scores)));
  CHECK(layer.backward_transient_bytes > layer.full_bytes);
}

// moe_layer.py: moe recompute checkpoints the MoE layer with the pre-MLP norm output as its
// input, which CheckpointFunction keeps; layernorm recompute is what discards it.
TEST_CASE("moe recompute keeps the pre-MLP norm output; layernorm recompute frees it") {
  Config c = qwen3_moe_on_8_gpus();
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::moe};
  const double moe = layer_activations(normalized(c), true).kept_bytes;
  c.training.recompute.modules = {RecomputeModule::moe, RecomputeModule::layernorm};
  const double with_layernorm = layer_activations(normalized(c), true).kept_bytes;
  const NormalizedConfig n = normalized(c);
  const ActivationShape s = activation_shape(n);
  CHECK(moe - with_layernorm == Approx(2.0 * s.sp_tokens * s.h));
}

// grouped_linear.py backward: without gradient-accumulation fusion TE writes the wgrads of all
// local experts into one packed [N, out, in] tensor, alive until the last grad hook has run.
TEST_CASE("without wgrad fusion the grouped GEMM holds every local expert's fc1 wgrad at once") {
  Config c = qwen3_moe_on_8_gpus();
  c.training.moe_grouped_gemm = true;
  const double fused = layer_activations(normalized(c), true).backward_transient_bytes;
  c.training.gradient_accumulation_fusion = false;
  const double packed = layer_activations(normalized(c), true).backward_transient_bytes;
  // Qwen3-235B: 128 experts / EP 8 = 16 local, fc1 [2 x 1536, 4096] in bf16.
  CHECK(packed - fused == Approx(2.0 * 16 * 2 * 1536 * 4096));
}

// shared_experts.py: with --moe-shared-expert-overlap the shared experts all-gather their
// input themselves (pre_forward_comm) and fc1 runs with parallel_mode None, so TE saves the
// whole-sequence input; without SP it is the norm output the router keeps anyway.
TEST_CASE("shared-expert overlap saves the gathered fc1 input under sequence parallelism") {
  Config c = qwen3_moe_on_8_gpus();
  c.model.moe_shared_expert_intermediate_size = 1536;
  c.parallel.tensor_parallel = 2;
  c.parallel.sequence_parallel = true;
  const double plain = layer_activations(normalized(c), true).kept_bytes;
  c.training.moe_shared_expert_overlap = true;
  const double overlap = layer_activations(normalized(c), true).kept_bytes;
  const ActivationShape s = activation_shape(normalized(c));
  CHECK(overlap - plain == Approx(2.0 * s.tokens * 4096));  // [s, b, h] bf16, h = 4096
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::shared_experts};
  const double recomputed = layer_activations(normalized(c), true).kept_bytes;
  c.training.moe_shared_expert_overlap = false;
  CHECK(recomputed == Approx(layer_activations(normalized(c), true).kept_bytes));
}

// megatron/core/fusions/fused_softmax.py: where the fused kernel does not run, PyTorch's
// softmax under attention_softmax_in_fp32 keeps its fp32 output (forward_torch_softmax).
TEST_CASE("unfused attention keeps an fp32 softmax output where the fused kernel does not run") {
  Config c = fixtures::llama3_70b();
  c.model.num_layers = 2;
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 8;
  c.training.attention_backend = AttentionBackend::unfused;
  c.training.seq_length = 1024;
  c.model.attention_dropout = 0.1;
  const auto saved = [](const Config& config) {
    const Expected<Estimate> e = estimate(config);
    REQUIRE(e.has_value());
    return static_cast<double>(e->ranks[0].activation_bytes_per_microbatch);
  };
  const double fused = saved(c);
  c.training.attention_softmax_in_fp32 = true;
  CHECK(saved(c) == fused);  // the fused kernel runs: it keeps 16-bit probabilities
  c.training.masked_softmax_fusion = false;
  // b·(n/TP)·s² scores per layer, 2 more bytes each (fp32 instead of 16-bit), 2 layers.
  const double scores = 1.0 * (64.0 / 8) * 1024 * 1024;
  CHECK(saved(c) - fused == Approx(2 * 2 * scores).epsilon(1e-9));
  // Without dropout the bmm with V keeps the 16-bit cast as well.
  c.model.attention_dropout = 0.0;
  const double no_dropout_fp32 = saved(c);
  c.training.attention_softmax_in_fp32 = false;
  CHECK(no_dropout_fp32 - saved(c) == Approx(2 * 4 * scores).epsilon(1e-9));
  // A sequence above 4096 keys: the kernel refuses it even with fusion on.
  c.training.masked_softmax_fusion = true;
  c.training.attention_softmax_in_fp32 = true;
  c.training.seq_length = 8192;
  c.model.max_position_embeddings = 8192;
  const double long_fp32 = saved(c);
  c.training.attention_softmax_in_fp32 = false;
  const double s8 = 1.0 * (64.0 / 8) * 8192 * 8192;
  CHECK(long_fp32 - saved(c) == Approx(2 * 4 * s8).epsilon(1e-9));
}
