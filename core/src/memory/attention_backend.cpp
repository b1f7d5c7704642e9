// Attention backend resolution; see attention_backend.hpp.
#include "memory/attention_backend.hpp"

namespace megamem {

AttentionBackend resolved_attention_backend(const Config& config) {
  const TrainingConfig& t = config.training;
  if (t.transformer_impl == TransformerImpl::local) return AttentionBackend::local;
  if (t.attention_backend != AttentionBackend::auto_select) return t.attention_backend;
  // get_attention_backend, "Filter: Determinism": --deterministic-mode runs TE with
  // NVTE_ALLOW_NONDETERMINISTIC_ALGO=0 (megatron/core/extensions/transformer_engine.py checks
  // it), and in training FusedAttention's F16_arbitrary_seqlen sub-backend is then disabled
  // below sm90. FlashAttention-2 >= 2.4.1 is deterministic and takes over when installed;
  // otherwise only UnfusedDotProductAttention is left.
  // "Filter: Softmax type": FlashAttention has no attention sinks (off-by-one, learnable);
  // "Filter: Determinism": FusedAttention runs sinks only with NVTE_ALLOW_NONDETERMINISTIC_ALGO=1.
  const bool sinks = config.model.softmax_type != SoftmaxType::vanilla;
  const bool fused_disabled =
      t.deterministic_mode && (sinks || config.device.compute_capability < 90);
  if (!fused_disabled) return AttentionBackend::fused;
  return t.flash_attn_available && !sinks ? AttentionBackend::flash : AttentionBackend::unfused;
}

}  // namespace megamem
