// Device-level memory (runtime_overheads.hpp): the caching allocator's reserve and the terms
// outside it, one TEST_CASE per rule with hand-computed bytes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "estimate_helpers.hpp"
#include "megamem/estimate.hpp"
#include "runtime_overheads.hpp"

using namespace megamem;

using testing::normalized;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kGiB = 1024 * kMiB;

// A dense model on 64 GPUs: TP8 PP2 gives DP4 (TP, PP and DP communicators, tied embeddings).
Config dense_config() {
  Config c;
  c.model.num_layers = 4;
  c.model.hidden_size = 1024;
  c.model.num_attention_heads = 16;
  c.model.vocab_size = 32000;
  c.training.seq_length = 1024;
  c.training.params_dtype = DType::bf16;
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 8;
  c.parallel.pipeline_parallel = 2;
  return c;
}

}  // namespace

TEST_CASE("without expandable segments the reserve is the fragmentation share of the peak") {
  Config c = dense_config();
  c.runtime.fragmentation_fraction = 0.05;
  const NormalizedConfig n = normalized(c);
  CHECK(peak_reserved_bytes(n, 40 * kGiB) == 42 * kGiB);
  c.runtime.fragmentation_fraction = 0.0;
  CHECK(peak_reserved_bytes(normalized(c), 40 * kGiB + 1) == 40 * kGiB + 1);
}

TEST_CASE("expandable segments round the peak up to a 20 MiB page plus a 2 MiB small page") {
  Config c = dense_config();
  c.runtime.expandable_segments = true;
  const NormalizedConfig n = normalized(c);
  // 1000 MiB + 1 byte -> 51 pages of 20 MiB = 1020 MiB, + 2 MiB for the small pool.
  CHECK(peak_reserved_bytes(n, 1000 * kMiB + 1) == 1022 * kMiB);
  CHECK(peak_reserved_bytes(n, 1000 * kMiB) == 1002 * kMiB);
}

TEST_CASE("every communicator with more than one member is an itemized NCCL term") {
  Config c = dense_config();
  std::vector<DeviceOverhead> overheads = device_overheads(normalized(c));
  // cuda_context, nccl_tp, nccl_pp, nccl_dp, nccl_embedding (tied embeddings across PP), and
  // the groups every step uses: the default group and the model-parallel group (TP x PP).
  const std::vector<std::string> names = {
      "cuda_context",       "nccl_tp", "nccl_pp", "nccl_dp", "nccl_embedding", "nccl_world",
      "nccl_model_parallel"};
  REQUIRE(overheads.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(overheads[i].name == names[i]);
  CHECK(overheads[0].bytes == kGiB / 2);
  for (const DeviceOverhead& o : overheads) CHECK_FALSE(o.source.empty());
  // TP8 fits the 8-GPU node (NVLink P2P: 534 MiB); the rest span nodes (0.25 GiB).
  CHECK(overheads[1].bytes == 534 * kMiB);
  CHECK(overheads[2].bytes == kGiB / 4);
  CHECK(overheads[1].source != overheads[2].source);
  // The distributed optimizer reduces its grad norm over a group of its own.
  c.optimizer.use_distributed_optimizer = true;
  overheads = device_overheads(normalized(c));
  CHECK(overheads.back().name == "nccl_grad_stats");
  // One GPU has no communicator at all.
  c.parallel.world_size = 1;
  c.parallel.tensor_parallel = 1;
  c.parallel.pipeline_parallel = 1;
  CHECK(device_overheads(normalized(c)).size() == 1);
}

TEST_CASE("peak_total_bytes is reserved plus the overheads, and the planner's path agrees") {
  Config c = dense_config();
  const Expected<Estimate> e = estimate(c);
  REQUIRE(e.has_value());
  const NormalizedConfig n = normalized(c);
  for (const RankMemory& rank : e->ranks) {
    std::uint64_t outside = 0;
    for (const DeviceOverhead& o : rank.device_overheads) outside += o.bytes;
    CHECK(rank.peak_reserved_bytes >= rank.peak_allocated_bytes);
    CHECK(rank.peak_total_bytes == rank.peak_reserved_bytes + outside);
    CHECK(rank.runtime_overhead_bytes == rank.peak_total_bytes - rank.peak_allocated_bytes);
    CHECK(device_total_bytes(n, rank.peak_allocated_bytes,
                             device_overhead_bytes(device_overheads(n))) == rank.peak_total_bytes);
  }
}

TEST_CASE("expandable segments replace the fragmentation reserve with page rounding") {
  Config c = dense_config();
  c.runtime.fragmentation_fraction = 0.5;  // far above one 20 MiB page of this small model
  const Expected<Estimate> caching = estimate(c);
  c.runtime.expandable_segments = true;
  const Expected<Estimate> expandable = estimate(c);
  REQUIRE(caching.has_value());
  REQUIRE(expandable.has_value());
  const RankMemory& a = caching->ranks[0];
  const RankMemory& b = expandable->ranks[0];
  CHECK(a.peak_allocated_bytes == b.peak_allocated_bytes);
  CHECK(b.peak_reserved_bytes < a.peak_reserved_bytes);
  CHECK(b.peak_reserved_bytes - b.peak_allocated_bytes <= 22 * kMiB);
}

TEST_CASE("the flex dispatcher adds DeepEP's buffers") {
  Config c = dense_config();
  c.model.num_experts = 8;
  c.model.moe_router_topk = 2;
  c.parallel.expert_parallel = 8;
  c.parallel.tensor_parallel = 1;
  c.training.moe_token_dispatcher = TokenDispatcher::flex;
  const std::vector<DeviceOverhead> overheads = device_overheads(normalized(c));
  REQUIRE_FALSE(overheads.empty());
  CHECK(overheads.back().name == "deepep_buffers");
  CHECK(overheads.back().bytes == kGiB);
}

TEST_CASE("Transformer Engine keeps one dummy wgrad per distinct weight shape") {
  // TP8, h 1024, 16 heads, GeLU MLP 4h: per rank qkv 393,216, proj 131,072, fc1 524,288 and
  // fc2 524,288 elements (transposed shapes, two cache entries); bf16, 4 layers, one set.
  Config c = dense_config();
  c.training.gradient_accumulation_fusion = false;
  const Expected<Estimate> without = estimate(c);
  c.training.gradient_accumulation_fusion = true;
  const Expected<Estimate> with = estimate(c);
  REQUIRE(without.has_value());
  REQUIRE(with.has_value());
  const std::uint64_t expected = (393216 + 131072 + 2 * 524288) * 2;
  // The last stage's output layer (Megatron's ColumnParallelLinear) takes its placeholder from
  // the same cache (tensor_parallel/layers.py): vocab 32000 padded to 128 x TP = 1024 -> 32768,
  // [32768 / 8, 1024] bf16 = 8 MiB, tied to the embedding or not.
  const std::uint64_t output_layer = 32768 / 8 * 1024 * 2;
  for (std::size_t r = 0; r < with->ranks.size(); ++r) {
    CHECK(with->ranks[r].persistent_buffer_bytes - without->ranks[r].persistent_buffer_bytes ==
          expected + (r == 1 ? output_layer : 0));
  }
  // The local spec's linears are Megatron's own, without the cache.
  c.training.transformer_impl = TransformerImpl::local;
  const Expected<Estimate> local = estimate(c);
  c.training.gradient_accumulation_fusion = false;
  const Expected<Estimate> local_without = estimate(c);
  REQUIRE(local.has_value());
  REQUIRE(local_without.has_value());
  CHECK(local->ranks[0].persistent_buffer_bytes == local_without->ranks[0].persistent_buffer_bytes);
}

TEST_CASE("--tp-comm-overlap's userbuffers are itemized outside the allocator") {
  // TE initialize_ub with Megatron's shape [s x b / CP, h] = [1024, 1024]: 12 buffers (4 ring
  // exchange, 2 pipeline, 4 bulk, 2 external) of 1 Mi elements, bf16: 24 MiB.
  Config c = dense_config();
  c.training.tp_comm_overlap = true;
  CHECK(userbuffer_bytes(normalized(c)) == 24 * kMiB);
  const std::vector<DeviceOverhead> overheads = device_overheads(normalized(c));
  CHECK(std::any_of(overheads.begin(), overheads.end(), [](const DeviceOverhead& o) {
    return o.name == "userbuffers" && o.bytes == 24 * kMiB;
  }));
  // FP8: the 8 all-gather buffers hold uint8, the 4 reduce-scatter ones bf16: 16 MiB; with
  // --first-last-layers-bf16 Megatron adds a bf16 set: 40 MiB.
  c.training.fp8_recipe = Fp8Recipe::tensorwise;
  CHECK(userbuffer_bytes(normalized(c)) == 16 * kMiB);
  c.training.fp8_bf16_layers_at_start = 1;
  CHECK(userbuffer_bytes(normalized(c)) == 40 * kMiB);
  // Allocated memory does not change; without TP there is nothing to overlap.
  c.parallel.tensor_parallel = 1;
  CHECK(userbuffer_bytes(normalized(c)) == 0);
}

TEST_CASE("--tp-comm-overlap's GEMMs keep their own cuBLAS workspace for three streams") {
  // TE cpp_extensions/gemm.py get_cublas_workspace(ub=True): 3 x 32 MiB on Hopper, allocated
  // through PyTorch and cached (lru_cache) for the run.
  Config c = dense_config();
  const Expected<Estimate> without = estimate(c);
  c.training.tp_comm_overlap = true;
  const Expected<Estimate> with = estimate(c);
  REQUIRE(without.has_value());
  REQUIRE(with.has_value());
  CHECK(with->ranks[0].persistent_buffer_bytes - without->ranks[0].persistent_buffer_bytes ==
        96 * kMiB);
}
