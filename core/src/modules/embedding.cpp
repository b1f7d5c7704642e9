// Module spec: the input embedding (megatron/core/models/common/embeddings/
// language_model_embedding.py).
//   parameters: word embeddings [padded vocab x h] /TP (vocab parallel; with PP its own
//     bucket when tied to the output layer or shared with MTP), learned absolute position
//     embeddings [max positions x h] replicated.
//   saved: the embedding dropout's 1-byte mask of the SP-sharded output (the output itself is
//     layer 0's saved input).
//   FLOPs: none (a lookup).
#include "module_spec.hpp"

namespace megamem {

void embedding_params(const NormalizedConfig& n, bool shared, ParamSink& sink) {
  const ModelConfig& m = n.config.model;
  const std::int64_t tp = n.config.parallel.tensor_parallel;
  sink.embedding_or_output(ModuleKind::word_embedding, n.padded_vocab_size * m.hidden_size / tp,
                           true, shared);
  if (m.position_embedding == PositionEmbedding::learned_absolute) {
    sink.embedding_or_output(ModuleKind::position_embedding,
                             std::int64_t{m.max_position_embeddings} * m.hidden_size, false, false);
  }
}

double embedding_saved_bytes(const ActivationShape& s) {
  return s.sp_tokens * s.h * s.dropout_mask;
}

}  // namespace megamem
