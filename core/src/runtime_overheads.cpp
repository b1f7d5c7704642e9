// Runtime overheads; see runtime_overheads.hpp.
#include "runtime_overheads.hpp"

#include "megamem/units.hpp"

namespace megamem {

int active_communicators(const NormalizedConfig& n) {
  const ParallelConfig& p = n.config.parallel;
  const bool moe = n.config.model.num_experts > 0;
  int count = 0;
  // megatron/core/parallel_state.py: TP, CP, PP, DP x CP, and for MoE EP, expert-TP and
  // expert-DP; the embedding group ties first and last stages.
  count += p.tensor_parallel > 1;
  count += p.context_parallel > 1;
  count += p.pipeline_parallel > 1;
  count += n.data_parallel * p.context_parallel > 1;
  if (moe) {
    count += p.expert_parallel > 1;
    count += p.expert_tensor_parallel > 1 && p.expert_tensor_parallel != p.tensor_parallel;
    count += n.expert_data_parallel > 1;
  }
  const bool embedding_group =
      p.pipeline_parallel > 1 &&
      (!n.config.model.untie_embeddings_and_output_weights || n.config.model.mtp_num_layers > 0);
  count += embedding_group;
  return count;
}

double runtime_overhead_bytes(const NormalizedConfig& n, double peak_allocated_bytes) {
  const RuntimeOverheadConfig& r = n.config.runtime;
  double bytes = r.cuda_context_gib * kBytesPerGiB;
  bytes += r.nccl_gib_per_communicator * kBytesPerGiB * active_communicators(n);
  bytes += r.fragmentation_fraction * peak_allocated_bytes;
  if (n.config.model.num_experts > 0 &&
      n.config.training.moe_token_dispatcher == TokenDispatcher::flex) {
    bytes += r.deepep_buffer_gib * kBytesPerGiB;
  }
  return bytes;
}

}  // namespace megamem
