// Module spec: a multi-token-prediction layer's own tensors around its transformer layer
// (megatron/core/transformer/multi_token_prediction.py, MultiTokenPredictionLayer). The
// transformer layer inside is the last decoder layer's kind, from the layer module specs.
//   parameters: enorm and hnorm (replicated), eh_proj [h x 2h] /TP without bias (with
//     hyper-connections Megatron-LM dev's e_proj and h_proj [h x h] each), the final norm
//     (replicated) and with hyper-connections its own hc_head. Dense bucket.
//   saved: enorm/hnorm inputs and outputs and eh_proj's concatenated input [N/SP, h] each
//     in the activation dtype: 6 elements per token and hidden unit; with hyper-connections
//     2 + 3n (hnorm and the output contraction on the n streams).
//   FLOPs: training.py mtp: 2 x (3h norms + 2h x h eh_proj) per token.
#include "module_spec.hpp"

namespace megamem {

void mtp_projection_params(const NormalizedConfig& n, ParamSink& sink) {
  const std::int64_t h = n.config.model.hidden_size;
  const std::int64_t tp = n.config.parallel.tensor_parallel;
  sink.norm(ModuleKind::mtp_projection, h);  // enorm
  sink.norm(ModuleKind::mtp_projection, h);  // hnorm
  if (n.config.model.enable_mhc_connections) {
    // Megatron-LM dev: with hyper-connections separate e_proj and h_proj [h x h] /TP.
    sink.tensor(ModuleKind::mtp_projection, h * h / tp, true);
    sink.tensor(ModuleKind::mtp_projection, h * h / tp, true);
  } else {
    sink.tensor(ModuleKind::mtp_projection, 2 * h * h / tp, true);  // eh_proj, no bias
  }
}

void mtp_final_norm_params(const NormalizedConfig& n, ParamSink& sink) {
  sink.norm(ModuleKind::mtp_final_layernorm, n.config.model.hidden_size);
  // Megatron-LM dev: each MTP layer contracts its streams with its own hc_head.
  hyper_connection_head_params(n.config.model, ModuleKind::mtp_final_layernorm, sink);
}

// With hyper-connections (Megatron-LM dev multi_token_prediction.py _concat_embeddings):
// enorm's input and output (e_proj's input), hnorm's n-stream input and output (h_proj's
// input, per stream), and _postprocess's learned contraction keeps the n-stream output.
double mtp_saved_bytes(const ModelConfig& m, const ActivationShape& s) {
  const double elements = m.enable_mhc_connections ? 2.0 + 3.0 * m.mhc_num_residual_streams : 6.0;
  return elements * s.act * s.sp_tokens * s.h;
}

double mtp_extra_flops(const ModelConfig& m) {
  const double h = m.hidden_size;
  return 2.0 * (3.0 * h + 2.0 * h * h);
}

}  // namespace megamem
