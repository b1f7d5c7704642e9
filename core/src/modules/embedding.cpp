// Module spec: the input embedding (megatron/core/models/common/embeddings/
// language_model_embedding.py), and Gemma 4's per-layer embeddings beside it.
//   parameters: word embeddings [padded vocab x h] /TP (vocab parallel; with PP its own
//     bucket when tied to the output layer or shared with MTP), learned absolute position
//     embeddings [max positions x h] replicated. With per-layer embeddings of width P
//     (Megatron-Bridge gemma/modeling_gemma4.py _attach_ple_modules, on the first stage only):
//     per_layer_embedding [vocab x layers·P] /TP (a VocabParallelEmbedding over the unpadded
//     vocabulary), per_layer_model_proj [layers·P x h] /TP (ColumnParallelLinear, no bias) and
//     per_layer_proj_norm (P, a Gemma4RMSNorm).
//   saved: the embedding dropout's 1-byte mask of the SP-sharded output (the output itself is
//     layer 0's saved input). With per-layer embeddings (_compute_per_layer_inputs): the
//     projection's input, the scaled decoder input; the projection norm's fp32 intermediates
//     (12 bytes per element and 8 per row, as torch_rms_norms.cpp prices _gemma4_rms_norm: the
//     norm's input is not kept); and per_layer_inputs [tokens x layers x P], which every
//     layer's product with its gate output keeps through a view of its slice. All on this
//     rank's sequence shard (scatter_to_sequence_parallel_region under SP), outside any layer's
//     checkpoint (_gemma4_checkpointed_forward passes per_layer_inputs in), so recompute frees
//     none of it.
//   FLOPs: none (a lookup; training.py counts no per-layer embedding projection).
#include "module_spec.hpp"

namespace megamem {
namespace {

constexpr double kTorchNormBytesPerElement = 3 * 4;  // torch_rms_norms.cpp
constexpr double kTorchNormBytesPerRow = 2 * 4;

void per_layer_embedding_params(const NormalizedConfig& n, ParamSink& sink) {
  const ModelConfig& m = n.config.model;
  const std::int64_t tp = n.config.parallel.tensor_parallel;
  const std::int64_t width = std::int64_t{m.num_layers} * m.per_layer_input_size;
  sink.embedding_or_output(ModuleKind::word_embedding, m.vocab_size / tp * width, false, false);
  sink.linear(ModuleKind::word_embedding, m.hidden_size * width / tp, 0);
  sink.tensor(ModuleKind::word_embedding, m.per_layer_input_size);  // RMSNorm: a weight
}

}  // namespace

void embedding_params(const NormalizedConfig& n, bool shared, ParamSink& sink) {
  const ModelConfig& m = n.config.model;
  const std::int64_t tp = n.config.parallel.tensor_parallel;
  sink.embedding_or_output(ModuleKind::word_embedding, n.padded_vocab_size * m.hidden_size / tp,
                           true, shared);
  if (m.position_embedding == PositionEmbedding::learned_absolute) {
    sink.embedding_or_output(ModuleKind::position_embedding,
                             std::int64_t{m.max_position_embeddings} * m.hidden_size, false, false);
  }
  if (m.per_layer_input_size > 0) per_layer_embedding_params(n, sink);
}

double embedding_saved_bytes(const ModelConfig& m, const ActivationShape& s) {
  const double dropout = s.sp_tokens * s.h * s.dropout_mask;
  if (m.per_layer_input_size <= 0) return dropout;
  const double rows = s.sp_tokens * m.num_layers;
  const double elements = rows * m.per_layer_input_size;
  return dropout + s.sp_tokens * s.h * s.act + elements * (kTorchNormBytesPerElement + s.act) +
         rows * kTorchNormBytesPerRow;
}

}  // namespace megamem
