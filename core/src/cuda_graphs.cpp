// Transformer Engine per-layer CUDA graphs; see cuda_graphs.hpp.
#include "cuda_graphs.hpp"

#include <algorithm>

#include "pipeline_schedule.hpp"
#include "timeline.hpp"

namespace megamem {
namespace {

using M = CudaGraphModule;

const CudaGraphModules& graph_modules(const NormalizedConfig& n) {
  return n.config.training.cuda_graph_modules;
}

// An empty module set captures whole layers (enums.py CudaGraphModule).
bool whole_layers(const NormalizedConfig& n) { return graph_modules(n).empty(); }

bool attention_captured(const NormalizedConfig& n) {
  return whole_layers(n) || graph_modules(n).has(M::attn);
}

// moe_router (with or without moe_preprocess) captures the router and the shared experts of
// an MoE layer but not its experts; the graph then ends inside the MoE layer.
bool moe_partially_captured(const NormalizedConfig& n) {
  const CudaGraphModules& modules = graph_modules(n);
  return !whole_layers(n) && !modules.has(M::moe) &&
         (modules.has(M::moe_router) || modules.has(M::moe_preprocess));
}

bool moe_layer_at(const NormalizedConfig& n, int layer) {
  return n.moe_layer_pattern[static_cast<std::size_t>(layer)] != 0;
}

// Graphed callables of one stage: its decoder layers and MTP layers (TECudaGraphHelper.
// _discover_layers; MTP layers are built like the last decoder layer).
int stage_callables(const NormalizedConfig& n, const StagePlacement& stage) {
  int count = 0;
  for (int i = stage.first_layer; i < stage.first_layer + stage.num_layers; ++i) {
    count += layer_graphed(n, moe_layer_at(n, i)) ? 1 : 0;
  }
  const bool mtp_moe = moe_layer_at(n, n.config.model.num_layers - 1);
  return count + (layer_graphed(n, mtp_moe) ? stage.num_mtp_layers : 0);
}

// Static input sets alive at once: _get_sample_arguments hands a set back for reuse once the
// backward of the chunk that used it is captured. Without PP only one micro-batch is captured
// (_get_cuda_graph_input_data).
int static_input_sets(const NormalizedConfig& n, int pp_rank) {
  std::vector<int> callables(
      static_cast<std::size_t>(n.config.parallel.virtual_stages_per_pipeline_rank), 0);
  for (const StagePlacement& stage : n.stages) {
    if (stage.pp_rank == pp_rank) {
      callables[static_cast<std::size_t>(stage.vpp_chunk)] = stage_callables(n, stage);
    }
  }
  if (n.config.parallel.pipeline_parallel == 1 &&
      !n.config.training.overlap_moe_expert_parallel_comm) {
    return callables.front();
  }
  int live = 0, most = 0;
  for (const ScheduleOp& op : pipeline_schedule(rank_schedule_shape(n, pp_rank, true))) {
    live += (op.forward ? 1 : -1) * callables[static_cast<std::size_t>(op.chunk)];
    most = std::max(most, live);
  }
  return most;
}

}  // namespace

bool uses_te_layer_graphs(const TrainingConfig& training) {
  return training.cuda_graph_impl == CudaGraphImpl::transformer_engine;
}

bool cuda_graphs_unmodeled(const Config& config) {
  const CudaGraphImpl impl = config.training.cuda_graph_impl;
  return impl == CudaGraphImpl::local || impl == CudaGraphImpl::full_iteration;
}

bool layer_graphed(const NormalizedConfig& n, bool moe_layer) {
  if (!uses_te_layer_graphs(n.config.training)) return false;
  const CudaGraphModules& modules = graph_modules(n);
  if (whole_layers(n) || modules.has(M::attn)) return true;
  if (moe_layer)
    return modules.has(M::moe) || modules.has(M::moe_router) || modules.has(M::moe_preprocess);
  return modules.has(M::mlp);
}

bool module_graphed(const NormalizedConfig& n, ModuleKind module, bool moe_layer) {
  if (!layer_graphed(n, moe_layer)) return false;
  if (whole_layers(n)) return true;
  const CudaGraphModules& modules = graph_modules(n);
  switch (module) {
    case ModuleKind::input_layernorm:
    case ModuleKind::self_attention:
      return modules.has(M::attn);
    case ModuleKind::pre_mlp_layernorm:
      return moe_layer ? modules.has(M::moe) || moe_partially_captured(n) : modules.has(M::mlp);
    case ModuleKind::mlp:
      return !moe_layer && modules.has(M::mlp);
    case ModuleKind::router:
    case ModuleKind::shared_experts:
      return moe_layer && (modules.has(M::moe) || moe_partially_captured(n));
    case ModuleKind::routed_experts:
    case ModuleKind::moe_latent_projection:
      return moe_layer && modules.has(M::moe);
    default:
      return false;
  }
}

bool in_graph_part(const NormalizedConfig& n, GraphPart part, ModuleKind module, bool moe_layer) {
  if (part == GraphPart::whole) return true;
  return module_graphed(n, module, moe_layer) == (part == GraphPart::graphed);
}

double graph_static_bytes(const NormalizedConfig& n, int pp_rank) {
  if (!uses_te_layer_graphs(n.config.training)) return 0;
  const ModelConfig& m = n.config.model;
  const ActivationShape s = activation_shape(n);
  const double full_seq = s.seq * n.config.parallel.context_parallel;
  const double hidden = s.act * s.sp_tokens * s.h;  // module.py: [s/cp(/tp), b, h]
  // transformer_layer.py get_layer_static_inputs: a bool causal mask [b, 1, s/cp, s].
  const double mask = attention_captured(n) ? s.batch * s.seq * full_seq : 0;
  double bytes = static_input_sets(n, pp_rank) * (hidden + mask);
  // _get_sample_arguments caches one fp32 RoPE table [s, 1, 1, d] (not for MLA).
  if (attention_captured(n) && m.position_embedding == PositionEmbedding::rope &&
      !m.multi_latent_attention) {
    bytes += 4 * full_seq * m.kv_channels;
  }
  // graph.py: one static grad-output set per output signature. A graph ending at a layer's
  // (or the attention's) output returns the hidden states; one ending in the MoE layer returns
  // them, the residual, the shared experts' output and the fp32 routing probabilities.
  const bool moe = m.num_experts > 0;
  const bool dense_layers =
      std::count(n.moe_layer_pattern.begin(), n.moe_layer_pattern.end(), std::uint8_t{0}) > 0;
  if ((dense_layers && layer_graphed(n, false)) ||
      (moe && layer_graphed(n, true) && !moe_partially_captured(n))) {
    bytes += hidden;
  }
  if (moe && moe_partially_captured(n)) {
    const double shared = m.moe_shared_expert_intermediate_size > 0 ? 1 : 0;
    bytes += (2 + shared) * hidden + 4 * s.sp_tokens * m.num_experts;
  }
  return bytes;
}

}  // namespace megamem
