// Module spec: the final norm, the output layer and the loss (megatron/core/models/gpt/
// gpt_model.py, megatron/core/tensor_parallel/cross_entropy.py,
// megatron/core/fusions/fused_cross_entropy.py, TE's fused cross entropy).
//   parameters: final norm (replicated); output layer [padded vocab x h] /TP, column
//     parallel, no bias (skipped where tied to a local embedding; its own bucket when shared).
//   saved: final norm input and output ([N/SP, h] each, activation dtype); a logit
//     soft-cap's tanh output [N, V/TP] (Megatron-Bridge Gemma 2 / 4); the cross entropy's
//     fp32 softmax [N, V/TP] (TE's fused CE keeps the logits instead).
//   FLOPs: training.py: 2h x padded vocab per token for the logits.
#include "module_spec.hpp"

namespace megamem {

// Hyper-connections' learned output contraction where the final norm is (Megatron-LM dev
// transformer_block.py: hc_head_fn [n x n h], hc_head_base [n], hc_head_scale [1], kept in
// fp32; hyper_connection.py learned_output_contract). Main's HyperConnectionModule
// output_contract averages the streams without parameters; DeepSeek-V4 needs dev's.
void hyper_connection_head_params(const ModelConfig& m, ModuleKind kind, ParamSink& sink) {
  if (!m.enable_mhc_connections) return;
  const std::int64_t n = m.mhc_num_residual_streams;
  sink.tensor(kind, n * n * m.hidden_size);
  sink.tensor(kind, n);
  sink.tensor(kind, 1);
}

void final_norm_params(const NormalizedConfig& n, ParamSink& sink) {
  sink.norm(ModuleKind::final_layernorm, n.config.model.hidden_size);
  // Kimi K3: the last layer's output mix, output_attn_res_norm and output_attn_res_proj [h]
  // each (kimi_k3_layers.py KimiK3TransformerLayer; attention_residuals.cpp).
  if (kimi_k3_layers(n.config.model)) {
    sink.norm(ModuleKind::final_layernorm, n.config.model.hidden_size);
    sink.tensor(ModuleKind::final_layernorm, n.config.model.hidden_size);
  }
  hyper_connection_head_params(n.config.model, ModuleKind::final_layernorm, sink);
}

void output_layer_params(const NormalizedConfig& n, bool shared, ParamSink& sink) {
  const std::int64_t tp = n.config.parallel.tensor_parallel;
  sink.embedding_or_output(ModuleKind::output_layer,
                           n.padded_vocab_size * n.config.model.hidden_size / tp, true, shared);
}

LossActivations loss_activations(const NormalizedConfig& n, const ActivationShape& s) {
  const TrainingConfig& t = n.config.training;
  // tensor_parallel/cross_entropy.py: fp32 upcast of the 16-bit logits, softmax in place
  // and saved; the 16-bit logits die after the forward. In fp32 training .float() returns
  // the logits themselves: no copy, and no cast of the gradient back. TE's fused CE (up to
  // TE 2.17) keeps the logits and writes the gradient into them.
  const double logits = s.tokens * static_cast<double>(n.padded_vocab_size) / s.tp;
  const double upcast_copy = s.act < 4 ? 4 : 0;
  const double grad_cast = s.act < 4 ? s.act : 0;
  const bool te_ce = t.cross_entropy == CrossEntropyImpl::te_fused;
  // fusions/fused_cross_entropy.py (--cross-entropy-loss-fusion, impl native) runs the same
  // steps inside jit-fused functions, where the in-place subtract/exp and the in-place
  // gradient become new tensors: one more fp32 logits copy at both peaks. [calibrate]
  // Megatron CI (gpt3_mcore_te_tp2_pp2_cross_entropy_loss_fusion): +4 bytes per logit.
  const double jit_copy = t.cross_entropy == CrossEntropyImpl::native_fused ? 4 : 0;
  LossActivations out;
  out.logits_bytes = s.act * logits;
  out.norm_saved = 2 * s.act * s.sp_tokens * s.h;  // final norm input and output
  // learned_output_contract keeps the n-stream input it contracts (hyper-connections).
  const ModelConfig& m = n.config.model;
  if (m.enable_mhc_connections)
    out.norm_saved += s.act * s.sp_tokens * s.h * m.mhc_num_residual_streams;
  out.loss_saved = te_ce ? s.act * logits : 4 * logits;
  out.loss_forward_transient = te_ce ? s.act * logits : (s.act + upcast_copy + jit_copy) * logits;
  // Backward: the logits gradient cast back to the logits' dtype, on top of the saved softmax.
  out.loss_backward_transient = te_ce ? 0 : (grad_cast + jit_copy) * logits;
  // Output layer backward: the logits gradient and, without gradient-accumulation
  // fusion, the weight gradient of the output layer (params dtype), after the softmax is freed.
  const double output_wgrad = t.gradient_accumulation_fusion
                                  ? 0
                                  : s.act * static_cast<double>(n.padded_vocab_size) * s.h / s.tp;
  out.output_backward = (te_ce ? out.loss_saved : s.act * logits) + output_wgrad;
  if (n.config.model.final_logit_softcapping > 0) {
    // Megatron-Bridge gemma2_provider.py logit_softcapping, cap * tanh(logits / cap), on
    // the output layer's logits (Gemma2OutputLayer, Gemma4OutputLayer): tanh keeps its output
    // for backward; the division and the multiplication by a number keep nothing. While
    // tanh runs, the logits, logits / cap and tanh's output are alive (then the logits,
    // tanh's output and the product); in backward the product's and tanh's gradients.
    out.softcap_saved = s.act * logits;
    out.softcap_forward_transient = 3 * s.act * logits;
    out.softcap_backward_transient = 2 * s.act * logits;
  }
  return out;
}

double logits_flops(const NormalizedConfig& n) {
  return 2.0 * n.config.model.hidden_size * static_cast<double>(n.padded_vocab_size);
}

}  // namespace megamem
