// Kimi K3's layer (Megatron-Bridge kimi/kimi_k3_layers.py, kimi_k3_pipeline.py): which
// decoder layers are Kimi Delta Attention and how many Attention Residuals snapshots each
// sublayer mixes; read by the rules, the module specs and the pipeline's p2p size.
#pragma once

#include <cstddef>

#include "megamem/config.hpp"

namespace megamem {

// Whether decoder layer `index` (0-based) has KDA (KimiK3Attention.is_kda).
inline bool layer_is_kda(const ModelConfig& model, std::size_t index) {
  return index < model.kda_layer_pattern.size() && model.kda_layer_pattern[index] != 0;
}

// Whether the layers are KimiK3TransformerLayer (Attention Residuals; kimi_k3_spec.py).
inline bool kimi_k3_layers(const ModelConfig& model) { return model.attn_res_block_size > 0; }

// Snapshots in the bank when layer `index` (0-based) starts (kimi_k3_pipeline.py
// bank_num_rows: ceil(index / block)); the layer appends one more before its attention when
// index % block == 0 (KimiK3TransformerLayer.forward is_block_write_layer).
inline int attn_res_rows_before(const ModelConfig& model, int index) {
  const int block = model.attn_res_block_size;
  return block > 0 && index > 0 ? (index + block - 1) / block : 0;
}
inline int attn_res_rows_after_write(const ModelConfig& model, int index) {
  const int block = model.attn_res_block_size;
  return block > 0 ? index / block + 1 : 0;
}

}  // namespace megamem
