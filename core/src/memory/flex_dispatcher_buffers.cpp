// The flex dispatcher's communication buffers; see flex_dispatcher_buffers.hpp.
//
// Megatron-Core makes one buffer per process for the dispatcher's group, the TP x EP ranks of
// the experts (megatron/core/transformer/moe/token_dispatcher.py MoEFlexTokenDispatcher,
// fused_a2a.py get_buffer / init_hybrid_ep_buffer), at the first dispatch, sized for the
// tokens of that micro-batch on this rank and the hidden size; every MoE layer shares it.
#include "memory/flex_dispatcher_buffers.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "megamem/units.hpp"
#include "memory/static_memory.hpp"

namespace megamem {
namespace {

// cudaMalloc and cuMemCreate hand out whole 2 MiB pages on these GPUs.
constexpr double kDevicePage = 2.0 * kBytesPerMiB;
double pages(double bytes) { return std::ceil(bytes / kDevicePage) * kDevicePage; }

// DeepEP (csrc/kernels/configs.cuh): NVLink peers per node and the 32 MiB workspace; the
// RDMA buffer lives in NVSHMEM's symmetric heap, which DeepEP grows in 512 MiB granules
// (deep_ep/buffer.py sets NVSHMEM_CUMEM_GRANULARITY = 2^29).
constexpr int kDeepEpNvlPeers = 8;
constexpr double kDeepEpWorkspace = 32.0 * kBytesPerMiB;
constexpr double kNvshmemGranule = 512.0 * kBytesPerMiB;

// Buffer.get_dispatch_config and get_combine_config (deep_ep/buffer.py) for one group size:
// the token chunks each channel receives over NVLink and over RDMA are the same in both; only
// the RDMA send chunk differs, and the receive count is aligned up to it (csrc/config.hpp).
struct DeepEpChunks {
  int ranks, nvl_recv, rdma_recv, dispatch_rdma_send, combine_rdma_send;
};
constexpr std::array<DeepEpChunks, 10> kDeepEpChunks{{{2, 256, 128, 6, 6},
                                                      {4, 256, 128, 6, 6},
                                                      {8, 256, 128, 6, 6},
                                                      {16, 288, 128, 20, 12},
                                                      {24, 288, 128, 32, 8},
                                                      {32, 288, 128, 32, 8},
                                                      {64, 288, 128, 28, 20},
                                                      {128, 560, 128, 32, 12},
                                                      {144, 720, 128, 12, 8},
                                                      {160, 720, 128, 12, 8}}};

// The row for the group, or the next larger one (DeepEP refuses other sizes; the rule book
// warns).
DeepEpChunks deepep_chunks(std::int64_t ranks) {
  for (const DeepEpChunks& row : kDeepEpChunks) {
    if (row.ranks >= ranks) return row;
  }
  return kDeepEpChunks.back();
}

// The RDMA receive chunk of the dispatch or combine configuration, whichever is larger.
double deepep_rdma_recv(const DeepEpChunks& c) {
  const auto aligned = [&](int send) {
    return std::ceil(static_cast<double>(c.rdma_recv) / send) * send;
  };
  return std::max(aligned(c.dispatch_rdma_send), aligned(c.combine_rdma_send));
}

// Per received token a channel keeps its hidden bytes, its source metadata (8 B), up to 128
// top-k indices (int64) and weights (float) and 128 scales (float): csrc/config.hpp
// get_nvl_buffer_size_hint / get_rdma_buffer_size_hint.
double deepep_token_bytes(double hidden_bytes) { return hidden_bytes + 8 + 128 * (8 + 4 + 4); }

double deepep_nvl_bytes(const DeepEpChunks& c, std::int64_t ranks, int channels, double hidden) {
  const auto rdma_ranks = static_cast<double>(std::max<std::int64_t>(ranks / kDeepEpNvlPeers, 1));
  const auto nvl_ranks = static_cast<double>(std::min<std::int64_t>(ranks, kDeepEpNvlPeers));
  return channels * nvl_ranks * (2 * rdma_ranks + 3) * 4 +
         channels * nvl_ranks * c.nvl_recv * deepep_token_bytes(hidden);
}

double deepep_rdma_bytes(const DeepEpChunks& c, std::int64_t ranks, int channels, double hidden) {
  if (ranks <= kDeepEpNvlPeers) return 0;
  const double rdma_ranks = static_cast<double>(ranks / kDeepEpNvlPeers);
  const double recv = deepep_rdma_recv(c);
  // Send and receive halves; the int4 per token is the RDMA channel's prefix metadata.
  return channels * rdma_ranks * (kDeepEpNvlPeers * 2 + 2) * 2 * 4 +
         channels * rdma_ranks * recv * 2 * (deepep_token_bytes(hidden) + 16);
}

// DeepEP Buffer (csrc/deep_ep.cpp): the NVLink buffer by cudaMalloc and IPC, the workspace,
// and the RDMA buffer by nvshmem_align when the group spans nodes; hidden bytes are
// hidden x max(element size, 2) (fused_a2a.py get_hidden_bytes).
double deepep_bytes(std::int64_t ranks, int num_sms, double hidden_bytes) {
  const int channels = std::max(num_sms, 2) / 2;
  const DeepEpChunks chunks = deepep_chunks(ranks);
  const double nvl = deepep_nvl_bytes(chunks, ranks, channels, hidden_bytes);
  const double rdma = deepep_rdma_bytes(chunks, ranks, channels, hidden_bytes);
  return pages(nvl) + kDeepEpWorkspace + std::ceil(rdma / kNvshmemGranule) * kNvshmemGranule;
}

// HybridEP's sizes (DeepEP hybrid-ep branch, csrc/hybrid_ep): tokens per rank, hidden size,
// local experts, ranks per NVLink domain and NVLink domains.
struct HybridEpShape {
  double tokens, hidden, local_experts, domain_ranks, domains;
};

// NVLCoordinator (buffer/intranode.cu): with the default shared buffer, dispatch and combine
// share one token buffer (uint16) and one prob buffer (fp32) sized for every token of the
// group landing on this rank; the dispatch's fp32 scaling factors are allocated beside them.
double hybridep_intranode_bytes(const HybridEpShape& s) {
  const double max_tokens = s.tokens * s.domain_ranks * s.domains;
  return pages(max_tokens * s.hidden * 2) +
         pages(max_tokens * s.local_experts * s.domain_ranks * 4) +
         pages(max_tokens * (s.hidden / 128) * 4);
}

// RDMACoordinator (buffer/internode_doca.cu), only across domains: the dispatch's own input
// copies and one slot per other domain, the combine's reduction and group buffers.
double hybridep_internode_bytes(const HybridEpShape& s) {
  if (s.domains <= 1) return 0;
  const double others = s.domains - 1;
  const double probs = s.local_experts * s.domain_ranks;
  const double dispatch =
      pages(s.tokens * s.hidden * 2) + pages(s.tokens * probs * s.domains * 4) +
      pages(s.tokens * (s.hidden / 128) * 4) + pages(s.tokens * others * s.hidden * 2) +
      pages(s.tokens * others * probs * 4) + pages(s.tokens * others * (s.hidden / 128) * 4);
  const double combine =
      2 * (pages(s.tokens * others * s.hidden * 2) + pages(s.tokens * others * probs * 4));
  return dispatch + combine;
}

// CustomAllgather (extension/allgather.cu): the gathered routing map, one bool per expert and
// token of the group.
double hybridep_allgather_bytes(const HybridEpShape& s) {
  const double experts = s.local_experts * s.domain_ranks * s.domains;
  return pages(experts * s.tokens * s.domain_ranks * s.domains);
}

HybridEpShape hybridep_shape(const NormalizedConfig& n, std::int64_t ranks, double tokens) {
  const Config& c = n.config;
  // deep_ep/hybrid_ep_buffer.py: the ranks one NVLink domain reaches (a node, or an NVL72
  // rack), and the domains the group spans.
  const double domain =
      static_cast<double>(std::min<std::int64_t>(ranks, std::max(1, c.device.gpus_per_node)));
  return {tokens, static_cast<double>(c.model.hidden_size),
          static_cast<double>(c.model.num_experts) / c.parallel.expert_parallel, domain,
          std::ceil(static_cast<double>(ranks) / domain)};
}

}  // namespace

bool deepep_supports_group(std::int64_t ranks) {
  return std::any_of(kDeepEpChunks.begin(), kDeepEpChunks.end(),
                     [ranks](const DeepEpChunks& row) { return row.ranks == ranks; });
}

std::int64_t flex_dispatcher_group(const Config& c) {
  return std::int64_t{c.parallel.expert_tensor_parallel} * c.parallel.expert_parallel;
}

FlexDispatcherBuffers flex_dispatcher_buffers(const NormalizedConfig& n) {
  const Config& c = n.config;
  const TrainingConfig& t = c.training;
  if (c.model.num_experts == 0 || t.moe_token_dispatcher != TokenDispatcher::flex) return {};
  const std::int64_t ranks = flex_dispatcher_group(c);
  const double tokens = static_cast<double>(t.micro_batch_size) * t.seq_length /
                        c.parallel.context_parallel /
                        (n.sequence_parallel ? c.parallel.tensor_parallel : 1);
  switch (t.moe_flex_dispatcher_backend) {
    case FlexDispatcherBackend::deepep: {
      const double hidden_bytes = c.model.hidden_size * std::max(2.0, dtype_bytes(t.params_dtype));
      return {deepep_bytes(ranks, t.moe_flex_dispatcher_num_sms, hidden_bytes),
              "DeepEP Buffer: NVLink buffer, 32 MiB workspace and NVSHMEM RDMA buffer sized by "
              "csrc/config.hpp get_nvl/rdma_buffer_size_hint for the TP x EP group "
              "(megatron/core/transformer/moe/fused_a2a.py get_buffer)"};
    }
    case FlexDispatcherBackend::hybridep: {
      const HybridEpShape shape = hybridep_shape(n, ranks, tokens);
      return {hybridep_intranode_bytes(shape) + hybridep_internode_bytes(shape) +
                  hybridep_allgather_bytes(shape),
              "HybridEPBuffer for the TP x EP group and the tokens of one micro-batch "
              "(fused_a2a.py init_hybrid_ep_buffer; DeepEP hybrid-ep csrc/hybrid_ep/buffer "
              "intranode.cu, internode_doca.cu, extension/allgather.cu)"};
    }
    case FlexDispatcherBackend::ncclep:
      return {};
  }
  return {};
}

}  // namespace megamem
