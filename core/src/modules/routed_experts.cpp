// Module spec: routed experts with token dispatch and the optional latent projections
// (megatron/core/transformer/moe/{experts.py, token_dispatcher.py, moe_layer.py}).
//   parameters: latent down/up projections [h x latent] each (replicated, dense bucket);
//     E/EP local experts (TEGroupedMLP: one fc1 [glu x ffn x width] and fc2 [width x ffn]
//     weight, and bias, per expert) split /ETP: expert bucket, sharded over expert-DP.
//   saved: the dispatched tokens (expert_fc1 offload), fc1 output (moe_act offload),
//     activation output (moe_act recompute), the permuted probabilities, and without a fused
//     weighted activation the activation's output and, for a GLU, the unfused glu()'s two
//     product inputs (the gate activation's output, the up half + offset); the alltoall
//     dispatcher's permutation
//     maps; the latent projections' inputs; all freed by moe recompute. In an FP8 layer fc1's
//     and fc2's inputs are saved in FP8. The permute and exchange buffers are forward transients.
//   FLOPs: training.py: top-k experts' 2h x moe_ffn x (1 + glu) per token, and the latent
//     projections.
#include <algorithm>
#include <cstdio>
#include <string>

#include "module_spec.hpp"

namespace megamem {
namespace {

bool present(const ModuleContext& c) { return c.moe_layer; }

void params(const ModuleContext& c, ParamSink& sink) {
  const ModelConfig& m = c.model;
  const ParallelConfig& p = c.config.parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t bias = m.add_bias_linear ? 1 : 0;
  if (m.moe_latent_size > 0) {
    sink.linear(ModuleKind::moe_latent_projection, h * m.moe_latent_size, bias * m.moe_latent_size);
    sink.linear(ModuleKind::moe_latent_projection, m.moe_latent_size * h, bias * h);
    // Kimi K3's KimiK3MoELayer: routed_expert_norm [latent] (replicated) before fc2_latent_proj.
    if (kimi_k3_layers(m)) sink.norm(ModuleKind::moe_latent_projection, m.moe_latent_size);
  }
  const std::int64_t width = m.moe_latent_size > 0 ? m.moe_latent_size : h;
  const std::int64_t etp = p.expert_tensor_parallel;
  const std::int64_t local_experts = m.num_experts / p.expert_parallel;
  const std::int64_t fc1_out =
      (m.activation == Activation::swiglu ? 2 : 1) * std::int64_t{m.moe_ffn_hidden_size};
  sink.experts(ModuleKind::routed_experts, fc1_out * width / etp, bias * fc1_out / etp,
               local_experts);
  sink.experts(ModuleKind::routed_experts, m.moe_ffn_hidden_size * width / etp, bias * width,
               local_experts);
}

// Tokens reaching this GPU's local experts: k copies of each SP token, all-gathered over
// ETP; the hottest EP rank gets the imbalance factor more (memory-model.md 4.4).
double routed_tokens(const ModuleContext& c, const ActivationShape& s) {
  const TrainingConfig& t = c.config.training;
  const double balanced =
      c.model.moe_router_topk * s.sp_tokens * c.config.parallel.expert_tensor_parallel;
  const double capacity = t.moe_expert_capacity_factor;
  if (capacity > 0 && t.moe_pad_expert_input_to_capacity) return capacity * balanced;
  const double share =
      capacity > 0 ? std::min(t.moe_imbalance_factor, capacity) : t.moe_imbalance_factor;
  return share * balanced;
}

// grouped_linear.py saves the grouped FP8 input (columnwise only); offloading expert_fc1
// makes Megatron save the unquantized original instead, except under MXFP8 (moe/experts.py,
// TEGroupedMLP.__init__).
double expert_fc1_input_bytes(const ModuleContext& c) {
  const TrainingConfig& t = c.config.training;
  const bool offloaded = t.offload.fine_grained_activation_offloading &&
                         t.offload.offload_modules.intersects({OffloadModule::expert_fc1});
  return offloaded && t.fp8_recipe != Fp8Recipe::mxfp8 ? activation_element_bytes(c.config)
                                                       : gemm_input_bytes(c);
}

// The alltoall dispatcher's permutation maps (token_dispatcher.py MoEAlltoAllTokenDispatcher;
// moe_utils.py permute, sort_chunks_by_idxs). Fused (TE permutation.py): an int32 row_id_map
// [Nsp, 2E+1] shared by permute and unpermute (triton/permutation.py make_row_id_map), and one
// int32 map per token for each of the two chunk sorts between local experts. Unfused: the
// int64 indices of index_select and of the probabilities' gather.
void alltoall_indices_saved(const ModuleContext& c, const ActivationShape& s, double routed,
                            SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind experts = ModuleKind::routed_experts;
  const RecomputeModules moe = {RecomputeModule::moe};
  const double local_experts =
      static_cast<double>(m.num_experts) / c.config.parallel.expert_parallel;
  if (c.config.training.moe_permute_fusion) {
    sink.add("permutation row_id_map (int32)", experts, s.sp_tokens * (2.0 * m.num_experts + 1), 4,
             moe);
    if (local_experts > 1) sink.add("chunk sort maps (int32)", experts, 2 * routed, 4, moe);
  } else {
    sink.add("permutation indices (int64)", experts, 2 * m.moe_router_topk * s.sp_tokens, 8, moe);
  }
}

// --delay-wgrad-compute: fc1's and fc2's grad outputs, and without gradient-accumulation
// fusion the packed weight gradients of all local experts, which grouped_linear.py allocates
// in backward and backward_dw fills (TEGroupedMLP.backward_dw: fc2, then fc1).
void experts_delayed_wgrad(const ModuleContext& c, const ActivationShape& s, double routed,
                           double width, double expert_ffn, SavedSink& sink) {
  const double glu = glu_factor(c.model);
  const double local_experts =
      static_cast<double>(c.model.num_experts) / c.config.parallel.expert_parallel;
  const double wgrad_buffers = c.config.training.gradient_accumulation_fusion
                                   ? 0
                                   : s.act * local_experts * (glu + 1) * expert_ffn * width;
  sink.delayed_wgrad(LayerBlock::mlp,
                     gemm_input_bytes(c) * routed * (glu * expert_ffn + width) + wgrad_buffers);
}

// moe_layer.py MoELayer.postprocess: fc2_latent_proj (a TELinear) saves its input, the combined
// tokens [Nsp x L]; preprocess: in an FP8 layer fc1_latent_proj keeps its own quantized copy of
// the pre-MLP norm output (no save_original_input, unlike shared_experts.py linear_fc1; the
// bf16 output is the router's saved input). Both run inside the moe checkpoint.
void latent_projections_saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const double latent = c.model.moe_latent_size;
  if (latent <= 0) return;
  const ModuleKind module = ModuleKind::moe_latent_projection;
  const RecomputeModules moe = {RecomputeModule::moe};
  sink.add("fc2_latent_proj input (combined tokens)", module, s.sp_tokens * latent,
           gemm_input_bytes(c), moe);
  if (kimi_k3_layers(c.model)) {
    // kimi_k3_layers.py KimiK3MoELayer.postprocess normalises the combined tokens with
    // kimi_k3_ops.py KimiRMSNorm in plain PyTorch: autograd keeps the fp32 copy (square and
    // the rsqrt product), the fp32 rsqrt per token and the bf16 normalised tokens (the product
    // with the weight); the norm's output is fc2_latent_proj's input above.
    sink.add("routed_expert_norm fp32 input copy", module, s.sp_tokens * latent, 4, moe);
    sink.add("routed_expert_norm rsqrt (fp32)", module, s.sp_tokens, 4, moe);
    sink.add("routed_expert_norm normalised tokens", module, s.sp_tokens * latent, s.act, moe);
  }
  if (c.fp8) {
    sink.add("fc1_latent_proj input (FP8 copy of the pre-MLP norm output)", module,
             s.sp_tokens * s.h, gemm_input_bytes(c), moe);
  }
}

// experts.py bias_act_func's tensors beyond fc1's output and fc2's input.
void activation_products_saved(const ModuleContext& c, const ActivationShape& s, double routed,
                               double expert_ffn, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const ModuleKind experts = ModuleKind::routed_experts;
  const RecomputeModules moe = {RecomputeModule::moe};
  const RecomputeModules moe_act = {RecomputeModule::moe, RecomputeModule::moe_act};
  // experts.py bias_act_func: the fused weighted SwiGLU, and with use_fused_weighted_squared_relu
  // the fused weighted squared ReLU (fusions/fused_weighted_squared_relu.py
  // WeightedSquaredReLUFunction: fc1's output and the probabilities), fold the routing
  // probabilities into the activation kernel. Otherwise the activation output is saved by the
  // multiplication with the probabilities and their product again by fc2. Kimi K3's SiTU
  // module (use_te_activation_func) is never the fused kernel.
  const TrainingConfig& t = c.config.training;
  const bool fused =
      (m.activation == Activation::swiglu && t.bias_activation_fusion && !kimi_k3_layers(m)) ||
      (m.activation == Activation::squared_relu && t.moe_fused_weighted_squared_relu);
  // The permuted probabilities, in the router's dtype, saved by the weighted activation
  // (fusions/fused_bias_swiglu.py, WeightedSwiGLUFunction) or by the product with them; a
  // moe_act checkpoint keeps them as its input.
  sink.add("permuted probabilities", experts, routed, c.config.training.moe_router_fp32 ? 4 : s.act,
           moe);
  if (!fused) {
    // The product with the probabilities keeps the activation's output; a GLU's comes from
    // bias_act_func's unfused glu(), `activation_func(x_glu) * (x_linear + glu_linear_offset)`,
    // whose product keeps both operands as mlp.py's does (unfused_glu_products_saved). Kimi K3
    // (use_te_activation_func) runs the SiTU module instead: its output alone.
    sink.add("expert activation output (input of the product with the probabilities)", experts,
             routed * expert_ffn, s.act, moe_act);
    if (m.activation == Activation::swiglu && !kimi_k3_layers(m)) {
      unfused_glu_products_saved(c, sink, experts, routed, expert_ffn, moe_act);
    }
  }
}

void saved(const ModuleContext& c, const ActivationShape& s, SavedSink& sink) {
  const ModelConfig& m = c.model;
  const double width = m.moe_latent_size > 0 ? m.moe_latent_size : m.hidden_size;
  const double expert_ffn = m.moe_ffn_hidden_size / c.config.parallel.expert_tensor_parallel;
  const double routed = routed_tokens(c, s);
  const ModuleKind experts = ModuleKind::routed_experts;
  const RecomputeModules moe = {RecomputeModule::moe};
  const RecomputeModules moe_act = {RecomputeModule::moe, RecomputeModule::moe_act};
  sink.add("dispatched tokens (expert fc1 input)", experts, routed * width,
           expert_fc1_input_bytes(c), moe, {OffloadModule::expert_fc1});
  // experts.py (moe_apply_probs_on_input): the dispatched tokens times their probabilities;
  // the product's autograd keeps the tokens, and fc1 saves the product.
  if (m.moe_apply_probs_on_input) {
    sink.add("dispatched tokens (input of the product with the probabilities)", experts,
             routed * width, s.act, moe);
  }
  glu_activation_input_saved(c, sink, "expert fc1 output", experts, routed, expert_ffn, moe,
                             {OffloadModule::moe_act}, {RecomputeModule::moe_act});
  sink.add("expert activation output", experts, routed * expert_ffn, gemm_input_bytes(c), moe_act);
  activation_products_saved(c, s, routed, expert_ffn, sink);
  // moe_utils.py unpermute (unfused): under torch.use_deterministic_algorithms
  // (--deterministic-mode) it combines with index_add_, whose autograd node keeps its source,
  // the experts' output (IndexAddBackward0); scatter_add_ keeps only the index.
  if (c.config.training.deterministic_mode && !c.config.training.moe_permute_fusion) {
    sink.add("expert output (deterministic unpermute's index_add_ source)", experts, routed * width,
             s.act, moe);
  }
  const bool allgather = c.config.training.moe_token_dispatcher == TokenDispatcher::allgather;
  if (c.config.training.moe_token_dispatcher == TokenDispatcher::alltoall) {
    alltoall_indices_saved(c, s, routed, sink);
  }
  // token_dispatcher.py: permute output, exchange buffers and their sorted copies exist
  // only inside the layer's forward (and again in backward).
  sink.forward_transient((allgather ? 1 : 2) * s.act * routed * width);
  experts_delayed_wgrad(c, s, routed, width, expert_ffn, sink);
  latent_projections_saved(c, s, sink);
}

void flops(const ModuleContext& c, ModuleFlops& f) {
  const ModelConfig& m = c.model;
  const double h = m.hidden_size;
  const double routed =
      static_cast<double>(m.moe_ffn_hidden_size) * m.moe_router_topk * (1.0 + glu_factor(m));
  f.moe_routed = m.moe_latent_size > 0
                     ? 2.0 * h * (routed * m.moe_latent_size / h + 2.0 * m.moe_latent_size)
                     : 2.0 * h * routed;
}

}  // namespace

MEGAMEM_LAYER_MODULE_SPEC(kRoutedExpertsSpec, "MoE routed experts", LayerBlock::mlp);

std::string hottest_expert_rank_assumption(const NormalizedConfig& n) {
  const TrainingConfig& t = n.config.training;
  // With every expert on each GPU (EP 1) a GPU always gets all k x N routed tokens; forced
  // balance and padding to capacity fix each rank's share.
  if (n.config.model.num_experts == 0 || n.config.parallel.expert_parallel == 1 ||
      t.moe_router_force_load_balancing ||
      (t.moe_expert_capacity_factor > 0 && t.moe_pad_expert_input_to_capacity)) {
    return {};
  }
  char share[32];
  std::snprintf(share, sizeof share, "%.2fx", t.moe_imbalance_factor);
  // Appended into one buffer: every estimate of a MoE model says this, and each `+` of
  // temporaries was an allocation of its own.
  std::string text;
  text.reserve(400);
  text +=
      "routing is not forced to balance: the busiest expert-parallel rank is taken to "
      "receive ";
  text += share;
  text +=
      " its even share of the top-k routed tokens (the imbalance factor, link key "
      "imbalance)";
  if (t.moe_expert_capacity_factor > 0) {
    char cap[32];
    std::snprintf(cap, sizeof cap, "%.2f", t.moe_expert_capacity_factor);
    text += "; --moe-expert-capacity-factor ";
    text += cap;
    text += " caps each expert, and so that share (moe/token_dispatcher.py drops the rest)";
    return text;
  }
  text +=
      "; without --moe-expert-capacity-factor Megatron drops no token, so a busier rank "
      "holds proportionally more of the experts' activations (moe/token_dispatcher.py)";
  return text;
}

}  // namespace megamem
