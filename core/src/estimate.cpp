// estimate(): places layers, counts each chunk's parameters, prices them, and sums ranks.
#include "megamem/estimate.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>

#include "megamem/units.hpp"
#include "memory/activations.hpp"
#include "memory/cuda_graphs.hpp"
#include "memory/deferred_embedding_wgrad.hpp"
#include "memory/fsdp_memory.hpp"
#include "memory/parameter_count.hpp"
#include "memory/persistent_buffers.hpp"
#include "memory/runtime_overheads.hpp"
#include "memory/static_memory.hpp"
#include "schedule/layer_placement.hpp"
#include "schedule/timeline.hpp"

namespace megamem {
namespace {

// Top-level node name of a tensor within its chunk.
std::string top_level_name(const ParamTensor& tensor) {
  if (tensor.mtp) return "mtp " + std::to_string(tensor.layer);
  if (tensor.layer >= 0) {
    return "layer " + std::to_string(tensor.layer) + (tensor.moe_layer ? " (MoE)" : "");
  }
  switch (tensor.module) {
    case ModuleKind::word_embedding:
    case ModuleKind::position_embedding:
      return "embedding";
    default:
      return module_kind_name(tensor.module);
  }
}

void add_bytes(ModuleMemory& node, std::int64_t params, double weight, double gradient,
               double optimizer, bool expert) {
  node.params += params;
  node.weight_bytes += static_cast<std::uint64_t>(round_to_int64(weight));
  node.gradient_bytes += static_cast<std::uint64_t>(round_to_int64(gradient));
  node.optimizer_bytes += static_cast<std::uint64_t>(round_to_int64(optimizer));
  node.expert = node.expert || expert;
}

// The child of `block` named `name`, appended (empty) the first time it is asked for; the
// reference holds until the next call adds a child.
ModuleMemory& child_named(ModuleMemory& block, const std::string& name) {
  auto child = std::find_if(block.children.begin(), block.children.end(),
                            [&](const ModuleMemory& c) { return c.name == name; });
  if (child != block.children.end()) return *child;
  return block.children.emplace_back(ModuleMemory{name, 0, false, 0, 0, 0, 0, {}});
}

// Bytes per element of a tensor on this GPU: FSDP's shards, or the DDP buffers with the
// distributed optimizer's sharded states.
ShardedTensorBytes sharded_tensor_bytes(const NormalizedConfig& normalized,
                                        const ParamTensor& tensor) {
  if (uses_fsdp(normalized)) return fsdp_tensor_bytes(normalized, tensor);
  const ParamBytes bytes = param_bytes(normalized, tensor);
  const auto shard = static_cast<double>(optimizer_shard_group(normalized, tensor.expert));
  return {bytes.weight + bytes.fp8_weight_copies, bytes.gradient, bytes.optimizer_state / shard};
}

// The chunk's module tree: top-level blocks in model order (embedding, layer i, final norm,
// MTP, output layer), each with its modules; DDP padding as its own entry so the tree adds
// up to the chunk totals.
ModuleMemory build_module_tree(const NormalizedConfig& normalized,
                               const std::vector<ParamTensor>& tensors,
                               const ChunkStaticBytes& chunk, int vpp_chunk) {
  ModuleMemory root;
  root.name = "chunk " + std::to_string(vpp_chunk);
  std::string current;
  for (const ParamTensor& tensor : tensors) {
    const std::string top = top_level_name(tensor);
    if (root.children.empty() || top != current) {
      root.children.push_back(ModuleMemory{top, 0, false, 0, 0, 0, 0, {}});
      current = top;
    }
    ModuleMemory& block = root.children.back();
    const ShardedTensorBytes bytes = sharded_tensor_bytes(normalized, tensor);
    const auto numel = static_cast<double>(tensor.elements());
    const double weight = bytes.weight * numel;
    const double gradient = bytes.gradient * numel;
    const double optimizer = bytes.optimizer * numel;
    const bool leaf_block = tensor.layer < 0 && !tensor.mtp;
    if (!leaf_block) {
      const std::string module = module_kind_name(tensor.module);
      ModuleMemory& child = child_named(block, module);
      add_bytes(child, tensor.elements(), weight, gradient, optimizer, tensor.expert);
    }
    add_bytes(block, tensor.elements(), weight, gradient, optimizer, tensor.expert);
    add_bytes(root, tensor.elements(), weight, gradient, optimizer, tensor.expert);
  }
  // Whatever the per-tensor sums miss is DDP padding (and rounding): show it, never hide it.
  if (chunk.weight_bytes > root.weight_bytes || chunk.gradient_bytes > root.gradient_bytes ||
      chunk.optimizer_bytes > root.optimizer_bytes) {
    ModuleMemory padding{"ddp_padding", 0, false, 0, 0, 0, 0, {}};
    padding.weight_bytes = chunk.weight_bytes - std::min(chunk.weight_bytes, root.weight_bytes);
    padding.gradient_bytes =
        chunk.gradient_bytes - std::min(chunk.gradient_bytes, root.gradient_bytes);
    padding.optimizer_bytes =
        chunk.optimizer_bytes - std::min(chunk.optimizer_bytes, root.optimizer_bytes);
    root.weight_bytes += padding.weight_bytes;
    root.gradient_bytes += padding.gradient_bytes;
    root.optimizer_bytes += padding.optimizer_bytes;
    root.children.push_back(std::move(padding));
  }
  return root;
}

// The activation profiles of a top-level block named "layer N[ (MoE)]" or "mtp D"
// (top_level_name): a decoder layer's, or an MTP depth's inner layers'.
std::vector<const LayerActivations*> block_profiles(const NormalizedConfig& normalized,
                                                    const LayerProfiles& profiles,
                                                    const std::string& name) {
  std::vector<const LayerActivations*> out;
  if (name.rfind("mtp ", 0) == 0) {
    for (const LayerActivations& inner : profiles.mtp) out.push_back(&inner);
    return out;
  }
  int layer = normalized.config.model.num_layers - 1;
  std::from_chars(name.data() + 6, name.data() + name.size(), layer);
  out.push_back(&profile_of_layer(normalized, profiles, layer));
  return out;
}

// Adds each decoder/MTP layer module's saved bytes per micro-batch (after recompute and
// offload) to the tree.
void add_activation_bytes(const NormalizedConfig& normalized, const LayerProfiles& profiles,
                          ModuleMemory& root) {
  const RecomputeModules active = active_recompute_modules(normalized);
  for (ModuleMemory& block : root.children) {
    if (block.children.empty()) continue;
    for (const LayerActivations* layer : block_profiles(normalized, profiles, block.name)) {
      for (const SavedActivation& item : layer->saved) {
        if (item.freed_by.intersects(active) || item.on_host) continue;
        const std::string module = module_kind_name(item.module);
        ModuleMemory& child = child_named(block, module);
        const auto bytes = static_cast<std::uint64_t>(round_to_int64(item.bytes));
        child.activation_bytes += bytes;
        block.activation_bytes += bytes;
      }
    }
    // Kimi K3's Attention Residuals mixes depend on the layer's index (attention_residuals.cpp).
    if (kimi_k3_layers(normalized.config.model) && block.name.rfind("layer ", 0) == 0) {
      int layer = 0;
      std::from_chars(block.name.data() + 6, block.name.data() + block.name.size(), layer);
      const auto bytes = static_cast<std::uint64_t>(round_to_int64(
          attn_res_saved_bytes(normalized.config.model, activation_shape(normalized), layer)));
      child_named(block, "attention_residuals").activation_bytes += bytes;
      block.activation_bytes += bytes;
    }
  }
}

// A chunk's parameter memory, summed into its rank.
void add_chunk_static(const StageStaticBytes& stage_bytes, RankMemory& rank) {
  const ChunkStaticBytes& bytes = stage_bytes.chunk;
  rank.dense_params += bytes.dense_params;
  rank.expert_params += bytes.expert_params;
  rank.weight_bytes += bytes.weight_bytes;
  rank.gradient_bytes += bytes.gradient_bytes;
  rank.optimizer_bytes += bytes.optimizer_bytes;
  rank.host_optimizer_bytes += bytes.host_optimizer_bytes;
  rank.optimizer_step_bytes += bytes.optimizer_step_bytes;
  rank.lazy_optimizer_bytes += bytes.lazy_optimizer_bytes;
  rank.lazy_expert_optimizer_bytes += bytes.lazy_expert_optimizer_bytes;
  rank.fp8_weight_copy_bytes += bytes.fp8_weight_copy_bytes;
  rank.persistent_buffer_bytes +=
      static_cast<std::uint64_t>(round_to_int64(stage_bytes.expert_bias_bytes));
}

// Each stage's parameters priced as the DDP buffers and the optimizer hold them, summed
// into its rank (and its module tree when asked for).
// Returns each stage's FSDP working set (empty without FSDP).
std::vector<FsdpWorkingSet> add_stage_static_memory(const NormalizedConfig& n,
                                                    const EstimateOptions& options,
                                                    Estimate& result) {
  const LayerTemplates templates = layer_templates(n);
  StageParams params;
  std::vector<ParamTensor> tensors;
  RankTeKeys te_keys(static_cast<int>(result.ranks.size()), n.stages.size());  // TE dummy wgrads
  std::vector<FsdpWorkingSet> fsdp_working;  // per stage, with FSDP
  StageStaticCache cache;
  for (const StagePlacement& stage : n.stages) {
    stage_params(n, stage, templates, params);
    // distributed_data_parallel.py: only the first pipeline rank's first chunk buckets.
    const bool bucketing = stage.pp_rank == 0 && stage.vpp_chunk == 0;
    const StageStaticBytes& stage_bytes =
        cached_stage_static_bytes(n, params.blocks, bucketing, stage.has_loss, cache);
    const ChunkStaticBytes& bytes = stage_bytes.chunk;
    if (uses_fsdp(n)) {
      fsdp_working.push_back(fsdp_working_set(n, params.blocks, stage.vpp_chunk == 0));
    }

    RankMemory& rank = result.ranks[static_cast<std::size_t>(stage.pp_rank)];
    rank.pp_rank = stage.pp_rank;
    ChunkMemory chunk{.vpp_chunk = stage.vpp_chunk,
                      .first_layer = stage.first_layer,
                      .num_layers = stage.num_layers,
                      .num_mtp_layers = stage.num_mtp_layers,
                      .has_embedding = stage.has_embedding,
                      .has_output_layer = stage.has_loss,
                      .dense_params = bytes.dense_params,
                      .expert_params = bytes.expert_params,
                      .modules = {}};
    if (options.module_tree) {
      tensors.clear();
      append_stage_tensors(n, stage, tensors);
      chunk.modules = build_module_tree(n, tensors, bytes, stage.vpp_chunk);
    }
    rank.chunks.push_back(std::move(chunk));

    add_chunk_static(stage_bytes, rank);
    rank.fp8_master_casts.add_chunk(bytes.fp8_master_cast_bytes, bytes.fp8_master_cast_expert_bytes,
                                    stage.vpp_chunk == 0);
    te_keys.add_stage(rank.pp_rank, stage_bytes.te_keys);
  }
  // TE's dummy weight gradients are cached once per distinct weight shape on the rank.
  const std::vector<std::uint64_t> te_bytes = te_keys.rank_bytes(n);
  for (RankMemory& rank : result.ranks) {
    rank.persistent_buffer_bytes += te_bytes[static_cast<std::size_t>(rank.pp_rank)];
  }
  add_fsdp_persistent_pools(fsdp_working, n.stages, result.ranks);
  return fsdp_working;
}

// A rank's chunks (indexed by VPP chunk) as each phase of the run sees them: the training
// step, and with Transformer Engine CUDA graphs (cuda_graphs.hpp) the capture and the eager
// warm-up steps before it (empty when the phase does not happen).
struct RankChunks {
  std::span<const ChunkActivations> step;
  std::span<const ChunkActivations> capture;
  std::span<const ChunkActivations> warmup;
};

// Every rank's RankChunks, each phase in one list (rank r's VPP chunk c at r * v + c) rather
// than a list per rank and phase.
struct RunChunks {
  std::size_t per_rank = 1;  // VPP chunks per rank
  std::vector<ChunkActivations> step;
  std::vector<ChunkActivations> capture;
  std::vector<ChunkActivations> warmup;

  RankChunks of_rank(int pp_rank) const {
    const std::size_t first = static_cast<std::size_t>(pp_rank) * per_rank;
    auto part = [&](const std::vector<ChunkActivations>& phase) {
      return phase.empty() ? std::span<const ChunkActivations>()
                           : std::span<const ChunkActivations>(phase).subspan(first, per_rank);
    };
    return {part(step), part(capture), part(warmup)};
  }
};

// The larger of a phase's peak and the peak so far.
void keep_higher(RankPeak& peak, const RankPeak& phase) {
  if (phase.peak_allocated_bytes <= peak.peak_allocated_bytes) return;
  const int inflight = std::max(peak.max_inflight, phase.max_inflight);
  peak = phase;
  peak.max_inflight = inflight;
}

// With graphs the steps replaying them hold only the eager parts' activations; the capture
// holds the graphed parts' in the pipeline order, on top of the graphs' static buffers; the
// --cuda-graph-warmup-steps eager steps before it hold everything but those buffers. The
// last stage's deferred output-layer wgrad inputs add to the passes; the pipeline flush
// drains them (schedules.py finish_embedding_wgrad_compute) before the optimizer step.
// The first iteration (RunPeaks::first) is the warm-up's first eager step where graphs have
// one, else the step itself, without the optimizer state its own step then creates.
struct RunPeaks {
  RankPeak steady;
  RankPeak first;
};

// The eager steps before CUDA graphs are captured (cuda_graph_warmup_steps), reported
// against the static memory of the steps that follow (graphs included).
RankPeak eager_warmup_peak(const NormalizedConfig& n, int pp_rank,
                           std::span<const ChunkActivations> warmup_chunks, double static_bytes,
                           double graph_bytes, std::vector<ScheduleOp>& schedule,
                           bool offload_margins) {
  RankPeak warmup = simulate_rank(n, pp_rank, warmup_chunks, static_bytes - graph_bytes, nullptr,
                                  schedule, offload_margins);
  warmup.transient_bytes =
      std::max(0.0, warmup.peak_allocated_bytes - static_bytes - warmup.activation_bytes);
  return warmup;
}

// A resume's checkpoint load (memory-model.md §5). With the distributed optimizer and no
// state yet, load_state_dict allocates torch.empty moments (and TE's master remainders) for
// every shard as the checkpoint's scaffold and hands them to the inner optimizer, whose TE
// FusedAdam load_state_dict makes its own state with _initialize_state and copies into it
// while the scaffold is referenced (megatron/core/optimizer/distrib_optimizer.py,
// transformer_engine/pytorch/optimizers/fused_adam.py). The chained optimizer loads the dense
// group, then the experts'. Present then: the DDP buffers and the fp32 main shards; not yet
// TE's FP8 weight copies and the buffers of the first forward and backward. Megatron-Bridge's
// #4936 (training/optim.py) loads a run without the precision-aware optimizer with one copy.
void set_resume_load(const NormalizedConfig& n, RankMemory& rank) {
  const OptimizerConfig& opt = n.config.optimizer;
  if (!opt.use_distributed_optimizer || opt.kind != OptimizerKind::adam ||
      opt.optimizer_cpu_offload || uses_fsdp(n)) {
    return;
  }
  const std::uint64_t base = rank.weight_bytes - rank.fp8_weight_copy_bytes + rank.gradient_bytes +
                             rank.optimizer_bytes - rank.lazy_optimizer_bytes;
  const std::uint64_t expert = rank.lazy_expert_optimizer_bytes;
  const std::uint64_t dense = rank.lazy_optimizer_bytes - expert;
  rank.resume_load_single_copy_bytes = base + dense + expert;
  rank.resume_load_peak_bytes = base + std::max(2 * dense, dense + 2 * expert);
}

// schedule: simulate_rank's buffer.
RunPeaks rank_run_peak(const NormalizedConfig& n, const RankChunks& chunks, double static_bytes,
                       double graph_bytes, RankMemory& rank, bool timeline,
                       std::vector<ScheduleOp>& schedule) {
  const auto step = static_cast<double>(rank.optimizer_step_bytes);
  const auto lazy = static_cast<double>(rank.lazy_optimizer_bytes);
  RankPeak peak = simulate_rank(n, rank.pp_rank, chunks.step, static_bytes,
                                timeline ? &rank.timeline : nullptr, schedule);
  // Fine-grained offloading keeps no margin in its first iteration (simulate_rank).
  const bool margins = std::any_of(chunks.step.begin(), chunks.step.end(), has_offload_margin);
  RankPeak first = margins ? simulate_rank(n, rank.pp_rank, chunks.step, static_bytes, nullptr,
                                           schedule, /*offload_margins=*/false)
                           : peak;
  if (!chunks.capture.empty()) {
    // The capture runs before the next train_step's zero_grad (megatron/training/training.py,
    // Bridge training/train.py: create_cudagraphs after cuda_graph_warmup_steps steps), so the
    // last step's fp32 grad copy is still allocated; with no warm-up no step has run yet.
    const double held = n.config.training.cuda_graph_warmup_steps > 0 ? step : 0.0;
    const RankPeak captured =
        simulate_rank(n, rank.pp_rank, chunks.capture, static_bytes + held, nullptr, schedule);
    keep_higher(peak, captured);
    keep_higher(first, captured);
  }
  if (!chunks.warmup.empty()) {
    const RankPeak warmup = eager_warmup_peak(n, rank.pp_rank, chunks.warmup, static_bytes,
                                              graph_bytes, schedule, true);
    keep_higher(peak, warmup);
    first = margins ? eager_warmup_peak(n, rank.pp_rank, chunks.warmup, static_bytes, graph_bytes,
                                        schedule, false)
                    : warmup;
  }
  first.peak_allocated_bytes -= lazy;
  if (std::any_of(rank.chunks.begin(), rank.chunks.end(),
                  [](const ChunkMemory& c) { return c.has_output_layer; })) {
    add_deferred_embedding_wgrad(n, static_bytes, peak);
    add_deferred_embedding_wgrad(n, static_bytes - lazy, first);
  }
  const auto step_peak = static_cast<double>(
      optimizer_step_peak_bytes(rank.optimizer_step_bytes, rank.fp8_master_casts,
                                n.config.optimizer.overlap_param_gather_with_optimizer_step));
  add_optimizer_step(static_bytes, step, step_peak, peak, timeline ? &rank.timeline : nullptr);
  add_optimizer_step(static_bytes, step, step_peak, first, nullptr);
  return {peak, first};
}

// What every rank's peak reads that is the same for all ranks, and the buffer each rank's
// schedule is written to (allocated once per estimate, not once per rank).
struct RankShared {
  double fixed_bytes = 0;  // C_fixed and Megatron's global memory buffer, per GPU
  const std::vector<FsdpWorkingSet>& fsdp_working;
  std::vector<DeviceOverhead> device_overheads;
  std::vector<ScheduleOp> schedule;
};

// One rank's step: persistent buffers, its chunks' activations through the schedule, the
// peak and the runtime overheads on top.
void add_rank_peak(const NormalizedConfig& n, const EstimateOptions& options,
                   const LayerProfiles& profiles, RankShared& shared, const RankChunks& chunks,
                   RankMemory& rank) {
  const double fixed_bytes = shared.fixed_bytes;
  const double graph_bytes = graph_static_bytes(n, rank.pp_rank);
  rank.cuda_graph_bytes = static_cast<std::uint64_t>(round_to_int64(graph_bytes));
  rank.persistent_buffer_bytes +=
      static_cast<std::uint64_t>(round_to_int64(fixed_bytes)) + rank.cuda_graph_bytes;
  rank.static_bytes =
      rank.weight_bytes + rank.gradient_bytes + rank.optimizer_bytes + rank.persistent_buffer_bytes;
  double per_microbatch = 0;
  for (const ChunkActivations& chunk : chunks.step) per_microbatch += chunk.saved_bytes;
  rank.activation_bytes_per_microbatch = static_cast<std::uint64_t>(round_to_int64(per_microbatch));
  RunPeaks run = rank_run_peak(n, chunks, static_cast<double>(rank.static_bytes), graph_bytes, rank,
                               options.timeline, shared.schedule);
  RankPeak& peak = run.steady;
  // FSDP's unsharded model at initialization (fsdp_memory.hpp), before either.
  add_fsdp_initialization(shared.fsdp_working, n.stages, rank.pp_rank, peak);
  add_fsdp_initialization(shared.fsdp_working, n.stages, rank.pp_rank, run.first);
  rank.peak_allocated_bytes = static_cast<std::uint64_t>(round_to_int64(peak.peak_allocated_bytes));
  rank.first_iteration_peak_allocated_bytes =
      static_cast<std::uint64_t>(round_to_int64(run.first.peak_allocated_bytes));
  rank.activation_peak_bytes = static_cast<std::uint64_t>(round_to_int64(peak.activation_bytes));
  rank.activation_peak_bytes =
      std::min(rank.activation_peak_bytes, rank.peak_allocated_bytes - rank.static_bytes);
  rank.transient_bytes = rank.peak_allocated_bytes - rank.static_bytes - rank.activation_peak_bytes;
  rank.host_activation_bytes =
      static_cast<std::uint64_t>(round_to_int64(peak.host_activation_bytes));
  rank.max_inflight_microbatches = peak.max_inflight;
  set_resume_load(n, rank);
  set_device_memory(n, shared.device_overheads, rank);
  if (options.module_tree) {
    for (ChunkMemory& chunk : rank.chunks) add_activation_bytes(n, profiles, chunk.modules);
  }
}

// Each rank's chunks through the phases of the run (RankChunks), FSDP's working set added.
RunChunks rank_chunks(const NormalizedConfig& n, const LayerProfiles& profiles,
                      const std::vector<FsdpWorkingSet>& fsdp_working) {
  const bool graphs = uses_te_layer_graphs(n.config.training);
  const bool warmup = graphs && n.config.training.cuda_graph_warmup_steps > 0;
  const LayerProfiles eager = graphs ? layer_profiles(n, GraphPart::eager) : LayerProfiles{};
  const LayerProfiles graphed = graphs ? layer_profiles(n, GraphPart::graphed) : LayerProfiles{};
  ChunkActivationsMemo whole_chunks(n, profiles), eager_chunks(n, eager),
      graphed_chunks(n, graphed);
  whole_chunks.restart(n, profiles, n.stages.size());  // its walks in one allocation
  RunChunks out;
  out.per_rank = static_cast<std::size_t>(n.config.parallel.virtual_stages_per_pipeline_rank);
  out.step.resize(n.stages.size());
  if (graphs) out.capture.resize(n.stages.size());
  if (warmup) out.warmup.resize(n.stages.size());
  for (std::size_t s = 0; s < n.stages.size(); ++s) {
    const StagePlacement& stage = n.stages[s];
    const std::size_t at = static_cast<std::size_t>(stage.pp_rank) * out.per_rank +
                           static_cast<std::size_t>(stage.vpp_chunk);
    // Written in place: a ChunkActivations is a dozen doubles and a vector.
    out.step[at] = (graphs ? eager_chunks : whole_chunks).of(stage);
    add_fsdp_working_set(fsdp_working, n.stages, s, out.step[at]);
    if (!graphs) continue;
    out.capture[at] = graphed_chunks.of(stage);
    if (warmup) {
      out.warmup[at] = whole_chunks.of(stage);
      add_fsdp_working_set(fsdp_working, n.stages, s, out.warmup[at]);
    }
  }
  return out;
}

// A rank's resume load on the device: its reserve and the same memory outside the allocator
// as in training (memory-model.md 6).
double resume_device_bytes(const RankMemory& rank, std::uint64_t load_bytes) {
  return resume_reserved_bytes(rank, load_bytes) + static_cast<double>(rank.peak_total_bytes) -
         static_cast<double>(rank.peak_reserved_bytes);
}

// A run whose training step fits its card but whose resume's checkpoint load, as Megatron-Core
// loads it (set_resume_load), would not; with what Megatron-Bridge's one copy needs. Empty
// otherwise.
std::string resume_warning(const Estimate& result) {
  const std::uint64_t capacity = result.verdict.capacity_bytes;
  const RankMemory* worst = nullptr;
  double worst_bytes = 0;
  for (const RankMemory& rank : result.ranks) {
    if (rank.peak_total_bytes > capacity) return {};  // training does not fit anyway
    if (rank.resume_load_peak_bytes <= rank.peak_allocated_bytes) continue;
    const double device = resume_device_bytes(rank, rank.resume_load_peak_bytes);
    if (device > static_cast<double>(capacity) && device > worst_bytes) {
      worst = &rank;
      worst_bytes = device;
    }
  }
  if (!worst) return {};
  const double one_copy = resume_device_bytes(*worst, worst->resume_load_single_copy_bytes);
  char text[360];
  std::snprintf(text, sizeof text,
                "resuming from a checkpoint with its optimizer state needs about %.2f GiB on PP "
                "rank %d, more than the card's %.2f GiB, as Megatron-Core loads the Adam state "
                "(twice); Megatron-Bridge loads a run without the precision-aware optimizer with "
                "one copy: %.2f GiB (docs/memory-model.md)",
                to_gib(worst_bytes), worst->pp_rank, to_gib(capacity), to_gib(one_copy));
  return text;
}

}  // namespace

double resume_reserved_bytes(const RankMemory& rank, std::uint64_t load_bytes) {
  const auto allocated = static_cast<double>(rank.peak_allocated_bytes);
  if (allocated <= 0) return 0;
  return static_cast<double>(load_bytes) * static_cast<double>(rank.peak_reserved_bytes) /
         allocated;
}

Expected<Estimate> estimate(const Config& config, const EstimateOptions& options) {
  auto normalized = normalize(config);
  if (!normalized) return normalized.error();

  Estimate result;
  result.normalized = std::move(normalized).value();
  const NormalizedConfig& n = result.normalized;
  result.warnings = n.warnings;
  const int pp = n.config.parallel.pipeline_parallel;
  result.totals = count_model_totals(n);
  result.ranks.resize(static_cast<std::size_t>(pp));
  const std::vector<FsdpWorkingSet> fsdp_working = add_stage_static_memory(n, options, result);

  // Persistent allocations: C_fixed per GPU and Megatron's global memory buffer.
  RankShared shared{.fixed_bytes = workspace_bytes(n) + global_buffer_bytes(n),
                    .fsdp_working = fsdp_working,
                    .device_overheads = device_overheads(n),
                    .schedule = {}};
  const LayerProfiles profiles = layer_profiles(n);
  const RunChunks chunks = rank_chunks(n, profiles, fsdp_working);
  double largest = -1;
  for (RankMemory& rank : result.ranks) {
    add_rank_peak(n, options, profiles, shared, chunks.of_rank(rank.pp_rank), rank);
    if (static_cast<double>(rank.peak_total_bytes) > largest) {
      largest = static_cast<double>(rank.peak_total_bytes);
      result.limiting_pp_rank = rank.pp_rank;
    }
  }
  result.verdict = verdict_of(result);
  if (std::string warning = resume_warning(result); !warning.empty()) {
    result.warnings.push_back(std::move(warning));
  }
  for (std::string assumption :
       {hottest_expert_rank_assumption(n), fsdp_main_grads_assumption(n)}) {
    if (!assumption.empty()) result.assumptions.push_back(std::move(assumption));
  }
  return result;
}

}  // namespace megamem
