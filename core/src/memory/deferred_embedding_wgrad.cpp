// Deferred output-layer weight gradients; see deferred_embedding_wgrad.hpp.
#include "memory/deferred_embedding_wgrad.hpp"

#include <algorithm>

#include "memory/static_memory.hpp"

namespace megamem {

DeferredWgradBytes deferred_embedding_wgrad_bytes(const NormalizedConfig& normalized) {
  const Config& c = normalized.config;
  DeferredWgradBytes out;
  if (!c.training.defer_embedding_wgrad_compute) return out;
  const double tokens = static_cast<double>(c.training.micro_batch_size) * c.training.seq_length /
                        c.parallel.context_parallel;
  const double tp = c.parallel.tensor_parallel;
  const double sp_tokens = normalized.sequence_parallel ? tokens / tp : tokens;
  // grad_output is cast to the input dtype (the params dtype) before it is buffered; the
  // input is the layer's (sequence-parallel) input before its all-gather.
  const double element = dtype_bytes(c.training.params_dtype);
  const double per_microbatch =
      element * (tokens * static_cast<double>(normalized.padded_vocab_size) / tp +
                 sp_tokens * c.model.hidden_size);
  const std::int64_t microbatches = normalized.num_microbatches;
  const std::int64_t limit = c.training.wgrad_deferral_limit;
  // With a limit under the micro-batch count, the first `limit` micro-batches are deferred
  // and the rest compute their wgrad at once; otherwise all are, and the last one's gradient
  // is the backward's own transient while the others are held.
  const bool limited = limit > 0 && limit < microbatches;
  const std::int64_t deferred = limited ? limit : microbatches;
  const std::int64_t held = limited ? limit : std::max<std::int64_t>(0, microbatches - 1);
  out.during_schedule = per_microbatch * static_cast<double>(held);
  out.at_flush = per_microbatch * static_cast<double>(deferred);
  return out;
}

void add_deferred_embedding_wgrad(const NormalizedConfig& normalized, double static_bytes,
                                  RankPeak& peak) {
  const DeferredWgradBytes held = deferred_embedding_wgrad_bytes(normalized);
  if (held.at_flush <= 0) return;
  const double during = peak.peak_allocated_bytes + held.during_schedule;
  const double flush = static_bytes + held.at_flush;
  if (flush > during) peak.activation_bytes = 0;  // the drain runs after the last backward
  peak.transient_bytes += std::max(during, flush) - peak.peak_allocated_bytes;
  peak.peak_allocated_bytes = std::max(during, flush);
}

}  // namespace megamem
