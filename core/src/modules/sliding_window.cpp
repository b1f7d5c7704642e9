// Sliding-window attention (--window-size W,0 with --window-attn-skip-freq, an integer or a
// 0/1 list per layer): which layers attend within a window and how many keys a query then sees
// (megatron/core/transformer/utils.py is_layer_window_attention; TE DotProductAttention takes
// window_size per layer from megatron/core/extensions/transformer_engine.py).
//   parameters and saved tensors: none of its own. Flash and cuDNN attention save the same Q,
//     K, V, output and softmax statistics with a window; unfused attention still builds the
//     s x s scores and masks them, so memory does not change.
//   FLOPs: a windowed layer's query attends min(i, W) earlier keys and itself, W + 1 - W(W+1)/2s
//     on average, against s/2 under the full causal mask. training.py
//     num_floating_point_operations counts every layer as full causal, and so do the model
//     FLOPs (MFU) here; the step time's attention kernels (GQA and MLA) use the windowed count.
//   Where windowed layers have their own heads, groups or head dimension (Megatron-Bridge's
//   Step35DecoderLayer overrides them from sliding_attention_setting), those layers are
//   LayerKind::window_dense / window_moe and the attention module builds their shape.
#include "modules/sliding_window.hpp"

#include <cstddef>

namespace megamem {

bool layer_is_windowed(const ModelConfig& model, int layer_index) {
  if (model.window_size <= 0) return false;
  const auto index = static_cast<std::size_t>(layer_index);
  if (!model.window_attn_pattern.empty()) {
    return index < model.window_attn_pattern.size() && model.window_attn_pattern[index] != 0;
  }
  if (model.window_attn_skip_freq <= 0) return true;
  return (layer_index + 1) % model.window_attn_skip_freq != 0;  // layer numbers are 1-based
}

namespace {

// A windowed layer's query attends min(i, W) earlier keys and itself.
double windowed_keys(double w, double seq) { return w + 1.0 - w * (w + 1.0) / (2.0 * seq); }

}  // namespace

double attended_keys(const ModelConfig& model, LayerKind kind, double seq) {
  if (!window_attention_differs(model)) return mean_attended_keys(model, seq);
  const double w = model.window_size;
  return layer_kind_is_window_shaped(kind) && w < seq ? windowed_keys(w, seq) : seq / 2.0;
}

double mean_attended_keys(const ModelConfig& model, double seq) {
  const double full = seq / 2.0;  // training.py's causal average
  const double w = model.window_size;
  if (model.window_size <= 0 || model.num_layers <= 0 || w >= seq) return full;
  const double windowed = windowed_keys(w, seq);
  int windowed_layers = 0;
  for (int i = 0; i < model.num_layers; ++i) windowed_layers += layer_is_windowed(model, i);
  const double share = static_cast<double>(windowed_layers) / model.num_layers;
  return share * windowed + (1.0 - share) * full;
}

bool window_attention_differs(const ModelConfig& model) {
  if (model.window_size <= 0) return false;
  const AttentionShape window = attention_shape(model, LayerKind::window_dense);
  return window.heads != model.num_attention_heads ||
         window.query_groups != model.num_query_groups || window.kv_channels != model.kv_channels;
}

AttentionShape attention_shape(const ModelConfig& model, LayerKind kind) {
  const auto or_else = [](int set, int value) { return set > 0 ? set : value; };
  AttentionShape shape{model.num_attention_heads, model.num_query_groups, model.kv_channels, 0, 0};
  if (layer_kind_is_window_shaped(kind)) {
    shape.heads = or_else(model.window_num_attention_heads, shape.heads);
    shape.query_groups = or_else(model.window_num_query_groups, shape.query_groups);
    shape.kv_channels = or_else(model.window_kv_channels, shape.kv_channels);
  }
  shape.v_channels = or_else(model.v_channels, shape.kv_channels);
  if (model.attention_output_gate) shape.gate_rows = shape.heads * shape.kv_channels;
  if (model.head_wise_attn_gate) shape.gate_rows = shape.heads;
  return shape;
}

}  // namespace megamem
