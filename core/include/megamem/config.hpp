// megamem configuration structs: what a Megatron-Core training run is, as plain data.
//
// Every field mirrors a Megatron-LM argument (named in its comment) and defaults to
// Megatron's own default for that argument (megatron/training/arguments.py), so a config
// built from a sparse command line means the same thing Megatron would run. A value of 0
// in a "derived by default" field (num_query_groups, kv_channels, ffn_hidden_size, ...)
// means "use Megatron's derivation"; normalize() in estimator.hpp resolves it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/modules.hpp"

namespace megamem {

enum class Activation { gelu, swiglu, squared_relu };
enum class Normalization { layernorm, rmsnorm };
enum class PositionEmbedding { learned_absolute, rope, yarn, none };
enum class DType { fp32, bf16, fp16, fp8 };
enum class OptimizerKind { adam, sgd, muon };
enum class TokenDispatcher { allgather, alltoall, flex };
// --moe-flex-dispatcher-backend: the library behind the flex dispatcher (token_dispatcher.py
// MoEFlexTokenDispatcher); each keeps communication buffers outside PyTorch's allocator.
enum class FlexDispatcherBackend { deepep, hybridep, ncclep };
enum class TransformerImpl { transformer_engine, local };
// --attention-backend; auto lets TE choose flash/fused, both keep no s x s scores.
enum class AttentionBackend { auto_select, flash, fused, unfused, local };
// --softmax-type: attention sinks. off_by_one adds a fixed 0 logit per head, learnable a
// trained one (transformer_config.py softmax_type; gpt-oss).
enum class SoftmaxType { vanilla, off_by_one, learnable };
// The transformer layer inside each MTP depth. Megatron-Core's GPT model builds it with the last
// decoder layer's spec (multi_token_prediction.py get_gpt_mtp_block_spec); Megatron-Bridge
// hands some models a spec of their own: a dense MLP with the model's windowed attention
// (MiMo-V2-Flash, mimo_v2_flash_provider.py mimov2flash_mtp_block_spec), or a dense MLP with
// the attention layer_types gives the layer's global index (Step-3.5, step35_bridge.py
// build_step35_layer_spec and Step35DecoderLayer): windowed where the MTP layers' stage starts
// at layer 0, full attention where an offset takes the index past the list.
enum class MtpLayerKind { last_decoder_layer, dense, window_dense, dense_by_layer_index };
// --dsa-kernel-backend: DeepSeek sparse attention's kernels. none is Megatron-Core's PyTorch
// reference (dense fp32 scores), the others the fused sparse kernels (dsa_kernels.py).
enum class DsaKernelBackend { none, tilelang, cudnn };
enum class RecomputeGranularity { none, selective, full };
enum class RecomputeMethod { uniform, block };
enum class CrossEntropyImpl { unfused, native_fused, te_fused };
enum class Fp8Recipe { none, delayed, tensorwise, mxfp8, blockwise };
// --fp8-format: E4M3 everywhere, or E5M2 for gradients (hybrid); the same byte either way.
enum class Fp8Format { hybrid, e4m3 };
// Fully sharded data parallelism instead of DDP: --use-megatron-fsdp or --use-torch-fsdp2.
enum class FsdpImpl { none, megatron, torch_fsdp2 };
// --data-parallel-sharding-strategy of Megatron-FSDP: what is sharded over the DP group
// (ZeRO-0 .. ZeRO-3).
enum class FsdpSharding { no_shard, optim, optim_grads, optim_grads_params };
// --cuda-graph-impl (megatron/training/arguments.py): --enable-cuda-graph is the old spelling of
// local, --external-cuda-graph of transformer_engine; --cuda-graph-scope full_iteration of
// full_iteration.
enum class CudaGraphImpl { none, local, transformer_engine, full_iteration };

// Megatron's names of the dtypes (--main-grads-dtype fp32, ...), as flags and JSON write them,
// in DType order.
inline constexpr std::array<std::string_view, 4> kDTypeNames = {"fp32", "bf16", "fp16", "fp8"};
static_assert(kDTypeNames.size() == static_cast<std::size_t>(DType::fp8) + 1);

constexpr std::string_view dtype_name(DType dtype) {
  const auto index = static_cast<std::size_t>(dtype);
  return index < kDTypeNames.size() ? kDTypeNames[index] : kDTypeNames[0];
}

// The network architecture (independent of how it is parallelised).
struct ModelConfig {
  std::string name;
  int num_layers = 0;           // --num-layers (decoder layers; MTP layers are separate)
  int hidden_size = 0;          // --hidden-size
  int num_attention_heads = 0;  // --num-attention-heads
  int num_query_groups = 0;     // --num-query-groups with --group-query-attention; 0 = MHA
  int kv_channels = 0;          // --kv-channels; 0 = hidden_size / num_attention_heads
  int ffn_hidden_size = 0;      // --ffn-hidden-size; 0 = 4 * hidden_size
  Activation activation = Activation::gelu;                // --swiglu, --squared-relu
  Normalization normalization = Normalization::layernorm;  // --normalization
  bool qk_layernorm = false;                               // --qk-layernorm
  // Llama-4's parameter-free L2 norm on queries and keys, which replaces --qk-layernorm's
  // norms (transformer_config.py qk_l2_norm; --qk-l2-norm, post-training's
  // --export-qk-l2-norm; attention.py picks torch_norm.py L2Norm first).
  bool qk_l2_norm = false;
  bool add_bias_linear = true;         // --disable-bias-linear clears it
  bool add_qkv_bias = false;           // --add-qkv-bias
  bool attention_output_gate = false;  // --attention-output-gate
  // A sigmoid gate per head on the core attention output (Step-3.5-Flash's g_proj): one scalar
  // per head, num_attention_heads rows appended to linear_qkv (Megatron-LM dev
  // transformer_config.py head_wise_attn_gate; not in the flag table of main).
  bool head_wise_attn_gate = false;
  // A norm on linear_proj's and fc2's outputs ("sandwich" norms: Megatron-Bridge's
  // TERowParallelLinearLayerNorm for Gemma 2/3 and EXAONE 4.0); no Megatron-LM flag.
  bool post_sublayer_norms = false;
  // Every norm of the layer is a plain-PyTorch RMSNorm expression that keeps fp32
  // intermediates, and V gets a scaleless one (Megatron-Bridge's Gemma 4 dense layer,
  // gemma/modeling_gemma4.py _gemma4_rms_norm, _v_norm); no Megatron-LM flag.
  bool torch_rms_norms = false;
  // The layer is built from Megatron-Core's local spec whatever --transformer-impl says
  // (Megatron-Bridge's Gemma 4 dense: gemma/modeling_gemma4.py get_gemma4_layer_spec uses
  // LocalSpecProvider); no Megatron-LM flag. Normalization runs it as --transformer-impl local.
  bool local_layer_spec = false;
  // Megatron-Bridge's Gemma 4 MoE layer (HF enable_moe_block; gemma/modeling_gemma4.py
  // Gemma4TransformerLayer, Gemma4MoELayer, Gemma4TopKRouter, Gemma4SelfAttention): the routed
  // experts, the shared expert and the router each get their own plain-PyTorch norm of the
  // layer's input, the router rescales its input and each expert's probability, three
  // plain-PyTorch post-norms follow (routed, shared, sum), and V gets a plain-PyTorch norm.
  // Every layer must be MoE. No Megatron-LM flag.
  bool gemma4_moe_layer = false;
  // Gemma 4's per-layer embeddings (HF hidden_size_per_layer_input; 0 = none), as
  // Megatron-Bridge's Gemma4DenseProvider builds them (gemma/modeling_gemma4.py
  // _attach_ple_modules): a [vocab_size x num_layers * P] table, a projection from hidden to
  // num_layers * P and a norm of P on the first stage, and in every layer a gate (h -> P), a
  // projection (P -> h) and a norm of h. No Megatron-LM flag.
  int per_layer_input_size = 0;
  // The last N decoder layers take K and V from the last earlier layer of their attention type
  // (HF num_kv_shared_layers; Megatron-Bridge's Gemma4DenseSelfAttention,
  // wire_gemma4_kv_sharing): they keep their K/V weights but save no K/V norms. No flag.
  int kv_shared_layers = 0;
  // Those last kv_shared_layers layers' MLPs are twice ffn_hidden_size wide (HF
  // use_double_wide_mlp; modeling_gemma4.py _gemma4_dense_ffn_hidden_size). No flag.
  bool double_wide_shared_mlp = false;
  // The MLP's activation is Megatron-Core's fast_gelu (GELU's tanh form, activations.py), as
  // Megatron-Bridge's Gemma providers set it; transformer_config.py refuses bias-activation
  // fusion with it, so normalization turns training.bias_activation_fusion off and a gated MLP
  // runs mlp.py's unfused glu(). No Megatron-LM flag.
  bool fast_gelu = false;
  SoftmaxType softmax_type = SoftmaxType::vanilla;  // --softmax-type
  // Sliding-window attention (--window-size W,0: each token sees W earlier tokens and itself;
  // 0 = full causal attention) on every layer but each --window-attn-skip-freq-th (0 = all
  // layers windowed); transformer/utils.py is_layer_window_attention.
  int window_size = 0;
  int window_attn_skip_freq = 0;
  // --window-attn-skip-freq as an explicit list, one entry per decoder layer (1 = windowed,
  // 0 = full attention); empty means the integer window_attn_skip_freq. MiMo-V2-Flash's
  // hybrid_layer_pattern (Megatron-Bridge mimo_v2_flash_provider.py) keeps layer 1 full.
  std::vector<std::uint8_t> window_attn_pattern;
  // A windowed layer's own attention shape (0 = the full-attention layers'): Megatron-Bridge
  // builds Step-3.5's sliding layers with 96 query heads beside 64 on full layers
  // (stepfun/step35_provider.py Step35DecoderLayer, sliding_attention_setting); no Megatron-LM
  // flag.
  int window_num_attention_heads = 0;
  int window_num_query_groups = 0;
  int window_kv_channels = 0;
  // The value head dimension of (non-MLA) attention where it differs from the query/key one
  // (0 = kv_channels): Megatron-Bridge's MiMoV2FlashSelfAttention
  // (mimo_v2_flash/modeling_mimo_v2_flash.py) builds V as query groups x v_channels in
  // linear_qkv, linear_proj from heads x v_channels, and passes TE v_channels. No Megatron-LM
  // flag: --v-head-dim is MLA's (v_head_dim below).
  int v_channels = 0;
  // Logit soft-capping, cap * tanh(x / cap) (0 = none): Megatron-Bridge's Gemma 2 and 4
  // output layers (gemma/gemma2_provider.py Gemma2OutputLayer, gemma4_provider.py) cap the
  // logits; Gemma 2's core attention caps the scores (Gemma2FlexDotProductAttention, PyTorch
  // FlexAttention with a score_mod). No Megatron-LM flag.
  double final_logit_softcapping = 0;
  double attn_logit_softcapping = 0;
  PositionEmbedding position_embedding = PositionEmbedding::learned_absolute;
  int max_position_embeddings = 0;  // --max-position-embeddings; 0 = seq_length
  bool untie_embeddings_and_output_weights = false;
  std::int64_t vocab_size = 0;             // tokenizer vocabulary before padding
  int make_vocab_size_divisible_by = 128;  // --make-vocab-size-divisible-by

  // Mixture of experts (num_experts == 0: dense model).
  int num_experts = 0;                          // --num-experts
  int moe_router_topk = 2;                      // --moe-router-topk
  int moe_ffn_hidden_size = 0;                  // --moe-ffn-hidden-size; 0 = ffn_hidden_size
  int moe_shared_expert_intermediate_size = 0;  // summed over shared experts; 0 = none
  bool moe_shared_expert_gate = false;          // --moe-shared-expert-gate
  // Llama-4 scales the dispatched tokens by their routing probability before the experts
  // (transformer_config.py moe_apply_probs_on_input, top-1 only: moe/experts.py).
  bool moe_apply_probs_on_input = false;
  int moe_latent_size = 0;                     // --moe-latent-size; 0 = none
  bool moe_router_enable_expert_bias = false;  // --moe-router-enable-expert-bias
  // The router weight held as an fp32 parameter whatever the params dtype: Megatron-Bridge's
  // MiniMax-M3 provider promotes it before Float16Module and restores it after
  // (minimax_m3/minimax_m3_bridge.py _promote_router_weights_to_float32,
  // models/model_provider.py _apply_mixed_precision_wrapper); Megatron-Core's own router.py
  // casts it to the params dtype. No Megatron-LM flag and no Bridge config key.
  bool moe_router_fp32_params = false;
  // Hash routing (DeepSeek-V4): MoE layers with layer_number <= moe_n_hash_layers take their
  // experts from a token-id lookup table, an int32 [vocab x top-k] buffer without expert bias
  // (Megatron-LM dev moe/router.py TopKRouter tid2eid). No flag in main's arguments.py.
  int moe_n_hash_layers = 0;
  // --moe-layer-freq as an explicit 0/1 pattern over decoder layers (1 = MoE). Empty means
  // an integer frequency, given in moe_layer_freq.
  std::vector<std::uint8_t> moe_layer_pattern;
  int moe_layer_freq = 1;

  // Multi-latent attention (DeepSeek-V2/V3).
  bool multi_latent_attention = false;  // --multi-latent-attention
  int q_lora_rank = 0;                  // --q-lora-rank; 0 = none (plain linear_q_proj)
  int kv_lora_rank = 32;                // --kv-lora-rank
  int qk_head_dim = 128;                // --qk-head-dim
  int qk_pos_emb_head_dim = 64;         // --qk-pos-emb-head-dim
  int v_head_dim = 128;                 // --v-head-dim

  // DeepSeek-V4 hybrid attention (Megatron-LM dev experimental_attention_variant
  // dsv4_hybrid: deepseek_v4_hybrid_attention.py DSv4HybridSelfAttention around csa.py
  // CompressedSparseAttention): per layer (decoder layers, then MTP layers) a compression ratio,
  // 0 (sliding window only), 4 (compressed keys picked by an indexer) or 128 (all compressed
  // keys). Empty: not this attention. Its query/key head is v_head_dim wide, a single KV head;
  // the output goes through o_groups grouped projections of o_lora_rank. No flag in main's
  // arguments.py.
  std::vector<std::uint8_t> csa_compress_ratios;
  int csa_window_size = 128;  // transformer_config.py csa_window_size
  int o_groups = 0;           // transformer_config.py o_groups (grouped output projection)
  int o_lora_rank = 0;        // transformer_config.py o_lora_rank

  // Manifold-constrained hyper-connections (--enable-mhc-connections): n residual streams
  // mixed around every attention and MLP block (megatron/core/transformer/hyper_connection.py).
  bool enable_mhc_connections = false;
  int mhc_num_residual_streams = 4;  // --mhc-num-residual-streams

  // Multi-token prediction.
  int mtp_num_layers = 0;                                          // --mtp-num-layers
  bool mtp_use_repeated_layer = false;                             // --mtp-use-repeated-layer
  MtpLayerKind mtp_layer_kind = MtpLayerKind::last_decoder_layer;  // Megatron-Bridge specs

  // Hybrid models (Megatron-Core's MambaModel / HybridModel): one symbol per decoder layer,
  // --hybrid-override-pattern (--hybrid-layer-pattern in later releases). Empty: a GPT model.
  // 'M' Mamba-2 mixer, '*' self-attention, '-' MLP, 'E' MoE, each a layer of its own
  // (megatron/core/models/hybrid/hybrid_layer_allocation.py, Symbols); 'P' is
  // Megatron-Bridge's Falcon-H1 parallel layer (falcon_h1/modeling_falconh1/
  // mamba_hybrid_layer_allocation.py Symbols.PARALLEL: Mamba-2 and attention side by side,
  // then an MLP), which FalconH1Stack builds instead of Megatron-LM's HybridStack.
  std::string hybrid_layer_pattern;
  int mamba_state_dim = 128;  // --mamba-state-dim (d_state)
  int mamba_head_dim = 64;    // --mamba-head-dim
  int mamba_num_groups = 8;   // --mamba-num-groups
  int mamba_num_heads = 0;    // --mamba-num-heads; 0 = 2 x hidden_size / mamba_head_dim

  // Gated DeltaNet linear attention in a GPT model (--experimental-attention-variant
  // gated_delta_net, spelled gdn in later releases): with --linear-attention-freq N every layer
  // but each N-th has a GatedDeltaNet mixer instead of self-attention
  // (megatron/core/models/gpt/experimental_attention_variant_module_specs.py
  // get_linear_attention_pattern). 0: no linear-attention layers. Sizes: transformer_config.py.
  int linear_attention_freq = 0;
  int linear_conv_kernel_dim = 4;   // --linear-conv-kernel-dim
  int linear_key_head_dim = 128;    // --linear-key-head-dim (query and key)
  int linear_value_head_dim = 128;  // --linear-value-head-dim (value and output gate)
  int linear_num_key_heads = 16;    // --linear-num-key-heads
  int linear_num_value_heads = 32;  // --linear-num-value-heads

  // Kimi Delta Attention (Megatron-Bridge's Kimi K3, kimi/kimi_k3_layers.py KimiK3Attention
  // _init_kda): the layers flagged here (one entry per decoder layer, 1 = KDA; Bridge's
  // kimi_kda_layers holds their 1-based numbers) have KDA instead of self-attention, with
  // kda_num_heads heads of kda_head_dim (query, key and value alike) and short convolutions
  // of kda_conv_kernel on q, k and v (kimi_linear_num_heads, kimi_linear_head_dim,
  // kimi_linear_conv_kernel_size in kimi_k3_provider.py). No Megatron-LM flags.
  std::vector<std::uint8_t> kda_layer_pattern;
  int kda_num_heads = 96;
  int kda_head_dim = 128;
  int kda_conv_kernel = 4;
  // Attention Residuals (Kimi K3's KimiK3TransformerLayer, kimi_attn_res_block_size): each
  // sublayer's input is a softmax mix of a bank of block snapshots (one per this many layers)
  // and the running sum, instead of the plain residual stream. 0 = the standard layer. With it
  // the layer is Bridge's build_kimi_k3_spec layer: its MLA has an output gate (g_proj) and its
  // MoE layers a routed-expert norm (KimiK3MoELayer). No Megatron-LM flag.
  int attn_res_block_size = 0;

  // DeepSeek sparse attention (--experimental-attention-variant dsa; DeepSeek-V3.2, GLM-5):
  // absorbed MLA whose queries attend to the top-k keys a lightweight indexer picks
  // (megatron/core/transformer/experimental_attention_variant/dsa.py). 0: no DSA.
  int dsa_indexer_topk = 0;              // --dsa-indexer-topk
  int dsa_indexer_n_heads = 64;          // --dsa-indexer-n-heads
  int dsa_indexer_head_dim = 128;        // --dsa-indexer-head-dim
  int dsa_indexer_topk_freq = 1;         // --dsa-indexer-topk-freq: 1 layer in N computes top-k
  int dsa_indexer_skip_topk_offset = 0;  // --dsa-indexer-skip-topk-offset

  double hidden_dropout = 0.1;     // --hidden-dropout
  double attention_dropout = 0.1;  // --attention-dropout
};

// Megatron-FSDP / PyTorch FSDP2 (megatron/core/distributed/fsdp/,
// torch_fully_sharded_data_parallel.py; flags in megatron/training/arguments.py).
struct FsdpConfig {
  FsdpImpl impl = FsdpImpl::none;
  FsdpSharding sharding = FsdpSharding::optim_grads_params;  // --data-parallel-sharding-strategy
  // --outer-dp-sharding-strategy across the --num-distributed-optimizer-instances replicas:
  // no_shard (HSDP) or optim (HFSDP, the main weights and optimizer states sharded over them).
  FsdpSharding outer_sharding = FsdpSharding::no_shard;
  DType main_params_dtype = DType::fp32;  // --megatron-fsdp-main-params-dtype
  // --megatron-fsdp-main-grads-dtype; without the flag fp32 (Megatron-Core <= 0.15 always
  // reduced in fp32 unless --grad-reduce-in-bf16; later releases default to the param dtype).
  DType main_grads_dtype = DType::fp32;
  bool double_buffer = false;  // --fsdp-double-buffer (implied by --use-nccl-ub)
  // --megatron-fsdp-max-pool-double-buffer: the pool fits every unit, not only the most
  // common one.
  bool max_pool_double_buffer = false;
  // --fsdp-db-use-persist-buf-on-alloc-fail: units outside the pool keep persistent buffers.
  bool persist_unpooled_buffers = false;
  // --suggested-communication-unit-size (elements); 0 = Megatron's default.
  std::int64_t communication_unit_elements = 0;
  bool reshard_after_forward = true;  // FSDP2; --torch-fsdp2-no-reshard-after-forward
  // --init-model-with-meta-device: without it the whole model is built unsharded on the GPU
  // before FSDP shards it (megatron/training/training.py get_model).
  bool init_model_with_meta_device = false;
};

// How the model is split over GPUs.
struct ParallelConfig {
  std::int64_t world_size = 1;                // number of GPUs in the job
  int tensor_parallel = 1;                    // --tensor-model-parallel-size
  int pipeline_parallel = 1;                  // --pipeline-model-parallel-size
  int virtual_stages_per_pipeline_rank = 1;   // VPP chunks per rank; 1 = no interleaving
  int context_parallel = 1;                   // --context-parallel-size
  int expert_parallel = 1;                    // --expert-model-parallel-size
  int expert_tensor_parallel = 0;             // --expert-tensor-parallel-size; 0 = TP
  bool sequence_parallel = false;             // --sequence-parallel (ignored when TP = 1)
  int decoder_first_pipeline_num_layers = 0;  // 0 = not set
  int decoder_last_pipeline_num_layers = 0;   // 0 = not set
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  std::string pipeline_layout;  // --pipeline-model-parallel-layout; empty = not set
  int num_distributed_optimizer_instances = 1;
  int microbatch_group_size_per_vp_stage = 0;  // 0 = pipeline_parallel
  FsdpConfig fsdp;
};

// Optimizer and its state precision.
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::adam;  // --optimizer
  bool use_distributed_optimizer = false;    // --use-distributed-optimizer
  bool grad_reduce_in_bf16 = false;          // --grad-reduce-in-bf16
  bool use_precision_aware_optimizer = false;
  DType main_grads_dtype = DType::fp32;   // precision-aware optimizer only
  DType main_params_dtype = DType::fp32;  // precision-aware optimizer only
  DType exp_avg_dtype = DType::fp32;      // precision-aware optimizer only
  DType exp_avg_sq_dtype = DType::fp32;   // precision-aware optimizer only
  bool store_param_remainders = true;     // TE >= 2.1 default
  // OptimizerConfig.fp8_recipe with FP8 off (with FP8 on it is training.fp8_recipe, and this
  // field is unused): Megatron-LM
  // passes --fp8-recipe (default delayed) with or without --fp8-format; Megatron-Bridge copies
  // mixed_precision.fp8_recipe (default tensorwise) onto it. With fp32 main params it decides
  // who keeps the precision-aware optimizer's master weights (optimizer_config.py).
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  bool optimizer_cpu_offload = false;       // --optimizer-cpu-offload
  double optimizer_offload_fraction = 1.0;  // --optimizer-offload-fraction
  bool overlap_grad_reduce = false;         // --overlap-grad-reduce (bucketing)
  // --overlap-param-gather-with-optimizer-step: one dense optimizer for the first model chunk
  // and one for the rest, stepped in turn, and no DDP buckets.
  bool overlap_param_gather_with_optimizer_step = false;
  std::int64_t ddp_bucket_size_elements = 0;  // --ddp-bucket-size; 0 = Megatron's rule
  OptimizerKind muon_scalar_optimizer = OptimizerKind::adam;
};

// Recompute (activation checkpointing) settings.
struct RecomputeConfig {
  RecomputeGranularity granularity = RecomputeGranularity::none;
  RecomputeMethod method = RecomputeMethod::uniform;
  int num_layers = 1;                         // --recompute-num-layers
  bool distribute_saved_activations = false;  // --distribute-saved-activations
  // --recompute-modules for selective granularity; empty with selective = {core_attn}.
  RecomputeModules modules;
};

// Activation offloading settings.
struct OffloadConfig {
  bool fine_grained_activation_offloading = false;  // --fine-grained-activation-offloading
  OffloadModules offload_modules;                   // --offload-modules
  double activation_offload_fraction = 1.0;
  bool cpu_offloading = false;        // legacy --cpu-offloading
  int cpu_offloading_num_layers = 0;  // --cpu-offloading-num-layers
  bool cpu_offloading_weights = false;
};

// Device memory beyond torch.cuda.memory_allocated() (runtime_overheads.cpp has the sources):
// the caching allocator's reserve, and what nvidia-smi counts outside the allocator.
struct RuntimeOverheadConfig {
  double cuda_context_gib = 0.5;  // CUDA context and lazily loaded kernel modules
  // NCCL_BUFFSIZE (4 MiB) x NCCL_MAX_NCHANNELS (32) x 2 ring peers, per communicator across
  // nodes (network transport, whose other buffers megamem has not traced).
  double nccl_gib_per_communicator = 0.25;
  // Per communicator within one node: 24 channels x (10 MiB receive + 2 MiB send) for the
  // three protocols over NVLink P2P, + 2 MiB x (3 x 32 p2p + 24 + 3) channel and communicator
  // structures = 534 MiB (NCCL 2.27, H100; runtime_overheads.cpp cites the files).
  double nccl_node_gib_per_communicator = 534.0 / 1024.0;
  // Cached blocks the allocator cannot reuse, as a fraction of the allocator peak; applies
  // without expandable segments.
  double fragmentation_fraction = 0.05;
  // The flex dispatcher's buffers; 0 sizes them from the backend's own rules
  // (flex_dispatcher_buffers.cpp), a value replaces that.
  double deepep_buffer_gib = 0.0;
  // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (Megatron-Bridge's launchers set it):
  // one growing segment per pool, reserved = the allocator peak rounded up to its page.
  bool expandable_segments = false;
  // NCCL_NVLS_ENABLE (NCCL's default, 2, uses NVLink SHARP where the node supports it; 0 turns
  // it off, as Megatron-Bridge's H100 performance recipes do): on a GPU with nvlink_multicast
  // each communicator that reduces inside a node maps NVLS buffers (runtime_overheads.cpp).
  bool nccl_nvls = true;
};

// The GPU: its capacity, and the allocator-resident memory no parameter formula covers.
struct DeviceConfig {
  std::string name;            // "H100 80GB"
  double capacity_gib = 80.0;  // usable device memory
  int gpus_per_node = 8;
  double intra_node_bandwidth_gb_per_s = 450.0;  // per GPU, per direction (NVLink)
  double inter_node_bandwidth_gb_per_s = 50.0;   // per GPU, per direction (InfiniBand/RoCE)
  double peak_bf16_tflops = 989.0;               // dense bf16 tensor-core peak
  // Transformer Engine's cuBLAS workspace per stream: 32 MiB on Hopper and later, 4 MiB on
  // earlier GPUs (transformer_engine/pytorch/cpp_extensions/gemm.py,
  // get_cublas_workspace_size_bytes).
  double te_cublas_workspace_mib = 32.0;
  // Blackwell and later run FP8 GEMMs in any layout, so Transformer Engine keeps no transposed
  // copy of tensor-scaled FP8 weights (transformer_engine/pytorch/utils.py,
  // is_non_tn_fp8_gemm_supported; tensor/float8_tensor.py).
  bool fp8_gemm_any_layout = false;
  // Hopper and later behind an NVSwitch (HGX, DGX, NVL72): NVLink SHARP multicast, which NCCL
  // uses for reductions inside the NVLink domain (src/transport/nvls.cc ncclNvlsInit; the graph
  // search needs an NVSwitch and compute capability 9.0, graph/search.cc).
  bool nvlink_multicast = false;
  // CUDA compute capability x 10 (80 = A100, 90 = H100, 100 = B200): Transformer Engine picks
  // its attention backend by it.
  int compute_capability = 90;
  // RNG tracker states, rotary caches and other small persistent allocations no formula
  // covers (memory-model.md 3.6, the rest of C_fixed); calibrated on Megatron's CI.
  double fixed_allocated_mib = 10.0;
};

// One training step's shape and numerics.
struct TrainingConfig {
  int micro_batch_size = 1;                  // --micro-batch-size
  std::int64_t global_batch_size = 0;        // --global-batch-size; 0 = micro_batch * DP
  int seq_length = 0;                        // --seq-length
  DType params_dtype = DType::fp32;          // --bf16 / --fp16 (Megatron's default is fp32)
  Fp8Recipe fp8_recipe = Fp8Recipe::none;    // --fp8-format with --fp8-recipe
  Fp8Format fp8_format = Fp8Format::hybrid;  // --fp8-format (kept for the flags written back)
  bool fp8_param_gather = false;             // --fp8-param-gather
  // --first-last-layers-bf16 with --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16
  // (1 each by default; transformer_config.py): these decoder layers run, and keep their
  // weights, in bf16 (fp8_utils.py, is_first_last_bf16_layer).
  int fp8_bf16_layers_at_start = 0;
  int fp8_bf16_layers_at_end = 0;
  TransformerImpl transformer_impl = TransformerImpl::transformer_engine;
  AttentionBackend attention_backend = AttentionBackend::auto_select;
  DsaKernelBackend dsa_kernel_backend = DsaKernelBackend::none;  // --dsa-kernel-backend
  // --dsa-indexer-loss-coeff (0 = None: no indexer loss, the indexer runs without grad) and
  // --dsa-indexer-use-sparse-loss (the KL loss on the top-k support only).
  double dsa_indexer_loss_coeff = 0;
  bool dsa_indexer_use_sparse_loss = false;
  TokenDispatcher moe_token_dispatcher = TokenDispatcher::allgather;
  FlexDispatcherBackend moe_flex_dispatcher_backend = FlexDispatcherBackend::deepep;
  int moe_flex_dispatcher_num_sms = 20;  // DeepEP's SMs (token_dispatcher.py: None -> 20)
  bool moe_grouped_gemm = false;         // --moe-grouped-gemm
  bool moe_permute_fusion = false;       // --moe-permute-fusion (TE's fused permute kernels)
  // TransformerConfig.use_fused_weighted_squared_relu (no Megatron-LM flag; Megatron-Bridge's
  // Nemotron-3 recipes set it): squared-ReLU experts apply the routing probabilities inside
  // the activation kernel.
  bool moe_fused_weighted_squared_relu = false;
  bool moe_router_fp32 = false;  // --moe-router-dtype fp32 (router scores kept in fp32)
  bool overlap_moe_expert_parallel_comm = false;  // one extra warm-up micro-batch (VPP)
  bool delay_wgrad_compute = false;  // --delay-wgrad-compute: wgrad GEMMs wait for backward_dw
  double moe_expert_capacity_factor = 0.0;  // 0 = dropless
  bool moe_pad_expert_input_to_capacity = false;
  double moe_imbalance_factor = 1.0;  // hottest EP rank's share over balanced (user knob)
  // --moe-router-force-load-balancing: the router assigns tokens evenly (benchmarks).
  bool moe_router_force_load_balancing = false;
  // --moe-shared-expert-overlap: shared experts on a side stream beside the dispatch.
  bool moe_shared_expert_overlap = false;
  CrossEntropyImpl cross_entropy = CrossEntropyImpl::unfused;
  bool gradient_accumulation_fusion = true;  // --no-gradient-accumulation-fusion clears it
  bool create_attention_mask_in_dataloader = true;
  // --deterministic-mode: PyTorch then needs CUBLAS_WORKSPACE_CONFIG=:4096:8, a 32 MiB
  // cuBLAS workspace per handle instead of the default 8 MiB.
  bool deterministic_mode = false;
  bool masked_softmax_fusion = true;  // --no-masked-softmax-fusion clears it (unfused path)
  // --attention-softmax-in-fp32, or --apply-query-key-layer-scaling (which implies it): the
  // unfused path's PyTorch softmax runs, and keeps its output, in fp32.
  bool attention_softmax_in_fp32 = false;
  // flash-attn >= 2.4.1 is installed (an environment fact, not a flag). Transformer Engine
  // needs it on GPUs before Hopper in deterministic mode, or falls back to unfused attention.
  bool flash_attn_available = true;
  // The run's Transformer Engine is older than 1.13 (an environment fact, not a flag): its
  // RMSNorm and LayerNorm modules save a view of their input (module/rmsnorm.py,
  // layernorm.py at v1.12: inp.view), so Q/K norms keep linear_qkv's output alive. From 1.13
  // they are te.ops norms, which save a contiguous copy (ops/basic/rmsnorm.py).
  bool te_norm_saves_input_view = false;
  // --defer-embedding-wgrad-compute with --wgrad-deferral-limit (0 = no limit): the output
  // layer keeps inputs and output gradients of micro-batches until the pipeline flush.
  bool defer_embedding_wgrad_compute = false;
  int wgrad_deferral_limit = 0;
  // --no-bias-gelu-fusion / --no-bias-swiglu-fusion clear it: unfused activations keep
  // extra copies (MoE experts: megatron/core/transformer/moe/experts.py, bias_act_func).
  bool bias_activation_fusion = true;
  // Per-layer CUDA graphs (megatron/core/transformer/cuda_graphs.py): the implementation, the
  // captured parts of each layer (--cuda-graph-modules, empty = whole layers) and the eager
  // training steps before the capture (--cuda-graph-warmup-steps, transformer_config.py).
  CudaGraphImpl cuda_graph_impl = CudaGraphImpl::none;
  // --tp-comm-overlap: Transformer Engine's userbuffers for TP communication/GEMM overlap,
  // registered outside PyTorch's allocator (runtime_overheads.cpp).
  bool tp_comm_overlap = false;
  CudaGraphModules cuda_graph_modules;
  int cuda_graph_warmup_steps = 3;
  RecomputeConfig recompute;
  OffloadConfig offload;
};

// Everything one estimate needs.
struct Config {
  ModelConfig model;
  ParallelConfig parallel;
  TrainingConfig training;
  OptimizerConfig optimizer;
  RuntimeOverheadConfig runtime;
  DeviceConfig device;
};

}  // namespace megamem
