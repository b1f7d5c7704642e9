// Megatron-FSDP / FSDP2 sharding and working set, Transformer Engine's attention backend
// choice, deferred embedding wgrad buffers and Transformer Engine's per-layer CUDA graphs:
// one hand-computed case per rule (/work/notes/fsdp-graphs.md and cuda_graphs.hpp have the
// sources).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <string>

#include "megamem/estimate.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/validation.hpp"
#include "memory/attention_backend.hpp"
#include "memory/cuda_graphs.hpp"
#include "memory/deferred_embedding_wgrad.hpp"
#include "memory/fsdp_memory.hpp"

using namespace megamem;
using Catch::Matchers::WithinAbs;

namespace {

// 4 layers, h = 512, tied embeddings, bf16, world 8 (DP 8 without TP/PP).
const std::string kTiny =
    "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
    "--max-position-embeddings 1024 --micro-batch-size 4 --global-batch-size 32 "
    "--vocab-size 50257 --bf16 ";

constexpr double kMiB = 1024.0 * 1024.0;

MegatronArgs parse(const std::string& flags) {
  Expected<MegatronArgs> args = parse_megatron_args(flags, 8);
  INFO((args ? std::string() : args.error().field + ": " + args.error().message));
  REQUIRE(args.has_value());
  return args.value();
}

RankMemory rank0(const std::string& flags) {
  Expected<Estimate> e = estimate(parse(flags).config);
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  return e->ranks[0];
}

NormalizedConfig normalized(const std::string& flags) {
  Expected<NormalizedConfig> n = normalize(parse(flags).config);
  REQUIRE(n.has_value());
  return n.value();
}

// A root tensor of 1000 elements (the word embedding) and 4 identical layers of 100.
struct TinyBlocks {
  std::array<ParamTensor, 1> root{ParamTensor{
      .numel = 1000, .module = ModuleKind::word_embedding, .embedding_or_output = true}};
  std::array<ParamTensor, 1> layer{
      ParamTensor{.numel = 100, .module = ModuleKind::mlp, .layer = 0, .gemm_weight = true}};
  std::vector<TensorBlock> blocks() const {
    return {TensorBlock{root.data(), 1, 1}, TensorBlock{layer.data(), 1, 4}};
  }
};

}  // namespace

TEST_CASE("Megatron-FSDP shards weights, main grads and main weights per strategy") {
  // param_and_grad_buffer.py _init_each_parameter_group_buffers; bf16 weight 2, fp32 main
  // grad 4, fp32 main weight 4 + Adam 8 bytes per parameter, DP = 8.
  struct Row {
    const char* strategy;
    double weight_shard, grad_shard, optimizer_shard;
  };
  for (const Row& row : {Row{"no_shard", 1, 1, 1}, Row{"optim", 1, 1, 8},
                         Row{"optim_grads", 1, 8, 8}, Row{"optim_grads_params", 8, 8, 8}}) {
    INFO(row.strategy);
    const RankMemory r =
        rank0(kTiny + "--use-megatron-fsdp --data-parallel-sharding-strategy " + row.strategy);
    const auto p = static_cast<double>(r.dense_params);
    // ZeRO-3 also keeps the root group (all but the 4 layers of 12h^2 + 13h) all-gathered
    // between steps (Megatron-Core >= 0.18, AllGatherPipeline.reset preserves its buckets).
    const double root = row.weight_shard > 1 ? p - 4 * (12.0 * 512 * 512 + 13 * 512) : 0;
    CHECK_THAT(static_cast<double>(r.weight_bytes),
               WithinAbs(2 * p / row.weight_shard + 2 * root, 1));
    CHECK_THAT(static_cast<double>(r.gradient_bytes), WithinAbs(4 * p / row.grad_shard, 1));
    CHECK_THAT(static_cast<double>(r.optimizer_bytes), WithinAbs(12 * p / row.optimizer_shard, 1));
  }
}

TEST_CASE("HFSDP shards the main weights and Adam states over every optimizer instance") {
  // param_and_grad_buffer.py: with --outer-dp-sharding-strategy optim the main-weight buffer
  // is sharded over all DP ranks (8 = 2 instances x 4); weights and main grads keep their
  // in-instance shard of 4 (the HFSDP helper buffers hold them).
  const std::string hsdp = kTiny + "--use-megatron-fsdp --num-distributed-optimizer-instances 2 ";
  const RankMemory replicated = rank0(hsdp);
  const RankMemory sharded = rank0(hsdp + "--outer-dp-sharding-strategy optim");
  const auto p = static_cast<double>(sharded.dense_params);
  CHECK_THAT(static_cast<double>(replicated.optimizer_bytes), WithinAbs(12 * p / 4, 1));
  CHECK_THAT(static_cast<double>(sharded.optimizer_bytes), WithinAbs(12 * p / 8, 1));
  CHECK(sharded.gradient_bytes == replicated.gradient_bytes);
  CHECK(sharded.weight_bytes == replicated.weight_bytes);
  // It needs ZeRO-3 inside the instance and outer groups to shard over; without Megatron-FSDP
  // nothing reads it.
  const auto error_field = [](const std::string& flags) {
    const Expected<Estimate> e = estimate(parse(flags).config);
    return e ? std::string() : e.error().field;
  };
  CHECK(error_field(hsdp + "--outer-dp-sharding-strategy optim --data-parallel-sharding-strategy "
                           "optim_grads") == "outer_dp_sharding_strategy");
  CHECK(error_field(kTiny + "--use-megatron-fsdp --outer-dp-sharding-strategy optim") ==
        "outer_dp_sharding_strategy");
  const Expected<Estimate> ddp = estimate(
      parse(kTiny + "--use-distributed-optimizer --outer-dp-sharding-strategy optim").config);
  REQUIRE(ddp.has_value());
  CHECK(std::any_of(ddp->warnings.begin(), ddp->warnings.end(), [](const std::string& w) {
    return w.find("no effect without Megatron-FSDP") != std::string::npos;
  }));
}

TEST_CASE("Megatron-FSDP main dtypes follow their flags; auto is the params dtype") {
  const std::string fsdp = kTiny + "--use-megatron-fsdp ";
  CHECK(parse(fsdp).config.parallel.fsdp.main_grads_dtype == DType::fp32);
  CHECK(parse(fsdp + "--grad-reduce-in-bf16").config.parallel.fsdp.main_grads_dtype == DType::bf16);
  CHECK(
      parse(fsdp + "--megatron-fsdp-main-grads-dtype auto").config.parallel.fsdp.main_grads_dtype ==
      DType::bf16);
  CHECK(parse(fsdp + "--megatron-fsdp-main-params-dtype bf16")
            .config.parallel.fsdp.main_params_dtype == DType::bf16);
  const RankMemory r = rank0(fsdp + "--megatron-fsdp-main-grads-dtype bf16");
  CHECK_THAT(static_cast<double>(r.gradient_bytes),
             WithinAbs(2.0 * static_cast<double>(r.dense_params) / 8, 1));
  // Until adfe9e11d9 grad_reduce_in_fp32 made them fp32, as read here; since then they follow
  // the params without the flag (mcore_fsdp_adapter.py): the estimate says which it takes.
  auto assumes_fp32_grads = [&](const std::string& flags) {
    const Expected<Estimate> e = estimate(parse(flags).config);
    REQUIRE(e.has_value());
    return std::any_of(e->assumptions.begin(), e->assumptions.end(), [](const std::string& a) {
      return a.find("adfe9e11d9") != std::string::npos;
    });
  };
  CHECK(assumes_fp32_grads(fsdp));
  CHECK_FALSE(assumes_fp32_grads(fsdp + "--megatron-fsdp-main-grads-dtype bf16"));
  CHECK_FALSE(assumes_fp32_grads(kTiny));
  // arguments.py: Megatron-FSDP v1 runs with the distributed optimizer.
  CHECK(parse(fsdp).config.optimizer.use_distributed_optimizer);
  CHECK(parse(fsdp + "--use-nccl-ub").config.parallel.fsdp.double_buffer);
}

TEST_CASE("PyTorch FSDP2 shards everything over DP with fp32 masters and grad copies") {
  // torch_fully_sharded_data_parallel.py + Float16OptimizerWithFloat16Params: bf16 shard 2,
  // fp32 grad copy 4, fp32 master 4 + Adam 8 bytes per parameter, all over DP = 8.
  const RankMemory r = rank0(kTiny + "--use-torch-fsdp2 --untie-embeddings-and-output-weights");
  const auto p = static_cast<double>(r.dense_params);
  CHECK_THAT(static_cast<double>(r.weight_bytes), WithinAbs(2 * p / 8, 1));
  CHECK_THAT(static_cast<double>(r.gradient_bytes), WithinAbs(4 * p / 8, 1));
  CHECK_THAT(static_cast<double>(r.optimizer_bytes), WithinAbs(12 * p / 8, 1));
}

TEST_CASE("Megatron-FSDP ZeRO-3 holds the root group and the prefetched units unsharded") {
  NormalizedConfig n = normalized(kTiny + "--use-megatron-fsdp");
  const TinyBlocks tiny;
  // The root group stays gathered between steps: static memory, not working set.
  const ShardedTensorBytes root = fsdp_tensor_bytes(n, tiny.root[0]);
  CHECK(root.weight == 2.0 / 8 + 2.0);
  CHECK(fsdp_tensor_bytes(n, tiny.layer[0]).weight == 2.0 / 8);
  // Default prefetch bound 5e8 elements: all 4 units gathered. bf16 weights, fp32 grads.
  FsdpWorkingSet w = fsdp_working_set(n, tiny.blocks(), true);
  CHECK(w.forward_bytes == 0);
  CHECK(w.forward_start_bytes == 2 * 400);
  CHECK(w.backward_bytes == 2 * 400 + 4 * (1000 + 100));
  // --fsdp-double-buffer: two units at a time, in two persistent buffer groups (bf16 weights,
  // fp32 gradients), so nothing of the units is allocated during the step.
  n.config.parallel.fsdp.double_buffer = true;
  w = fsdp_working_set(n, tiny.blocks(), true);
  CHECK(w.forward_start_bytes == 0);
  CHECK(w.backward_bytes == 4 * 1000);  // the root's gradient bucket
  CHECK(w.persistent_pool_bytes == 2 * (2 * 100 + 4 * 100));
  // --suggested-communication-unit-size 202: prefetch until 101 elements, i.e. two more units.
  n.config.parallel.fsdp.double_buffer = false;
  n.config.parallel.fsdp.communication_unit_elements = 202;
  w = fsdp_working_set(n, tiny.blocks(), true);
  CHECK(w.forward_start_bytes == 2 * 300);
  // optim_grads (ZeRO-2): weights are whole; only the gradient buckets are temporary.
  n.config.parallel.fsdp.sharding = FsdpSharding::optim_grads;
  w = fsdp_working_set(n, tiny.blocks(), true);
  CHECK(w.forward_start_bytes == 0);
  CHECK(w.backward_bytes == 4 * (1000 + 100));
  CHECK(fsdp_tensor_bytes(n, tiny.root[0]).weight == 2.0);  // whole, gathered once
  n.config.parallel.fsdp.sharding = FsdpSharding::optim;
  CHECK(fsdp_working_set(n, tiny.blocks(), true).backward_bytes == 0);
}

TEST_CASE("Megatron-FSDP's gradient buckets pile up in the reduce-scatter queue") {
  // GradReducePipeline: a reduce-scattered bucket is freed only while the queue holds more
  // than a communication unit of elements (checked before the next is queued); the untied
  // input embedding is a bucket of its own when it reaches the bucket size, filled by the
  // last gradient of the backward.
  NormalizedConfig n = normalized(kTiny +
                                  "--use-megatron-fsdp --overlap-grad-reduce --ddp-bucket-size 500 "
                                  "--suggested-communication-unit-size 202");
  const TinyBlocks tiny;
  FsdpWorkingSet w = fsdp_working_set(n, tiny.blocks(), true);
  // Start of backward: three units gathered (bf16), one unit's fp32 bucket; no embedding one.
  CHECK(w.backward_bytes == 2 * 300 + 4 * 100);
  // Each unit's backward, last first: its window (it and the earlier units prefetched up to
  // 101 elements), its bucket, and the queue: 0, 1, 2, 3 later units' buckets.
  CHECK(w.layer_backward_bytes ==
        std::vector<double>{200 + 400 + 1200, 400 + 400 + 800, 600 + 400 + 400, 600 + 400 + 0});
  // The embedding's backward: unit 3's bucket left the queue (300 > 202 elements), three stay.
  CHECK(w.embedding_backward_bytes == 4 * 300 + 4 * 1000);
  // A chunk that does not bucket (not its rank's first) keeps the root in one bucket, from
  // the output layer's gradient on.
  CHECK(fsdp_working_set(n, tiny.blocks(), false).backward_bytes == 2 * 300 + 4 * (1000 + 100));
  // The peak is the phase where buckets most outgrow the activations freed.
  ChunkActivations chunk{.saved_bytes = 10000,
                         .layer_backward_extra_bytes = {-300, -600, -900, -1200},
                         .embedding_backward_extra_bytes = -10000};
  add_fsdp_working_set({w}, std::vector<StagePlacement>(1), 0, chunk);
  CHECK(chunk.backward_peak_extra_bytes == -300 + 1800);
}

TEST_CASE("Megatron-FSDP's double buffer pools the most common unit, or the largest") {
  // param_and_grad_buffer.py: FixedPoolAllocator pools the largest set of units with equal
  // buckets, two buffer groups per allocator from the GlobalMemoryBuffer (never freed); other
  // units allocate when needed, or keep their own buffers with
  // --fsdp-db-use-persist-buf-on-alloc-fail. MaxPoolAllocator pools every unit, sized for the
  // largest per bucket kind.
  const std::string db = kTiny + "--use-megatron-fsdp --fsdp-double-buffer ";
  // One dense unit of 300 elements, then three MoE-like units of 100 dense + 200 expert (DP 8,
  // expert-DP 8: both distributed).
  std::array<ParamTensor, 1> dense{
      ParamTensor{.numel = 300, .module = ModuleKind::mlp, .layer = 0, .gemm_weight = true}};
  std::array<ParamTensor, 2> moe{
      ParamTensor{.numel = 100, .module = ModuleKind::self_attention, .layer = 1},
      ParamTensor{.numel = 200, .module = ModuleKind::routed_experts, .layer = 1, .expert = true}};
  const std::vector<TensorBlock> blocks{TensorBlock{dense.data(), 1, 1},
                                        TensorBlock{moe.data(), 2, 3}};
  // Pool: two MoE units of bf16 weights and fp32 gradients; the dense unit stays dynamic.
  FsdpWorkingSet w = fsdp_working_set(normalized(db), blocks, true);
  CHECK(w.persistent_pool_bytes == 2 * 300 * (2 + 4));
  CHECK(w.forward_start_bytes == 2 * 300);  // the dense unit's gather
  CHECK(w.backward_bytes == 2 * 300 + 4 * 300);
  // Persistent buffers for the dense unit too: nothing left to allocate.
  w = fsdp_working_set(normalized(db + "--fsdp-db-use-persist-buf-on-alloc-fail"), blocks, true);
  CHECK(w.persistent_pool_bytes == 2 * 300 * (2 + 4) + 300 * (2 + 4));
  CHECK(w.forward_start_bytes == 0);
  // Max pool: per bucket kind the largest unit, dense 300 and expert 200 elements.
  w = fsdp_working_set(normalized(db + "--megatron-fsdp-max-pool-double-buffer"), blocks, true);
  CHECK(w.persistent_pool_bytes == 2 * (300 + 200) * (2 + 4));
  CHECK(w.forward_start_bytes == 0);
}

TEST_CASE("a Megatron-FSDP buffer of a one-rank group is never gathered nor bucketed") {
  // param_and_grad_buffer.py: is_data_distributed needs dp_group.size() > 1; fetch_bucket
  // then returns a view of the persistent buffer and _grad_acc adds into it.
  NormalizedConfig n = normalized(kTiny +
                                  "--use-megatron-fsdp --num-experts 8 "
                                  "--expert-model-parallel-size 8 --moe-grouped-gemm");
  REQUIRE(n.expert_data_parallel == 1);
  std::array<ParamTensor, 2> layer{
      ParamTensor{.numel = 100, .module = ModuleKind::mlp, .layer = 0, .gemm_weight = true},
      ParamTensor{.numel = 300,
                  .module = ModuleKind::routed_experts,
                  .layer = 0,
                  .expert = true,
                  .gemm_weight = true}};
  const std::vector<TensorBlock> blocks{TensorBlock{layer.data(), 2, 4}};
  // Only the dense 100 elements per unit are gathered (bf16) and bucketed (fp32 grads).
  const FsdpWorkingSet w = fsdp_working_set(n, blocks, true);
  CHECK(w.forward_start_bytes == 2 * 400);
  CHECK(w.backward_bytes == 2 * 400 + 4 * 100);
  // The experts' persistent buffers hold them whole.
  CHECK(fsdp_tensor_bytes(n, layer[1]).weight == 2.0);
  CHECK(fsdp_tensor_bytes(n, layer[1]).gradient == 4.0);
}

TEST_CASE("FP8 parameters under Megatron-FSDP live in uint8 buffers with bf16 gradients") {
  const std::string fp8 =
      kTiny + "--use-megatron-fsdp --fp8-format e4m3 --fp8-recipe tensorwise --fp8-param-gather ";
  NormalizedConfig n = normalized(fp8);
  const ParamTensor gemm{
      .numel = 100, .module = ModuleKind::mlp, .layer = 0, .gemm_weight = true, .fp8 = true};
  // param_and_grad_buffer.py: a "float8" group has a uint8 model weight buffer; its main
  // grads are fp32 here (bf16 params without --grad-reduce-in-bf16: Megatron-Core <= 0.15).
  ShardedTensorBytes bytes = fsdp_tensor_bytes(n, gemm);
  CHECK(bytes.weight == 1.0 / 8);
  CHECK(bytes.gradient == 4.0 / 8);
  CHECK(bytes.optimizer == 12.0 / 8);
  // "auto" main grads: _resolve_group_grad_dtype gives an FP8 group bf16 gradients.
  bytes = fsdp_tensor_bytes(normalized(fp8 + "--megatron-fsdp-main-grads-dtype auto"), gemm);
  CHECK(bytes.gradient == 2.0 / 8);
  // Gathered for compute: the data, and before Blackwell the transpose TE makes after the
  // all-gather (post_all_gather_processing), dropped with the unit.
  const std::array<ParamTensor, 1> layer{gemm};
  const std::vector<TensorBlock> blocks{TensorBlock{layer.data(), 1, 4}};
  CHECK(fsdp_working_set(n, blocks, true).forward_start_bytes == 2 * 400);
  n.config.device.fp8_gemm_any_layout = true;
  CHECK(fsdp_working_set(n, blocks, true).forward_start_bytes == 1 * 400);
  // MXFP8: a transpose_weight_buffer beside the model weight buffer, both sharded, and the
  // E8M0 scales of both layouts (1 byte per 32 elements each) whole: fp8_set_raw_data points
  // only the data at the buffers.
  n.config.training.fp8_recipe = Fp8Recipe::mxfp8;
  CHECK(fsdp_tensor_bytes(n, gemm).weight == 2.0 / 8 + 2.0 / 32);
}

TEST_CASE("Megatron-FSDP gathers one MXFP8 layout per pass, the rowwise again for recompute") {
  // AllGatherPipeline.get_bucket_key: the rowwise bucket in forward, the columnwise
  // (transpose_weight_buffer) in backward, one byte per element each; TE makes nothing after
  // an MXFP8 gather. Recomputing a unit's GEMMs gathers its rowwise bucket once more.
  const std::string mxfp8 = kTiny +
                            "--use-megatron-fsdp --fp8-format e4m3 --fp8-recipe mxfp8 "
                            "--fp8-param-gather --suggested-communication-unit-size 202 ";
  const std::array<ParamTensor, 1> layer{ParamTensor{
      .numel = 100, .module = ModuleKind::mlp, .layer = 0, .gemm_weight = true, .fp8 = true}};
  const std::vector<TensorBlock> blocks{TensorBlock{layer.data(), 1, 4}};
  // Prefetch until 101 elements: the unit and two more, 1 byte per element.
  FsdpWorkingSet w = fsdp_working_set(normalized(mxfp8), blocks, true);
  CHECK(w.forward_start_bytes == 300);
  CHECK(w.backward_bytes == 300 + 4 * 100);  // + one unit's fp32 gradient bucket
  w = fsdp_working_set(
      normalized(mxfp8 + "--recompute-granularity selective --recompute-modules mlp"), blocks,
      true);
  CHECK(w.forward_start_bytes == 300);
  CHECK(w.backward_bytes == 300 + 100 + 4 * 100);
  // core_attn recompute runs no GEMM of this unit.
  w = fsdp_working_set(normalized(mxfp8 + "--recompute-granularity selective"), blocks, true);
  CHECK(w.backward_bytes == 300 + 4 * 100);
  // Built before the wrapper, a parameter holds both layouts and their scales.
  CHECK_THAT(normalized(mxfp8).config.parallel.fsdp.init_model_with_meta_device
                 ? 0.0
                 : fsdp_working_set(normalized(mxfp8), blocks, true).initial_params_bytes,
             WithinAbs(400 * 2 * (1 + 1.0 / 32), 1e-9));
}

TEST_CASE("16-bit weights of FP8 layers under FSDP keep TE's whole FP8 copy") {
  // module/linear.py _fp8_workspaces: the quantized copy of the gathered (whole) weight.
  const ParamTensor gemm{
      .numel = 100, .module = ModuleKind::mlp, .layer = 0, .gemm_weight = true, .fp8 = true};
  const std::string fp8 = kTiny + "--fp8-format e4m3 --fp8-recipe tensorwise ";
  CHECK(fsdp_tensor_bytes(normalized(fp8 + "--use-megatron-fsdp"), gemm).weight == 2.0 / 8 + 2.0);
  // arguments.py turns --fp8-param-gather off under FSDP2 (TE >= 2.0), and says so.
  const NormalizedConfig n = normalized(
      fp8 + "--use-torch-fsdp2 --untie-embeddings-and-output-weights --fp8-param-gather");
  CHECK(fsdp_tensor_bytes(n, gemm).weight == 2.0 / 8 + 2.0);
  CHECK(std::any_of(n.warnings.begin(), n.warnings.end(), [](const std::string& w) {
    return w.find("--fp8-param-gather with --use-torch-fsdp2") != std::string::npos;
  }));
}

TEST_CASE("FSDP2 unshards the current and next unit, or every unit without resharding") {
  NormalizedConfig n =
      normalized(kTiny + "--use-torch-fsdp2 --untie-embeddings-and-output-weights");
  const TinyBlocks tiny;
  // The embedding is a unit of its own (1000), the largest; layers are units of 100.
  FsdpWorkingSet w = fsdp_working_set(n, tiny.blocks(), true);
  CHECK(w.forward_bytes == 2 * 2000);
  CHECK(w.backward_bytes == 2 * (2000 + 1000));
  n.config.parallel.fsdp.reshard_after_forward = false;
  w = fsdp_working_set(n, tiny.blocks(), true);
  CHECK(w.forward_bytes == 2 * 1400);
  CHECK(w.backward_bytes == 2 * (1400 + 1000));
}

TEST_CASE("without meta-device init the whole model is first built unsharded") {
  // training.py get_model: model_module.cuda() before wrapping; then one group's bucket.
  NormalizedConfig n = normalized(kTiny + "--use-megatron-fsdp");
  const TinyBlocks tiny;
  FsdpWorkingSet w = fsdp_working_set(n, tiny.blocks(), true);
  CHECK(w.initial_params_bytes == 2 * 1400);
  CHECK(w.initial_bucket_bytes == 2 * 1000);
  const std::vector<StagePlacement> stages(2, StagePlacement{});  // both on pipeline rank 0
  RankPeak peak{.peak_allocated_bytes = 1000};
  add_fsdp_initialization({w, w}, stages, 0, peak);
  CHECK(peak.peak_allocated_bytes == 2 * 1400 * 2 + 2 * 1000);
  CHECK(peak.activation_bytes == 0);
  n.config.parallel.fsdp.init_model_with_meta_device = true;
  w = fsdp_working_set(n, tiny.blocks(), true);
  CHECK(w.initial_params_bytes == 0);
  CHECK(parse(kTiny + "--use-megatron-fsdp --init-model-with-meta-device")
            .config.parallel.fsdp.init_model_with_meta_device);
}

TEST_CASE("with several chunks on a rank, the other chunks' root groups stay unsharded") {
  FsdpWorkingSet first{.forward_bytes = 10, .forward_start_bytes = 30, .backward_bytes = 50};
  FsdpWorkingSet second{.forward_bytes = 7, .forward_start_bytes = 9, .backward_bytes = 11};
  std::vector<StagePlacement> stages(3);
  stages[1].pp_rank = 1;  // another rank's stage does not count
  ChunkActivations chunk{.saved_bytes = 100,
                         .forward_peak_extra_bytes = 100,
                         .backward_peak_extra_bytes = 40,
                         .weight_grad_backward_peak_extra_bytes = 40};
  add_fsdp_working_set({first, {.forward_bytes = 1000}, second}, stages, 0, chunk);
  CHECK(chunk.forward_peak_extra_bytes == 7 + 100 + 10);
  CHECK(chunk.backward_peak_extra_bytes == 40 + 7 + 50);
}

// megatron_fsdp.py: the gradient buckets come with the first gradient hook (the output
// layer's wgrad) and the units are gathered by their pre-backward hooks, so the cross
// entropy's backward runs without the working set; torch FSDP2 keeps its units meanwhile.
TEST_CASE("Megatron-FSDP's working set is not there in the cross entropy's backward") {
  ChunkActivations chunk{.backward_peak_extra_bytes = 200,
                         .loss_backward_peak_extra_bytes = 200,
                         .weight_grad_backward_peak_extra_bytes = 40};
  const std::vector<StagePlacement> stages(1);
  ChunkActivations megatron = chunk;
  add_fsdp_working_set({{.backward_bytes = 50}}, stages, 0, megatron);
  CHECK(megatron.backward_peak_extra_bytes == 200);
  add_fsdp_working_set({{.backward_bytes = 500}}, stages, 0, chunk);
  CHECK(chunk.backward_peak_extra_bytes == 540);
  ChunkActivations fsdp2{.loss_backward_peak_extra_bytes = 200};
  add_fsdp_working_set({{.backward_bytes = 50, .loss_backward_bytes = 50}}, stages, 0, fsdp2);
  CHECK(fsdp2.backward_peak_extra_bytes == 250);
}

TEST_CASE("FSDP's working set raises the peak, not the static memory") {
  // A 64-token vocabulary keeps the loss small: the layers' backward is the peak.
  const std::string flags = kTiny + "--vocab-size 64 ";
  const RankMemory ddp = rank0(flags + "--use-distributed-optimizer");
  const RankMemory fsdp = rank0(flags + "--use-megatron-fsdp");
  CHECK(fsdp.static_bytes < ddp.static_bytes);
  CHECK(fsdp.peak_allocated_bytes - fsdp.static_bytes >
        ddp.peak_allocated_bytes - ddp.static_bytes);
}

TEST_CASE("Transformer Engine's auto backend below sm90 in deterministic mode") {
  // utils.py get_attention_backend, "Filter: Determinism".
  Config c = parse(kTiny).config;
  CHECK(resolved_attention_backend(c) == AttentionBackend::fused);
  c.training.deterministic_mode = true;
  CHECK(resolved_attention_backend(c) == AttentionBackend::fused);  // sm90: fused stays
  c.device.compute_capability = 80;
  CHECK(resolved_attention_backend(c) == AttentionBackend::flash);
  c.training.flash_attn_available = false;
  CHECK(resolved_attention_backend(c) == AttentionBackend::unfused);
  c.training.attention_backend = AttentionBackend::flash;
  CHECK(resolved_attention_backend(c) == AttentionBackend::flash);  // explicit wins
  c.training.transformer_impl = TransformerImpl::local;
  CHECK(resolved_attention_backend(c) == AttentionBackend::local);
}

TEST_CASE("the unfused fallback keeps 5 bytes per attention score on A100 without flash-attn") {
  // Saved softmax (2) + dropout mask (1) + dropout output (2) per b x heads x s^2 element,
  // instead of flash's fp32 log-sum-exp per token and head, for 4 layers of one micro-batch:
  // (5 x 4 x 8 x 1024^2 - 4 x 4096 x 8) x 4.
  Config c = parse(kTiny + "--deterministic-mode").config;
  c.device.compute_capability = 80;
  const Expected<Estimate> flash = estimate(c);
  c.training.flash_attn_available = false;
  const Expected<Estimate> unfused = estimate(c);
  REQUIRE(flash.has_value());
  REQUIRE(unfused.has_value());
  const double saved = static_cast<double>(unfused->ranks[0].activation_bytes_per_microbatch) -
                       static_cast<double>(flash->ranks[0].activation_bytes_per_microbatch);
  CHECK_THAT(saved, WithinAbs((5.0 * 4 * 8 * 1024 * 1024 - 4.0 * 4096 * 8) * 4, 1));
}

TEST_CASE("deferred embedding wgrad holds output gradients and inputs per micro-batch") {
  // tp 2, pp 2, M = 32 / (4 x 2) = 4 micro-batches; padded vocabulary 50432 (divisible by
  // 128 x TP); per micro-batch 2 x (4096 x 50432 / 2 + 4096 x 512) bytes.
  const std::string flags = kTiny +
                            "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
                            "--defer-embedding-wgrad-compute ";
  const double per_microbatch = 2.0 * (4096.0 * 50432 / 2 + 4096.0 * 512);
  DeferredWgradBytes held =
      deferred_embedding_wgrad_bytes(normalized(flags + "--wgrad-deferral-limit 2"));
  CHECK(held.during_schedule == 2 * per_microbatch);
  CHECK(held.at_flush == 2 * per_microbatch);
  held = deferred_embedding_wgrad_bytes(normalized(flags));  // no limit: all 4 deferred
  CHECK(held.during_schedule == 3 * per_microbatch);
  CHECK(held.at_flush == 4 * per_microbatch);
  CHECK(deferred_embedding_wgrad_bytes(normalized(kTiny)).at_flush == 0);
}

TEST_CASE("deferred embedding wgrad buffers are drained before the optimizer step") {
  // Wide layers and short sequences: the last stage's optimizer step (static + the fp32 copy
  // of its bf16 grad shard) is its highest phase. finish_embedding_wgrad_compute pops the
  // buffers in the pipeline flush (megatron/core/utils.py drain_embedding_wgrad_compute),
  // so they add to the passes and the flush, never to the step.
  Config c = parse(
                 "--num-layers 4 --hidden-size 4096 --num-attention-heads 32 --seq-length 128 "
                 "--max-position-embeddings 128 --micro-batch-size 1 --global-batch-size 8 "
                 "--vocab-size 50257 --bf16 --tensor-model-parallel-size 2 "
                 "--pipeline-model-parallel-size 2 --use-distributed-optimizer "
                 "--grad-reduce-in-bf16 --defer-embedding-wgrad-compute")
                 .config;
  const Expected<Estimate> e = estimate(c);
  REQUIRE(e.has_value());
  const RankMemory& last = e->ranks.back();
  const DeferredWgradBytes held = deferred_embedding_wgrad_bytes(e->normalized);
  REQUIRE(held.at_flush > 0);
  double passes = 0;
  for (const TimelineEvent& event : last.timeline) {
    if (event.kind != TimelineEvent::Kind::optimizer_step) {
      passes = std::max(passes, static_cast<double>(event.peak_during_bytes));
    }
  }
  const auto static_bytes = static_cast<double>(last.static_bytes);
  const double step = static_bytes + static_cast<double>(last.optimizer_step_bytes);
  REQUIRE(step > passes + held.during_schedule);  // the step is the phase that decides
  REQUIRE(step > static_bytes + held.at_flush);
  CHECK(static_cast<double>(last.peak_allocated_bytes) == step);
  CHECK(last.timeline.back().kind == TimelineEvent::Kind::optimizer_step);
  CHECK(static_cast<double>(last.timeline.back().peak_during_bytes) == step);
}

TEST_CASE("validation runs lts_dgxa100_dracooci without flash-attn, other platforms with it") {
  const std::string flags = kTiny + "--deterministic-mode";
  const auto entry = [&](const std::string& id) {
    return "{\"id\": \"" + id +
           "\", \"source\": \"test\", \"gpu\": \"A100\", \"world_size\": 8, "
           "\"measured_rank\": {\"pp_rank\": 0}, \"megatron_args\": \"" +
           flags + "\", \"vocab_size\": 50257, \"measured\": {\"static_bytes\": 1e9, " +
           "\"peak_bytes\": 4e9}, \"tags\": []}";
  };
  const Expected<ValidationReport> report =
      run_validation("{\"cases\": [" + entry("gpt/x@lts_dgxa100_dracooci") + ", " +
                     entry("gpt/x@dev_dgx_a100") + "]}");
  REQUIRE(report.has_value());
  REQUIRE(report->cases.size() == 2);
  REQUIRE(report->cases[0].peak_memory.has_value());
  REQUIRE(report->cases[1].peak_memory.has_value());
  CHECK(report->cases[0].peak_memory->predicted_bytes >
        report->cases[1].peak_memory->predicted_bytes);
}

// ---------------------------------------------------------------------------------------------
// Transformer Engine per-layer CUDA graphs (cuda_graphs.hpp): kTiny has kv_channels 64,
// learned positions, s = 1024, b = 4.

TEST_CASE("CUDA graph flags: implementations, old spellings and module lists") {
  // arguments.py validate_args and cuda_graph_config.py normalize_cuda_graph_modules.
  TrainingConfig t = parse(kTiny +
                           "--cuda-graph-impl transformer_engine "
                           "--cuda-graph-modules \"[attn moe_router]\"")
                         .config.training;
  CHECK(t.cuda_graph_impl == CudaGraphImpl::transformer_engine);
  CHECK(t.cuda_graph_modules ==
        CudaGraphModules{CudaGraphModule::attn, CudaGraphModule::moe_router});
  CHECK(t.cuda_graph_warmup_steps == 3);
  t = parse(kTiny + "--external-cuda-graph --cuda-graph-scope full --cuda-graph-warmup-steps 0")
          .config.training;
  CHECK(t.cuda_graph_impl == CudaGraphImpl::transformer_engine);
  CHECK(t.cuda_graph_modules.empty());
  CHECK(t.cuda_graph_warmup_steps == 0);
  CHECK(parse(kTiny + "--enable-cuda-graph").config.training.cuda_graph_impl ==
        CudaGraphImpl::local);
  CHECK(parse(kTiny + "--cuda-graph-impl local --cuda-graph-scope full_iteration")
            .config.training.cuda_graph_impl == CudaGraphImpl::full_iteration);
  const Expected<MegatronArgs> bad =
      parse_megatron_args(kTiny + "--cuda-graph-impl transformer_engine --cuda-graph-modules x", 8);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().field == "--cuda-graph-modules");
}

TEST_CASE("--cuda-graph-modules decides which saved tensors a graph holds") {
  // transformer_layer.py _get_submodules_under_cudagraphs.
  const std::string moe = kTiny +
                          "--num-experts 4 --moe-shared-expert-intermediate-size 256 "
                          "--cuda-graph-impl transformer_engine ";
  const NormalizedConfig attn = normalized(moe + "--cuda-graph-modules attn");
  CHECK(module_graphed(attn, ModuleKind::self_attention, LayerKind::moe));
  CHECK_FALSE(module_graphed(attn, ModuleKind::pre_mlp_layernorm, LayerKind::moe));
  CHECK_FALSE(module_graphed(attn, ModuleKind::routed_experts, LayerKind::moe));
  const NormalizedConfig router = normalized(moe + "--cuda-graph-modules moe_router");
  CHECK_FALSE(module_graphed(router, ModuleKind::self_attention, LayerKind::moe));
  CHECK(module_graphed(router, ModuleKind::router, LayerKind::moe));
  CHECK(module_graphed(router, ModuleKind::shared_experts, LayerKind::moe));
  CHECK_FALSE(module_graphed(router, ModuleKind::routed_experts, LayerKind::moe));
  CHECK_FALSE(
      layer_graphed(router, LayerKind::dense));  // _layer_is_graphable: no MLP module listed
  const NormalizedConfig whole = normalized(moe);
  CHECK(module_graphed(whole, ModuleKind::routed_experts, LayerKind::moe));
  CHECK(in_graph_part(whole, GraphPart::graphed, ModuleKind::mlp, LayerKind::dense));
  CHECK_FALSE(in_graph_part(whole, GraphPart::eager, ModuleKind::mlp, LayerKind::dense));
}

TEST_CASE("without PP the graphs keep one static input set per graphed layer") {
  // PP = 1: one micro-batch is captured, 4 layers -> 4 sets (_get_cuda_graph_input_data).
  // hidden [s, b, h] bf16 = 2 x 1024 x 4 x 512 = 4 MiB; mask [b, 1, s, s] bool = 4 MiB;
  // one grad-output buffer of the layer output: 4 MiB. 4 x 8 + 4 = 36 MiB.
  const std::string flags = kTiny + "--cuda-graph-impl transformer_engine ";
  CHECK_THAT(graph_static_bytes(normalized(flags + "--cuda-graph-modules attn"), 0),
             WithinAbs(36 * kMiB, 1));
  // RoPE (not MLA): one fp32 table [s, 1, 1, kv_channels] = 4 x 1024 x 64 = 256 KiB more.
  CHECK_THAT(graph_static_bytes(
                 normalized(flags + "--cuda-graph-modules attn --position-embedding-type rope"), 0),
             WithinAbs(36 * kMiB + 256 * 1024, 1));
  // mlp only: no mask. 4 x 4 + 4 = 20 MiB.
  CHECK_THAT(graph_static_bytes(normalized(flags + "--cuda-graph-modules mlp"), 0),
             WithinAbs(20 * kMiB, 1));
  CHECK(graph_static_bytes(normalized(kTiny), 0) == 0);
}

TEST_CASE("with PP a static input set is reused once its chunk's backward is captured") {
  // PP 2, DP 4, 2 micro-batches; 2 layers per stage. 1F1B: rank 0 warms up 1 micro-batch,
  // so 2 forwards are outstanding (4 sets of 8 MiB); rank 1 runs 1F1B at once (2 sets).
  const std::string flags = kTiny +
                            "--pipeline-model-parallel-size 2 --cuda-graph-impl transformer_engine "
                            "--cuda-graph-modules attn";
  const NormalizedConfig n = normalized(flags);
  CHECK_THAT(graph_static_bytes(n, 0), WithinAbs((4 * 8 + 4) * kMiB, 1));
  CHECK_THAT(graph_static_bytes(n, 1), WithinAbs((2 * 8 + 4) * kMiB, 1));
}

TEST_CASE("a graphed run's static memory holds the buffers; its peak follows the phases") {
  const std::string graphs =
      kTiny + "--cuda-graph-impl transformer_engine --cuda-graph-modules attn ";
  const RankMemory plain = rank0(kTiny);
  const RankMemory warm = rank0(graphs);
  CHECK(warm.cuda_graph_bytes == static_cast<std::uint64_t>(36 * kMiB));
  CHECK(warm.static_bytes == plain.static_bytes + warm.cuda_graph_bytes);
  // The eager warm-up steps (3 by default) run everything before the buffers exist.
  CHECK(warm.peak_allocated_bytes >= plain.peak_allocated_bytes);
  // Captured at once: the capture holds only the attention's activations and the replaying
  // steps only the rest, each below the whole layer's on top of the buffers.
  const RankMemory cold = rank0(graphs + "--cuda-graph-warmup-steps 0");
  CHECK(cold.peak_allocated_bytes < plain.peak_allocated_bytes + cold.cuda_graph_bytes);
  CHECK(cold.peak_allocated_bytes > cold.static_bytes);
}

TEST_CASE("the graph capture runs before zero_grad: the last step's fp32 grad copy is there") {
  // training.py / Bridge train.py: create_cudagraphs() after cuda_graph_warmup_steps steps,
  // before the next train_step's optimizer.zero_grad(). Short sequences make the copy larger
  // than any micro-batch's activations, so the step itself would otherwise be the peak.
  const std::string graphs =
      "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 64 "
      "--max-position-embeddings 64 --micro-batch-size 1 --global-batch-size 8 "
      "--vocab-size 50257 --bf16 --grad-reduce-in-bf16 --cuda-graph-impl transformer_engine "
      "--cuda-graph-modules attn ";
  const RankMemory warm = rank0(graphs + "--cuda-graph-warmup-steps 1");
  REQUIRE(warm.optimizer_step_bytes > warm.activation_bytes_per_microbatch);
  CHECK(warm.peak_allocated_bytes > allocated_after_step_bytes(warm));
  // Captured at the first iteration, before any step: no copy beside the capture.
  const RankMemory cold = rank0(graphs + "--cuda-graph-warmup-steps 0");
  CHECK(cold.peak_allocated_bytes == allocated_after_step_bytes(cold));
}

TEST_CASE("local and whole-iteration CUDA graphs are said to be not modeled") {
  for (const char* impl : {"--cuda-graph-impl local", "--cuda-graph-impl full_iteration"}) {
    const Config c = parse(kTiny + impl).config;
    CHECK(cuda_graphs_unmodeled(c));
    Expected<Estimate> e = estimate(c);
    REQUIRE(e.has_value());
    bool warned = false;
    for (const std::string& w : e->warnings) {
      // The warning names what is missing and the file it lives in.
      warned = warned || (w.find("not modeled") != w.npos &&
                          (w.find("CudaGraphManager") != w.npos) ==
                              (std::string(impl).find("local") != std::string::npos) &&
                          (w.find("StaticBufferLoader") != w.npos) ==
                              (std::string(impl).find("full_iteration") != std::string::npos));
    }
    CHECK(warned);
  }
  CHECK_FALSE(cuda_graphs_unmodeled(parse(kTiny + "--cuda-graph-impl transformer_engine").config));
}
