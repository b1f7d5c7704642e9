// Allocations that stay in torch.cuda.memory_allocated() for the whole run but belong to
// no parameter: cuBLAS workspaces, Megatron's global memory buffer, MoE expert-bias
// buffers and a small calibrated remainder (memory-model.md 3.6, C_fixed).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "megamem/estimate_types.hpp"
#include "memory/parameter_count.hpp"

namespace megamem {

// Per GPU, whatever its pipeline rank holds.
double workspace_bytes(const NormalizedConfig& normalized);

// Megatron's GlobalMemoryBuffer keeps its largest request alive (megatron/core/utils.py):
// the allgather dispatcher's gathered tokens, or local-spec SP all-gathers.
double global_buffer_bytes(const NormalizedConfig& normalized);

// fp32 local_tokens_per_expert and expert_bias of each MoE layer with expert bias
// (megatron/core/transformer/moe/router.py), or a hash-routed layer's int32 tid2eid table.
double expert_bias_buffer_bytes(const NormalizedConfig& normalized,
                                const std::vector<TensorBlock>& blocks);

// Transformer Engine's cached dummy weight gradients (transformer_engine/pytorch/module/base.py,
// get_dummy_wgrad): with --gradient-accumulation-fusion under Megatron's DDP (which marks each
// parameter with grad_added_to_main_grad, megatron/core/distributed/distributed_data_parallel.py)
// every TE linear returns a placeholder wgrad of its weight's shape and dtype, kept in a
// module-level cache keyed by shape and dtype for the rest of the run. Megatron's own output
// layer takes its placeholder from the same cache when TE is installed (since Megatron-Core
// e7c55de, 2025-08: megatron/core/tensor_parallel/layers.py,
// LinearWithGradAccumulationAndAsyncCommunication.backward): a [padded vocab / TP, h] tensor
// on every stage with the loss (`has_loss`), tied or not. Adds a key per such weight in
// `blocks` to `shapes` (one rank collects over all its chunks).
struct TeDummyWgradShapes {
  std::vector<std::int64_t> keys;               // shape keys as collected (repeats allowed)
  std::vector<const ParamTensor*> blocks_seen;  // layer templates already collected
};
// A layer template's shape keys, shared by the ranks of one estimate.
struct TemplateShapeKeys {
  const ParamTensor* tensors = nullptr;
  std::vector<std::int64_t> keys;
};
void collect_te_dummy_wgrad_shapes(const NormalizedConfig& normalized,
                                   const std::vector<TensorBlock>& blocks, bool has_loss,
                                   TeDummyWgradShapes& shapes,
                                   std::vector<TemplateShapeKeys>& template_keys);

// The shape keys each rank collects over its stages, and the bytes of each rank's cache: one
// tensor per distinct shape, rounded to whole bytes. The keys are kept in one list, stage
// after stage, rather than in a list per rank (an estimate and every planner layout build
// one).
class RankTeKeys {
 public:
  RankTeKeys(int ranks, std::size_t stages)
      : only_stage_(static_cast<std::size_t>(ranks), kNoStage) {
    stages_.reserve(stages);
  }
  // The keys of one of pp_rank's stages (StageStaticBytes::te_keys), in stage order.
  void add_stage(int pp_rank, const std::vector<std::int64_t>& keys);
  // Per pipeline rank; ranks that collected the same keys (a pipeline's middle ranks) share
  // one count.
  std::vector<std::uint64_t> rank_bytes(const NormalizedConfig& normalized) const;

 private:
  // Rank r's keys, its stages' in order: a span of keys_ when it has one stage, else copied
  // into `joined`.
  std::span<const std::int64_t> keys_of(int pp_rank, std::vector<std::int64_t>& joined) const;
  struct Stage {
    int pp_rank = 0;
    std::size_t begin = 0, end = 0;  // its keys in keys_
  };
  static constexpr int kNoStage = -1, kSeveralStages = -2;
  std::vector<std::int64_t> keys_;
  std::vector<Stage> stages_;
  std::vector<int> only_stage_;  // per rank: its one stage's index in stages_, or kNo/kSeveral
};

}  // namespace megamem
