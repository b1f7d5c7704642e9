// One transformer layer as the loop over its module specs, and the sinks specs write into;
// see module_spec.hpp.
#include <algorithm>
#include <cmath>

#include "megamem/units.hpp"
#include "memory/attention_backend.hpp"
#include "memory/fp8_memory.hpp"
#include "module_spec.hpp"

namespace megamem {

const char* module_kind_name(ModuleKind kind) {
  static constexpr const char* kNames[] = {"word_embeddings",
                                           "position_embeddings",
                                           "input_layernorm",
                                           "self_attention",
                                           "pre_mlp_layernorm",
                                           "mlp",
                                           "router",
                                           "experts",
                                           "shared_experts",
                                           "latent_projections",
                                           "final_layernorm",
                                           "output_layer",
                                           "mtp_projection",
                                           "mtp_final_layernorm",
                                           "mixer",
                                           "self_attention"};  // GatedDeltaNet (gated_deltanet.cpp)
  return kNames[static_cast<std::size_t>(kind)];
}

// Built in place in the output: a tensor assembled on the stack field by field and then
// copied whole stalls on the partial stores (a sink pushes ~120 tensors per estimate).
ParamTensor* ParamSink::append(ModuleKind module, std::int64_t numel, bool gemm_weight,
                               std::int64_t copies) {
  if (numel <= 0 || copies <= 0) return nullptr;
  ParamTensor& t = out_.emplace_back(tag_);
  t.module = module;
  t.numel = numel;
  t.copies = copies;
  t.gemm_weight = gemm_weight;
  return &t;
}

void ParamSink::tensor(ModuleKind module, std::int64_t numel, bool gemm_weight) {
  // TE modules quantize their GEMM weights; the router is Megatron's own GEMM.
  if (ParamTensor* t = append(module, numel, gemm_weight)) {
    t->fp8 = tag_.fp8 && gemm_weight && module != ModuleKind::router;
  }
}

void ParamSink::linear(ModuleKind module, std::int64_t weight, std::int64_t bias) {
  tensor(module, weight, true);
  tensor(module, bias, false);
}

void ParamSink::experts(ModuleKind module, std::int64_t weight, std::int64_t bias,
                        std::int64_t copies) {
  if (ParamTensor* w = append(module, weight, true, copies)) w->expert = true;  // fp8: the layer's
  if (ParamTensor* b = append(module, bias, false, copies)) {
    b->expert = true;
    b->fp8 = false;
  }
}

void ParamSink::fp32_weight(ModuleKind module, std::int64_t numel) {
  if (ParamTensor* t = append(module, numel, true)) {
    t->fp32 = true;
    t->fp8 = false;
  }
}

void ParamSink::norm(ModuleKind module, std::int64_t width) {
  tensor(module, model_.normalization == Normalization::layernorm ? 2 * width : width);
}

void ParamSink::embedding_or_output(ModuleKind module, std::int64_t numel, bool gemm, bool shared) {
  if (ParamTensor* t = append(module, numel, gemm)) {
    t->shared_embedding = shared;
    t->embedding_or_output = true;
    t->fp8 = false;  // embedding and output layer stay 16-bit (fp8_utils.py)
  }
}

double activation_element_bytes(const Config& config) {
  return dtype_bytes(config.training.params_dtype);
}

ActivationShape activation_shape(const NormalizedConfig& n) {
  const Config& c = n.config;
  ActivationShape s;
  s.tp = c.parallel.tensor_parallel;
  s.batch = c.training.micro_batch_size;
  s.seq = static_cast<double>(c.training.seq_length) / c.parallel.context_parallel;
  s.tokens = s.batch * s.seq;
  s.sp_tokens = n.sequence_parallel ? s.tokens / s.tp : s.tokens;
  s.h = c.model.hidden_size;
  s.dropout_mask = c.model.hidden_dropout > 0 ? 1.0 : 0.0;
  s.act = activation_element_bytes(c);
  return s;
}

void SavedSink::add(const char* tensor, ModuleKind module, double elements,
                    double bytes_per_element, RecomputeModules freed_by, OffloadModules offload) {
  if (elements <= 0 || bytes_per_element <= 0) return;
  out_.saved.push_back(SavedActivation{
      .tensor = tensor,
      .bytes = elements * bytes_per_element,
      .elements = elements,
      .freed_by = freed_by,
      .offload = offload,
      .module = module,
  });
}

void SavedSink::forward_transient(double bytes) {
  out_.forward_transient_bytes = std::max(out_.forward_transient_bytes, bytes);
}

void SavedSink::backward_transient(double bytes) {
  extra_backward_ = std::max(extra_backward_, bytes);
}

void SavedSink::delayed_wgrad(LayerBlock node, double bytes) {
  if (delay_wgrad_) delayed_[static_cast<std::size_t>(node)] += bytes;
}

double SavedSink::delayed_wgrad_peak() const { return std::max(delayed_[0], delayed_[1]); }

ModuleContext module_context(const NormalizedConfig& normalized, LayerKind kind, bool fp8) {
  return ModuleContext{.normalized = normalized,
                       .model = normalized.config.model,
                       .config = normalized.config,
                       .kind = kind,
                       .moe_layer = layer_kind_is_moe(kind),
                       .fp8 = fp8};
}

double gemm_input_bytes(const ModuleContext& context) {
  if (!context.fp8) return activation_element_bytes(context.config);
  return fp8_saved_input_bytes_per_element(context.config.training.fp8_recipe);
}

void delayed_scaling_copy(const ModuleContext& context, SavedSink& sink, const char* tensor,
                          ModuleKind module, double elements, OffloadModules offload) {
  if (context.fp8 && context.config.training.fp8_recipe == Fp8Recipe::delayed) {
    sink.add(tensor, module, elements, gemm_input_bytes(context), {}, offload);
  }
}

// The backend TE resolves "auto" to (attention_backend.hpp) decides whether the s x s
// scores are kept.
bool unfused_attention(const Config& c) {
  const AttentionBackend backend = resolved_attention_backend(c);
  return backend == AttentionBackend::unfused || backend == AttentionBackend::local;
}

void input_norm_saved(const ModuleContext& context, const ActivationShape& s, SavedSink& sink) {
  const bool te = context.config.training.transformer_impl == TransformerImpl::transformer_engine;
  const bool mla = context.model.multi_latent_attention;
  // The TE spec fuses the input norm into linear_qkv (TELayerNormColumnParallelLinear),
  // which saves the norm input and, under SP, its local output shard (layernorm_linear.py,
  // ln_out_needs_gather). MLA keeps a standalone input norm (gpt_layer_specs.py).
  const bool standalone_norm = !te || mla;
  // Offloading hooks every tensor saved inside the named module's forward
  // (fine_grained_activation_offload.py, saved_tensors_hooks): a fused norm's input is saved
  // inside qkv_linear; attn_norm offloads only a standalone norm.
  // With hyper-connections the norm's input is the aggregated streams, which mhc recompute
  // discards (hyper_connection.py _forward_with_checkpoint).
  sink.add("input_layernorm input", ModuleKind::input_layernorm, s.sp_tokens * s.h, s.act,
           {RecomputeModule::mhc},
           {standalone_norm ? OffloadModule::attn_norm : OffloadModule::qkv_linear});
  // Under TE linear_qkv saves the fused norm's output as its GEMM input, FP8 in an FP8 layer
  // (layernorm_linear.py, with_quantized_norm). A standalone norm's (MLA) output is saved by
  // its consumers: under FP8 the two down-projections (q_down or q_proj, and kv_down) each
  // keep an FP8 copy (linear.py, saved_inputmat).
  const double output_bytes =
      !context.fp8 ? s.act : (standalone_norm ? 2.0 : 1.0) * gemm_input_bytes(context);
  // mhc recompute checkpoints a standalone norm (mhc_checkpoint_input_layernorm: not an
  // IdentityOp, which the fused TE norm leaves in its place).
  RecomputeModules output_freed_by;
  if (standalone_norm) output_freed_by.insert(RecomputeModule::mhc);
  if (standalone_norm && mla) output_freed_by.insert(RecomputeModule::layernorm);
  sink.add("input_layernorm output", ModuleKind::input_layernorm, s.sp_tokens * s.h, output_bytes,
           output_freed_by, {OffloadModule::qkv_linear});
}

void fused_norm_in_proj_params(const ModuleContext& context, ModuleKind module,
                               std::int64_t out_features, ParamSink& sink) {
  const std::int64_t h = context.model.hidden_size;
  sink.norm(module, h);
  sink.linear(module, out_features * h / context.config.parallel.tensor_parallel, 0);
}

void fused_norm_in_proj_saved(const ModuleContext& context, const ActivationShape& s,
                              ModuleKind module, SavedSink& sink) {
  sink.add("in_proj layer norm input", module, s.sp_tokens * s.h, s.act);
  sink.add("in_proj layer norm output", module, s.sp_tokens * s.h, gemm_input_bytes(context));
}

double per_chunk_elements(const ActivationShape& s, double chunk_size, double heads, double rows,
                          double cols) {
  return s.batch * std::ceil(s.seq / chunk_size) * (heads / s.tp) * rows * cols;
}

void layer_params(const ModuleContext& context, ParamSink& sink) {
  for (const LayerModuleSpec* spec : layer_module_specs()) {
    if (spec->present(context)) spec->params(context, sink);
  }
}

// megatron/core/transformer/transformer_layer.py: each block ends in a bias-dropout-add whose
// dropout saves a 1-byte mask of the (SP-sharded) hidden states (of the n streams with
// hyper-connections).
// A hybrid layer has one block (mamba_layer.py mamba_bda, or the TransformerLayer's one).
void layer_saved(const ModuleContext& context, const ActivationShape& shape, SavedSink& sink) {
  for (LayerBlock block : {LayerBlock::attention, LayerBlock::mlp}) {
    bool built = false;
    for (const LayerModuleSpec* spec : layer_module_specs()) {
      if (spec->block != block || !spec->present(context)) continue;
      spec->saved(context, shape, sink);
      built = true;
    }
    if (!built) continue;
    const bool attention = block == LayerBlock::attention;
    const bool mamba = context.kind == LayerKind::mamba;
    const bool gdn =
        attention && layer_kind_is_gdn(context.kind) && context.model.kda_layer_pattern.empty();
    const ModuleKind owner = mamba               ? ModuleKind::mamba_mixer
                             : gdn               ? ModuleKind::gated_deltanet
                             : attention         ? ModuleKind::self_attention
                             : context.moe_layer ? ModuleKind::routed_experts
                                                 : ModuleKind::mlp;
    const char* name = mamba               ? "Mamba dropout mask"
                       : attention         ? "attention dropout mask"
                       : context.moe_layer ? "MoE dropout mask"
                                           : "MLP dropout mask";
    // With hyper-connections the dropout runs on the block's output expanded to the n streams
    // (hyper_connection.py _fused_h_res_h_post_bda_native: bda on H_post x, n x h wide), inside
    // mhc recompute's CheckpointWithoutOutput, which runs it without grad (tensor_parallel/
    // random.py).
    const bool hc = context.model.enable_mhc_connections && !mamba;
    const double streams = hc ? context.model.mhc_num_residual_streams : 1;
    sink.add(name, owner, shape.sp_tokens * shape.h * streams, shape.dropout_mask,
             hc ? RecomputeModules{RecomputeModule::mhc} : RecomputeModules{});
  }
}

void layer_flops(const ModuleContext& context, ModuleFlops& flops) {
  for (const LayerModuleSpec* spec : layer_module_specs()) {
    if (spec->present(context)) spec->flops(context, flops);
  }
}

double layer_forward_flops(const ModuleFlops& f, LayerKind kind) {
  double out = layer_kind_has_mamba(kind) ? f.mamba : 0.0;
  if (layer_kind_is_gdn(kind)) out += f.gdn;
  if (layer_kind_has_attention(kind)) out += f.attention_projections + f.attention_core;
  if (layer_kind_has_dense_mlp(kind)) out += f.dense_mlp;
  if (layer_kind_is_moe(kind)) out += f.moe_routed + f.moe_shared;
  return out;
}

ModuleFlops model_module_flops(const NormalizedConfig& normalized) {
  // Megatron's count prices every module of both layer kinds, whatever the layer pattern.
  ModuleFlops dense, moe, mamba, gdn;
  layer_flops(module_context(normalized, LayerKind::dense), dense);
  if (normalized.config.model.num_experts > 0) {
    layer_flops(module_context(normalized, LayerKind::moe), moe);
  }
  if (!normalized.config.model.hybrid_layer_pattern.empty()) {
    layer_flops(module_context(normalized, LayerKind::mamba), mamba);
  }
  const ModelConfig& m = normalized.config.model;
  if (m.linear_attention_freq > 0 || m.hybrid_layer_pattern.find('G') != std::string::npos ||
      !m.kda_layer_pattern.empty()) {
    layer_flops(module_context(normalized, LayerKind::gdn), gdn);
  }
  ModuleFlops out = dense;
  out.gdn = gdn.gdn;
  out.moe_routed = moe.moe_routed;
  out.moe_shared = moe.moe_shared;
  out.mamba = mamba.mamba;
  out.logits = logits_flops(normalized);
  out.mtp_extra = mtp_extra_flops(normalized.config.model);
  return out;
}

}  // namespace megamem
