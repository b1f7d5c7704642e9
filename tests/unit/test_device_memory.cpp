// Device-level memory (runtime_overheads.hpp): the caching allocator's reserve and the terms
// outside it, one TEST_CASE per rule with hand-computed bytes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "estimate_helpers.hpp"
#include "megamem/estimate.hpp"
#include "memory/runtime_overheads.hpp"

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

TEST_CASE("expandable segments round the fragmented peak up to a 20 MiB page, plus 2 MiB") {
  Config c = dense_config();
  c.runtime.expandable_segments = true;
  c.runtime.fragmentation_fraction = 0.0;
  // 1000 MiB + 1 byte -> 51 pages of 20 MiB = 1020 MiB, + 2 MiB for the small pool.
  CHECK(peak_reserved_bytes(normalized(c), 1000 * kMiB + 1) == 1022 * kMiB);
  CHECK(peak_reserved_bytes(normalized(c), 1000 * kMiB) == 1002 * kMiB);
  // Blocks freed inside the one segment fragment it as they do fixed segments: 5 % of
  // 1000 MiB is 1050 MiB, 53 pages (1060 MiB), + 2 MiB.
  c.runtime.fragmentation_fraction = 0.05;
  CHECK(peak_reserved_bytes(normalized(c), 1000 * kMiB) == 1062 * kMiB);
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

// The nccl_nvls term of a configuration, 0 when it has none.
std::uint64_t nvls_bytes_of(const Config& c) {
  for (const DeviceOverhead& o : device_overheads(normalized(c))) {
    if (o.name == "nccl_nvls") return o.bytes;
  }
  return 0;
}

TEST_CASE("NVLS buffers: 16 x 2 x 8 x 128 KiB per GPU of a reducing group in a Hopper node") {
  // src/transport/nvls.cc ncclNvlsBufferSetup: nChannels (16 on Hopper) x 2 x NCCL_STEPS (8) x
  // NCCL_NVLS_CHUNKSIZE (128 KiB) = 32 MiB per head, a head per GPU of the group in the node,
  // plus a 2 MiB credit granule. 8 GPUs, TP2 PP1: TP has 2 GPUs in the node (66 MiB), DP4 has
  // 4 (130 MiB). The world and model-parallel groups only reduce scalars, and without
  // multicast there is none.
  Config c = dense_config();
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 2;
  c.parallel.pipeline_parallel = 1;
  c.optimizer.use_distributed_optimizer = true;
  CHECK(nvls_bytes_of(c) == 0);
  c.device.nvlink_multicast = true;
  constexpr std::uint64_t kTp = (2 * 32 + 2) * kMiB;
  constexpr std::uint64_t kDp = (4 * 32 + 2) * kMiB;
  CHECK(nvls_bytes_of(c) == kTp + kDp);
  // NCCL_NVLS_ENABLE=0 turns NVLS off.
  c.runtime.nccl_nvls = false;
  CHECK(nvls_bytes_of(c) == 0);
  c.runtime.nccl_nvls = true;
  // On 16 GPUs DP8 strides by 2 over two nodes, 4 GPUs in each. Across nodes only NVLS_TREE
  // all-reduces (enqueue.cc): the distributed optimizer's reduce-scatter maps nothing there,
  // DDP's gradient all-reduce maps the 4 heads' buffers.
  c.parallel.world_size = 16;
  CHECK(nvls_bytes_of(c) == kTp);
  c.optimizer.use_distributed_optimizer = false;
  CHECK(nvls_bytes_of(c) == kTp + kDp);
  // PyTorch FSDP2 reduce-scatters and gathers, whatever the optimizer.
  c.parallel.fsdp.impl = FsdpImpl::torch_fsdp2;
  CHECK(nvls_bytes_of(c) == kTp);
}

TEST_CASE("NVLS buffers: 24 channels inside a Blackwell NVLink domain, none for one GPU") {
  // NVLS_NCHANNELS_SM100_NVL 24: TP8 in a 72-GPU domain maps 24 x 2 x 8 x 128 KiB = 48 MiB per
  // GPU: 384 MiB + 2 MiB; a group with one GPU per node has no NVLS graph (graph/search.cc).
  Config c = dense_config();
  c.device.nvlink_multicast = true;
  c.device.compute_capability = 100;
  c.device.gpus_per_node = 72;
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 8;
  c.parallel.pipeline_parallel = 1;
  CHECK(nvls_bytes_of(c) == (8 * 48 + 2) * kMiB);
  c.device.gpus_per_node = 1;
  c.device.compute_capability = 90;
  CHECK(nvls_bytes_of(c) == 0);
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
    CHECK(device_total_bytes(peak_reserved_bytes(n, rank.peak_allocated_bytes),
                             device_overhead_bytes(device_overheads(n))) == rank.peak_total_bytes);
  }
}

TEST_CASE("expandable segments keep the fragmentation share and round it to pages") {
  Config c = dense_config();
  c.runtime.fragmentation_fraction = 0.5;
  const Expected<Estimate> caching = estimate(c);
  c.runtime.expandable_segments = true;
  const Expected<Estimate> expandable = estimate(c);
  REQUIRE(caching.has_value());
  REQUIRE(expandable.has_value());
  const RankMemory& a = caching->ranks[0];
  const RankMemory& b = expandable->ranks[0];
  CHECK(a.peak_allocated_bytes == b.peak_allocated_bytes);
  CHECK(b.peak_reserved_bytes >= a.peak_reserved_bytes);
  CHECK(b.peak_reserved_bytes - a.peak_reserved_bytes <= 22 * kMiB);
}

namespace {

// An MoE layer behind the flex dispatcher: hidden 1024, 32 experts over EP ranks, TP1.
Config flex_config(int expert_parallel, FlexDispatcherBackend backend) {
  Config c = dense_config();
  c.model.num_experts = 32;
  c.model.moe_router_topk = 2;
  c.parallel.tensor_parallel = 1;
  c.parallel.expert_parallel = expert_parallel;
  c.training.moe_token_dispatcher = TokenDispatcher::flex;
  c.training.moe_flex_dispatcher_backend = backend;
  return c;
}

std::uint64_t flex_buffer_bytes(const Config& c) {
  for (const DeviceOverhead& o : device_overheads(normalized(c))) {
    if (o.name == "deepep_buffers") return o.bytes;
  }
  return 0;
}

constexpr std::uint64_t kPage = 2 * kMiB;

}  // namespace

TEST_CASE("DeepEP within a node: 10 channels x 8 peers x 256 tokens of 4104 B, and a workspace") {
  // csrc/config.hpp get_nvl_buffer_size_hint, 20 SMs: per token 2048 hidden bytes + 8 B source
  // meta + 128 x (8 + 4 + 4) B of top-k indices, weights and scales; 1600 B of counters.
  // 84,051,520 B -> 41 pages of 2 MiB, + the 32 MiB workspace; no RDMA buffer within a node.
  CHECK(flex_buffer_bytes(flex_config(8, FlexDispatcherBackend::deepep)) == 41 * kPage + 32 * kMiB);
}

TEST_CASE("DeepEP across nodes adds its RDMA buffer in 512 MiB NVSHMEM granules") {
  // EP16: 288 tokens per NVLink channel (94,558,400 B -> 46 pages); the RDMA buffer, 140 tokens
  // of 4120 B per channel, send and receive (23,074,880 B), maps one 512 MiB granule.
  CHECK(flex_buffer_bytes(flex_config(16, FlexDispatcherBackend::deepep)) ==
        46 * kPage + 32 * kMiB + 512 * kMiB);
}

TEST_CASE("HybridEP holds a slot for every token of the group, and per-node RDMA copies") {
  // 1024 tokens per rank, 2 local experts, 8 ranks per node, 2 nodes (intranode.cu,
  // internode_doca.cu, allgather.cu): 16,384 tokens x 1024 x 2 B = 16 pages, probs and scales a
  // page each; across nodes 6 dispatch and 4 combine buffers of at most a page; the routing map
  // 32 experts x 1024 x 16 bools, a page.
  CHECK(flex_buffer_bytes(flex_config(16, FlexDispatcherBackend::hybridep)) ==
        (16 + 2) * kPage + (6 + 4) * kPage + kPage);
}

TEST_CASE("a set flex buffer size replaces the backend's; NCCL EP's are not sized") {
  Config c = flex_config(8, FlexDispatcherBackend::hybridep);
  c.runtime.deepep_buffer_gib = 1.0;
  CHECK(flex_buffer_bytes(c) == kGiB);
  CHECK(flex_buffer_bytes(flex_config(8, FlexDispatcherBackend::ncclep)) == 0);
  c.training.moe_token_dispatcher = TokenDispatcher::alltoall;
  CHECK(flex_buffer_bytes(c) == 0);
}

TEST_CASE("a DeepEP group size DeepEP has no configuration for is a warning") {
  Config c = flex_config(8, FlexDispatcherBackend::deepep);
  c.model.num_experts = 12;
  c.parallel.expert_parallel = 12;
  c.parallel.world_size = 24;
  c.parallel.pipeline_parallel = 1;
  const Expected<NormalizedConfig> n = normalize(c);
  REQUIRE(n.has_value());
  CHECK(std::any_of(n->warnings.begin(), n->warnings.end(), [](const std::string& w) {
    return w.find("group of 12 expert ranks") != std::string::npos;
  }));
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
