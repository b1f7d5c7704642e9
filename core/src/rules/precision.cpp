// Rule book, precision topic: FP8 parameters, the optimizer's CPU offload and the loss
// fusion.
#include "memory/fp8_memory.hpp"
#include "rule_book.hpp"

namespace megamem::rules {
namespace {

// transformer_config.py __post_init__: "fp8_param must be used together with fp8 mode"; only
// the distributed optimizer (or FSDP) all-gathers FP8 parameters
// (megatron/core/optimizer/distrib_optimizer.py; arguments.py asserts it).
std::optional<Error> fp8_param_gather_needs_fp8(NormalizedConfig& n) {
  const Config& c = n.config;
  if (!c.training.fp8_param_gather) return std::nullopt;
  if (c.training.fp8_recipe == Fp8Recipe::none) {
    return rule_error("fp8_param_gather", "--fp8-param-gather needs --fp8-format",
                      "megatron/core/transformer/transformer_config.py");
  }
  if (!c.optimizer.use_distributed_optimizer && c.parallel.fsdp.impl == FsdpImpl::none) {
    return rule_error("fp8_param_gather",
                      "--fp8-param-gather needs --use-distributed-optimizer (or FSDP)",
                      "megatron/core/optimizer/distrib_optimizer.py, arguments.py");
  }
  return std::nullopt;
}

// transformer_config.py __post_init__ refuses --first-last-layers-bf16 with delayed scaling
// ("Delayed scaling does not support first / last layer in BF16").
std::optional<Error> bf16_layers_need_current_scaling(NormalizedConfig& n) {
  const TrainingConfig& t = n.config.training;
  if (t.fp8_recipe != Fp8Recipe::delayed ||
      t.fp8_bf16_layers_at_start + t.fp8_bf16_layers_at_end == 0) {
    return std::nullopt;
  }
  return rule_error("fp8_bf16_layers_at_start",
                    "--first-last-layers-bf16 is not supported with delayed scaling (use "
                    "--fp8-recipe tensorwise, mxfp8 or blockwise)",
                    "megatron/core/transformer/transformer_config.py");
}

// arguments.py validate_args turns --fp8-param-gather off under --use-torch-fsdp2 with TE >=
// 2.0 ("FSDP2 FP8 param gather is not supported yet ... will fallback to bf16 all_gather");
// the estimate keeps 16-bit weights for FSDP2 (fsdp_memory.cpp fsdp_fp8_param).
std::optional<Error> fp8_param_gather_under_fsdp2(NormalizedConfig& n) {
  if (!n.config.training.fp8_param_gather || n.config.parallel.fsdp.impl != FsdpImpl::torch_fsdp2) {
    return std::nullopt;
  }
  arguments_policy(n,
                   "--fp8-param-gather with --use-torch-fsdp2: Megatron-LM turns it off (TE >= "
                   "2.0) and all-gathers 16-bit weights; estimated that way");
  return std::nullopt;
}

// Only Transformer Engine's per-layer CUDA graphs are modeled (cuda_graphs.hpp). Said, not
// hidden, with what is missing:
// - local (CudaGraphManager, megatron/core/transformer/cuda_graphs.py): each runner's static
//   inputs, outputs and gradient buffers come from one global graph pool
//   (alloc_tensor_from_graph_mempool) and are shared between runners by use count and released
//   by weak references (_resolve_input_buffer, _weakref_forward_buffers); which of them stay
//   allocated follows the captured graph topology, which megamem does not rebuild.
// - full_iteration (megatron/core/full_cuda_graph.py): the whole forward-backward is one graph
//   in a shared pool; StaticBufferLoader keeps a copy of every micro-batch's input batch, and
//   the step's activations stay in the pool's reserved segments between steps.
std::optional<Error> cuda_graphs_not_counted(NormalizedConfig& n) {
  if (!cuda_graphs_unmodeled(n.config)) return std::nullopt;
  if (n.config.training.cuda_graph_impl == CudaGraphImpl::local) {
    policy_warning(n,
                   "--cuda-graph-impl local is not modeled: the static inputs, outputs and "
                   "gradient buffers CudaGraphManager shares in its graph pool are not counted "
                   "(estimated as without graphs)",
                   "megatron/core/transformer/cuda_graphs.py (CudaGraphManager, "
                   "alloc_tensor_from_graph_mempool, _weakref_forward_buffers)");
    return std::nullopt;
  }
  policy_warning(n,
                 "full_iteration CUDA graphs are not modeled: the static copy of each "
                 "micro-batch's inputs and the graph pool that keeps the step's activations "
                 "reserved are not counted (estimated as without graphs)",
                 "megatron/core/full_cuda_graph.py (StaticBufferLoader, get_graph_pool)");
  return std::nullopt;
}

// Megatron-LM's arguments.py asserts --overlap-param-gather-with-optimizer-step only with the
// distributed optimizer and interleaved pipeline parallelism; Megatron-Core's
// get_megatron_optimizer (optimizer/__init__.py) splits off the first chunk's optimizer
// whatever the launcher, so these are warnings, and the estimate prices what it builds.
std::optional<Error> param_gather_in_step_policy(NormalizedConfig& n) {
  const Config& c = n.config;
  if (!c.optimizer.overlap_param_gather_with_optimizer_step) return std::nullopt;
  if (!c.optimizer.use_distributed_optimizer && c.parallel.fsdp.impl == FsdpImpl::none) {
    arguments_policy(n,
                     "Megatron-LM runs --overlap-param-gather-with-optimizer-step only with "
                     "--use-distributed-optimizer");
  }
  if (c.parallel.virtual_stages_per_pipeline_rank < 2) {
    arguments_policy(n,
                     "Megatron-LM runs --overlap-param-gather-with-optimizer-step only with "
                     "interleaved pipeline parallelism (VPP > 1)");
  }
  return std::nullopt;
}

// Megatron-LM's arguments.py asserts --use-precision-aware-optimizer with
// --optimizer-cpu-offload; Megatron-Core does not (megatron/core/optimizer/__init__.py builds
// HybridDeviceOptimizer over the fp32 main params either way, and Megatron-Bridge runs it so),
// so it is a warning; the estimate prices each path (static_memory.cpp).
std::optional<Error> optimizer_offload_policy(NormalizedConfig& n) {
  const OptimizerConfig& o = n.config.optimizer;
  if (!o.optimizer_cpu_offload) return std::nullopt;
  if (!o.use_precision_aware_optimizer) {
    arguments_policy(n,
                     "Megatron-LM asks for --use-precision-aware-optimizer with "
                     "--optimizer-cpu-offload (Megatron-Core runs without it: the GPU then keeps "
                     "the fp32 main params and offloads only the moments)");
  }
  if (n.config.training.fp8_param_gather && n.config.training.fp8_recipe != Fp8Recipe::delayed) {
    arguments_policy(n,
                     "Megatron-LM asks for --fp8-recipe delayed when --optimizer-cpu-offload "
                     "meets --fp8-param-gather");
  }
  return std::nullopt;
}

// Megatron-LM core_r0.18 and later refuse --cross-entropy-fusion-impl te in arguments.py
// ("disabled due to stability issues"); core_r0.14 launches and Megatron-Bridge recipes run
// it, and its memory is modeled.
std::optional<Error> te_cross_entropy_fusion(NormalizedConfig& n) {
  return warn_when(n, n.config.training.cross_entropy == CrossEntropyImpl::te_fused,
                   "--cross-entropy-fusion-impl te: Megatron-LM core_r0.18 and later refuse it "
                   "(earlier releases and Megatron-Bridge run it)",
                   "megatron/training/arguments.py validate_args");
}

// Transformer Engine checks the GPU when the FP8 autocast starts
// (transformer_engine/pytorch/quantization.py _compute_*_support): FP8 needs compute
// capability 8.9 (Ada, Hopper; not A100), MXFP8 10.0 (Blackwell; not 12.x yet), blockwise
// scaling 9.0. The run fails on such a GPU; megamem estimates it (the memory is defined) and
// says so, since the GPU is often a what-if.
std::optional<Error> fp8_recipe_runs_on_the_gpu(NormalizedConfig& n) {
  const TrainingConfig& t = n.config.training;
  if (!fp8_enabled(t)) return std::nullopt;
  const int cc = n.config.device.compute_capability;
  constexpr const char* kSource = "transformer_engine/pytorch/quantization.py";
  const std::string gpu = n.config.device.name.empty() ? "this GPU" : n.config.device.name;
  if (cc < 89) {
    policy_warning(n,
                   "FP8 needs compute capability 8.9 or higher; Transformer Engine refuses it "
                   "on " +
                       gpu,
                   kSource);
  } else if (t.fp8_recipe == Fp8Recipe::mxfp8 && (cc < 100 || cc >= 120)) {
    policy_warning(n,
                   "--fp8-recipe mxfp8 runs on compute capability 10.x (Blackwell) only; "
                   "Transformer Engine refuses it on " +
                       gpu,
                   kSource);
  } else if (t.fp8_recipe == Fp8Recipe::blockwise && cc < 90) {
    policy_warning(n,
                   "--fp8-recipe blockwise needs compute capability 9.0 or higher; "
                   "Transformer Engine refuses it on " +
                       gpu,
                   kSource);
  }
  return std::nullopt;
}

constexpr Check kPrecisionChecks[] = {
    fp8_recipe_runs_on_the_gpu,   fp8_param_gather_needs_fp8, bf16_layers_need_current_scaling,
    fp8_param_gather_under_fsdp2, optimizer_offload_policy,   param_gather_in_step_policy,
    te_cross_entropy_fusion,      cuda_graphs_not_counted};

}  // namespace

const std::span<const Check> precision_checks{kPrecisionChecks};

}  // namespace megamem::rules
