// Module spec: a multi-token-prediction layer's own tensors around its transformer layer
// (megatron/core/transformer/multi_token_prediction.py, MultiTokenPredictionLayer). The
// transformer layer inside is the last decoder layer's kind, from the layer module specs.
//   parameters: enorm and hnorm (replicated), eh_proj [h x 2h] /TP without bias, the final
//     norm (replicated). Dense bucket.
//   saved: enorm/hnorm inputs and outputs and eh_proj's concatenated input [N/SP, h] each
//     in the activation dtype: 6 elements per token and hidden unit.
//   FLOPs: training.py mtp: 2 x (3h norms + 2h x h eh_proj) per token.
#include "module_spec.hpp"

namespace megamem {

void mtp_projection_params(const NormalizedConfig& n, ParamSink& sink) {
  const std::int64_t h = n.config.model.hidden_size;
  const std::int64_t tp = n.config.parallel.tensor_parallel;
  sink.norm(ModuleKind::mtp_projection, h);                       // enorm
  sink.norm(ModuleKind::mtp_projection, h);                       // hnorm
  sink.tensor(ModuleKind::mtp_projection, 2 * h * h / tp, true);  // eh_proj, no bias
}

void mtp_final_norm_params(const NormalizedConfig& n, ParamSink& sink) {
  sink.norm(ModuleKind::mtp_final_layernorm, n.config.model.hidden_size);
}

double mtp_saved_bytes(const ActivationShape& s) { return 6 * s.act * s.sp_tokens * s.h; }

double mtp_extra_flops(const ModelConfig& m) {
  const double h = m.hidden_size;
  return 2.0 * (3.0 * h + 2.0 * h * h);
}

}  // namespace megamem
