// Module spec: Attention Residuals, Kimi K3's residual stream (Megatron-Bridge
// src/megatron/bridge/models/kimi/kimi_k3_layers.py KimiK3TransformerLayer, kimi_k3_ops.py
// attn_res_aggregate, kimi_k3_pipeline.py). Instead of adding each sublayer's output to one
// residual, the layer keeps a running sum (prefix) and a bank of snapshots: layer i appends
// the prefix to the bank when i % block == 0 (block = attn_res_block_size), and each sublayer's
// input is a softmax over the bank's rows and the prefix, scored by an RMS-normalised dot
// product with a learned vector, then the sublayer's norm.
//   parameters (replicated, _mark_tp_replicated): per layer self_attention_res_norm and
//     mlp_res_norm [h] and the score vectors self_attention_res_proj and mlp_res_proj [1 x h]
//     (nn.Linear without bias); on the last layer output_attn_res_norm and _proj, counted with
//     the final norm (output_loss.cpp).
//   saved per mix of `rows` rows (bank + prefix) and token of the hidden states (SP shard), by
//     autograd through attn_res_aggregate's plain PyTorch: rows.float() (fp32, kept by square,
//     the rsqrt product and the final weighted sum), the rsqrt per row (fp32), the normalised
//     rows (fp32, kept by the product with the learned score weight) and the softmax output
//     (fp32, kept by softmax and the weighted sum): 4 (2 rows h + 2 rows) bytes. The mix's
//     bf16 output is the sublayer norm's input, counted by the attention and MLP specs. The
//     attention mix runs only where the bank is not empty (every layer but the first), the MLP
//     mix on every layer, and the last layer mixes once more into the output (output_norm
//     Identity), whose result the final norm saves.
//   pipeline: a stage boundary sends the prefix and the bank flattened together
//     (pack_stage_boundary), [tokens x (1 + bank rows) h]; the receiving stage keeps that
//     tensor as its input for the backward (the schedule's input_tensors) beside the copies
//     unpack_stage_boundary makes.
//   FLOPs: the mixes' elementwise work is not in Megatron-Bridge's flop_utils.py; not counted.
#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) {
  return kimi_k3_layers(c.model) && (layer_kind_has_attention(c.kind) || layer_kind_is_gdn(c.kind));
}

void params(const ModuleContext& c, ParamSink& sink) {
  const std::int64_t h = c.model.hidden_size;
  sink.norm(ModuleKind::input_layernorm, h);      // self_attention_res_norm
  sink.tensor(ModuleKind::input_layernorm, h);    // self_attention_res_proj
  sink.norm(ModuleKind::pre_mlp_layernorm, h);    // mlp_res_norm
  sink.tensor(ModuleKind::pre_mlp_layernorm, h);  // mlp_res_proj
}

// Layer-dependent: ChunkWalk adds attn_res_saved_bytes per decoder layer (activations.cpp).
void saved(const ModuleContext&, const ActivationShape&, SavedSink&) {}

void flops(const ModuleContext&, ModuleFlops&) {}

// One attn_res_aggregate over `rows` rows, per micro-batch on this rank.
double mix_saved_bytes(const ActivationShape& s, int rows) {
  return 4.0 * s.sp_tokens * (2.0 * rows * s.h + 2.0 * rows);
}

}  // namespace

double attn_res_saved_bytes(const ModelConfig& m, const ActivationShape& s, int layer) {
  if (!kimi_k3_layers(m)) return 0;
  const int before = attn_res_rows_before(m, layer);
  double bytes = mix_saved_bytes(s, attn_res_rows_after_write(m, layer) + 1);
  if (before > 0) bytes += mix_saved_bytes(s, before + 1);
  if (layer == m.num_layers - 1)
    bytes += mix_saved_bytes(s, attn_res_rows_after_write(m, layer) + 1);
  return bytes;
}

double attn_res_stage_input_bytes(const ModelConfig& m, const ActivationShape& s, int first_layer) {
  if (!kimi_k3_layers(m) || first_layer <= 0) return 0;
  return s.act * s.sp_tokens * s.h * (1.0 + attn_res_rows_before(m, first_layer));
}

MEGAMEM_LAYER_MODULE_SPEC(kAttentionResidualsSpec, "Attention Residuals", LayerBlock::attention);

}  // namespace megamem
