// Module spec: a multi-token-prediction layer's own tensors around its transformer layer
// (megatron/core/transformer/multi_token_prediction.py, MultiTokenPredictionLayer). The
// transformer layer inside is the last decoder layer's kind, from the layer module specs.
//   parameters: enorm and hnorm (replicated), eh_proj [h x 2h] /TP without bias (with
//     hyper-connections Megatron-LM dev's e_proj and h_proj [h x h] each), the final norm
//     (replicated) and with hyper-connections its own hc_head. Dense bucket.
//   saved: enorm/hnorm inputs and outputs and eh_proj's concatenated input [N/SP, h] each
//     in the activation dtype: 6 elements per token and hidden unit.
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

double mtp_saved_bytes(const ActivationShape& s) { return 6 * s.act * s.sp_tokens * s.h; }

double mtp_extra_flops(const ModelConfig& m) {
  const double h = m.hidden_size;
  return 2.0 * (3.0 * h + 2.0 * h * h);
}

}  // namespace megamem
