// --defer-embedding-wgrad-compute: the output layer of the last pipeline stage keeps each
// micro-batch's input and output gradient and computes its weight gradient at the pipeline
// flush (megatron/core/tensor_parallel/layers.py: ColumnParallelLinear.forward appends
// input_parallel to embedding_activation_buffer, LinearWithGradAccumulationAndAsync-
// Communication.backward appends grad_output to grad_output_buffer and skips the wgrad GEMM
// while the buffer is under --wgrad-deferral-limit (0 = no limit);
// megatron/core/pipeline_parallel/schedules.py finish_embedding_wgrad_compute drains them).
#pragma once

#include "megamem/estimate_types.hpp"
#include "schedule/timeline.hpp"

namespace megamem {

struct DeferredWgradBytes {
  double during_schedule = 0;  // buffers of earlier micro-batches held through the schedule
  double at_flush = 0;         // all buffers, when the drain starts
};

// Zero without the flag; for the rank that computes the loss.
DeferredWgradBytes deferred_embedding_wgrad_bytes(const NormalizedConfig& normalized);

// Raises the peak of the rank that computes the loss by the held buffers, or to the flush.
void add_deferred_embedding_wgrad(const NormalizedConfig& normalized, double static_bytes,
                                  RankPeak& peak);

}  // namespace megamem
