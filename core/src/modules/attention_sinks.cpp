// Module spec: attention sinks, --softmax-type off-by-one or learnable (gpt-oss): one extra
// logit per head that every query row's softmax also normalises over
// (transformer_engine/pytorch/attention/dot_product_attention/dot_product_attention.py,
// softmax_offset; megatron/core/extensions/transformer_engine.py passes softmax_type).
//   parameters: learnable: softmax_offset [heads / TP] per layer (TP-sharded like the heads,
//     dense bucket); off-by-one keeps a zero buffer, no parameter.
//   saved: FusedAttention (cuDNN) keeps the same Q, K, V, output and fp32 softmax statistics
//     as without sinks (cpp_extensions/fused_attn.py aux_ctx_tensors), which the attention
//     spec already counts; UnfusedDotProductAttention appends the sink as a last score column
//     (backends.py: torch.cat to [b, h, sq, sk + 1]) and its softmax saves the probabilities
//     with it: one more bf16 column per row (freed by core_attn recompute). The sink's own
//     gradient is [heads] fp32, not counted.
//   The backend: FlashAttention has no sinks and --deterministic-mode disables FusedAttention
//     for them, leaving the unfused s x s path (attention_backend.cpp).
//   FLOPs: one logit per row (2 per query and head), left out as training.py leaves it out.
#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) { return c.model.softmax_type != SoftmaxType::vanilla; }

void params(const ModuleContext& c, ParamSink& sink) {
  if (c.model.softmax_type != SoftmaxType::learnable) return;
  sink.tensor(ModuleKind::self_attention,
              attention_shape(c.model, c.kind).heads / c.config.parallel.tensor_parallel);
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  if (!unfused_attention(c.config)) return;
  const double heads = attention_shape(c.model, c.kind).heads / s.tp;
  sink.add("attention probabilities, sink column", ModuleKind::self_attention,
           s.batch * heads * s.seq, s.act, {RecomputeModule::core_attn},
           {OffloadModule::core_attn});
}

void flops(const ModuleContext&, ModuleFlops&) {}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kAttentionSinksSpec, "attention sinks", LayerBlock::attention);

}  // namespace megamem
