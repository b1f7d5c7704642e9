// Per-layer CUDA graphs of Transformer Engine (--cuda-graph-impl transformer_engine):
// which parts of which layers are captured, and the static buffers the capture keeps.
//
// Sources: megatron/core/transformer/cuda_graphs.py (TECudaGraphHelper: _layer_is_graphable,
// _get_sample_arguments, _get_cuda_graph_input_data), megatron/core/transformer/
// transformer_layer.py (get_layer_static_inputs, _get_submodules_under_cudagraphs),
// megatron/core/transformer/module.py (GraphableMegatronModule.get_layer_static_inputs),
// transformer_engine/pytorch/graph.py (make_graphed_callables with
// _reuse_graph_input_output_buffers, TE >= 2.7), megatron/training/training.py (capture after
// --cuda-graph-warmup-steps eager steps).
//
// How memory_allocated() sees a graphed run (PyTorch's caching allocator, private graph pools):
// tensors a graph creates and frees during capture return to its pool, so while the graphs
// replay their saved activations and outputs live in the pool's reserved segments but in no
// allocated block. Allocated memory therefore holds, besides the model, the static inputs
// made before the capture and, at each moment, the eager (not captured) parts' activations.
// The capture itself runs the graphed parts in the pipeline order with their activations
// allocated, and the eager warm-up steps before it run everything eagerly.
#pragma once

#include <vector>

#include "megamem/estimate_types.hpp"
#include "modules/module_spec.hpp"

namespace megamem {

// Which saved tensors of a layer an activation profile keeps.
enum class GraphPart {
  whole,    // all of them (no graphs, or the eager warm-up steps)
  graphed,  // those inside the layer's CUDA graph (the capture)
  eager,    // those outside it (the steps that replay the graphs)
};

// Transformer Engine per-layer graphs, the implementation modeled here.
bool uses_te_layer_graphs(const TrainingConfig& training);

// _layer_is_graphable: whether a decoder (or MTP) layer of this kind is captured: a Mamba
// layer with `mamba` in the scope, a TransformerLayer with attention under `attn`, with a MoE
// under `moe`/`moe_router`/`moe_preprocess`, with a dense MLP under `mlp`; every layer with
// no scope.
bool layer_graphed(const NormalizedConfig& normalized, LayerKind kind);

// Whether a saved tensor of `module` in such a layer lies inside its graph
// (TransformerLayer._get_submodules_under_cudagraphs; a Mamba layer is graphed whole).
bool module_graphed(const NormalizedConfig& normalized, ModuleKind module, LayerKind kind);

// The keep-or-drop test of a GraphPart for one saved tensor.
bool in_graph_part(const NormalizedConfig& normalized, GraphPart part, ModuleKind module,
                   LayerKind kind);

// Bytes the graphs keep allocated on pipeline rank `pp_rank` for the whole run: one static
// input set per (graphed layer, micro-batch) whose forward is captured before an earlier
// one's backward frees its set, the cached rotary embedding, and one static gradient-output
// set per output signature.
double graph_static_bytes(const NormalizedConfig& normalized, int pp_rank);

}  // namespace megamem
