// Module spec: norms on the outputs of the attention projection and of the MLP's fc2
// ("sandwich" norms; ModelConfig::post_sublayer_norms). Megatron-Bridge builds them as
// TERowParallelLinearLayerNorm (models/common/te_layers.py): the row-parallel linear, then a
// TENorm over its (reduce-scattered) output, for Gemma 2/3 (gemma/gemma3_provider.py) and
// EXAONE 4.0 (exaone/exaone4/exaone4_provider.py).
//   parameters: one norm of hidden_size per sublayer (replicated). Dense bucket.
//   saved: the norm's input, the linear's output on this rank's sequence shard; the MLP's is
//     inside mlp recompute's checkpoint and freed by it.
//   FLOPs: none counted (training.py counts no norms).
#include "module_spec.hpp"

namespace megamem {
namespace {

bool attention_present(const ModuleContext& c) {
  return c.model.post_sublayer_norms && layer_kind_has_attention(c.kind);
}

bool mlp_present(const ModuleContext& c) {
  return c.model.post_sublayer_norms && layer_kind_has_dense_mlp(c.kind);
}

void attention_params(const ModuleContext& c, ParamSink& sink) {
  sink.norm(ModuleKind::self_attention, c.model.hidden_size);
}

void mlp_params(const ModuleContext& c, ParamSink& sink) {
  sink.norm(ModuleKind::mlp, c.model.hidden_size);
}

void attention_saved(const ModuleContext&, const ActivationShape& s, SavedSink& sink) {
  sink.add("post-attention norm input (linear_proj output)", ModuleKind::self_attention,
           s.sp_tokens * s.h, s.act);
}

void mlp_saved(const ModuleContext&, const ActivationShape& s, SavedSink& sink) {
  sink.add("post-MLP norm input (fc2 output)", ModuleKind::mlp, s.sp_tokens * s.h, s.act,
           {RecomputeModule::mlp});
}

}  // namespace

extern const LayerModuleSpec kPostAttentionNormSpec = {"post-attention norm", LayerBlock::attention,
                                                       attention_present,     attention_params,
                                                       attention_saved,       no_flops};
extern const LayerModuleSpec kPostMlpNormSpec = {"post-MLP norm", LayerBlock::mlp, mlp_present,
                                                 mlp_params,      mlp_saved,       no_flops};

}  // namespace megamem
