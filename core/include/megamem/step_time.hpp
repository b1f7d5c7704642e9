// Step-time model: how long one training step of a Megatron-Core configuration takes on the
// configured GPUs, and the throughput Megatron would log for it (docs/planner.md).
//
// The step is built per pipeline rank from the layers each (rank, virtual chunk) holds:
//   * compute: every GEMM of a layer (attention projections, MLA down/up projections, the
//     dense MLP, routed experts with their tokens per local expert, shared experts, router,
//     logits, MTP) at an achievable fraction of the card's peak that falls for small GEMM
//     dimensions, flash attention's score/context FLOPs (causal) at its own efficiency, and
//     element-wise kernels (norms, residuals, activations, MoE permutes, the loss's softmax)
//     streaming through HBM; backward costs twice the forward GEMMs and element-wise work and
//     2.5 times the forward attention;
//   * recompute: full recompute re-runs each layer's forward (GEMMs, attention, its TP/EP
//     communication); selective recompute re-runs the named modules' forwards;
//   * exposed communication, from the DeviceConfig bandwidths and Megatron's rank order
//     (tp-cp-ep-dp-pp): a group that fits in one node uses NVLink, otherwise the NIC.
//     TP all-gathers/reduce-scatters (all-reduces without sequence parallelism) per layer,
//     CP's ring exchange of K/V less the attention it hides behind, EP dispatch and combine
//     (NCCL all-to-all, DeepEP's one copy per remote node, or the allgather dispatcher's
//     gathers), PP point-to-point sends, and the data-parallel
//     gradient reduce-scatter and parameter all-gather, hidden behind one micro-batch's
//     backward (forward) when --overlap-grad-reduce is on;
//   * the pipeline: the slowest rank's time per micro-batch W gives a step of
//     W·(m + (p − 1)/v) for the (interleaved) 1F1B schedule, plus the exposed DP
//     communication and the optimizer step (GPU Adam from HBM, or CPU Adam when offloaded);
//   * activation offload costs what its host copies do not hide behind the layer's compute.
// Throughput follows Megatron's own accounting (megatron/training/training.py,
// num_floating_point_operations): model FLOPs without recompute, causal attention.
//
// Left out: kernel launch and Python overheads, data loading, stragglers and network
// congestion, MoE load imbalance beyond TrainingConfig::moe_imbalance_factor, CUDA graphs,
// DeepEP/hybrid-EP specifics (the flex dispatcher is priced as an all-to-all), and FP8 beyond
// a GEMM speed-up factor.
#pragma once

#include "megamem/config.hpp"
#include "megamem/estimate_types.hpp"
#include "megamem/expected.hpp"

namespace megamem {

// The model's knobs, with defaults calibrated on Megatron-LM's published H100 runs
// (docs/planner.md, "Calibration").
struct StepTimeConfig {
  // --- compute ---
  // Fraction of the card's dense bf16 peak that large GEMMs reach (the MFU ceiling).
  double gemm_efficiency = 0.70;
  // Each GEMM dimension x scales the efficiency by x / (x + gemm_half_efficiency_dim):
  // few tokens per expert or thin TP shards run below the ceiling.
  double gemm_half_efficiency_dim = 256.0;
  // Flash attention's forward (score and context GEMMs, causal) as a fraction of peak.
  double attention_efficiency = 0.45;
  // Flash attention's backward FLOPs over its forward FLOPs (it recomputes the scores).
  double attention_backward_factor = 2.5;
  // GEMM speed-up of FP8 training (--fp8-format) over bf16; attention stays bf16.
  double fp8_gemm_speedup = 1.65;
  // HBM bandwidth and the share of it element-wise kernels reach: norms, residual adds,
  // rotary embedding, activation functions, MoE permutation, the loss's softmax, the
  // optimizer step. Small hidden sizes spend relatively more time here.
  double hbm_bandwidth_gb_per_s = 3350.0;
  double elementwise_efficiency = 0.7;
  // bf16 [tokens, hidden] tensors read or written per layer forward outside the GEMMs
  // (two norms, two residual adds, rotary, bias-dropout); activation functions and MoE
  // permutes are counted from their own shapes.
  double elementwise_passes_per_layer = 12.0;

  // --- communication ---
  // Achieved bus bandwidth of NCCL collectives and sends over the link's per-direction
  // bandwidth (DeviceConfig), inside a node (NVLink) and between nodes (NIC).
  double intra_node_efficiency = 0.8;
  double inter_node_efficiency = 0.9;
  // All-to-all over NCCL (alltoall dispatcher) and over DeepEP (flex dispatcher, which sends
  // a token once per remote node and fans it out over NVLink there), relative to the above.
  double all_to_all_efficiency = 0.75;
  double deepep_efficiency = 0.9;
  // TP all-gathers/reduce-scatters (sequence parallel) left exposed: Megatron's
  // --tp-comm-overlap hides most of them behind the GEMMs.
  double tp_exposed_fraction = 0.3;
  // TP all-reduces without sequence parallelism (no userbuffer overlap; backward ones
  // partly overlap the weight-gradient GEMMs).
  double tp_all_reduce_exposed_fraction = 0.75;
  // EP dispatch/combine left exposed, without and with --overlap-moe-expert-parallel-comm.
  double ep_exposed_fraction = 1.0;
  double ep_overlapped_exposed_fraction = 0.5;
  // Share of one micro-batch's backward (forward) that hides the DP gradient reduce-scatter
  // (parameter all-gather, --overlap-param-gather) with --overlap-grad-reduce.
  double dp_overlap_fraction = 0.9;
  bool overlap_param_gather = true;
  // Share of the pipeline's point-to-point sends on the critical path.
  double pp_exposed_fraction = 1.0;

  // --- offload ---
  double host_bandwidth_gb_per_s = 50.0;  // PCIe per GPU and direction
  // Share of every activation copy that shows even when the layer's compute could hide it
  // (copy engines contend with NCCL for PCIe and HBM; offload waits on events).
  double offload_exposed_fraction = 0.1;
  double cpu_optimizer_params_per_s = 1.0e9;  // CPU Adam throughput per GPU's share
};

// Where the step's time goes on the bottleneck pipeline rank; the parts add up to the step.
struct StepTimeBreakdown {
  double compute_s = 0;          // forward and backward GEMMs and attention, all micro-batches
  double recompute_s = 0;        // forwards re-run by full or selective recompute
  double tp_comm_s = 0;          // exposed tensor-parallel collectives
  double cp_comm_s = 0;          // exposed context-parallel K/V exchange
  double ep_comm_s = 0;          // exposed expert-parallel dispatch and combine
  double pp_comm_s = 0;          // pipeline point-to-point sends
  double offload_s = 0;          // activation copies to and from the host not hidden
  double pipeline_bubble_s = 0;  // (p − 1)/v micro-batch times of warm-up and cool-down
  double dp_comm_s = 0;          // exposed gradient reduce-scatter / all-reduce, param all-gather
  double optimizer_s = 0;        // optimizer step (GPU from HBM, CPU part when offloaded)
};

struct StepTime {
  double step_time_s = 0;
  double tokens_per_s = 0;  // the whole job
  double tokens_per_s_per_gpu = 0;
  double model_flops_per_step = 0;     // Megatron's num_floating_point_operations
  double hardware_flops_per_step = 0;  // with recomputed forwards
  double model_tflops_per_gpu = 0;     // what Megatron logs as "throughput per GPU"
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;                // model TFLOP/s over the card's bf16 peak
  double microbatch_time_s = 0;  // the bottleneck rank's time per micro-batch
  int bottleneck_pp_rank = 0;
  StepTimeBreakdown breakdown;
};

// Model FLOPs of one global batch, as megatron/training/training.py counts them (forward and
// backward, causal attention, logits and MTP; no recompute).
double model_flops_per_step(const NormalizedConfig& normalized);

// The step time of a configuration (validated like estimate(); the Error names the field).
Expected<StepTime> estimate_step_time(const Config& config, const StepTimeConfig& model = {});

}  // namespace megamem
