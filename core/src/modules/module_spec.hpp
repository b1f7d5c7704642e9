// Module specs: what each Megatron-Core module of a layer allocates, saves for backward and
// computes, declared once per module in core/src/modules/<module>.cpp.
//
// A layer module (attention, MLP, MoE router, routed and shared experts) is a
// LayerModuleSpec: the parameter tensors it registers (shape as this GPU holds them: /TP,
// /EP x ETP or replicated, with its bucket flags), the tensors it saves for backward (shape,
// dtype, the recompute modules that free each and the offload module that moves it) and its
// forward FLOPs per token (backward is 2x, training.py's factor of 3). Parameter counts,
// activations, step-time FLOPs, the planner's stage balance and what-if loop over
// layer_module_specs() (registry.cpp); adding a module is one file plus one line there.
// Embedding, output layer with its loss, and MTP sit outside the decoder layers and declare
// the same three facts through the functions at the end of this header.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "megamem/estimate_types.hpp"
#include "megamem/modules.hpp"
#include "modules/kimi_k3.hpp"
#include "modules/sliding_window.hpp"

namespace megamem {

enum class ModuleKind : std::uint8_t {
  word_embedding,
  position_embedding,
  input_layernorm,
  self_attention,
  pre_mlp_layernorm,
  mlp,
  router,
  routed_experts,
  shared_experts,
  moe_latent_projection,
  final_layernorm,
  output_layer,
  mtp_projection,  // enorm, hnorm, eh_proj
  mtp_final_layernorm,
  mamba_mixer,     // MambaLayer.mixer with its fused input norm (mamba_mixer.cpp)
  gated_deltanet,  // GatedDeltaNet self_attention with its fused input norm (gated_deltanet.cpp)
};

const char* module_kind_name(ModuleKind kind);

// ---------------------------------------------------------------------------------------------
// Parameters

struct ParamTensor {
  std::int64_t numel = 0;   // elements of one tensor
  std::int64_t copies = 1;  // identical tensors in a row (local experts' weights)
  ModuleKind module = ModuleKind::word_embedding;
  int layer = -1;                 // decoder layer index, or MTP depth when mtp
  bool mtp = false;               // part of a multi-token-prediction layer
  bool moe_layer = false;         // the layer it belongs to is a MoE layer
  bool expert = false;            // routed expert: sharded over expert-DP (expert bucket)
  bool shared_embedding = false;  // Megatron puts it in a bucket of its own
  bool gemm_weight = false;       // 2-D GEMM weight (fp8 param gather, Muon)
  bool embedding_or_output = false;
  bool fp8 = false;   // GEMM weight Transformer Engine runs in FP8 (fp8_memory.hpp)
  bool fp32 = false;  // an fp32 parameter in a 16-bit model (static_memory.cpp)

  std::int64_t elements() const { return numel * copies; }
};

// Where a module's tensors go: appends them tagged with the layer they belong to.
class ParamSink {
 public:
  ParamSink(std::vector<ParamTensor>& out, const ModelConfig& model, ParamTensor tag)
      : out_(out), model_(model), tag_(tag) {}
  // One tensor of `numel` elements (as this GPU holds it); empty tensors are skipped.
  void tensor(ModuleKind module, std::int64_t numel, bool gemm_weight = false);
  // A linear layer's weight (GEMM) and bias, already divided as the layer shards them.
  void linear(ModuleKind module, std::int64_t weight, std::int64_t bias);
  // `copies` local experts' weight and bias (routed experts: expert bucket, /EP x ETP).
  void experts(ModuleKind module, std::int64_t weight, std::int64_t bias, std::int64_t copies);
  // LayerNorm has a weight and a bias, RMSNorm a weight (megatron/core/transformer/torch_norm.py).
  void norm(ModuleKind module, std::int64_t width);
  // A weight held in fp32 whatever the params dtype (ParamTensor::fp32), not a TE GEMM.
  void fp32_weight(ModuleKind module, std::int64_t numel);
  // The vocabulary matrices (word embedding, output layer) and the position embedding.
  void embedding_or_output(ModuleKind module, std::int64_t numel, bool gemm, bool shared);

 private:
  // Appends the sink's tag with this module, size, copies and GEMM-weight flag, and returns
  // it for the caller's flags; nullptr (nothing appended) for an empty tensor.
  ParamTensor* append(ModuleKind module, std::int64_t numel, bool gemm_weight,
                      std::int64_t copies = 1);
  std::vector<ParamTensor>& out_;
  const ModelConfig& model_;
  ParamTensor tag_;
};

// ---------------------------------------------------------------------------------------------
// Saved-for-backward tensors

// One tensor (or group of tensors) a layer saves for backward. The two one-byte fields last:
// 40 bytes rather than 48, so a layer's list stays within the allocator's per-thread cache
// (layer_activations).
struct SavedActivation {
  const char* tensor = "";
  double bytes = 0;
  double elements = 0;        // for the offload size threshold
  RecomputeModules freed_by;  // selective recompute of any of these discards it
  OffloadModules offload;     // fine-grained offloading of this module moves it (one or none)
  ModuleKind module = ModuleKind::self_attention;
  bool on_host = false;  // set by layer_activations when fine-grained offloading moves it
};

// One decoder (or MTP transformer) layer, per micro-batch per GPU.
struct LayerActivations {
  std::vector<SavedActivation> saved;   // before recompute and offload
  double full_bytes = 0;                // everything saved without recompute
  double kept_bytes = 0;                // on the GPU after selective recompute and offload
  double offloaded_bytes = 0;           // moved to the host by fine-grained offloading
  double recompute_bytes = 0;           // brought back by selective recompute in backward
  double forward_transient_bytes = 0;   // largest tensor alive only inside the forward
  double backward_transient_bytes = 0;  // activation gradients + bf16 weight grads
  // Fine-grained offloading's groups in this layer (the selected modules it runs) and what
  // each moves to the host: a chunk keeps its last layer's groups on the GPU when their
  // backward comes next (ChunkActivations::offload_margin_bytes).
  OffloadModules offload_groups;
  std::array<double, kOffloadModuleNames.size()> offloaded_by_module{};
};

// One micro-batch's token shape on this GPU.
struct ActivationShape {
  double tokens = 0;     // N: tokens of one micro-batch on this CP rank
  double sp_tokens = 0;  // N/TP under sequence parallel, else N
  double tp = 1;
  double h = 0;
  double batch = 0;
  double seq = 0;           // per CP rank
  double dropout_mask = 0;  // 1 byte per element when hidden dropout is on
  double act = 2;           // bytes per element of the activation dtype
};

// Bytes per element of the activations: the layers run in the params dtype. Float16Module
// casts the inputs for --bf16/--fp16; without them the model, its activations and its
// gradients stay fp32 (megatron/training/arguments.py params_dtype,
// megatron/core/transformer/module.py Float16Module).
double activation_element_bytes(const Config& config);

ActivationShape activation_shape(const NormalizedConfig& normalized);

// The two halves of transformer_layer.py, each closed by a bias-dropout-add. A hybrid layer
// has one of them: its mixer (Mamba, attention) or its MLP / MoE.
enum class LayerBlock : std::uint8_t { attention, mlp };

// Where a module's saved tensors and transients go.
class SavedSink {
 public:
  SavedSink(LayerActivations& out, RecomputeModules active, bool delay_wgrad = false)
      : out_(out), active_(active), delay_wgrad_(delay_wgrad) {}
  void add(const char* tensor, ModuleKind module, double elements, double bytes_per_element,
           RecomputeModules freed_by = {}, OffloadModules offload = {});
  // The largest tensor alive only inside the module's forward.
  void forward_transient(double bytes);
  // A module-specific backward working set beyond its activation gradients.
  void backward_transient(double bytes);
  double extra_backward() const { return extra_backward_; }
  // --delay-wgrad-compute: what a node's TE linears keep from their dgrad to the node's
  // backward_dw (transformer_engine/pytorch/module/linear.py, grouped_linear.py:
  // wgrad_store.put of grad_output, and the grouped wgrad buffers). The combined 1F1B plan
  // (model_chunk_schedule_plan.py) runs one node's backward_dw right after its backward: the
  // MLP or experts node, then the attention node with the shared experts. No-op without it.
  void delayed_wgrad(LayerBlock node, double bytes);
  double delayed_wgrad_peak() const;
  // The selective recompute modules this run uses (some change what a module saves).
  RecomputeModules active_recompute() const { return active_; }

 private:
  LayerActivations& out_;
  RecomputeModules active_;
  bool delay_wgrad_ = false;
  double extra_backward_ = 0;
  double delayed_[2] = {0, 0};  // per LayerBlock
};

// ---------------------------------------------------------------------------------------------
// FLOPs

// Forward FLOPs per token of each module, whole layer (all TP ranks): the terms of
// megatron/training/training.py num_floating_point_operations (transformer_flops).
struct ModuleFlops {
  double attention_projections = 0;  // QKV (or MLA down/up) and output projection
  double attention_core = 0;         // QK^T and softmax·V, causal, at the full sequence
  double mla_up_projections = 0;     // part of attention_projections (--recompute mla_up_proj)
  double dense_mlp = 0;
  double moe_routed = 0;  // top-k experts (and the latent projections)
  double moe_shared = 0;
  double logits = 0;     // one output layer
  double mtp_extra = 0;  // one MTP block's norms and eh_proj
  double mamba = 0;      // one Mamba-2 mixer: in_proj, scan, out_proj (training.py hybrid_flops)
  double gdn = 0;  // one Gated DeltaNet: in_proj, conv1d, delta rule, out_proj (gdn_layer_flops)
};

// Forward FLOPs per token of one decoder layer of `kind`: the modules it builds.
double layer_forward_flops(const ModuleFlops& flops, LayerKind kind);

// ---------------------------------------------------------------------------------------------
// Layer modules

struct ModuleContext {
  const NormalizedConfig& normalized;
  const ModelConfig& model;
  const Config& config;
  LayerKind kind = LayerKind::dense;
  bool moe_layer = false;  // kind is moe or moe_only
  // The layer runs inside Transformer Engine's FP8 autocast: its GEMM inputs are saved in FP8
  // and its GEMM weights keep FP8 copies (fp8_memory.hpp). Off for --first-last-layers-bf16
  // layers.
  bool fp8 = false;
};

ModuleContext module_context(const NormalizedConfig& normalized, LayerKind kind, bool fp8 = false);

// Bytes per element of a GEMM input a TE linear saves for backward: FP8 (1 byte plus its
// scales) in an FP8 layer, else the activation dtype (fp8_memory.hpp).
double gemm_input_bytes(const ModuleContext& context);

// Under delayed scaling a TE linear whose input another module already saves in bf16 keeps its
// own FP8 copy: Megatron sets save_original_input only for the other recipes (attention.py
// and moe/shared_experts.py, set_save_original_input).
void delayed_scaling_copy(const ModuleContext& context, SavedSink& sink, const char* tensor,
                          ModuleKind module, double elements, OffloadModules offload);

struct LayerModuleSpec {
  const char* name;
  LayerBlock block;
  bool (*present)(const ModuleContext&);
  void (*params)(const ModuleContext&, ParamSink&);
  void (*saved)(const ModuleContext&, const ActivationShape&, SavedSink&);
  void (*flops)(const ModuleContext&, ModuleFlops&);  // adds its forward FLOPs per token
};

// The FLOPs of a module with no matrix products of its own (norms, hyper-connection mixing):
// transformer_flops in megatron/training/training.py counts none for them.
inline void no_flops(const ModuleContext&, ModuleFlops&) {}
// A spec whose module adds no weights (its tensors are another spec's).
inline void no_params(const ModuleContext&, ParamSink&) {}

// Defines `spec` from its file's present/params/saved/flops functions (after the file's
// anonymous namespace, inside namespace megamem).
#define MEGAMEM_LAYER_MODULE_SPEC(spec, name_text, block_kind) \
  extern const LayerModuleSpec spec = {name_text, block_kind, present, params, saved, flops}

// GLU activations (SwiGLU) double fc1's output: 2, else 1 (megatron/core/transformer/mlp.py).
inline double glu_factor(const ModelConfig& model) {
  return model.activation == Activation::swiglu ? 2.0 : 1.0;
}

// The dense MLP width of a layer of `kind`: Gemma 4 E2B's K/V-sharing layers are twice
// ffn_hidden_size wide (Megatron-Bridge gemma/modeling_gemma4.py
// _gemma4_dense_ffn_hidden_size, use_double_wide_mlp).
inline int layer_ffn_hidden_size(const ModelConfig& model, LayerKind kind) {
  const bool doubled = model.double_wide_shared_mlp && layer_kind_shares_kv(kind);
  return doubled ? 2 * model.ffn_hidden_size : model.ffn_hidden_size;
}

// fc1 [glu x ffn x h] and fc2 [h x ffn] of a TP MLP (mlp.py), as the dense MLP and the shared
// experts register them (dense_mlp.cpp).
void tp_mlp_params(const ModuleContext& context, ModuleKind kind, std::int64_t ffn,
                   ParamSink& sink);

// What a gated MLP's activation keeps of `rows` tokens of output width `width` (dense_mlp.cpp):
// SwiGLU its input, fc1's output (glu x width, the activation dtype), freed by `freed_by`.
// Kimi K3's SiTU-GLU (kimi_k3_ops.py situ_and_mul, which kimi_k3_spec.py installs on every MLP
// and expert) runs in fp32 PyTorch: autograd keeps both tanh outputs, the sigmoid, the scaled
// tanh, and the two factors of the final product (6 x width fp32), not fc1's output, unless a
// checkpoint around the activation (`checkpoint`, where the module has one) keeps its input.
void glu_activation_input_saved(const ModuleContext& context, SavedSink& sink, const char* tensor,
                                ModuleKind module, double rows, double width,
                                RecomputeModules freed_by, OffloadModules offload,
                                RecomputeModules checkpoint = {});

// Whether a gated MLP (mlp.py MLP and its subclasses) runs the unfused glu(): bias-activation
// fusion off (--no-bias-swiglu-fusion / --no-bias-gelu-fusion, or Megatron-Core's fast_gelu,
// which transformer_config.py does not fuse); Kimi K3's SiTU module is another path.
bool unfused_glu(const ModuleContext& context);

// What mlp.py's unfused glu() keeps beside its input (dense_mlp.cpp): the gate activation's
// output and the up half + glu_linear_offset, both new tensors that the product saves.
// Megatron-Bridge's _gemma4_rms_norm (gemma/modeling_gemma4.py) over `rows` rows of `width`
// (torch_rms_norms.cpp): autograd keeps two fp32 copies of x, the fp32 product with the
// weight when there is one, and per row the fp32 mean + eps and its -0.5 power.
// `counted_bytes` per element are priced elsewhere already (megamem's norm entries count the
// input at the activation dtype).
enum class Gemma4NormWeight : std::uint8_t { weighted, scaleless };
void gemma4_rms_norm_saved(const char* tensor, ModuleKind module, double rows, double width,
                           Gemma4NormWeight weight, double counted_bytes, RecomputeModules freed_by,
                           SavedSink& sink);

void unfused_glu_products_saved(const ModuleContext& context, SavedSink& sink, ModuleKind module,
                                double rows, double width, RecomputeModules freed_by);

// Every layer module, in Megatron's registration order within a layer (registry.cpp).
std::span<const LayerModuleSpec* const> layer_module_specs();

// One transformer layer as the loop over its modules (transformer_layer.py).
void layer_params(const ModuleContext& context, ParamSink& sink);
void layer_saved(const ModuleContext& context, const ActivationShape& shape, SavedSink& sink);
void layer_flops(const ModuleContext& context, ModuleFlops& flops);

// Multi-latent attention's projections and FLOPs (attention_mla.cpp), which DeepSeek sparse
// attention builds too (attention_dsa.cpp).
void mla_params(const ModuleContext& context, ParamSink& sink);
void mla_flops(const ModuleContext& context, ModuleFlops& flops);

// DeepSeek-V4's hybrid attention (experimental_attention_variant dsv4_hybrid: MLA's
// flag with per-layer compression ratios) replaces MLA's attention; its indexer reuses the
// dsa_indexer_* sizes (Megatron-Bridge deepseek_v4_bridge.py sets them), not DSA's module.
inline bool dsv4_attention(const ModelConfig& model) {
  return model.multi_latent_attention && !model.csa_compress_ratios.empty();
}

// DeepSeek sparse attention (--experimental-attention-variant dsa) replaces MLA's attention.
inline bool dsa_attention(const ModelConfig& model) {
  return model.multi_latent_attention && model.dsa_indexer_topk > 0 && !dsv4_attention(model);
}
// The share of decoder layers that compute their own top-k and so have an indexer
// (dsa.py is_dsa_skip_topk_layer with --dsa-indexer-topk-freq / -skip-topk-offset).
double dsa_computing_layer_fraction(const ModelConfig& model);

// Shared by both attention specs: the input norm's saved tensors (transformer_layer.py), and
// whether core attention runs unfused (scores materialised; dot_product_attention.py).
void input_norm_saved(const ModuleContext& context, const ActivationShape& shape, SavedSink& sink);
bool unfused_attention(const Config& config);
// Whether --recompute-modules core_attn can keep more than it frees: its checkpoint holds
// linear_qkv's output behind V in standard attention (attention_gqa.cpp); the planner does
// not order a choice that adds core_attn below one without it (plan/planner.cpp).
bool core_attn_recompute_can_grow(const Config& config);

// Shared by the linear-recurrence mixers (Mamba-2, Gated DeltaNet): in_proj is a
// TELayerNormColumnParallelLinear with the layer's input norm fused in (mamba_mixer.py,
// gdn.py): the norm (replicated) and the [out_features x h] /TP weight without bias; it saves
// the norm's input and output, the output as its GEMM input (layernorm_linear.py).
void fused_norm_in_proj_params(const ModuleContext& context, ModuleKind module,
                               std::int64_t out_features, ParamSink& sink);
void fused_norm_in_proj_saved(const ModuleContext& context, const ActivationShape& shape,
                              ModuleKind module, SavedSink& sink);
// Their chunked kernels (mamba_ssm's SSD, fla's chunked delta rule) keep one matrix per chunk
// of the sequence and head: the elements of [batch x ceil(seq / chunk) x heads/TP x rows x
// cols] on this rank.
double per_chunk_elements(const ActivationShape& shape, double chunk_size, double heads,
                          double rows, double cols);
// fla's chunked delta rule (Gated DeltaNet, Kimi Delta Attention) on this rank per
// micro-batch, bf16: the chunk states h [B x chunks x heads/TP x dk x dv]
// (fla/ops/common/chunk_delta_h.py), the WY representation w, u and v_new
// (chunk_gated_delta_rule_fwd, chunk_kda_fwd). `heads` is the whole layer's.
struct DeltaRuleWorkingSet {
  double states_bytes = 0;
  double wu_bytes = 0;
  double v_new_bytes = 0;
};
DeltaRuleWorkingSet delta_rule_working_set(const ActivationShape& shape, double heads,
                                           double key_dim, double value_dim);

// Attention Residuals (attention_residuals.cpp; Kimi K3): what decoder layer `layer` (0-based,
// global) saves for its softmax mixes beyond the norms' inputs, and the stage-boundary tensor
// a pipeline stage starting at `first_layer` receives and keeps for its backward (0 without
// AttnRes, or for the first stage).
double attn_res_saved_bytes(const ModelConfig& model, const ActivationShape& shape, int layer);
double attn_res_stage_input_bytes(const ModelConfig& model, const ActivationShape& shape,
                                  int first_layer);

// ---------------------------------------------------------------------------------------------
// Embedding, output layer and loss, MTP

// embedding.cpp: word (and learned position) embeddings, its dropout mask, and Gemma 4's
// per-layer embeddings (ModelConfig::per_layer_input_size) with what they keep.
void embedding_params(const NormalizedConfig& normalized, bool shared, ParamSink& sink);
double embedding_saved_bytes(const ModelConfig& model, const ActivationShape& shape);

// output_loss.cpp: final norm, output layer, cross entropy.
void final_norm_params(const NormalizedConfig& normalized, ParamSink& sink);
// Hyper-connections' learned output contraction (hc_head_*) beside a final norm.
void hyper_connection_head_params(const ModelConfig& model, ModuleKind kind, ParamSink& sink);
void output_layer_params(const NormalizedConfig& normalized, bool shared, ParamSink& sink);
// The loss as the backward phases chunk_activations walks: final norm, output layer
// (logits), the logit soft-cap where the model has one, cross entropy.
struct LossActivations {
  double logits_bytes = 0;  // bf16 logits (diagnostic)
  double norm_saved = 0;
  double output_backward = 0;
  double loss_saved = 0;
  double loss_forward_transient = 0;
  double loss_backward_transient = 0;
  // The logit soft-cap between output layer and loss (0 without one): tanh's kept output,
  // the forward's logits and logits / cap beside it, and two logits gradients in backward.
  double softcap_saved = 0;
  double softcap_forward_transient = 0;
  double softcap_backward_transient = 0;
};
LossActivations loss_activations(const NormalizedConfig& normalized, const ActivationShape& shape);
double logits_flops(const NormalizedConfig& normalized);

// mtp.cpp: MultiTokenPredictionLayer's own tensors around its transformer layer.
void mtp_projection_params(const NormalizedConfig& normalized, ParamSink& sink);
void mtp_final_norm_params(const NormalizedConfig& normalized, ParamSink& sink);
double mtp_saved_bytes(const ModelConfig& model, const ActivationShape& shape);
double mtp_extra_flops(const ModelConfig& model);

// routed_experts.cpp: what the estimate takes for the busiest expert-parallel rank when the
// router is free to route unevenly (empty when routing cannot make a rank hotter).
std::string hottest_expert_rank_assumption(const NormalizedConfig& normalized);

// Forward FLOPs per token of every module kind of the model (dense and MoE layer modules,
// logits, MTP).
ModuleFlops model_module_flops(const NormalizedConfig& normalized);

}  // namespace megamem
