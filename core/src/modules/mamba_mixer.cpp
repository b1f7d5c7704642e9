// Module spec: the Mamba-2 mixer of a hybrid model's 'M' layer with its fused input norm
// (megatron/core/ssm/mamba_layer.py MambaLayer, megatron/core/ssm/mamba_mixer.py MambaMixer,
// spec megatron/core/models/hybrid/hybrid_layer_specs.py: in_proj TELayerNormColumnParallelLinear,
// out_proj TERowParallelLinear). d_inner = heads x head_dim, conv_dim = d_inner + 2 G N.
//   parameters: the input norm fused into in_proj (replicated); in_proj [(2 d_inner + 2 G N +
//     heads) x h] /TP (z, x, B, C, dt; no bias: MambaMixer asserts bias=False); conv1d weight
//     [conv_dim x 4] and bias [conv_dim], dt_bias, A_log, D [heads] and the gated RMSNorm weight
//     [d_inner], all /TP (tensor_model_parallel, partition_dim 0); out_proj [h x d_inner] /TP.
//     Dense bucket.
//   saved (training path _ssm_training, --use-mamba-mem-eff-path default): the fused norm's
//     input and output (layernorm_linear.py); mamba_ssm's mamba_split_conv1d_scan_combined
//     (mamba_ssm/ops/triton/ssd_combined.py, MambaSplitConv1dScanCombinedFn.forward
//     save_for_backward) keeps the in_proj output zxbcdt and the scan output before gating
//     out_x; ExtendedRMSNorm (mamba_ssm/ops/triton/layernorm_gated.py, LayerNormFn) keeps its
//     input and fp32 rstd per token and group; out_proj keeps its input (FP8 in an FP8 layer).
//     The conv output xBC, dt, dA_cumsum, the chunk states and CB are not saved: the kernel
//     recomputes them in backward. No selective-recompute or fine-grained-offload module names
//     the mixer; full recompute covers it like any layer.
//   transients: the kernel's forward working set (xBC after the causal conv1d, dt and
//     dA_cumsum in fp32, the chunk states in fp32 from _chunk_state_fwd plus their bf16 copy
//     from _state_passing_fwd, CB in fp32 from _bmm_chunk_fwd) and its backward one (the same
//     recomputed, with dzxbcdt, dxBC, dstates and dCB).
//   FLOPs: training.py hybrid_flops, mamba_layer_flops: 2h (2 d_in + 2 G N + heads) in_proj,
//     7 d_in N scan, 2 d_in h out_proj, with d_in = 2h as Megatron counts it.
//   In Falcon-H1's parallel layer (Megatron-Bridge falcon_h1/modeling_falconh1/
//   falconh1_layer_specs.py, falconh1_layer.py) the mixer is FalconH1MambaMixer with in_proj a
//   plain TEColumnParallelLinear: the layer's shared input norm (falcon_h1_layer.cpp) is not
//   fused in, and in_proj saves its own input, the norm output times ssm_in_multiplier (a new
//   tensor). FalconH1MambaMixer._scale_zxbc_dt multiplies zxBCdt by the five ssm_multipliers
//   before the kernel: the kernel saves the scaled copy, the unscaled in_proj output stays
//   alive beside it in the forward.
#include <algorithm>

#include "module_spec.hpp"

namespace megamem {
namespace {

// MambaMixer's defaults, not exposed as Megatron flags (mamba_mixer.py __init__).
constexpr double kConvWidth = 4;    // d_conv
constexpr double kChunkSize = 128;  // chunk_size of the SSD kernels

struct MambaShape {
  double heads = 0;  // whole layer (all TP ranks)
  double head_dim = 0;
  double groups = 0;
  double state = 0;  // d_state
  double inner() const { return heads * head_dim; }
  double conv_dim() const { return inner() + 2 * groups * state; }
  double in_proj_out() const { return 2 * inner() + 2 * groups * state + heads; }
};

MambaShape mamba_shape(const ModelConfig& m) {
  return MambaShape{.heads = static_cast<double>(m.mamba_num_heads),
                    .head_dim = static_cast<double>(m.mamba_head_dim),
                    .groups = static_cast<double>(m.mamba_num_groups),
                    .state = static_cast<double>(m.mamba_state_dim)};
}

bool present(const ModuleContext& c) { return layer_kind_has_mamba(c.kind); }

bool in_parallel_layer(const ModuleContext& c) { return c.kind == LayerKind::parallel_hybrid; }

void params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const MambaShape shape = mamba_shape(m);
  const std::int64_t tp = c.config.parallel.tensor_parallel;
  const std::int64_t h = m.hidden_size;
  const auto heads = static_cast<std::int64_t>(shape.heads) / tp;
  const auto inner = static_cast<std::int64_t>(shape.inner()) / tp;
  const auto conv_dim = static_cast<std::int64_t>(shape.conv_dim()) / tp;
  const ModuleKind mixer = ModuleKind::mamba_mixer;
  const auto in_proj_out = static_cast<std::int64_t>(shape.in_proj_out());
  if (in_parallel_layer(c)) {
    sink.linear(mixer, in_proj_out * h / tp, 0);  // TEColumnParallelLinear, no norm fused in
  } else {
    fused_norm_in_proj_params(c, mixer, in_proj_out, sink);
  }
  sink.tensor(mixer, conv_dim * static_cast<std::int64_t>(kConvWidth));  // conv1d_weight
  sink.tensor(mixer, conv_dim);                                          // conv1d_bias
  for (int i = 0; i < 3; ++i) sink.tensor(mixer, heads);                 // dt_bias, A_log, D
  sink.tensor(mixer, inner);                                             // norm.weight
  sink.linear(mixer, h * inner, 0);                                      // out_proj
}

// The SSD kernels' per-micro-batch intermediates on this rank (ssd_combined.py
// _mamba_chunk_scan_combined_fwd): [xBC conv output, dt and dA_cumsum, chunk states, CB].
struct ScanWorkingSet {
  double conv_bytes = 0;
  double dt_bytes = 0;
  double states_elements = 0;
  double cb_bytes = 0;
};

ScanWorkingSet scan_working_set(const MambaShape& shape, const ActivationShape& s) {
  return ScanWorkingSet{
      .conv_bytes = 2 * s.tokens * shape.conv_dim() / s.tp,
      .dt_bytes = 2 * 4 * s.tokens * (shape.heads / s.tp),
      .states_elements =
          per_chunk_elements(s, kChunkSize, shape.heads, shape.head_dim, shape.state),
      .cb_bytes = 4 * per_chunk_elements(s, kChunkSize, shape.groups, kChunkSize, kChunkSize),
  };
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const MambaShape shape = mamba_shape(c.model);
  const ModuleKind mixer = ModuleKind::mamba_mixer;
  const double n = s.tokens;
  const double inner = shape.inner() / s.tp;
  const double zxbcdt = n * shape.in_proj_out() / s.tp;
  if (in_parallel_layer(c)) {
    sink.add("in_proj input (input norm output x ssm_in_multiplier)", mixer, s.sp_tokens * s.h,
             gemm_input_bytes(c));
  } else {
    fused_norm_in_proj_saved(c, s, mixer, sink);
  }
  sink.add("zxBCdt (in_proj output, kernel input)", mixer, zxbcdt, s.act);
  sink.add("SSM output before gating (out_x)", mixer, n * inner, s.act);
  sink.add("gated RMSNorm input", mixer, n * inner, s.act);
  sink.add("gated RMSNorm rstd (fp32)", mixer, n * shape.groups / s.tp, 4);
  sink.add("out_proj input", mixer, n * inner, gemm_input_bytes(c));
  const ScanWorkingSet w = scan_working_set(shape, s);
  // Forward: the in_proj output before its contiguous copy, or the kernel's working set
  // (fp32 chunk states with their bf16 passed copy).
  const double kernel_forward = w.conv_bytes + w.dt_bytes + 6 * w.states_elements + w.cb_bytes;
  // Falcon-H1: the unscaled in_proj output beside its ssm_multipliers-scaled copy.
  const double in_proj_copies = in_parallel_layer(c) ? 2.0 : 1.0;
  sink.forward_transient(std::max(in_proj_copies * s.act * zxbcdt, kernel_forward));
  // Backward: dzxbcdt, the recomputed xBC with its gradient dxBC, dt/dA_cumsum, states (fp32,
  // then bf16) with dstates (fp32), CB with dCB (fp32).
  sink.backward_transient(s.act * zxbcdt + 2 * w.conv_bytes + w.dt_bytes + 10 * w.states_elements +
                          2 * w.cb_bytes);
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  const MambaShape shape = mamba_shape(m);
  const double h = m.hidden_size;
  const double d_in = 2 * h;  // training.py mamba_layer_flops: d_in = 2 * hidden_size
  f.mamba = 2 * h * (2 * d_in + 2 * shape.groups * shape.state + shape.heads) +
            7 * d_in * shape.state + 2 * d_in * h;
}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kMambaMixerSpec, "Mamba-2 mixer", LayerBlock::attention);

}  // namespace megamem
