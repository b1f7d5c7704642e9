// The step-time model split for reuse: StepTimeModel holds what one parallel layout fixes
// (model shape, group sizes and bandwidths, layers per pipeline stage, parameters per rank);
// StepVariant holds what the planner varies within a layout (micro-batch size, recompute,
// offload). estimate_step_time() and the planner both go through StepTimeModel::evaluate, so
// a planned candidate's time equals estimate_step_time() of its config.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "megamem/step_time.hpp"
#include "memory/activations.hpp"
#include "modules/module_spec.hpp"
#include "schedule/layer_placement.hpp"

namespace megamem {

struct StepVariant {
  int micro_batch_size = 1;
  std::int64_t num_microbatches = 1;
  RecomputeGranularity recompute = RecomputeGranularity::none;
  RecomputeModules recompute_modules;  // selective granularity: the modules it re-runs
  // Full granularity: uniform re-runs every layer, block the first recompute_num_layers of
  // each chunk (megatron/core/transformer/transformer_block.py _checkpointed_forward).
  RecomputeMethod recompute_method = RecomputeMethod::uniform;
  int recompute_num_layers = 1;
  bool distribute_saved_activations = false;
  // Bytes fine-grained offloading copies to the host per layer and micro-batch of size 1
  // (scaled by micro_batch_size).
  double offloaded_bytes_dense = 0;
  double offloaded_bytes_moe = 0;
  double optimizer_offload_fraction = 0;  // 0 = optimizer state on the GPU
};

// The variant a normalized config describes (offloaded bytes from the activation model).
StepVariant step_variant(const NormalizedConfig& normalized);

// Offloaded bytes per layer and micro-batch for micro_batch_size 1 (dense, MoE), given a
// config normalized with its offload settings.
void offloaded_layer_bytes(const NormalizedConfig& normalized, double& dense, double& moe);
// The same from the config's layer profiles, when they are at hand (the planner's evaluations).
void offloaded_layer_bytes(const NormalizedConfig& normalized, const LayerProfiles& profiles,
                           double& dense, double& moe);

class StepTimeModel {
 public:
  // normalized: any micro-batch size of the layout; stages: place_layers() of it.
  StepTimeModel(const NormalizedConfig& normalized, const std::vector<StagePlacement>& stages,
                const StepTimeConfig& config);

  StepTime evaluate(const StepVariant& variant) const;

 private:
  // One decoder layer of a kind, one micro-batch, on one GPU (seconds).
  struct LayerCost {
    double forward = 0;  // GEMMs and attention
    double backward = 0;
    double attention_forward = 0;  // flash attention alone (core_attn recompute, CP overlap)
    double attention_backward = 0;
    // Exposed communication of the forward and the backward.
    double tp_forward = 0, tp_backward = 0;
    double cp_forward = 0, cp_backward = 0;
    double ep_forward = 0, ep_backward = 0;
    // Forwards that selective recompute re-runs (compute + their exposed communication).
    double mlp_forward = 0;     // dense MLP
    double moe_forward = 0;     // router, routed and shared experts, dispatch and combine
    double shared_forward = 0;  // shared experts
    double mla_up_forward = 0;
    double moe_act_forward = 0;      // element-wise, from HBM
    double layernorm_forward = 0;    // element-wise, from HBM
    double elementwise_forward = 0;  // norms, residuals, rotary, activations, permutes
    double stash_gather = 0;         // --distribute-saved-activations all-gather at recompute
    double full_recompute = 0;       // the whole forward with its communication
  };
  // Per-rank totals for one micro-batch (all its chunks).
  struct RankTime {
    double compute = 0, recompute = 0, tp = 0, cp = 0, ep = 0, pp = 0, offload = 0;
    double forward = 0, backward = 0;  // compute only, for the DP overlap windows
    double total() const { return compute + recompute + tp + cp + ep + pp + offload; }
    void add_layers(const LayerCost& layer, double count);
  };
  struct Chunk {
    int pp_rank = 0;
    std::array<int, kLayerKindCount> layers{};  // decoder layers by LayerKind
    std::vector<LayerKind> order;               // the same in forward order
    int mtp_layers = 0;
    bool embedding = false;
    bool loss = false;
  };

  void set_bandwidths();
  void count_chunks(const std::vector<StagePlacement>& stages);
  void count_parameters(const std::vector<StagePlacement>& stages);
  // One layer's tokens and the GEMM times of its attention and MLP (layer_cost's parts).
  struct LayerShape {
    double tokens = 0, sp_tokens = 0, heads = 0, hidden_bytes = 0;
  };
  struct AttentionGemms {
    double projections = 0, up_projections = 0, core_flops = 0;
    double kv_bytes_per_token = 0, tp_gather_bytes = 0;
    // Column/row-parallel pairs in the block, each with its own SP gather and reduce-scatter:
    // two in Falcon-H1's parallel layer (Mamba in_proj/out_proj and linear_qkv/linear_proj).
    double tp_mixers = 1;
  };
  struct MlpGemms {
    double mlp = 0, routed = 0, shared = 0, router = 0;
    double moe_act_bytes = 0, act_bytes = 0, permute_bytes = 0;
  };
  LayerShape layer_shape(double micro_batch) const;
  AttentionGemms attention_gemms(LayerKind kind, const LayerShape& shape) const;
  AttentionGemms mla_gemms(const LayerShape& shape) const;
  AttentionGemms mamba_gemms(const LayerShape& shape) const;
  AttentionGemms gdn_gemms(const LayerShape& shape) const;
  AttentionGemms kda_gemms(const LayerShape& shape) const;
  AttentionGemms mixer_gemms(LayerKind kind, const LayerShape& shape) const;
  MlpGemms mlp_gemms(bool moe, const LayerShape& shape) const;
  double tp_times(bool mixer_block, bool mlp_block, const LayerShape& shape,
                  const AttentionGemms& attention, LayerCost& cost) const;
  void ep_times(const LayerShape& shape, LayerCost& cost) const;
  LayerCost layer_cost(LayerKind kind, double micro_batch) const;
  double recompute_s(const LayerCost& layer, LayerKind kind, const StepVariant& variant) const;
  // Layers of each kind whose forward the variant re-runs, per rank: the rank's layers
  // (kind_count_ itself, no copy: the planner prices ~10^5 variants), or under the block
  // method the ones counted into `block`.
  using KindCounts = std::vector<std::array<double, kLayerKindCount>>;
  const KindCounts& recomputed_layers(const StepVariant& variant, KindCounts& block) const;
  double offload_bytes(LayerKind kind, const StepVariant& variant) const;
  double offload_s(const LayerCost& layer, double bytes_per_sample, double micro_batch) const;
  void optimizer_step(const StepVariant& variant, StepTimeBreakdown& breakdown) const;
  double recomputed_flops_per_token(const StepVariant& variant) const;
  void throughput(const StepVariant& variant, StepTime& out) const;
  double gemm_s(double m, double n, double k) const;
  double collective_s(double group, double bytes, double bandwidth) const;
  double all_to_all_s(double tokens, double token_bytes, double topk, bool deepep) const;

  const NormalizedConfig* n_;
  StepTimeConfig cfg_;
  std::vector<Chunk> chunks_;
  int pp_ = 1;
  int vpp_ = 1;
  // Group sizes and bandwidths (bytes/s, efficiency applied).
  double tp_ = 1, cp_ = 1, dp_ = 1, ep_ = 1, etp_ = 1, edp_ = 1;
  double tp_bw_ = 0, cp_bw_ = 0, dp_bw_ = 0, edp_bw_ = 0, pp_bw_ = 0, gather_bw_ = 0;
  double ep_intra_share_ = 0, ep_inter_share_ = 0;  // of the bytes an EP rank sends
  double ep_nodes_ = 1;                             // nodes one EP group spans
  double intra_bw_ = 0, inter_bw_ = 0;
  double peak_flops_ = 0;
  double gemm_flops_ = 0;  // peak x efficiency (x FP8 speed-up)
  // Parameters per GPU of each pipeline rank (dense: sharded over DP x CP; experts: EDP).
  std::vector<double> dense_params_;
  std::vector<double> expert_params_;
  double model_flops_per_sequence_ = 0;  // Megatron's count for one sequence
  // Decoder + MTP layers per rank, and in the whole model, by LayerKind.
  KindCounts kind_count_;
  std::array<double, kLayerKindCount> model_layers_{};
  ModuleFlops module_flops_;
  double grad_bytes_ = 4, param_bytes_ = 2;
  // What one micro-batch size fixes (prepare()); the planner evaluates many variants of one
  // size in a row.
  void prepare(int micro_batch) const;
  void add_chunk(const Chunk& chunk, double micro_batch, RankTime& rank) const;
  void data_parallel() const;
  mutable int cached_micro_batch_ = 0;
  mutable std::array<LayerCost, kLayerKindCount> cached_;  // per LayerKind the model has
  mutable std::vector<RankTime> base_;      // per rank, without recompute and offload
  mutable std::vector<double> dp_exposed_;  // per rank
  mutable std::vector<double> shard_;       // optimizer parameters per GPU of each rank
};

}  // namespace megamem
