// Device memory beyond the allocator peak; see runtime_overheads.hpp.
#include "memory/runtime_overheads.hpp"

#include <algorithm>
#include <cmath>

#include "megamem/units.hpp"
#include "memory/flex_dispatcher_buffers.hpp"
#include "memory/fp8_memory.hpp"

namespace megamem {
namespace {

// c10/cuda/CUDACachingAllocator.cpp: allocations above kSmallSize (1 MiB) come from the large
// pool; with expandable segments each pool's segment grows by mapping whole pages of
// kLargeBuffer (20 MiB, large pool) or kSmallBuffer (2 MiB, small pool).
constexpr double kLargeBuffer = 20.0 * kBytesPerMiB;
constexpr double kSmallBuffer = 2.0 * kBytesPerMiB;

constexpr std::string_view kNcclSource =
    "NCCL_BUFFSIZE 4 MiB x NCCL_MAX_NCHANNELS 32 x 2 ring peers (NCCL environment variables); "
    "groups from megatron/core/parallel_state.py";

constexpr std::string_view kNcclNodeSource =
    "NCCL communicator within one node (NVLink P2P transport): per collective channel, the "
    "receive side holds the Simple (4 MiB), LL128 (4.69 MiB) and LL (0.5 MiB) buffers in 2 MiB "
    "granules and the send side 2 MiB (src/transport/p2p.cc, src/init.cc DEFAULT_*_BUFFSIZE), "
    "24 channels on an H100 node, plus 2 MiB per channel structure (src/channel.cc)";

constexpr std::string_view kNvlsSource =
    "NCCL src/transport/nvls.cc ncclNvlsBufferSetup: channels x 2 x 8 steps x 128 KiB per GPU "
    "of each reducing group in the node (16 channels on Hopper), + a 2 MiB credit granule";

constexpr std::string_view kUserbufferSource =
    "transformer_engine/pytorch/module/base.py initialize_ub (default methods: 4 ring-exchange, "
    "2 pipeline, 4 bulk, 2 external buffers, each of the [s x b / CP, h] shape Megatron's "
    "megatron/training/initialize.py _initialize_tp_communicators passes); registered with "
    "cuMemCreate / cudaMalloc in common/comm_gemm_overlap (outside PyTorch's allocator)";

// The GPUs of a communicator in one node: all of them when its span fits the node, else its
// members spread evenly over the span.
std::int64_t local_members(const Communicator& comm, std::int64_t node) {
  if (comm.span_ranks <= node) return comm.members;
  return std::clamp<std::int64_t>(comm.members * node / comm.span_ranks, 1, comm.members);
}

// src/transport/nvls.cc: ncclNvlsInit turns NVLS on with NCCL_NVLS_ENABLE unset (2) where the
// GPU reports multicast; the graph search needs an NVSwitch and two GPUs of the communicator
// in the node (graph/search.cc). enqueue.cc runs the NVLS algorithm inside a node (without
// CollNet) and NVLS_TREE, all-reduce only, across nodes; the tuner takes them for large
// messages, which megamem assumes of every group that reduces gradients, parameters or
// activations. ncclNvlsBufferSetup then maps nChannels x 2 x NCCL_STEPS x chunk bytes per head
// (a GPU of the group in the node, at most NCCL_MAX_NVLS_ARITY = 32), and ncclNvlsSetup a
// credit buffer of a few KiB in one NVLS_MEM_ALIGN_SIZE (2 MiB) granule.
double nvls_bytes(const NormalizedConfig& n, const Communicator& comm) {
  const Config& c = n.config;
  if (!c.device.nvlink_multicast || !c.runtime.nccl_nvls || !comm.reduces) return 0;
  const std::int64_t node = std::max(1, c.device.gpus_per_node);
  const std::int64_t heads = std::min<std::int64_t>(local_members(comm, node), 32);
  const bool in_node = comm.span_ranks <= node;
  if (heads < 2 || (!in_node && !comm.all_reduces)) return 0;
  // NVLS_NCHANNELS_SM90 16; SM100 24 within the NVLink domain, 32 across (before
  // ncclNvlsTreeSm100Tuning's NIC-dependent choices); NCCL_NVLS_CHUNKSIZE 128 KiB; NCCL_STEPS 8.
  const double channels = c.device.compute_capability >= 100 ? (in_node ? 24 : 32) : 16;
  constexpr double kChunkBytes = 128.0 * 1024;
  constexpr double kSteps = 8;
  return channels * 2 * kSteps * kChunkBytes * static_cast<double>(heads) + 2.0 * kBytesPerMiB;
}

}  // namespace

double userbuffer_elements(const Config& c) {
  return static_cast<double>(c.training.micro_batch_size) * c.training.seq_length /
         c.parallel.context_parallel * c.model.hidden_size;
}

double userbuffer_cfg_bound_bytes(const Config& c) {
  const double tp = c.parallel.tensor_parallel;
  return 6 * 2 * userbuffer_elements(c) * (tp - 1) / tp;
}

double userbuffer_bytes(const NormalizedConfig& n) {
  const TrainingConfig& t = n.config.training;
  if (!t.tp_comm_overlap || n.config.parallel.tensor_parallel < 2) return 0;
  const double elements = userbuffer_elements(n.config);
  const double bf16_set = 12 * 2 * elements;
  if (!fp8_enabled(t)) return bf16_set;
  // FP8: the 8 all-gather buffers (qkv/fc1 fprop and dgrad, proj/fc2 dgrad and wgrad) hold
  // uint8, the 4 reduce-scatter ones (proj/fc2 fprop, qkv/fc1 wgrad) stay bf16. Megatron adds
  // a bf16 set for --first-last-layers-bf16's layers (quantization mode NONE).
  const double fp8_set = (8 * 1 + 4 * 2) * elements;
  const bool bf16_layers = t.fp8_bf16_layers_at_start + t.fp8_bf16_layers_at_end > 0;
  return fp8_set + (bf16_layers ? bf16_set : 0);
}

std::vector<Communicator> active_communicators(const NormalizedConfig& n) {
  const ParallelConfig& p = n.config.parallel;
  const bool moe = n.config.model.num_experts > 0;
  const std::int64_t world = p.world_size;
  const std::int64_t tp = p.tensor_parallel;
  const std::int64_t dense_ranks = world / p.pipeline_parallel;  // TP x CP x DP
  std::vector<Communicator> out;
  const auto add = [&](std::string_view name, std::int64_t span, std::int64_t members,
                       bool reduces = false, bool all_reduces = false) {
    out.push_back({name, span, members, reduces, all_reduces});
  };
  // Gradients are all-reduced by DDP, reduce-scattered (and parameters all-gathered) by the
  // distributed optimizer (megatron/core/distributed/param_and_grad_buffer.py) and by either
  // FSDP; TP all-reduces activations without sequence parallelism and gathers /
  // reduce-scatters them with it.
  const bool grads_all_reduced =
      !n.config.optimizer.use_distributed_optimizer && p.fsdp.impl == FsdpImpl::none;
  // megatron/core/parallel_state.py orders ranks tp-cp-ep-dp-pp (expert groups etp-ep-dp-pp):
  // a group spans the ranks of its own dimension and every inner one.
  if (tp > 1) add("nccl_tp", tp, tp, true, !n.sequence_parallel);
  if (p.context_parallel > 1) add("nccl_cp", tp * p.context_parallel, p.context_parallel);
  if (p.pipeline_parallel > 1) add("nccl_pp", world, p.pipeline_parallel);
  const std::int64_t dp_cp = n.data_parallel * p.context_parallel;
  if (dp_cp > 1) add("nccl_dp", dense_ranks, dp_cp, true, grads_all_reduced);
  const std::int64_t etp = p.expert_tensor_parallel;
  if (moe && p.expert_parallel > 1) add("nccl_ep", etp * p.expert_parallel, p.expert_parallel);
  if (moe && etp > 1 && etp != p.tensor_parallel) add("nccl_expert_tp", etp, etp, true, false);
  if (moe && n.expert_data_parallel > 1) {
    add("nccl_expert_dp", dense_ranks, n.expert_data_parallel, true, grads_all_reduced);
  }
  const bool embedding_group =
      p.pipeline_parallel > 1 &&
      (!n.config.model.untie_embeddings_and_output_weights || n.config.model.mtp_num_layers > 0);
  // The first and last stages all-reduce the shared embedding's gradient (finalize_model_grads).
  if (embedding_group) add("nccl_embedding", world, 2, true, true);
  // Each new_group is its own NCCL communicator, created by its first collective
  // (ProcessGroupNCCL::getNCCLComm). Every step also runs collectives on: the default group
  // (barriers, timers, the exit check in megatron/training/training.py); the model-parallel
  // group (TP x PP: the inf/NaN and grad-norm reductions of megatron/core/optimizer); and,
  // under the distributed optimizer, the intra-instance group that reduces the grad norm
  // (grad_stats_parallel_group, optimizer/__init__.py; clip_grads.py), a group of its own even
  // when it holds the same ranks as another.
  if (world > 1) add("nccl_world", world, world);
  if (tp * p.pipeline_parallel > 1) add("nccl_model_parallel", world, tp * p.pipeline_parallel);
  if (n.config.optimizer.use_distributed_optimizer && world > 1) {
    add("nccl_grad_stats", world, world / p.num_distributed_optimizer_instances);
  }
  return out;
}

std::uint64_t peak_reserved_bytes(const NormalizedConfig& n, std::uint64_t peak_allocated_bytes) {
  const RuntimeOverheadConfig& r = n.config.runtime;
  const auto allocated = static_cast<double>(peak_allocated_bytes);
  double reserved = 0;
  if (r.expandable_segments) {
    // One expandable segment per pool and stream: blocks freed at its end are reused by the
    // next request and the mapped range ends on a page, but a block freed in the middle still
    // serves only requests no larger than itself (the same best fit and splitting), so the
    // fragmentation share stays; only fixed segments' unusable ends go. Megatron-Bridge's
    // verification cards, all run with expandable segments, hold 2.5-21 % over the peak
    // (examples/model_verification_cards; memory-model.md 6).
    const double fragmented = allocated * (1.0 + r.fragmentation_fraction);
    reserved = std::ceil(fragmented / kLargeBuffer) * kLargeBuffer + kSmallBuffer;
  } else {
    // Without expandable segments segments are never released during training and a cached
    // block serves only requests no larger than itself (best fit, split when more than
    // kSmallSize remains), so freed blocks later requests do not fit stay reserved:
    // fragmentation_fraction of the allocator peak (memory-model.md 7.2 says why a share of
    // the peak rather than of the freed bytes).
    reserved = allocated * (1.0 + r.fragmentation_fraction);
  }
  return std::max(peak_allocated_bytes, static_cast<std::uint64_t>(round_to_int64(reserved)));
}

std::vector<DeviceOverhead> device_overheads(const NormalizedConfig& n) {
  const RuntimeOverheadConfig& r = n.config.runtime;
  const std::vector<Communicator> communicators = active_communicators(n);
  std::vector<DeviceOverhead> out;
  out.reserve(communicators.size() + 4);  // context, communicators, NVLS, userbuffers, dispatcher
  const auto add = [&](std::string_view name, double bytes, std::string_view source) {
    if (bytes > 0) out.push_back({name, static_cast<std::uint64_t>(round_to_int64(bytes)), source});
  };
  add("cuda_context", r.cuda_context_gib * kBytesPerGiB,
      "CUDA context with lazy module loading (CUDA Programming Guide, Lazy Loading: "
      "CUDA_MODULE_LOADING=LAZY, default on Linux since CUDA 12.2, set by torch/cuda/__init__.py)");
  const std::int64_t node = std::max(1, n.config.device.gpus_per_node);
  double nvls = 0;
  for (const Communicator& comm : communicators) {
    const bool in_node = comm.span_ranks <= node;
    add(comm.name,
        (in_node ? r.nccl_node_gib_per_communicator : r.nccl_gib_per_communicator) * kBytesPerGiB,
        in_node ? kNcclNodeSource : kNcclSource);
    nvls += nvls_bytes(n, comm);
  }
  add("nccl_nvls", nvls, kNvlsSource);
  add("userbuffers", userbuffer_bytes(n), kUserbufferSource);
  const FlexDispatcherBuffers flex = flex_dispatcher_buffers(n);
  if (r.deepep_buffer_gib > 0 && flex.bytes > 0) {
    add("deepep_buffers", r.deepep_buffer_gib * kBytesPerGiB,
        "the flex dispatcher's buffers as set (rt.deepep)");
  } else {
    add("deepep_buffers", flex.bytes, flex.source);
  }
  return out;
}

std::uint64_t device_overhead_bytes(const std::vector<DeviceOverhead>& overheads) {
  std::uint64_t total = 0;
  for (const DeviceOverhead& overhead : overheads) total += overhead.bytes;
  return total;
}

std::uint64_t device_total_bytes(std::uint64_t peak_reserved_bytes, std::uint64_t overhead_bytes) {
  return peak_reserved_bytes + overhead_bytes;
}

void set_device_memory(const NormalizedConfig& n, const std::vector<DeviceOverhead>& overheads,
                       RankMemory& rank) {
  rank.peak_reserved_bytes = peak_reserved_bytes(n, rank.peak_allocated_bytes);
  rank.device_overheads = overheads;
  rank.peak_total_bytes =
      device_total_bytes(rank.peak_reserved_bytes, device_overhead_bytes(overheads));
  rank.runtime_overhead_bytes = rank.peak_total_bytes - rank.peak_allocated_bytes;
}

}  // namespace megamem
