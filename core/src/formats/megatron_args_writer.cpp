// Config -> Megatron-LM flags (to_megatron_args), the inverse of parse_megatron_args().
//
// Emits the flags Megatron needs to build the model (layers, hidden size, heads, sequence
// length, micro batch) and every memory-relevant field that differs from Megatron's default.
// Fields without a Megatron flag (runtime overheads, moe_imbalance_factor,
// store_param_remainders, ...) and the world size are left out.
#include <charconv>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "megamem/megatron_args.hpp"
#include "number_text.hpp"

namespace megamem {
namespace {

// Quotes a word for a POSIX shell when it holds anything beyond [A-Za-z0-9_.,:/=+-].
std::string shell_quote(std::string_view word) {
  bool safe = !word.empty();
  for (const char c : word) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '.' || c == ',' || c == ':' || c == '/' || c == '=' ||
                       c == '+' || c == '-';
    if (!plain) safe = false;
  }
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

// The shortest decimal text that reads back as the same double.
std::string format_double(double value) { return shortest_double_text(value); }

// A 0/1 layer pattern as a run-length list expression, e.g. "([0]*3+[1]*58)".
std::string pattern_expression(const std::vector<std::uint8_t>& pattern) {
  std::string expression = "(";
  std::size_t i = 0;
  while (i < pattern.size()) {
    std::size_t run = 1;
    while (i + run < pattern.size() && pattern[i + run] == pattern[i]) ++run;
    if (expression.size() > 1) expression += '+';
    expression += "[" + std::to_string(pattern[i]) + "]*" + std::to_string(run);
    i += run;
  }
  return expression + ")";
}

class FlagWriter {
 public:
  void flag(std::string_view name) {
    if (!text_.empty()) text_ += ' ';
    text_ += name;
  }
  void flag_if(bool condition, std::string_view name) {
    if (condition) flag(name);
  }
  void value(std::string_view name, std::string_view value) {
    flag(name);
    text_ += ' ';
    text_ += shell_quote(value);
  }
  void value(std::string_view name, std::int64_t number) { value(name, std::to_string(number)); }
  void number_if(bool condition, std::string_view name, std::int64_t number) {
    if (condition) value(name, number);
  }
  void real_if(bool condition, std::string_view name, double number) {
    if (condition) value(name, format_double(number));
  }
  void list(std::string_view name, const std::vector<std::string>& words) {
    flag(name);
    for (const std::string& word : words) {
      text_ += ' ';
      text_ += shell_quote(word);
    }
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

void write_model(FlagWriter& w, const ModelConfig& m) {
  w.value("--num-layers", m.num_layers);
  w.value("--hidden-size", m.hidden_size);
  w.value("--num-attention-heads", m.num_attention_heads);
  if (m.num_query_groups > 0) {
    w.flag("--group-query-attention");
    w.value("--num-query-groups", m.num_query_groups);
  }
  w.number_if(m.kv_channels > 0, "--kv-channels", m.kv_channels);
  if (m.ffn_hidden_size > 0) {
    w.value("--ffn-hidden-size", m.ffn_hidden_size);
  } else if (m.activation == Activation::swiglu) {
    // Config's 0 means 4h, but Megatron's SwiGLU default is 8h/3 (arguments.py), so say it.
    w.value("--ffn-hidden-size", 4 * static_cast<std::int64_t>(m.hidden_size));
  }
  w.flag_if(m.activation == Activation::swiglu, "--swiglu");
  w.flag_if(m.activation == Activation::squared_relu, "--squared-relu");
  if (m.normalization == Normalization::rmsnorm) w.value("--normalization", "RMSNorm");
  w.flag_if(m.qk_layernorm, "--qk-layernorm");
  w.flag_if(!m.add_bias_linear, "--disable-bias-linear");
  w.flag_if(m.add_qkv_bias, "--add-qkv-bias");
  w.flag_if(m.attention_output_gate, "--attention-output-gate");
  switch (m.position_embedding) {
    case PositionEmbedding::learned_absolute:
      break;
    case PositionEmbedding::rope:
      w.value("--position-embedding-type", "rope");
      break;
    case PositionEmbedding::yarn:
      w.value("--position-embedding-type", "yarn");
      break;
    case PositionEmbedding::none:
      w.value("--position-embedding-type", "none");
      break;
  }
  w.number_if(m.max_position_embeddings > 0, "--max-position-embeddings",
              m.max_position_embeddings);
  w.flag_if(m.untie_embeddings_and_output_weights, "--untie-embeddings-and-output-weights");
  w.number_if(m.vocab_size > 0, "--vocab-size", m.vocab_size);
  w.number_if(m.make_vocab_size_divisible_by != 128, "--make-vocab-size-divisible-by",
              m.make_vocab_size_divisible_by);
  w.real_if(m.hidden_dropout != 0.1, "--hidden-dropout", m.hidden_dropout);
  w.real_if(m.attention_dropout != 0.1, "--attention-dropout", m.attention_dropout);

  w.number_if(m.num_experts > 0, "--num-experts", m.num_experts);
  w.number_if(m.moe_router_topk != 2, "--moe-router-topk", m.moe_router_topk);
  w.number_if(m.moe_ffn_hidden_size > 0, "--moe-ffn-hidden-size", m.moe_ffn_hidden_size);
  w.number_if(m.moe_shared_expert_intermediate_size > 0, "--moe-shared-expert-intermediate-size",
              m.moe_shared_expert_intermediate_size);
  w.flag_if(m.moe_shared_expert_gate, "--moe-shared-expert-gate");
  w.number_if(m.moe_latent_size > 0, "--moe-latent-size", m.moe_latent_size);
  w.flag_if(m.moe_router_enable_expert_bias, "--moe-router-enable-expert-bias");
  if (!m.moe_layer_pattern.empty()) {
    w.value("--moe-layer-freq", pattern_expression(m.moe_layer_pattern));
  } else {
    w.number_if(m.moe_layer_freq != 1, "--moe-layer-freq", m.moe_layer_freq);
  }

  w.flag_if(m.multi_latent_attention, "--multi-latent-attention");
  w.number_if(m.q_lora_rank > 0, "--q-lora-rank", m.q_lora_rank);
  w.number_if(m.kv_lora_rank != 32, "--kv-lora-rank", m.kv_lora_rank);
  w.number_if(m.qk_head_dim != 128, "--qk-head-dim", m.qk_head_dim);
  w.number_if(m.qk_pos_emb_head_dim != 64, "--qk-pos-emb-head-dim", m.qk_pos_emb_head_dim);
  w.number_if(m.v_head_dim != 128, "--v-head-dim", m.v_head_dim);
  w.number_if(m.mtp_num_layers > 0, "--mtp-num-layers", m.mtp_num_layers);
  w.flag_if(m.mtp_use_repeated_layer, "--mtp-use-repeated-layer");
}

void write_parallel(FlagWriter& w, const ParallelConfig& p) {
  w.number_if(p.tensor_parallel != 1, "--tensor-model-parallel-size", p.tensor_parallel);
  w.number_if(p.pipeline_parallel != 1, "--pipeline-model-parallel-size", p.pipeline_parallel);
  if (!p.pipeline_layout.empty()) {
    w.value("--pipeline-model-parallel-layout", p.pipeline_layout);
  } else {
    w.number_if(p.virtual_stages_per_pipeline_rank > 1, "--num-virtual-stages-per-pipeline-rank",
                p.virtual_stages_per_pipeline_rank);
  }
  w.number_if(p.context_parallel != 1, "--context-parallel-size", p.context_parallel);
  w.number_if(p.expert_parallel != 1, "--expert-model-parallel-size", p.expert_parallel);
  w.number_if(p.expert_tensor_parallel > 0, "--expert-tensor-parallel-size",
              p.expert_tensor_parallel);
  w.flag_if(p.sequence_parallel, "--sequence-parallel");
  w.number_if(p.decoder_first_pipeline_num_layers > 0, "--decoder-first-pipeline-num-layers",
              p.decoder_first_pipeline_num_layers);
  w.number_if(p.decoder_last_pipeline_num_layers > 0, "--decoder-last-pipeline-num-layers",
              p.decoder_last_pipeline_num_layers);
  w.flag_if(p.account_for_embedding_in_pipeline_split, "--account-for-embedding-in-pipeline-split");
  w.flag_if(p.account_for_loss_in_pipeline_split, "--account-for-loss-in-pipeline-split");
  w.number_if(p.num_distributed_optimizer_instances != 1, "--num-distributed-optimizer-instances",
              p.num_distributed_optimizer_instances);
  w.number_if(p.microbatch_group_size_per_vp_stage > 0,
              "--microbatch-group-size-per-virtual-pipeline-stage",
              p.microbatch_group_size_per_vp_stage);
}

void write_training(FlagWriter& w, const TrainingConfig& t) {
  w.value("--micro-batch-size", t.micro_batch_size);
  w.number_if(t.global_batch_size > 0, "--global-batch-size", t.global_batch_size);
  w.number_if(t.seq_length > 0, "--seq-length", t.seq_length);
  w.flag_if(t.params_dtype == DType::bf16, "--bf16");
  w.flag_if(t.params_dtype == DType::fp16, "--fp16");
  if (t.fp8_recipe != Fp8Recipe::none) {
    // e4m3 and hybrid store the same bytes; hybrid is the usual training choice.
    w.value("--fp8-format", "hybrid");
    switch (t.fp8_recipe) {
      case Fp8Recipe::none:
      case Fp8Recipe::delayed:
        break;  // Megatron's default recipe
      case Fp8Recipe::tensorwise:
        w.value("--fp8-recipe", "tensorwise");
        break;
      case Fp8Recipe::mxfp8:
        w.value("--fp8-recipe", "mxfp8");
        break;
      case Fp8Recipe::blockwise:
        w.value("--fp8-recipe", "blockwise");
        break;
    }
  }
  w.flag_if(t.fp8_param_gather, "--fp8-param-gather");
  if (t.transformer_impl == TransformerImpl::local) w.value("--transformer-impl", "local");
  switch (t.attention_backend) {
    case AttentionBackend::auto_select:
      break;
    case AttentionBackend::flash:
      w.value("--attention-backend", "flash");
      break;
    case AttentionBackend::fused:
      w.value("--attention-backend", "fused");
      break;
    case AttentionBackend::unfused:
      w.value("--attention-backend", "unfused");
      break;
    case AttentionBackend::local:
      w.value("--attention-backend", "local");
      break;
  }
  switch (t.moe_token_dispatcher) {
    case TokenDispatcher::allgather:
      break;
    case TokenDispatcher::alltoall:
      w.value("--moe-token-dispatcher-type", "alltoall");
      break;
    case TokenDispatcher::flex:
      w.value("--moe-token-dispatcher-type", "flex");
      break;
  }
  w.flag_if(t.moe_grouped_gemm, "--moe-grouped-gemm");
  if (t.moe_router_fp32) w.value("--moe-router-dtype", "fp32");
  w.flag_if(t.overlap_moe_expert_parallel_comm, "--overlap-moe-expert-parallel-comm");
  w.real_if(t.moe_expert_capacity_factor > 0.0, "--moe-expert-capacity-factor",
            t.moe_expert_capacity_factor);
  w.flag_if(t.moe_pad_expert_input_to_capacity, "--moe-pad-expert-input-to-capacity");
  if (t.cross_entropy != CrossEntropyImpl::unfused) w.flag("--cross-entropy-loss-fusion");
  if (t.cross_entropy == CrossEntropyImpl::te_fused) w.value("--cross-entropy-fusion-impl", "te");
  w.flag_if(!t.gradient_accumulation_fusion, "--no-gradient-accumulation-fusion");
  w.flag_if(!t.create_attention_mask_in_dataloader, "--no-create-attention-mask-in-dataloader");
  w.flag_if(!t.masked_softmax_fusion, "--no-masked-softmax-fusion");
  // Either spelling means the same once read back (arguments.py picks by --swiglu).
  w.flag_if(!t.bias_activation_fusion, "--no-bias-gelu-fusion");
  w.flag_if(!t.bias_activation_fusion, "--no-bias-swiglu-fusion");
  w.flag_if(t.deterministic_mode, "--deterministic-mode");

  const RecomputeConfig& rc = t.recompute;
  if (rc.granularity == RecomputeGranularity::full) {
    w.value("--recompute-granularity", "full");
    w.value("--recompute-method", rc.method == RecomputeMethod::block ? "block" : "uniform");
    w.value("--recompute-num-layers", rc.num_layers);
  } else if (rc.granularity == RecomputeGranularity::selective) {
    w.value("--recompute-granularity", "selective");
    if (!rc.modules.empty()) w.list("--recompute-modules", module_name_list(rc.modules));
  }
  w.flag_if(rc.distribute_saved_activations, "--distribute-saved-activations");

  const OffloadConfig& o = t.offload;
  w.flag_if(o.fine_grained_activation_offloading, "--fine-grained-activation-offloading");
  if (!o.offload_modules.empty()) w.list("--offload-modules", module_name_list(o.offload_modules));
  w.real_if(o.activation_offload_fraction != 1.0, "--activation-offload-fraction",
            o.activation_offload_fraction);
  w.number_if(o.cpu_offloading_num_layers > 0, "--cpu-offloading-num-layers",
              o.cpu_offloading_num_layers);
}

void write_optimizer(FlagWriter& w, const OptimizerConfig& o, DType params_dtype) {
  if (o.kind == OptimizerKind::sgd) w.value("--optimizer", "sgd");
  if (o.kind == OptimizerKind::muon) w.value("--optimizer", "muon");
  w.flag_if(o.use_distributed_optimizer, "--use-distributed-optimizer");
  // Only bf16 params reduce gradients in bf16 on request (arguments.py validate_args).
  w.flag_if(o.grad_reduce_in_bf16 && params_dtype == DType::bf16, "--grad-reduce-in-bf16");
  w.flag_if(o.use_precision_aware_optimizer, "--use-precision-aware-optimizer");
  if (o.main_grads_dtype != DType::fp32)
    w.value("--main-grads-dtype", dtype_name(o.main_grads_dtype));
  if (o.main_params_dtype != DType::fp32) {
    w.value("--main-params-dtype", dtype_name(o.main_params_dtype));
  }
  if (o.exp_avg_dtype != DType::fp32) w.value("--exp-avg-dtype", dtype_name(o.exp_avg_dtype));
  if (o.exp_avg_sq_dtype != DType::fp32) {
    w.value("--exp-avg-sq-dtype", dtype_name(o.exp_avg_sq_dtype));
  }
  w.flag_if(o.optimizer_cpu_offload, "--optimizer-cpu-offload");
  w.real_if(o.optimizer_offload_fraction != 1.0, "--optimizer-offload-fraction",
            o.optimizer_offload_fraction);
  w.flag_if(o.overlap_grad_reduce, "--overlap-grad-reduce");
  w.number_if(o.ddp_bucket_size_elements > 0, "--ddp-bucket-size", o.ddp_bucket_size_elements);
}

}  // namespace

std::string to_megatron_args(const Config& config) {
  FlagWriter w;
  write_model(w, config.model);
  write_parallel(w, config.parallel);
  write_training(w, config.training);
  write_optimizer(w, config.optimizer, config.training.params_dtype);
  return w.take();
}

std::string layout_megatron_args(const Config& config) {
  // The planner's search dimensions (planner.hpp), by their Megatron flags.
  static const std::set<std::string, std::less<>> layout_flags = {
      "--tensor-model-parallel-size",
      "--pipeline-model-parallel-size",
      "--num-virtual-stages-per-pipeline-rank",
      "--pipeline-model-parallel-layout",
      "--context-parallel-size",
      "--expert-model-parallel-size",
      "--expert-tensor-parallel-size",
      "--sequence-parallel",
      "--micro-batch-size",
      "--recompute-granularity",
      "--recompute-method",
      "--recompute-num-layers",
      "--recompute-modules",
      "--fine-grained-activation-offloading",
      "--offload-modules",
      "--use-precision-aware-optimizer",
      "--optimizer-cpu-offload",
      "--optimizer-offload-fraction",
  };
  const std::string all = to_megatron_args(config);
  const Expected<std::vector<std::string>> words = split_command_line(all);
  if (!words) return all;  // to_megatron_args quotes what it writes; kept as a safe fallback
  std::string out;
  bool keep = false;
  for (const std::string& word : *words) {
    if (word.rfind("--", 0) == 0) keep = layout_flags.count(word) > 0;
    if (!keep) continue;
    const bool quote = word.find_first_of(" |()*'\"") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + word + "'" : word);
  }
  return out;
}

}  // namespace megamem
