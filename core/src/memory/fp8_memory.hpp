// FP8 training as Transformer Engine holds it: the bytes of a GEMM input saved in FP8, the
// FP8 copies TE keeps of each weight, and which decoder layers run in FP8 at all.
//
// Sources: TransformerEngine transformer_engine/pytorch/module/{linear,layernorm_linear,
// grouped_linear,base}.py (what is saved, the cached weight workspace),
// transformer_engine/pytorch/tensor/{float8_tensor,mxfp8_tensor,float8_blockwise_tensor,
// utils}.py (rowwise/columnwise data and scale-inverse tensors); Megatron-LM
// megatron/core/fp8_utils.py (is_first_last_bf16_layer, post_all_gather_processing),
// megatron/core/extensions/transformer_engine.py (is_first_microbatch) and
// megatron/core/distributed/param_and_grad_buffer.py (FP8 parameter buffers). The rules with
// their evidence are in docs/memory-model.md (FP8) and the research note fp8-moe.md.
#pragma once

#include "megamem/config.hpp"

namespace megamem {

// Bytes per element of a GEMM input TE saves for backward under `recipe`: one FP8 byte (only
// the rowwise or only the columnwise copy is kept) plus its share of the scale-inverse
// tensor. 2 (bf16) when `recipe` is none.
double fp8_saved_input_bytes_per_element(Fp8Recipe recipe);

// Bytes per weight parameter of an FP8 layer that TE keeps beside the weight itself, across
// micro-batches and steps: the quantized workspace of a 16-bit weight, or the extra
// columnwise copy of an FP8 parameter (fp8_param). gemm_any_layout: the GPU runs FP8 GEMMs in
// any layout (Blackwell), so tensor-scaled FP8 needs no transposed copy.
double fp8_weight_copy_bytes_per_param(Fp8Recipe recipe, bool fp8_param, bool gemm_any_layout);

// Bytes per parameter of the scale-inverse tensors of an FP8 weight's rowwise and columnwise
// copies (MXFP8: one E8M0 byte per 32 elements each; blockwise: one fp32 per 128x128 block).
double fp8_weight_scale_bytes_per_param(Fp8Recipe recipe);

// Bytes per parameter of the DDP param buffer holding FP8 parameters (--fp8-param-gather).
double fp8_param_buffer_bytes_per_param(Fp8Recipe recipe);

// Whether the run uses FP8 at all: a recipe, and Transformer Engine modules (Megatron's FP8
// goes through TE's fp8_autocast; fp8_utils.py get_fp8_context). Inline, as fp8_layer():
// an estimate asks for every layer of every stage walk.
inline bool fp8_enabled(const TrainingConfig& training) {
  return training.fp8_recipe != Fp8Recipe::none &&
         training.transformer_impl == TransformerImpl::transformer_engine;
}

// Whether decoder layer `layer` (global, 0-based) of `num_layers` runs in FP8: FP8 is on and
// the layer is not one of --first-last-layers-bf16's leading or trailing layers.
inline bool fp8_layer(const TrainingConfig& training, int num_layers, int layer) {
  if (!fp8_enabled(training)) return false;
  // fp8_utils.py is_first_last_bf16_layer: global layer indices, so no pipeline-stage check.
  return layer >= training.fp8_bf16_layers_at_start &&
         layer < num_layers - training.fp8_bf16_layers_at_end;
}

}  // namespace megamem
