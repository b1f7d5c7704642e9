// Step-time model (step_time.hpp): Megatron's FLOP count, the pipeline bubble, recompute,
// communication placement, and the calibration against published Megatron-LM runs.
#include <catch2/catch.hpp>
#include <cmath>

#include "megamem/estimate.hpp"
#include "megamem/step_time.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

namespace {

// Llama-3-70B with Megatron's performance flags that change memory.
Config llama(std::int64_t gpus, int tp, int pp, std::int64_t global_batch) {
  Config c = fixtures::llama3_70b();
  c.parallel.world_size = gpus;
  c.parallel.tensor_parallel = tp;
  c.parallel.sequence_parallel = tp > 1;
  c.parallel.pipeline_parallel = pp;
  c.training.global_batch_size = global_batch;
  c.optimizer.overlap_grad_reduce = true;
  return c;
}

StepTime time_of(const Config& c, const StepTimeConfig& model = {}) {
  const Expected<StepTime> t = estimate_step_time(c, model);
  REQUIRE(t.has_value());
  return *t;
}

double sum_of(const StepTimeBreakdown& b) {
  return b.compute_s + b.recompute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s +
         b.offload_s + b.pipeline_bubble_s + b.dp_comm_s + b.optimizer_s;
}

}  // namespace

TEST_CASE("model FLOPs follow Megatron's num_floating_point_operations") {
  const Config c = llama(64, 8, 8, 128);
  const NormalizedConfig n = *normalize(c);
  // megatron/training/training.py, transformer_flops, per token and layer (x3 fwd + bwd):
  // The vocabulary padded to a multiple of 128 x TP 8: 128256 -> 129024.
  const double h = 8192, q = 64 * 128, kv = 8 * 128, s = 4096, ffn = 28672, vocab = 129024;
  const double attention = 2 * (h * (q + 2 * kv) + q * h);  // QKV and output projections
  const double core = 2 * q * s;                            // causal QK^T and softmax·V
  const double mlp = 2 * h * ffn * 3;                       // SwiGLU: three GEMMs
  const double logits = 2 * h * vocab;
  const double per_token = 3 * (80 * (attention + core + mlp) + logits);
  CHECK(per_token == Approx(433154162688.0).epsilon(1e-15));
  CHECK(model_flops_per_step(n) == Approx(per_token * 128 * s).epsilon(1e-12));
}

TEST_CASE("throughput is reported as Megatron logs it") {
  const Config c = llama(64, 8, 8, 128);
  const StepTime t = time_of(c);
  CHECK(t.tokens_per_s == Approx(128.0 * 4096 / t.step_time_s));
  CHECK(t.tokens_per_s_per_gpu == Approx(t.tokens_per_s / 64));
  CHECK(t.model_tflops_per_gpu == Approx(t.model_flops_per_step / t.step_time_s / 64 / 1e12));
  CHECK(t.mfu == Approx(t.model_tflops_per_gpu / 989.0));
  CHECK(t.hardware_flops_per_step == Approx(t.model_flops_per_step));  // no recompute
}

TEST_CASE("the breakdown adds up to the step time") {
  Config c = llama(128, 4, 8, 256);
  c.parallel.context_parallel = 2;
  c.parallel.virtual_stages_per_pipeline_rank = 2;
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::core_attn};
  const StepTime t = time_of(c);
  CHECK(sum_of(t.breakdown) == Approx(t.step_time_s).epsilon(1e-12));
  Config moe = fixtures::deepseek_v3();
  moe.parallel.world_size = 256;
  moe.parallel.pipeline_parallel = 8;
  moe.parallel.pipeline_layout = "Et*8|t*8|t*8|t*8|t*8|t*8|t*8|t*5mL";
  moe.parallel.expert_parallel = 32;
  moe.training.global_batch_size = 1024;
  const StepTime m = time_of(moe);
  CHECK(sum_of(m.breakdown) == Approx(m.step_time_s).epsilon(1e-12));
  CHECK(m.breakdown.ep_comm_s > 0);
}

TEST_CASE("the pipeline bubble is (p - 1)/v micro-batch times of the slowest rank") {
  Config c = llama(64, 8, 4, 128);
  const StepTime one = time_of(c);
  CHECK(one.breakdown.pipeline_bubble_s == Approx(one.microbatch_time_s * 3));
  c.parallel.virtual_stages_per_pipeline_rank = 5;
  const StepTime five = time_of(c);
  CHECK(five.breakdown.pipeline_bubble_s == Approx(five.microbatch_time_s * 3 / 5));
  CHECK(five.breakdown.pipeline_bubble_s < one.breakdown.pipeline_bubble_s / 4);
  c.parallel.pipeline_parallel = 1;
  c.parallel.virtual_stages_per_pipeline_rank = 1;
  c.parallel.world_size = 16;
  CHECK(time_of(c).breakdown.pipeline_bubble_s == 0);
}

TEST_CASE("full recompute re-runs one forward; model FLOPs leave it out") {
  Config c = llama(64, 8, 8, 128);
  const StepTime plain = time_of(c);
  c.training.recompute.granularity = RecomputeGranularity::full;
  const StepTime full = time_of(c);
  CHECK(full.model_flops_per_step == Approx(plain.model_flops_per_step));
  // The decoder layers' forward is a third of their forward + backward FLOPs.
  const double layers = plain.model_flops_per_step * (1 - 2.0 * 8192 * 129024 * 3 / 433154162688.0);
  CHECK(full.hardware_flops_per_step - full.model_flops_per_step == Approx(layers / 3));
  CHECK(full.breakdown.recompute_s > 0.2 * full.breakdown.compute_s);
  CHECK(full.step_time_s > plain.step_time_s * 1.2);
  CHECK(full.model_tflops_per_gpu < plain.model_tflops_per_gpu);
  // Selective core_attn recompute re-runs only flash attention: far cheaper.
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::core_attn};
  const StepTime attn = time_of(c);
  CHECK(attn.breakdown.recompute_s > 0);
  CHECK(attn.breakdown.recompute_s < full.breakdown.recompute_s / 5);
}

TEST_CASE("full recompute with the block method prices only the layers it re-runs") {
  // transformer_block.py _checkpointed_forward, block: the first N layers of each chunk.
  // Llama-3-70B on PP 8: 10 layers per stage; block 5 re-runs half of them.
  Config c = llama(64, 8, 8, 128);
  c.training.recompute.granularity = RecomputeGranularity::full;
  const StepTime uniform = time_of(c);
  c.training.recompute.method = RecomputeMethod::block;
  c.training.recompute.num_layers = 5;
  const StepTime half = time_of(c);
  CHECK(half.breakdown.recompute_s == Approx(uniform.breakdown.recompute_s / 2));
  CHECK(half.hardware_flops_per_step - half.model_flops_per_step ==
        Approx((uniform.hardware_flops_per_step - uniform.model_flops_per_step) / 2));
  c.training.recompute.num_layers = 10;  // every layer of the stage: uniform's price
  CHECK(time_of(c).breakdown.recompute_s == Approx(uniform.breakdown.recompute_s));
}

TEST_CASE("a TP group inside a node uses NVLink, one spread over nodes the NIC") {
  Config c = llama(64, 8, 8, 128);
  const StepTime inside = time_of(c);
  c.device.gpus_per_node = 4;  // TP 8 now spans two nodes: four NICs per node for its rings
  const StepTime across = time_of(c);
  CHECK(across.breakdown.tp_comm_s > 1.5 * inside.breakdown.tp_comm_s);
  CHECK(across.breakdown.compute_s == Approx(inside.breakdown.compute_s));
}

TEST_CASE("--overlap-grad-reduce hides DP traffic behind a micro-batch's backward") {
  Config c = llama(512, 8, 4, 512);
  const StepTime overlapped = time_of(c);
  c.optimizer.overlap_grad_reduce = false;
  const StepTime exposed = time_of(c);
  CHECK(exposed.breakdown.dp_comm_s > overlapped.breakdown.dp_comm_s);
  CHECK(exposed.breakdown.dp_comm_s > 0);
  // The distributed optimizer's reduce-scatter + all-gather moves the all-reduce's bytes.
  c.optimizer.use_distributed_optimizer = false;
  const StepTime all_reduce = time_of(c);
  CHECK(all_reduce.breakdown.dp_comm_s > 0.9 * exposed.breakdown.dp_comm_s);
  CHECK(all_reduce.breakdown.optimizer_s > 10 * exposed.breakdown.optimizer_s);
}

TEST_CASE("expert all-to-all inside a node costs less than across nodes") {
  Config c = fixtures::qwen3_235b_a22b();
  c.parallel.world_size = 256;
  c.parallel.pipeline_parallel = 8;
  c.parallel.pipeline_layout = "Et*11|t*12|t*12|t*12|t*12|t*12|t*12|t*11L";
  c.training.global_batch_size = 2048;
  c.parallel.expert_parallel = 8;
  const StepTime inside = time_of(c);
  c.parallel.expert_parallel = 32;
  const StepTime across = time_of(c);
  CHECK(across.breakdown.ep_comm_s > 2 * inside.breakdown.ep_comm_s);
  // DeepEP sends a token once per remote node: less than NCCL's all-to-all.
  c.training.moe_token_dispatcher = TokenDispatcher::flex;
  CHECK(time_of(c).breakdown.ep_comm_s < across.breakdown.ep_comm_s);
  // Overlapping the all-to-all with the other micro-batch's compute hides part of it (the
  // overlap needs an interleaved schedule at PP > 1: the same layers over 16 stages).
  c.training.moe_token_dispatcher = TokenDispatcher::alltoall;
  c.parallel.pipeline_layout = "Et*5|(t*6|)*14t*5L";
  const StepTime interleaved = time_of(c);
  c.training.overlap_moe_expert_parallel_comm = true;
  CHECK(time_of(c).breakdown.ep_comm_s < interleaved.breakdown.ep_comm_s);
}

TEST_CASE("context parallelism hides its K/V exchange behind long-sequence attention") {
  Config c = llama(64, 8, 4, 64);
  c.parallel.context_parallel = 2;
  c.training.seq_length = 65536;
  CHECK(time_of(c).breakdown.cp_comm_s == 0);
  c.training.seq_length = 1024;
  c.training.global_batch_size = 256;
  CHECK(time_of(c).breakdown.cp_comm_s > 0);
}

TEST_CASE("FP8 speeds up the GEMMs, not the attention") {
  Config c = llama(64, 8, 8, 128);
  const StepTime bf16 = time_of(c);
  c.training.fp8_recipe = Fp8Recipe::tensorwise;
  const StepTime fp8 = time_of(c);
  CHECK(fp8.breakdown.compute_s < bf16.breakdown.compute_s);
  CHECK(fp8.breakdown.compute_s > bf16.breakdown.compute_s / 1.65);
}

TEST_CASE("offloading costs only what the layer's compute does not hide") {
  Config c = llama(64, 8, 4, 128);
  c.training.offload.fine_grained_activation_offloading = true;
  c.training.offload.offload_modules = {OffloadModule::attn_norm, OffloadModule::core_attn,
                                        OffloadModule::attn_proj, OffloadModule::mlp_norm};
  StepTimeConfig model;
  const double hidden = time_of(c, model).breakdown.offload_s;
  model.host_bandwidth_gb_per_s = 0.5;  // a slow link: copies outlast the compute
  const double exposed = time_of(c, model).breakdown.offload_s;
  CHECK(exposed > hidden);
  CHECK(exposed > 0);
  c.optimizer.use_precision_aware_optimizer = true;
  c.optimizer.optimizer_cpu_offload = true;
  const StepTime cpu_adam = time_of(c);
  c.optimizer.optimizer_cpu_offload = false;
  CHECK(cpu_adam.breakdown.optimizer_s > 10 * time_of(c).breakdown.optimizer_s);
}

TEST_CASE("invalid configurations are errors naming the field") {
  Config c = llama(64, 8, 8, 128);
  c.parallel.world_size = 60;
  CHECK(estimate_step_time(c).error().field == "world_size");
}

// Calibration (docs/planner.md): Megatron-LM on H100, a Llama-3-70B-like model at sequence
// 4096. TP8/PP2/DP48 on 768 GPUs reached 420.5 TFLOP/s per GPU; TP8/PP8/DP2 on 128 GPUs,
// which needed full recompute and --distribute-saved-activations (hence no sequence
// parallelism) to fit, reached 296.5. The model must keep the order and the ratio (1.418)
// within 15%. Global batch 384 as in Megatron-LM's H100 weak-scaling table for 768 GPUs.
TEST_CASE("calibration: the published 70B TP8/PP2 vs TP8/PP8 full-recompute ratio") {
  Config fast = llama(768, 8, 2, 384);
  Config slow = llama(128, 8, 8, 384);
  slow.parallel.sequence_parallel = false;
  slow.training.recompute.granularity = RecomputeGranularity::full;
  slow.training.recompute.distribute_saved_activations = true;
  const StepTime a = time_of(fast);
  const StepTime b = time_of(slow);
  const double published = 420.5 / 296.5;
  const double modeled = a.model_tflops_per_gpu / b.model_tflops_per_gpu;
  INFO("modeled " << a.model_tflops_per_gpu << " vs " << b.model_tflops_per_gpu
                  << " TFLOP/s per GPU, ratio " << modeled);
  CHECK(a.model_tflops_per_gpu > b.model_tflops_per_gpu);
  CHECK(std::abs(modeled / published - 1) <= 0.15);
  // Both must fit on 80 GB cards as run.
  for (const Config& c : {fast, slow}) {
    const Expected<Estimate> e = estimate(c);
    REQUIRE(e.has_value());
    CHECK(e->ranks[static_cast<std::size_t>(e->limiting_pp_rank)].peak_total_bytes <
          80.0 * 1024 * 1024 * 1024);
  }
}

namespace {

// Megatron-LM's H100 weak-scaling runs (README, Megatron-Core r0.8): GPT models with a
// 131,072 vocabulary at sequence 4096, DP 48, reported in TFLOP/s per GPU with r0.8's count
// (no causal halving of attention). Compared as tokens/s per GPU, which no count changes.
struct ReadmeRun {
  int heads, hidden, layers, tp, pp, gpus, batch;
  double tflops;
};

double legacy_flops_per_token(const ReadmeRun& r) {
  const double h = r.hidden, s = 4096, v = 131072;
  return 12.0 * r.layers * h * h * ((2 + s / h) + 4 + v / (2.0 * r.layers * h));
}

Config readme_gpt(const ReadmeRun& r) {
  Config c;
  c.model.num_layers = r.layers;
  c.model.hidden_size = r.hidden;
  c.model.num_attention_heads = r.heads;
  c.model.ffn_hidden_size = 4 * r.hidden;
  c.model.vocab_size = 131072;
  c.model.untie_embeddings_and_output_weights = true;
  c.model.position_embedding = PositionEmbedding::rope;
  c.model.add_bias_linear = false;
  c.training.seq_length = 4096;
  c = fixtures::bf16_training(c);
  c.optimizer.overlap_grad_reduce = true;
  c.parallel.world_size = r.gpus;
  c.parallel.tensor_parallel = r.tp;
  c.parallel.sequence_parallel = r.tp > 1;
  c.parallel.pipeline_parallel = r.pp;
  c.training.global_batch_size = r.batch;
  return c;
}

}  // namespace

TEST_CASE("calibration: Megatron-LM's H100 weak-scaling table from 70B up, within 15%") {
  const ReadmeRun runs[] = {{64, 8192, 84, 8, 2, 768, 384, 419.7},
                            {80, 10240, 92, 8, 4, 1536, 768, 420.5},
                            {96, 12288, 96, 8, 6, 2304, 1152, 432.8},
                            {128, 16384, 96, 8, 8, 3072, 1536, 474.4},
                            {144, 18432, 112, 8, 16, 6144, 3072, 459.9}};
  for (const ReadmeRun& r : runs) {
    const double published = r.tflops * 1e12 / legacy_flops_per_token(r);
    const double modeled = time_of(readme_gpt(r)).tokens_per_s_per_gpu;
    INFO(r.layers << " layers, hidden " << r.hidden << ": " << modeled << " vs " << published
                  << " tokens/s per GPU");
    CHECK(std::abs(modeled / published - 1) <= 0.15);
  }
}

// Megatron-MoE-ModelZoo (best_practice/qwen3): Qwen3-235B-A22B on 256 H100s, BF16, DeepEP,
// TP2 PP8 VPP4 EP32, global batch 2048, selective recompute of moe_act and layernorm:
// 19.7 s per step, 17.6 s with the 1F1B all-to-all overlap.
TEST_CASE("calibration: Qwen3-235B on 256 H100s with DeepEP, within 15%") {
  Config c = fixtures::qwen3_235b_a22b();
  c.optimizer.overlap_grad_reduce = true;
  c.parallel.world_size = 256;
  c.parallel.tensor_parallel = 2;
  c.parallel.sequence_parallel = true;
  c.parallel.pipeline_parallel = 8;
  c.parallel.pipeline_layout = "Et*2|(t*3|)*30t*2L";  // 94 layers + embedding + loss, 32 stages
  c.parallel.expert_parallel = 32;
  c.parallel.expert_tensor_parallel = 1;
  c.training.global_batch_size = 2048;
  c.training.moe_grouped_gemm = true;
  c.training.moe_token_dispatcher = TokenDispatcher::flex;
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::moe_act, RecomputeModule::layernorm};
  const StepTime plain = time_of(c);
  CHECK(std::abs(plain.step_time_s / 19.7 - 1) <= 0.15);
  c.training.overlap_moe_expert_parallel_comm = true;
  const StepTime overlapped = time_of(c);
  CHECK(std::abs(overlapped.step_time_s / 17.6 - 1) <= 0.15);
  CHECK(overlapped.step_time_s < plain.step_time_s);
}
