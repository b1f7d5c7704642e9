// Transformer Engine per-layer CUDA graphs; see cuda_graphs.hpp.
#include "memory/cuda_graphs.hpp"

#include <algorithm>

#include "schedule/pipeline_schedule.hpp"
#include "schedule/timeline.hpp"

namespace megamem {
namespace {

using M = CudaGraphModule;

const CudaGraphModules& graph_modules(const NormalizedConfig& n) {
  return n.config.training.cuda_graph_modules;
}

// An empty module set captures whole layers (enums.py CudaGraphModule).
bool whole_layers(const NormalizedConfig& n) { return graph_modules(n).empty(); }

// moe_router (with or without moe_preprocess) captures the router and the shared experts of
// an MoE layer but not its experts; the graph then ends inside the MoE layer.
bool moe_partially_captured(const NormalizedConfig& n) {
  const CudaGraphModules& modules = graph_modules(n);
  return !whole_layers(n) && !modules.has(M::moe) &&
         (modules.has(M::moe_router) || modules.has(M::moe_preprocess));
}

// Kinds whose self_attention is not an IdentityOp (GatedDeltaNet takes its place in GDN
// layers), so `attn` captures them.
bool kind_has_attention(LayerKind kind) {
  return layer_kind_has_attention(kind) || layer_kind_is_gdn(kind);
}

LayerKind kind_at(const NormalizedConfig& n, int layer) {
  return n.layer_kinds[static_cast<std::size_t>(layer)];
}

// Graphed callables of one stage: its decoder layers and MTP layers (TECudaGraphHelper.
// _discover_layers; a GPT model's MTP layers are built like the last decoder layer), and of those
// the ones whose static inputs carry the attention mask (transformer_layer.py
// get_layer_static_inputs).
struct Callables {
  int all = 0;
  int with_mask = 0;
};

Callables stage_callables(const NormalizedConfig& n, const StagePlacement& stage) {
  Callables count;
  auto add = [&](LayerKind kind, int times) {
    if (!layer_graphed(n, kind)) return;
    count.all += times;
    if (kind_has_attention(kind) && module_graphed(n, ModuleKind::self_attention, kind)) {
      count.with_mask += times;
    }
  };
  for (int i = stage.first_layer; i < stage.first_layer + stage.num_layers; ++i) {
    add(kind_at(n, i), 1);
  }
  // cuda_graphs.py appends mtp.layers[i].mtp_model_layer only if it is a
  // GraphableMegatronModule: a GPT model's TransformerLayer, never a hybrid model's HybridStack.
  if (n.mtp_layers_graphable) {
    for (const LayerKind kind : n.mtp_layer_kinds) add(kind, stage.num_mtp_layers);
  }
  return count;
}

// Static input sets alive at once: _get_sample_arguments hands a set back for reuse once the
// backward of the chunk that used it is captured. Without PP only one micro-batch is captured
// (_get_cuda_graph_input_data).
Callables static_input_sets(const NormalizedConfig& n, int pp_rank) {
  std::vector<Callables> callables(
      static_cast<std::size_t>(n.config.parallel.virtual_stages_per_pipeline_rank));
  for (const StagePlacement& stage : n.stages) {
    if (stage.pp_rank == pp_rank) {
      callables[static_cast<std::size_t>(stage.vpp_chunk)] = stage_callables(n, stage);
    }
  }
  if (n.config.parallel.pipeline_parallel == 1 &&
      !n.config.training.overlap_moe_expert_parallel_comm) {
    return callables.front();
  }
  Callables live, most;
  for (const ScheduleOp& op : pipeline_schedule(rank_schedule_shape(n, pp_rank, true))) {
    const Callables& chunk = callables[static_cast<std::size_t>(op.chunk)];
    const int sign = op.forward ? 1 : -1;
    live.all += sign * chunk.all;
    live.with_mask += sign * chunk.with_mask;
    most.all = std::max(most.all, live.all);
    most.with_mask = std::max(most.with_mask, live.with_mask);
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

bool layer_graphed(const NormalizedConfig& n, LayerKind kind) {
  if (!uses_te_layer_graphs(n.config.training)) return false;
  // Megatron-Bridge's FalconH1Layer is a plain MegatronModule, not a GraphableMegatronModule
  // (falcon_h1/modeling_falconh1/falconh1_layer.py): transformer/cuda_graphs.py
  // _layer_is_graphable never captures it.
  if (kind == LayerKind::parallel_hybrid) return false;
  if (whole_layers(n)) return true;
  const CudaGraphModules& modules = graph_modules(n);
  if (kind == LayerKind::mamba) return modules.has(M::mamba);
  if (kind_has_attention(kind) && modules.has(M::attn)) return true;
  if (layer_kind_is_moe(kind)) {
    return modules.has(M::moe) || modules.has(M::moe_router) || modules.has(M::moe_preprocess);
  }
  return layer_kind_has_dense_mlp(kind) && modules.has(M::mlp);
}

bool module_graphed(const NormalizedConfig& n, ModuleKind module, LayerKind kind) {
  if (!layer_graphed(n, kind)) return false;
  if (whole_layers(n)) return true;
  const CudaGraphModules& modules = graph_modules(n);
  const bool moe_layer = layer_kind_is_moe(kind);
  switch (module) {
    case ModuleKind::mamba_mixer:
      return modules.has(M::mamba);
    case ModuleKind::input_layernorm:
    case ModuleKind::self_attention:
    case ModuleKind::gated_deltanet:
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

bool in_graph_part(const NormalizedConfig& n, GraphPart part, ModuleKind module, LayerKind kind) {
  if (part == GraphPart::whole) return true;
  return module_graphed(n, module, kind) == (part == GraphPart::graphed);
}

namespace {

// Whether any layer whose graph ends at the layer's (or the attention's) output, returning the
// hidden states alone, is captured.
bool hidden_output_graphed(const NormalizedConfig& n) {
  for (const LayerKind kind : n.layer_kinds) {
    if (!layer_graphed(n, kind)) continue;
    if (!layer_kind_is_moe(kind) || !moe_partially_captured(n)) return true;
  }
  return false;
}

}  // namespace

double graph_static_bytes(const NormalizedConfig& n, int pp_rank) {
  if (!uses_te_layer_graphs(n.config.training)) return 0;
  const ModelConfig& m = n.config.model;
  const ActivationShape s = activation_shape(n);
  const double full_seq = s.seq * n.config.parallel.context_parallel;
  const double hidden = s.act * s.sp_tokens * s.h;  // module.py: [s/cp(/tp), b, h]
  // transformer_layer.py get_layer_static_inputs: a bool causal mask [b, 1, s/cp, s] for a
  // callable whose attention is captured.
  const double mask = s.batch * s.seq * full_seq;
  const Callables sets = static_input_sets(n, pp_rank);
  double bytes = sets.all * hidden + sets.with_mask * mask;
  // _get_sample_arguments caches one fp32 RoPE table [s, 1, 1, d] (not for MLA).
  if (sets.with_mask > 0 && m.position_embedding == PositionEmbedding::rope &&
      !m.multi_latent_attention) {
    bytes += 4 * full_seq * m.kv_channels;
  }
  // graph.py: one static grad-output set per output signature. A graph ending at a layer's
  // (or the attention's) output returns the hidden states; one ending in the MoE layer returns
  // them, the residual, the shared experts' output and the fp32 routing probabilities.
  if (hidden_output_graphed(n)) bytes += hidden;
  if (m.num_experts > 0 && moe_partially_captured(n)) {
    const double shared = m.moe_shared_expert_intermediate_size > 0 ? 1 : 0;
    bytes += (2 + shared) * hidden + 4 * s.sp_tokens * m.num_experts;
  }
  return bytes;
}

}  // namespace megamem
