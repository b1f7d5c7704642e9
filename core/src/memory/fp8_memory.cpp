// FP8 bytes per element and per parameter; see fp8_memory.hpp.
#include "memory/fp8_memory.hpp"

namespace megamem {
namespace {

// Scale-inverse bytes per FP8 element of one (rowwise or columnwise) copy.
// MXFP8: one E8M0 byte per 32 elements (tensor/mxfp8_tensor.py, get_scale_shape).
constexpr double kMxfp8ScaleBytes = 1.0 / 32.0;
// Blockwise activations and gradients: one fp32 scale per 1x128 block; weights: one per
// 128x128 block (tensor/float8_blockwise_tensor.py, get_scale_shape).
constexpr double kBlockwise1dScaleBytes = 4.0 / 128.0;
constexpr double kBlockwise2dScaleBytes = 4.0 / (128.0 * 128.0);

}  // namespace

double fp8_saved_input_bytes_per_element(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::none:
      return 2.0;
    case Fp8Recipe::delayed:
    case Fp8Recipe::tensorwise:
      return 1.0;  // one fp32 scale per tensor
    case Fp8Recipe::mxfp8:
      return 1.0 + kMxfp8ScaleBytes;
    case Fp8Recipe::blockwise:
      return 1.0 + kBlockwise1dScaleBytes;
  }
  return 2.0;
}

double fp8_weight_copy_bytes_per_param(Fp8Recipe recipe, bool fp8_param, bool gemm_any_layout) {
  switch (recipe) {
    case Fp8Recipe::none:
      return 0.0;
    case Fp8Recipe::delayed:
    case Fp8Recipe::tensorwise:
      // float8_tensor.py: a Float8Tensor keeps rowwise _data and, where the GPU has only TN
      // FP8 GEMMs (before Blackwell), a _transpose for the columnwise usage. An FP8 parameter
      // gets that transpose after each all-gather (utils.py post_all_gather_processing).
      return (fp8_param ? 0.0 : 1.0) + (gemm_any_layout ? 0.0 : 1.0);
    case Fp8Recipe::mxfp8:
      // mxfp8_tensor.py: rowwise and columnwise data, each with its E8M0 scales; an MXFP8
      // parameter holds both itself (its all-gather borrows the grad buffer:
      // param_and_grad_buffer.py, shared_buffer).
      return 2.0 * (1.0 + kMxfp8ScaleBytes);
    case Fp8Recipe::blockwise:
      // float8_blockwise_tensor.py: rowwise and columnwise 128x128-scaled copies; an FP8
      // parameter's rowwise data is its param buffer slice and its columnwise copy is made
      // after each all-gather (_create_columnwise).
      return 2.0 * (1.0 + kBlockwise2dScaleBytes) - (fp8_param ? 1.0 : 0.0);
  }
  return 0.0;
}

double fp8_weight_scale_bytes_per_param(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::mxfp8:
      return 2.0 * kMxfp8ScaleBytes;
    case Fp8Recipe::blockwise:
      return 2.0 * kBlockwise2dScaleBytes;
    default:
      return 0.0;  // one fp32 scale per tensor
  }
}

double fp8_param_buffer_bytes_per_param(Fp8Recipe recipe) {
  // param_and_grad_buffer.py: FP8 parameters live in a uint8 param buffer; MXFP8 ones are
  // gathered through a bf16 view of the grad buffer instead (shared_buffer), so their own
  // storage is counted by fp8_weight_copy_bytes_per_param.
  return recipe == Fp8Recipe::mxfp8 ? 0.0 : 1.0;
}

}  // namespace megamem
