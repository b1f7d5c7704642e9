// Sliding-window attention (sliding_window.cpp): which decoder layers attend within the
// window, how many keys a query sees on average, and the attention shape of a layer kind
// where windowed layers have their own (Megatron-Bridge's Step35DecoderLayer).
#pragma once

#include "megamem/estimate_types.hpp"

namespace megamem {

// Whether decoder layer `layer_index` (0-based) attends within the window.
bool layer_is_windowed(const ModelConfig& model, int layer_index);

// The keys a query attends on average over the decoder layers (s/2 without a window).
double mean_attended_keys(const ModelConfig& model, double seq);

// The keys a query attends on average in a layer of `kind`: where windowed layers are kinds
// of their own, W + 1 - W(W+1)/2s in those and s/2 in the others; else the mean over layers.
double attended_keys(const ModelConfig& model, LayerKind kind, double seq);

// Whether the windowed layers' attention shape differs from the full layers' (normalized
// ModelConfig: the window_* fields resolved).
bool window_attention_differs(const ModelConfig& model);

struct AttentionShape {
  int heads = 0;
  int query_groups = 0;
  int kv_channels = 0;  // the query and key head dimension
  int v_channels = 0;   // the value head dimension (ModelConfig::v_channels, else kv_channels)
  // The output gate's rows in linear_qkv: heads x kv_channels for attention_output_gate, one
  // per head for head_wise_attn_gate (Megatron-LM dev attention.py SelfAttention), else 0.
  int gate_rows = 0;
};

// The attention shape a layer of `kind` builds: the window_* fields for window_dense and
// window_moe, else the model's; the value head dimension is the model's v_channels in both
// (MiMoV2FlashSelfAttention gives every layer config.v_head_dim), the gate the model's.
AttentionShape attention_shape(const ModelConfig& model, LayerKind kind);

}  // namespace megamem
