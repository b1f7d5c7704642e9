// Persistent buffers; see persistent_buffers.hpp.
#include "memory/persistent_buffers.hpp"

#include <algorithm>
#include <cmath>

#include "megamem/units.hpp"
#include "modules/module_spec.hpp"

namespace megamem {
namespace {

// PyTorch's cuBLAS workspace per handle: CUBLAS_WORKSPACE_CONFIG ":4096:2:16:8" by default
// (2 x 4 MiB + 8 x 16 KiB), ":4096:8" (8 x 4 MiB) under deterministic algorithms.
constexpr double kTorchWorkspaceMib = 8.125;
constexpr double kDeterministicTorchWorkspaceMib = 32.0;
// [calibrate] handles with a workspace: the compute stream and one more (Megatron CI:
// deterministic runs hold ~48 MiB more than non-deterministic ones on A100 and GB200).
constexpr double kTorchCublasHandles = 2.0;
// transformer_engine/pytorch/cpp_extensions/gemm.py: grouped GEMMs run on 4 streams, each
// with its own workspace.
constexpr double kTeGroupedGemmStreams = 4.0;
// transformer_engine/pytorch/cpp_extensions/gemm.py get_cublas_workspace(ub=True): GEMMs that
// overlap with userbuffers (--tp-comm-overlap) share one cached workspace for
// _NUM_MAX_UB_STREAMS = 3 streams, beside the ordinary one.
constexpr double kTeUserbufferStreams = 3.0;
// [calibrate] the local (non-TE) spec keeps ~30 MiB more than the TE spec in Megatron's
// CI (fused-kernel and Apex buffers); measured, not derived.
constexpr double kLocalSpecExtraMib = 30.0;

}  // namespace

double workspace_bytes(const NormalizedConfig& n) {
  const Config& c = n.config;
  const bool te = c.training.transformer_impl == TransformerImpl::transformer_engine;
  double mib = c.device.fixed_allocated_mib;
  mib += kTorchCublasHandles *
         (c.training.deterministic_mode ? kDeterministicTorchWorkspaceMib : kTorchWorkspaceMib);
  if (te) {
    mib += c.device.te_cublas_workspace_mib;
    if (c.model.num_experts > 0 && c.training.moe_grouped_gemm) {
      mib += kTeGroupedGemmStreams * c.device.te_cublas_workspace_mib;
    }
    if (c.training.tp_comm_overlap && c.parallel.tensor_parallel > 1) {
      mib += kTeUserbufferStreams * c.device.te_cublas_workspace_mib;
    }
  } else {
    mib += kLocalSpecExtraMib;
  }
  return mib * kBytesPerMiB;
}

double global_buffer_bytes(const NormalizedConfig& n) {
  const Config& c = n.config;
  // The buffer takes the input's dtype, the activation dtype (get_tensor(..., input.dtype)).
  const ActivationShape s = activation_shape(n);
  double bytes = 0;
  // token_dispatcher.py (MoEAllGatherTokenDispatcher): gathered tokens in the global buffer.
  if (c.model.num_experts > 0 && c.training.moe_token_dispatcher == TokenDispatcher::allgather) {
    const double group =
        static_cast<double>(c.parallel.expert_parallel) * c.parallel.expert_tensor_parallel;
    if (group > 1) bytes = std::max(bytes, s.act * s.sp_tokens * group * s.h);
  }
  // tensor_parallel/layers.py: local-spec linears all-gather SP input into the buffer.
  if (c.training.transformer_impl == TransformerImpl::local && n.sequence_parallel) {
    bytes = std::max(bytes, s.act * s.tokens * s.h);
  }
  return bytes;
}

double expert_bias_buffer_bytes(const NormalizedConfig& n, const std::vector<TensorBlock>& blocks) {
  const ModelConfig& model = n.config.model;
  if (!model.moe_router_enable_expert_bias && model.moe_n_hash_layers == 0) return 0;
  double routers = 0;      // decoder layers' routers
  double mtp_routers = 0;  // MTP layers' routers
  bool embedding = false;
  bool mtp = false;
  for (const TensorBlock& block : blocks) {
    for (std::size_t t = 0; t < block.count; ++t) {
      const ParamTensor& tensor = block.tensors[t];
      if (tensor.module == ModuleKind::router && tensor.gemm_weight) {
        (tensor.mtp ? mtp_routers : routers) += static_cast<double>(block.repeat);
      }
      embedding = embedding || tensor.module == ModuleKind::word_embedding;
      mtp = mtp || tensor.mtp;
    }
  }
  // Hash-routed layers (the first moe_n_hash_layers, all on the embedding's stage:
  // rules/pipeline_layout.cpp) keep an int32 tid2eid [vocab x top-k] table and no expert bias
  // (Megatron-LM dev moe/router.py TopKRouter.__init__); MTP routers are never hashed. The
  // last stage's embedding copy for MTP is not the embedding's stage.
  const bool embedding_stage = embedding && (!mtp || n.config.parallel.pipeline_parallel == 1);
  const double hashed = embedding_stage ? std::min<double>(model.moe_n_hash_layers, routers) : 0;
  const double biased = model.moe_router_enable_expert_bias ? routers + mtp_routers - hashed : 0;
  return biased * 2 * 4 * model.num_experts +
         hashed * 4 * static_cast<double>(model.vocab_size) * model.moe_router_topk;
}

namespace {

// A dummy-wgrad shape key: element count x kShapeKeyScale + module x 4 + ordinal (< 4).
constexpr std::int64_t kShapeKeyScale = 256;

// The modules whose GEMMs are Transformer Engine linears (TE spec): attention and MLA
// projections, dense and shared-expert MLPs, grouped or sequential experts, MoE latent
// projections and MTP's eh_proj. The router and the output layer are Megatron's own.
bool is_te_linear(const ParamTensor& tensor) {
  if (!tensor.gemm_weight || tensor.embedding_or_output) return false;
  switch (tensor.module) {
    case ModuleKind::self_attention:
    case ModuleKind::mlp:
    case ModuleKind::routed_experts:
    case ModuleKind::shared_experts:
    case ModuleKind::moe_latent_projection:
    case ModuleKind::mtp_projection:
      return true;
    default:
      return false;
  }
}

}  // namespace

namespace {

// The block's TE linears as shape keys. The cache is keyed by shape; a tensor list does not
// carry shapes, so a weight is told apart by its module, element count and its rank among
// equal counts of that module in the layer (fc1 and fc2 of a non-gated MLP have equal counts
// but transposed shapes). Appended to `keys`.
void append_block_shape_keys(const TensorBlock& block, std::vector<std::int64_t>& keys) {
  const std::size_t first = keys.size();
  for (std::size_t i = 0; i < block.count; ++i) {
    const ParamTensor& tensor = block.tensors[i];
    if (!is_te_linear(tensor)) continue;
    const std::int64_t shape =
        tensor.numel * kShapeKeyScale + static_cast<std::int64_t>(tensor.module) * 4;
    // The earlier TE linears of this module and count are the earlier keys of this shape.
    const auto ordinal =
        std::count_if(keys.begin() + static_cast<std::ptrdiff_t>(first), keys.end(),
                      [&](std::int64_t key) { return key / 4 * 4 == shape; });
    keys.push_back(shape + std::min<std::int64_t>(ordinal, 3));
  }
}

// A layer template gives the same keys on every stage and rank that has it: computed once.
const std::vector<std::int64_t>& template_shape_keys(const TensorBlock& block,
                                                     std::vector<TemplateShapeKeys>& cache) {
  for (const TemplateShapeKeys& entry : cache) {
    if (entry.tensors == block.tensors) return entry.keys;
  }
  TemplateShapeKeys& entry = cache.emplace_back();
  entry.tensors = block.tensors;
  entry.keys.reserve(block.count);  // at most a key per tensor
  append_block_shape_keys(block, entry.keys);
  return entry.keys;
}

}  // namespace

void collect_te_dummy_wgrad_shapes(const NormalizedConfig& n,
                                   const std::vector<TensorBlock>& blocks, bool has_loss,
                                   TeDummyWgradShapes& shapes,
                                   std::vector<TemplateShapeKeys>& template_keys) {
  const TrainingConfig& t = n.config.training;
  if (t.transformer_impl != TransformerImpl::transformer_engine ||
      !t.gradient_accumulation_fusion) {
    return;
  }
  if (has_loss) {
    const std::int64_t output =
        n.padded_vocab_size * n.config.model.hidden_size / n.config.parallel.tensor_parallel;
    shapes.keys.push_back(output * kShapeKeyScale +
                          static_cast<std::int64_t>(ModuleKind::output_layer) * 4);
  }
  for (const TensorBlock& block : blocks) {
    if (!block.layer_template) {
      append_block_shape_keys(block, shapes.keys);
      continue;
    }
    std::vector<const ParamTensor*>& seen = shapes.blocks_seen;
    if (std::find(seen.begin(), seen.end(), block.tensors) != seen.end()) continue;
    seen.push_back(block.tensors);
    const std::vector<std::int64_t>& keys = template_shape_keys(block, template_keys);
    shapes.keys.insert(shapes.keys.end(), keys.begin(), keys.end());
  }
}

namespace {

// Bytes of the cache for the shape keys one rank collected (sorted in place).
double te_dummy_wgrad_bytes(const NormalizedConfig& n, std::vector<std::int64_t>& keys) {
  // One tensor per distinct key (a rank's chunks may repeat a weight's shape).
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  double elements = 0;
  for (const std::int64_t key : keys) elements += static_cast<double>(key / kShapeKeyScale);
  // The placeholder has the weight's dtype: fp32, or bf16/fp16 with --bf16/--fp16.
  return elements * (n.config.training.params_dtype == DType::fp32 ? 4.0 : 2.0);
}

}  // namespace

void RankTeKeys::add_stage(int pp_rank, const std::vector<std::int64_t>& keys) {
  const std::size_t begin = keys_.size();
  // Room for every stage at the first one's count: usually the only allocation.
  if (keys_.capacity() == 0) keys_.reserve(keys.size() * stages_.capacity());
  keys_.insert(keys_.end(), keys.begin(), keys.end());
  int& only = only_stage_[static_cast<std::size_t>(pp_rank)];
  only = only == kNoStage ? static_cast<int>(stages_.size()) : kSeveralStages;
  stages_.push_back({pp_rank, begin, keys_.size()});
}

std::span<const std::int64_t> RankTeKeys::keys_of(int pp_rank,
                                                  std::vector<std::int64_t>& joined) const {
  const int only = only_stage_[static_cast<std::size_t>(pp_rank)];
  if (only >= 0) {
    const Stage& stage = stages_[static_cast<std::size_t>(only)];
    return std::span(keys_).subspan(stage.begin, stage.end - stage.begin);
  }
  joined.clear();
  for (const Stage& stage : stages_) {
    if (stage.pp_rank != pp_rank) continue;
    const auto first = keys_.begin() + static_cast<std::ptrdiff_t>(stage.begin);
    joined.insert(joined.end(), first,
                  first + static_cast<std::ptrdiff_t>(stage.end - stage.begin));
  }
  return joined;
}

std::vector<std::uint64_t> RankTeKeys::rank_bytes(const NormalizedConfig& n) const {
  const auto ranks = static_cast<int>(only_stage_.size());
  std::vector<std::uint64_t> out(only_stage_.size(), 0);
  std::vector<int> distinct;  // the first rank with each list of keys
  distinct.reserve(only_stage_.size());
  std::vector<std::int64_t> joined, other, sorted;
  for (int rank = 0; rank < ranks; ++rank) {
    const std::span<const std::int64_t> keys = keys_of(rank, joined);
    const auto same = std::find_if(distinct.begin(), distinct.end(), [&](int earlier) {
      const std::span<const std::int64_t> theirs = keys_of(earlier, other);
      return std::equal(keys.begin(), keys.end(), theirs.begin(), theirs.end());
    });
    if (same != distinct.end()) {
      out[static_cast<std::size_t>(rank)] = out[static_cast<std::size_t>(*same)];
      continue;
    }
    distinct.push_back(rank);
    sorted.assign(keys.begin(), keys.end());
    out[static_cast<std::size_t>(rank)] =
        static_cast<std::uint64_t>(round_to_int64(te_dummy_wgrad_bytes(n, sorted)));
  }
  return out;
}

}  // namespace megamem
