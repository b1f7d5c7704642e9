// Sliding-window attention (--window-size W,0 with --window-attn-skip-freq): which layers
// attend within a window and how many keys a query then sees
// (megatron/core/transformer/utils.py is_layer_window_attention; TE DotProductAttention takes
// window_size per layer from megatron/core/extensions/transformer_engine.py).
//   parameters and saved tensors: none of its own. Flash and cuDNN attention save the same Q,
//     K, V, output and softmax statistics with a window; unfused attention still builds the
//     s x s scores and masks them, so memory does not change.
//   FLOPs: a windowed layer's query attends min(i, W) earlier keys and itself, W + 1 - W(W+1)/2s
//     on average, against s/2 under the full causal mask. training.py
//     num_floating_point_operations counts every layer as full causal, and so do the model
//     FLOPs (MFU) here; the step time's attention kernels (GQA and MLA) use the windowed count.
#include "module_spec.hpp"

namespace megamem {

bool layer_is_windowed(const ModelConfig& model, int layer_index) {
  if (model.window_size <= 0) return false;
  if (model.window_attn_skip_freq <= 0) return true;
  return (layer_index + 1) % model.window_attn_skip_freq != 0;  // layer numbers are 1-based
}

double mean_attended_keys(const ModelConfig& model, double seq) {
  const double full = seq / 2.0;  // training.py's causal average
  const double w = model.window_size;
  if (model.window_size <= 0 || model.num_layers <= 0 || w >= seq) return full;
  const double windowed = w + 1.0 - w * (w + 1.0) / (2.0 * seq);
  int windowed_layers = 0;
  for (int i = 0; i < model.num_layers; ++i) windowed_layers += layer_is_windowed(model, i);
  const double share = static_cast<double>(windowed_layers) / model.num_layers;
  return share * windowed + (1.0 - share) * full;
}

}  // namespace megamem
