// The estimator's result types: the normalized configuration, the layer placement, and what
// each pipeline rank holds (RankMemory, Estimate), and which CUDA-graph modes it models. The
// memory model's own files include this; the entry point that fills them is estimate.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/verdict.hpp"

namespace megamem {

// Which decoder layers, embedding, loss and MTP layers one (pipeline rank, virtual chunk)
// builds (megatron/core/transformer/transformer_block.py, get_num_layers_to_build).
struct StagePlacement {
  int pp_rank = 0;
  int vpp_chunk = 0;
  int num_layers = 0;   // decoder layers built on this stage
  int first_layer = 0;  // global index of the first of them
  int num_mtp_layers = 0;
  bool has_embedding = false;  // pre_process: word (and position) embedding
  bool has_loss = false;       // post_process: final norm, output layer, loss
};

// What one decoder layer is. A GPT layer has self-attention and an MLP (dense) or MoE; a hybrid
// model's layer (ModelConfig::hybrid_layer_pattern) is one of Mamba-2, attention (GQA for '*',
// MLA for '+'), MLP, MoE or a Gated DeltaNet mixer (megatron/core/models/hybrid/
// hybrid_block.py builds MambaLayer, TransformerLayer with only self_attention, MLPLayer,
// MoETransformerLayer or a TransformerLayer with only a GatedDeltaNet for 'M', '*' / '+', '-',
// 'E', 'G': gdn_mixer).
// A GPT model with Gated DeltaNet layers (ModelConfig::linear_attention_freq) builds them as
// TransformerLayers whose self_attention is a GatedDeltaNet, with the layer's MLP or MoE:
// gdn and gdn_moe (experimental_attention_variant_module_specs.py). A sliding-window layer
// whose attention has its own shape (ModelConfig::window_num_attention_heads, ...) is
// window_dense or window_moe. A DeepSeek-V4 layer (ModelConfig::csa_compress_ratios) whose
// attention compresses its keys builds a compressor (and at ratio 4 an indexer) the window-only
// layers lack: csa_* at ratio 4, hca_* at ratio 128; ratio 0 layers are dense or moe.
// Falcon-H1's 'P' layer (Megatron-Bridge falcon_h1/modeling_falconh1/falconh1_layer.py
// FalconH1Layer, placed by mamba_hybrid_layer_allocation.py Symbols.PARALLEL) is
// parallel_hybrid: one input norm feeding a Mamba-2 mixer and self-attention side by side,
// their scaled outputs summed, then a dense MLP.
enum class LayerKind : std::uint8_t {
  dense,
  moe,
  mamba,
  attention,
  mlp,
  moe_only,
  gdn,
  gdn_moe,
  gdn_mixer,
  window_dense,
  window_moe,
  parallel_hybrid,
  csa_dense,
  csa_moe,
  hca_dense,
  hca_moe,
  kv_shared_dense,
  kv_shared_window_dense
};
inline constexpr std::size_t kLayerKindCount = 18;

// One of the last ModelConfig::kv_shared_layers dense layers (Gemma 4 E2B/E4B), which take K
// and V from an earlier layer: kv_shared_window_dense where window_dense would be.
constexpr bool layer_kind_shares_kv(LayerKind kind) {
  return kind == LayerKind::kv_shared_dense || kind == LayerKind::kv_shared_window_dense;
}
constexpr bool layer_kind_is_window_shaped(LayerKind kind) {
  return kind == LayerKind::window_dense || kind == LayerKind::window_moe ||
         kind == LayerKind::kv_shared_window_dense;
}
// The compression ratio of a DeepSeek-V4 layer kind's attention (0: none).
constexpr int layer_kind_compress_ratio(LayerKind kind) {
  if (kind == LayerKind::csa_dense || kind == LayerKind::csa_moe) return 4;
  if (kind == LayerKind::hca_dense || kind == LayerKind::hca_moe) return 128;
  return 0;
}
constexpr bool layer_kind_has_attention(LayerKind kind) {
  return kind == LayerKind::dense || kind == LayerKind::moe || kind == LayerKind::attention ||
         layer_kind_is_window_shaped(kind) || layer_kind_compress_ratio(kind) > 0 ||
         kind == LayerKind::parallel_hybrid || layer_kind_shares_kv(kind);
}
// A Mamba-2 mixer: a hybrid 'M' layer, or beside attention in Falcon-H1's 'P' layer.
constexpr bool layer_kind_has_mamba(LayerKind kind) {
  return kind == LayerKind::mamba || kind == LayerKind::parallel_hybrid;
}
constexpr bool layer_kind_has_dense_mlp(LayerKind kind) {
  return kind == LayerKind::dense || kind == LayerKind::mlp || kind == LayerKind::gdn ||
         kind == LayerKind::window_dense || kind == LayerKind::parallel_hybrid ||
         kind == LayerKind::csa_dense || kind == LayerKind::hca_dense || layer_kind_shares_kv(kind);
}
constexpr bool layer_kind_is_moe(LayerKind kind) {
  return kind == LayerKind::moe || kind == LayerKind::moe_only || kind == LayerKind::gdn_moe ||
         kind == LayerKind::window_moe || kind == LayerKind::csa_moe || kind == LayerKind::hca_moe;
}
constexpr bool layer_kind_is_gdn(LayerKind kind) {
  return kind == LayerKind::gdn || kind == LayerKind::gdn_moe || kind == LayerKind::gdn_mixer;
}

// Config with every "0 = derived" field resolved and the derived sizes Megatron computes.
struct NormalizedConfig {
  Config config;                          // fields resolved (kv_channels, ffn, etp, ...)
  std::int64_t data_parallel = 1;         // W / (TP * PP * CP)
  std::int64_t expert_data_parallel = 1;  // W / (PP * EP * ETP)
  std::int64_t padded_vocab_size = 0;
  std::int64_t num_microbatches = 1;            // global_batch / (micro_batch * DP)
  bool sequence_parallel = false;               // effective (off at TP = 1)
  std::vector<std::uint8_t> moe_layer_pattern;  // resolved, one entry per decoder layer
  std::vector<LayerKind> layer_kinds;           // resolved, one entry per decoder layer
  // The layers inside one MTP depth (multi_token_prediction.py mtp_model_layer): the last
  // decoder layer's kind for a GPT model, the '/' part's symbols for a hybrid model (a nested
  // HybridStack). Empty without MTP.
  std::vector<LayerKind> mtp_layer_kinds;
  // A hybrid model's MTP inner stack is a HybridStack, not a GraphableMegatronModule: never
  // captured by TE's per-layer CUDA graphs (transformer/cuda_graphs.py _layer_is_graphable).
  bool mtp_layers_graphable = true;
  // Layer placement, computed once by the rule book: one entry per stage, indexed
  // vpp_chunk * pipeline_parallel + pp_rank (Megatron's stage order).
  std::vector<StagePlacement> stages;
  // Rules only one Megatron-LM version or one launcher enforces (the estimate still holds).
  std::vector<std::string> warnings;
};

// One node of the per-rank module tree (embedding, layer 5, self_attention, experts, ...).
struct ModuleMemory {
  std::string name;
  std::int64_t params = 0;  // parameters this GPU holds for the module
  bool expert = false;      // routed-expert parameters (sharded over expert-DP)
  std::uint64_t weight_bytes = 0;
  std::uint64_t gradient_bytes = 0;
  std::uint64_t optimizer_bytes = 0;
  std::uint64_t activation_bytes = 0;  // saved per micro-batch (decoder-layer modules)
  std::vector<ModuleMemory> children;
};

// One virtual pipeline chunk of a rank.
struct ChunkMemory {
  int vpp_chunk = 0;
  int first_layer = 0;  // global index of the first decoder layer
  int num_layers = 0;
  int num_mtp_layers = 0;
  bool has_embedding = false;
  bool has_output_layer = false;
  std::int64_t dense_params = 0;   // sharded over DP x CP by the distributed optimizer
  std::int64_t expert_params = 0;  // sharded over expert-DP
  ModuleMemory modules;            // empty unless EstimateOptions::module_tree
};

// One step of a rank's training-step timeline (memory-model.md 6.4).
struct TimelineEvent {
  enum class Kind { forward, backward, optimizer_step };
  Kind kind = Kind::forward;
  std::int64_t microbatch = 0;
  int vpp_chunk = 0;
  std::uint64_t allocated_after_bytes = 0;  // memory_allocated() after the operation
  std::uint64_t peak_during_bytes = 0;      // the highest point inside the operation
};

// "forward", "backward", "optimizer_step" (the JSON's timeline kinds).
constexpr std::string_view timeline_event_name(TimelineEvent::Kind kind) {
  switch (kind) {
    case TimelineEvent::Kind::forward:
      return "forward";
    case TimelineEvent::Kind::backward:
      return "backward";
    case TimelineEvent::Kind::optimizer_step:
      return "optimizer_step";
  }
  return "forward";
}

// One term of device memory outside PyTorch's caching allocator (memory-model.md 7.3):
// what nvidia-smi shows beyond torch.cuda.memory_reserved(). Names and sources are static text.
struct DeviceOverhead {
  std::string_view name;    // "cuda_context", "nccl_buffers", "deepep_buffers", ...
  std::uint64_t bytes = 0;  // per GPU
  std::string_view source;  // the file or document the size comes from
};

// Within the optimizer step only: the 16-bit copies of FP8 primary weights' fp32 master
// shards that Transformer Engine makes to cast them back (memory-model.md, "The step's FP8
// master casts"): all optimizers' (dense and routed experts), of those the routed experts',
// and the dense casts of the rank's first model chunk, which
// --overlap-param-gather-with-optimizer-step gives an optimizer of its own.
struct Fp8MasterCasts {
  std::uint64_t all_bytes = 0;
  std::uint64_t expert_bytes = 0;
  std::uint64_t first_chunk_dense_bytes = 0;

  // Adds a model chunk's casts; first_chunk: the chunk is its rank's first (VPP chunk 0).
  void add_chunk(std::uint64_t chunk_bytes, std::uint64_t chunk_expert_bytes, bool first_chunk) {
    all_bytes += chunk_bytes;
    expert_bytes += chunk_expert_bytes;
    if (first_chunk) first_chunk_dense_bytes += chunk_bytes - chunk_expert_bytes;
  }
};

// Everything one pipeline rank holds, per GPU.
struct RankMemory {
  int pp_rank = 0;
  std::vector<ChunkMemory> chunks;
  std::int64_t dense_params = 0;
  std::int64_t expert_params = 0;
  std::uint64_t weight_bytes = 0;
  std::uint64_t gradient_bytes = 0;
  std::uint64_t optimizer_bytes = 0;
  std::uint64_t persistent_buffer_bytes = 0;  // expert-bias buffers, workspaces, C_fixed
  // Of those, Transformer Engine CUDA graphs' static inputs and gradient outputs
  // (megatron/core/transformer/cuda_graphs.py; cuda_graphs.hpp).
  std::uint64_t cuda_graph_bytes = 0;
  std::uint64_t static_bytes = 0;          // allocated through forward and backward
  std::uint64_t host_optimizer_bytes = 0;  // optimizer state offloaded to the CPU
  // The fp32 grad copy the optimizer step makes of a 16-bit grad buffer: allocated in the
  // step, freed by the next zero_grad, so it is not in static_bytes and a step's peak is
  // static_bytes + this (memory-model.md, "The optimizer step").
  std::uint64_t optimizer_step_bytes = 0;
  Fp8MasterCasts fp8_master_casts;  // within the step only
  // Of optimizer_bytes: the state the optimizer creates at its first step (Adam's moments;
  // TE FusedAdam's masters where it owns them), absent through the first iteration.
  std::uint64_t lazy_optimizer_bytes = 0;
  // Of those, the routed experts' (the expert optimizer of Megatron's chained optimizer).
  std::uint64_t lazy_expert_optimizer_bytes = 0;
  // Of weight_bytes: Transformer Engine's cached FP8 weights, made at the first forward.
  std::uint64_t fp8_weight_copy_bytes = 0;
  // A resume's checkpoint load (memory-model.md §5, "A resume's checkpoint load"), 0 where
  // not estimated (no distributed Adam on the GPU): the Adam moments held twice, as
  // Megatron-Core with TE FusedAdam loads them, and once, as Megatron-Bridge's #4936 loads a
  // run without the precision-aware optimizer.
  std::uint64_t resume_load_peak_bytes = 0;
  std::uint64_t resume_load_single_copy_bytes = 0;

  // The step's peak (memory-model.md 7): at the worst operation of the timeline, the
  // saved activations of all in-flight micro-batches and that operation's transients.
  std::uint64_t activation_peak_bytes = 0;
  std::uint64_t transient_bytes = 0;
  std::uint64_t peak_allocated_bytes = 0;  // torch.cuda.max_memory_allocated()
  // max_memory_allocated() after the first iteration: its passes run without the lazy
  // optimizer state, which its optimizer step then creates (memory-model.md 5). A log
  // reporting memory "after 1 iterations" reads this; a run can pass it and fail later.
  std::uint64_t first_iteration_peak_allocated_bytes = 0;
  // torch.cuda.max_memory_reserved(): the caching allocator's segments at the peak, with its
  // block rounding and the cached blocks it cannot reuse (memory-model.md 7.2).
  std::uint64_t peak_reserved_bytes = 0;
  std::vector<DeviceOverhead> device_overheads;       // outside the allocator, itemized
  std::uint64_t runtime_overhead_bytes = 0;           // peak_total - peak_allocated
  std::uint64_t peak_total_bytes = 0;                 // what nvidia-smi shows: reserved + overheads
  std::uint64_t activation_bytes_per_microbatch = 0;  // all chunks, one micro-batch each
  std::uint64_t host_activation_bytes = 0;            // offloaded activations at the peak
  int max_inflight_microbatches = 0;                  // chunk-forwards outstanding at most
  std::vector<TimelineEvent> timeline;                // empty unless EstimateOptions::timeline
};

// What the step holds at most above static_bytes: the fp32 grad copy (every optimizer's, made
// before any steps) and the FP8 master casts of the largest optimizer, since Megatron's
// chained optimizer steps its optimizers one after the other (megatron/core/optimizer/
// optimizer.py ChainedOptimizer.step). They are the dense and the routed-expert optimizer;
// with --overlap-param-gather-with-optimizer-step the dense one is split into the first model
// chunk's and the other chunks' (optimizer/__init__.py get_megatron_optimizer).
inline std::uint64_t optimizer_step_peak_bytes(std::uint64_t step_bytes,
                                               const Fp8MasterCasts& casts,
                                               bool first_chunk_apart) {
  const std::uint64_t dense = casts.all_bytes - casts.expert_bytes;
  const std::uint64_t largest_dense =
      first_chunk_apart
          ? std::max(casts.first_chunk_dense_bytes, dense - casts.first_chunk_dense_bytes)
          : dense;
  return step_bytes + std::max(largest_dense, casts.expert_bytes);
}

// torch.cuda.memory_allocated() after an optimizer step, as Megatron's and Bridge's logs
// print it: static memory and the step's fp32 grad copy (freed by the next zero_grad).
inline std::uint64_t allocated_after_step_bytes(const RankMemory& rank) {
  return rank.static_bytes + rank.optimizer_step_bytes;
}

// torch.cuda.max_memory_allocated() as a log reports it "(after K iterations)": never reset, so
// after one iteration it is that iteration's peak, later the steady one (K = 0: not known).
inline std::uint64_t max_allocated_after_bytes(const RankMemory& rank, std::int64_t iterations) {
  return iterations == 1 ? rank.first_iteration_peak_allocated_bytes : rank.peak_allocated_bytes;
}

struct ModelTotals {
  std::int64_t params = 0;         // unique parameters, unpadded vocabulary, without MTP
  std::int64_t mtp_params = 0;     // MTP layers (eh_proj, norms, transformer layer)
  std::int64_t active_params = 0;  // with top-k of the routed experts, without MTP
  std::int64_t padded_params = 0;  // with the padded vocabulary, MTP included
};

// One row of the what-if table (what_if.hpp computes it).
struct WhatIfRow {
  std::string label;           // "selective: core_attn, mlp", "optimizer offload 50 %", ...
  std::string megatron_flags;  // the flags that select it
  bool current = false;        // the configuration as given
  bool valid = true;           // false: Megatron would refuse it (reason in error)
  std::string error;
  std::uint64_t peak_allocated_bytes = 0;  // of the limiting rank
  std::uint64_t peak_total_bytes = 0;
  std::int64_t saving_bytes = 0;  // current peak_total minus this one (positive saves)
  int limiting_pp_rank = 0;
  FitStatus status = FitStatus::fits;  // the row's own verdict (verdict.hpp)
  // The step-time model's step (step_time.hpp) and its change against the current setting
  // (0.05 = 5 % slower); 0 when the model cannot price it.
  double step_time_s = 0;
  double step_time_change = 0;
  std::string note;  // why memory moves the way it does, where that is not obvious
};

struct Estimate {
  NormalizedConfig normalized;
  ModelTotals totals;
  std::vector<RankMemory> ranks;  // one per pipeline rank
  int limiting_pp_rank = 0;       // rank with the largest peak_total_bytes
  std::vector<std::string> warnings;
  Verdict verdict;  // does it fit, with the error band of its features (verdict.hpp)
  // What the estimate takes where the configuration leaves memory open (the busiest expert
  // rank's share of routed tokens, ...), one sentence each.
  std::vector<std::string> assumptions;
  // Not filled by estimate(): what_if_options() (what_if.hpp) is its own call, which front
  // ends that show the table put here for the JSON output.
  std::vector<WhatIfRow> what_if;
};

// CUDA graphs of --cuda-graph-impl local (CudaGraphManager) or full_iteration: not modeled
// (normalize() warns; the validation runner leaves such runs out). Transformer Engine's
// per-layer graphs are (cuda_graphs.hpp).
bool cuda_graphs_unmodeled(const Config& config);

}  // namespace megamem
