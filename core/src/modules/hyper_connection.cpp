// Module specs: the two manifold-constrained hyper-connections of a transformer layer
// (--enable-mhc-connections: megatron/core/transformer/hyper_connection.py
// HyperConnectionModule; transformer_layer.py HyperConnectionTransformerLayer builds
// self_attention_hyper_connection and mlp_hyper_connection after its other modules). The
// residual stream is n = --mhc-num-residual-streams copies of the hidden state: each
// hyper-connection mixes them into the block's input (H_pre), and the block's output back
// into them (H_post) beside the mixed streams (H_res, Sinkhorn-projected).
//   parameters, each: mapping_proj, an nn.Linear [n^2 + 2n x n h] without bias; alpha_pre,
//     alpha_post, alpha_res [1]; bias [n^2 + 2n]. Plain PyTorch modules, whole on every rank
//     (not Transformer Engine linears, never FP8). Dense bucket.
//   saved, each, per token: the n-stream input [n h], one tensor that the mapping projection
//     (native_proj_rms), the aggregation (H_pre) and fused_h_res_h_post_bda (the residual)
//     all keep, split into views by BroadcastTensorFused; the block's output [h], which
//     h_post_bda keeps for H_post's gradient; the mixing coefficients: the projection
//     (n^2 + 2n) and its RMS factor (_compute_h's inputs), H_pre (aggregate), Sinkhorn's input
//     logits (SinkhornKnopp re-runs its iterations in backward) and H_res, H_post
//     (h_post_bda). With --recompute-modules mhc (MHCCheckpointManager,
//     CheckpointWithoutOutput) the aggregate, the input and pre-MLP norms and h_post_bda
//     discard their outputs: the n-stream inputs of the group's layers are recomputed.
//   FLOPs: left out (Megatron's count has no term; 2 n h (n^2 + 2n) per token each).
#include "module_spec.hpp"

namespace megamem {
namespace {

bool attention_present(const ModuleContext& c) {
  return c.model.enable_mhc_connections && layer_kind_has_attention(c.kind);
}

bool mlp_present(const ModuleContext& c) {
  return c.model.enable_mhc_connections &&
         (layer_kind_has_dense_mlp(c.kind) || layer_kind_is_moe(c.kind));
}

void hyper_connection_params(const ModelConfig& m, ModuleKind kind, ParamSink& sink) {
  const std::int64_t n = m.mhc_num_residual_streams;
  const std::int64_t mappings = n * n + 2 * n;
  sink.tensor(kind, mappings * n * m.hidden_size);  // mapping_proj
  for (int alpha = 0; alpha < 3; ++alpha) sink.tensor(kind, 1);
  sink.tensor(kind, mappings);  // bias
}

void hyper_connection_saved(const ModuleContext& c, const ActivationShape& s, ModuleKind kind,
                            SavedSink& sink) {
  const double n = c.model.mhc_num_residual_streams;
  sink.add("n-stream input (mapping, aggregate and residual)", kind, s.sp_tokens * n * s.h, s.act,
           {RecomputeModule::mhc});
  sink.add("block output (H_post input)", kind, s.sp_tokens * s.h, s.act);
  sink.add("mixing coefficients (projection, H_pre, H_res, H_post, Sinkhorn logits)", kind,
           s.sp_tokens * (3 * n * n + 4 * n + 1), s.act);
}

void attention_params(const ModuleContext& c, ParamSink& sink) {
  hyper_connection_params(c.model, ModuleKind::input_layernorm, sink);
}
void mlp_params(const ModuleContext& c, ParamSink& sink) {
  hyper_connection_params(c.model, ModuleKind::pre_mlp_layernorm, sink);
}
void attention_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  hyper_connection_saved(c, s, ModuleKind::input_layernorm, sink);
}
void mlp_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  hyper_connection_saved(c, s, ModuleKind::pre_mlp_layernorm, sink);
}
}  // namespace

extern const LayerModuleSpec kAttentionHyperConnectionSpec = {"attention hyper-connection",
                                                              LayerBlock::attention,
                                                              attention_present,
                                                              attention_params,
                                                              attention_saved,
                                                              no_flops};
extern const LayerModuleSpec kMlpHyperConnectionSpec = {
    "MLP hyper-connection", LayerBlock::mlp, mlp_present, mlp_params, mlp_saved, no_flops};

}  // namespace megamem
