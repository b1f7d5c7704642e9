// Megatron-LM flags -> Config (parse_megatron_args) and back (to_megatron_args). One
// TEST_CASE per rule; rules cite megatron/training/arguments.py (NVIDIA/Megatron-LM d98e8a6).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "megamem/bridge_config.hpp"
#include "megamem/estimate.hpp"
#include "megamem/megatron_args.hpp"
#include "model_fixtures.hpp"

using namespace megamem;
using Catch::Matchers::Contains;

namespace {

// A small GPT that Megatron accepts: the flags it requires and nothing else.
const std::string kBase =
    "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
    "--max-position-embeddings 1024 --micro-batch-size 4 --vocab-size 50257 ";

MegatronArgs parse_ok(const std::string& flags, std::int64_t world_size = 8) {
  Expected<MegatronArgs> parsed = parse_megatron_args(flags, world_size);
  INFO("flags: " << flags);
  if (!parsed) FAIL(parsed.error().field + ": " + parsed.error().message);
  return parsed.value();
}

Error parse_error(const std::string& flags, std::int64_t world_size = 8) {
  Expected<MegatronArgs> parsed = parse_megatron_args(flags, world_size);
  INFO("flags: " << flags);
  REQUIRE_FALSE(parsed.has_value());
  return parsed.error();
}

// Flags that parse but break a rule of the rule book (normalize()): its Error.
Error rule_error(const std::string& flags, std::int64_t world_size = 8) {
  const Config c = parse_ok(flags, world_size).config;
  Expected<NormalizedConfig> normalized = normalize(c);
  INFO("flags: " << flags);
  REQUIRE_FALSE(normalized.has_value());
  return normalized.error();
}

// Flags that parse and estimate, with a warning naming the policy.
std::vector<std::string> rule_warnings(const std::string& flags, std::int64_t world_size = 8) {
  Expected<NormalizedConfig> normalized = normalize(parse_ok(flags, world_size).config);
  INFO("flags: " << flags);
  REQUIRE(normalized.has_value());
  return normalized->warnings;
}

bool listed(const std::vector<std::string>& list, const std::string& flag) {
  for (const std::string& item : list) {
    if (item == flag) return true;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Defaults and required flags
// ---------------------------------------------------------------------------------------------

TEST_CASE("absent flags take Megatron's defaults") {
  const MegatronArgs a = parse_ok(kBase, 8);
  const Config& c = a.config;
  CHECK(c.model.num_layers == 4);
  CHECK(c.model.hidden_size == 512);
  CHECK(c.model.num_attention_heads == 8);
  CHECK(c.model.num_query_groups == 0);  // MHA
  CHECK(c.model.kv_channels == 0);       // hidden / heads
  CHECK(c.model.ffn_hidden_size == 0);   // 4 * hidden
  CHECK(c.model.activation == Activation::gelu);
  CHECK(c.model.normalization == Normalization::layernorm);
  CHECK(c.model.add_bias_linear);
  CHECK_FALSE(c.model.qk_layernorm);
  CHECK(c.model.position_embedding == PositionEmbedding::learned_absolute);
  CHECK(c.model.max_position_embeddings == 1024);
  CHECK_FALSE(c.model.untie_embeddings_and_output_weights);
  CHECK(c.model.vocab_size == 50257);
  CHECK(c.model.make_vocab_size_divisible_by == 128);
  CHECK_THAT(c.model.hidden_dropout, Catch::Matchers::WithinRel(0.1));
  CHECK_THAT(c.model.attention_dropout, Catch::Matchers::WithinRel(0.1));
  CHECK(c.model.num_experts == 0);
  CHECK(c.model.moe_router_topk == 2);
  CHECK(c.model.moe_layer_freq == 1);
  CHECK(c.model.moe_layer_pattern.empty());
  CHECK(c.model.kv_lora_rank == 32);
  CHECK(c.model.q_lora_rank == 0);
  CHECK(c.model.mtp_num_layers == 0);
  CHECK(c.parallel.world_size == 8);
  CHECK(c.parallel.tensor_parallel == 1);
  CHECK(c.parallel.pipeline_parallel == 1);
  CHECK(c.parallel.virtual_stages_per_pipeline_rank == 1);
  CHECK(c.parallel.context_parallel == 1);
  CHECK(c.parallel.expert_parallel == 1);
  CHECK(c.parallel.expert_tensor_parallel == 0);  // = TP
  CHECK_FALSE(c.parallel.sequence_parallel);
  CHECK(c.parallel.num_distributed_optimizer_instances == 1);
  CHECK(c.training.micro_batch_size == 4);
  CHECK(c.training.global_batch_size == 0);  // micro batch x DP
  CHECK(c.training.seq_length == 1024);
  CHECK(c.training.params_dtype == DType::fp32);
  CHECK(c.training.fp8_recipe == Fp8Recipe::none);
  CHECK(c.training.transformer_impl == TransformerImpl::transformer_engine);
  CHECK(c.training.attention_backend == AttentionBackend::auto_select);
  CHECK(c.training.moe_token_dispatcher == TokenDispatcher::allgather);
  CHECK(c.training.cross_entropy == CrossEntropyImpl::unfused);
  CHECK(c.training.gradient_accumulation_fusion);
  CHECK(c.training.create_attention_mask_in_dataloader);
  CHECK(c.training.recompute.granularity == RecomputeGranularity::none);
  CHECK_FALSE(c.training.offload.fine_grained_activation_offloading);
  CHECK(c.optimizer.kind == OptimizerKind::adam);
  CHECK_FALSE(c.optimizer.use_distributed_optimizer);
  CHECK_FALSE(c.optimizer.grad_reduce_in_bf16);
  CHECK_THAT(c.optimizer.optimizer_offload_fraction, Catch::Matchers::WithinRel(1.0));
  CHECK(a.ignored_flags.empty());
  CHECK(a.unknown_flags.empty());
  CHECK(a.unmodeled_flags.empty());
}

TEST_CASE("Megatron's required flags are errors when missing") {
  for (const std::string flag : {"--num-layers", "--hidden-size", "--num-attention-heads",
                                 "--seq-length", "--micro-batch-size"}) {
    std::string flags = kBase;
    const std::size_t at = flags.find(flag + " ");
    REQUIRE(at != std::string::npos);
    const std::size_t value_end = flags.find(' ', at + flag.size() + 1);
    flags.erase(at, value_end - at);
    CHECK(parse_error(flags).field == flag);
  }
}

TEST_CASE("max-position-embeddings may be omitted and then follows seq-length") {
  const MegatronArgs a = parse_ok(
      "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "
      "--micro-batch-size 1 --vocab-size 1000");
  CHECK(a.config.model.max_position_embeddings == 0);
}

// ---------------------------------------------------------------------------------------------
// Tokenising
// ---------------------------------------------------------------------------------------------

TEST_CASE("command lines split like a shell") {
  auto words = split_command_line(
      "python pretrain_gpt.py --a 'x y' --b \"p \\\"q\\\" \\$r\" --c=d \\\n --e\\ f '' it's");
  REQUIRE_FALSE(words.has_value());  // the last quote is unterminated
  CHECK(words.error().field == "megatron_args");

  words = split_command_line(
      "python pretrain_gpt.py --a 'x y' --b \"p \\\"q\\\" \\$r\" --c=d \\\n --e\\ f ''");
  REQUIRE(words.has_value());
  const std::vector<std::string> expected = {"python",     "pretrain_gpt.py", "--a",   "x y", "--b",
                                             "p \"q\" $r", "--c=d",           "--e f", ""};
  CHECK(*words == expected);
}

TEST_CASE("flag values may be quoted, attached with '=' or continued over lines") {
  const MegatronArgs a = parse_ok(kBase +
                                  "--num-experts=8 \\\n  --moe-layer-freq '([0]*1+[1]*3)' "
                                  "--normalization \"RMSNorm\"");
  CHECK(a.config.model.num_experts == 8);
  CHECK(a.config.model.moe_layer_pattern == std::vector<std::uint8_t>{0, 1, 1, 1});
  CHECK(a.config.model.normalization == Normalization::rmsnorm);
}

TEST_CASE("words before the first flag are the program and are skipped") {
  const MegatronArgs a = parse_ok("torchrun pretrain_gpt.py " + kBase);
  CHECK(a.config.model.num_layers == 4);
  CHECK(a.unknown_flags.empty());
}

TEST_CASE("a repeated flag takes its last value, as in argparse") {
  const MegatronArgs a = parse_ok(kBase + "--hidden-size 1024");
  CHECK(a.config.model.hidden_size == 1024);
}

// ---------------------------------------------------------------------------------------------
// Errors name the flag
// ---------------------------------------------------------------------------------------------

TEST_CASE("a flag that needs a value but has none is an error naming the flag") {
  const Error e = parse_error(kBase + "--tensor-model-parallel-size --bf16");
  CHECK(e.field == "--tensor-model-parallel-size");
  CHECK_THAT(e.message, Contains("needs a value"));
}

TEST_CASE("a non-number is an error naming the flag") {
  CHECK(parse_error(kBase + "--hidden-size 5x12").field == "--hidden-size");
  CHECK(parse_error(kBase + "--hidden-dropout high").field == "--hidden-dropout");
  CHECK(parse_error(kBase + "--global-batch-size 3.5").field == "--global-batch-size");
  const Error e = parse_error(kBase + "--tensor-model-parallel-size 0");
  CHECK(e.field == "--tensor-model-parallel-size");
  CHECK_THAT(e.message, Contains("at least 1"));
}

TEST_CASE("a switch given a value is an error naming the flag") {
  const Error e = parse_error(kBase + "--bf16 true");
  CHECK(e.field == "--bf16");
  CHECK_THAT(e.message, Contains("takes no value"));
}

TEST_CASE("a single-value flag given several values is an error naming the flag") {
  CHECK(parse_error(kBase + "--num-experts 8 16").field == "--num-experts");
}

TEST_CASE("a value outside Megatron's choices is an error listing them") {
  const Error e = parse_error(kBase + "--normalization BatchNorm");
  CHECK(e.field == "--normalization");
  CHECK_THAT(e.message, Contains("LayerNorm") && Contains("RMSNorm"));
  CHECK(parse_error(kBase + "--position-embedding-type alibi").field ==
        "--position-embedding-type");
  CHECK(parse_error(kBase + "--attention-backend cudnn").field == "--attention-backend");
}

TEST_CASE("a Megatron choice megamem does not model is an error naming the flag") {
  const Error e = parse_error(kBase + "--optimizer lion");
  CHECK(e.field == "--optimizer");
  CHECK_THAT(e.message, Contains("does not model"));
  CHECK(parse_error(kBase + "--transformer-impl inference_optimized").field ==
        "--transformer-impl");
  CHECK(parse_error(kBase + "--fp8-format hybrid --fp8-recipe custom").field == "--fp8-recipe");
}

TEST_CASE("an unterminated quote is an error") {
  CHECK(parse_error(kBase + "--moe-layer-freq '([0]*2").field == "megatron_args");
}

// ---------------------------------------------------------------------------------------------
// Flag families
// ---------------------------------------------------------------------------------------------

TEST_CASE("--bf16 and --fp16 set params_dtype and exclude each other") {
  CHECK(parse_ok(kBase + "--bf16").config.training.params_dtype == DType::bf16);
  CHECK(parse_ok(kBase + "--fp16").config.training.params_dtype == DType::fp16);
  CHECK(parse_error(kBase + "--bf16 --fp16").field == "--fp16");
}

TEST_CASE("--num-query-groups counts only with --group-query-attention") {
  CHECK(parse_ok(kBase + "--num-query-groups 2").config.model.num_query_groups == 0);
  // Megatron's argparse default for num_query_groups is 1.
  CHECK(parse_ok(kBase + "--group-query-attention").config.model.num_query_groups == 1);
  CHECK(parse_ok(kBase + "--group-query-attention --num-query-groups 2")
            .config.model.num_query_groups == 2);
}

TEST_CASE("SwiGLU without --ffn-hidden-size uses int(8h/3/64)*64") {
  // arguments.py: int((4 * h * 2 / 3) / 64) * 64.
  CHECK(parse_ok(kBase + "--swiglu").config.model.ffn_hidden_size == 1344);  // h = 512
  const std::string h4096 =
      "--num-layers 2 --hidden-size 4096 --num-attention-heads 32 --seq-length 128 "
      "--micro-batch-size 1 --vocab-size 32000 --swiglu";
  CHECK(parse_ok(h4096).config.model.ffn_hidden_size == 10880);
  CHECK(parse_ok(h4096 + " --ffn-hidden-size 11008").config.model.ffn_hidden_size == 11008);
  CHECK(parse_ok(kBase).config.model.ffn_hidden_size == 0);  // GeLU: 4h, left to normalize()
}

TEST_CASE("activation flags: --swiglu, --squared-relu, and not both") {
  CHECK(parse_ok(kBase + "--swiglu").config.model.activation == Activation::swiglu);
  CHECK(parse_ok(kBase + "--squared-relu").config.model.activation == Activation::squared_relu);
  CHECK(parse_error(kBase + "--swiglu --squared-relu").field == "--squared-relu");
}

TEST_CASE("architecture switches: norm, QK norm, biases, tying, gates") {
  const Config c = parse_ok(kBase +
                            "--normalization RMSNorm --qk-layernorm --disable-bias-linear "
                            "--add-qkv-bias --untie-embeddings-and-output-weights "
                            "--attention-output-gate --kv-channels 128 --ffn-hidden-size 2048")
                       .config;
  CHECK(c.model.normalization == Normalization::rmsnorm);
  CHECK(c.model.qk_layernorm);
  CHECK_FALSE(c.model.add_bias_linear);
  CHECK(c.model.add_qkv_bias);
  CHECK(c.model.untie_embeddings_and_output_weights);
  CHECK(c.model.attention_output_gate);
  CHECK(c.model.kv_channels == 128);
  CHECK(c.model.ffn_hidden_size == 2048);
}

TEST_CASE("--position-embedding-type accepts Megatron's choices") {
  CHECK(parse_ok(kBase + "--position-embedding-type rope").config.model.position_embedding ==
        PositionEmbedding::rope);
  CHECK(parse_ok(kBase + "--position-embedding-type yarn").config.model.position_embedding ==
        PositionEmbedding::yarn);
  CHECK(parse_ok(kBase + "--position-embedding-type none").config.model.position_embedding ==
        PositionEmbedding::none);
  CHECK(parse_ok(kBase + "--use-rotary-position-embeddings").config.model.position_embedding ==
        PositionEmbedding::rope);
  CHECK(parse_error(kBase + "--no-position-embedding").field == "--no-position-embedding");
}

TEST_CASE("dropout flags set the dropout probabilities") {
  const Config c = parse_ok(kBase + "--hidden-dropout 0.0 --attention-dropout 0.25").config;
  CHECK(c.model.hidden_dropout == 0.0);
  CHECK_THAT(c.model.attention_dropout, Catch::Matchers::WithinRel(0.25));
  CHECK(parse_error(kBase + "--hidden-dropout 1.5").field == "--hidden-dropout");
}

TEST_CASE("sequence parallelism is off at TP 1") {
  CHECK_FALSE(parse_ok(kBase + "--sequence-parallel").config.parallel.sequence_parallel);
  CHECK(parse_ok(kBase + "--sequence-parallel --tensor-model-parallel-size 2")
            .config.parallel.sequence_parallel);
}

TEST_CASE("parallel sizes and pipeline options") {
  const Config c = parse_ok(kBase +
                                "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
                                "--context-parallel-size 2 --num-experts 4 "
                                "--expert-model-parallel-size 2 --expert-tensor-parallel-size 1 "
                                "--num-distributed-optimizer-instances 2 "
                                "--microbatch-group-size-per-virtual-pipeline-stage 5",
                            16)
                       .config;
  CHECK(c.parallel.tensor_parallel == 2);
  CHECK(c.parallel.pipeline_parallel == 2);
  CHECK(c.parallel.context_parallel == 2);
  CHECK(c.parallel.expert_parallel == 2);
  CHECK(c.parallel.expert_tensor_parallel == 1);
  CHECK(c.parallel.num_distributed_optimizer_instances == 2);
  CHECK(c.parallel.microbatch_group_size_per_vp_stage == 5);
}

TEST_CASE("uneven pipeline and account-for flags are kept") {
  const std::string base =
      "--num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--micro-batch-size 4 --vocab-size 50257 --pipeline-model-parallel-size 4 ";
  const Config uneven = parse_ok(base +
                                 "--decoder-first-pipeline-num-layers 2 "
                                 "--decoder-last-pipeline-num-layers 2")
                            .config;
  CHECK(uneven.parallel.decoder_first_pipeline_num_layers == 2);
  CHECK(uneven.parallel.decoder_last_pipeline_num_layers == 2);
  const Config split = parse_ok(base +
                                "--num-layers 6 --account-for-embedding-in-pipeline-split "
                                "--account-for-loss-in-pipeline-split")
                           .config;
  CHECK(split.parallel.account_for_embedding_in_pipeline_split);
  CHECK(split.parallel.account_for_loss_in_pipeline_split);
}

TEST_CASE("MoE flags set the expert fields") {
  const Config c = parse_ok(kBase +
                            "--num-experts 8 --moe-router-topk 1 --moe-ffn-hidden-size 1024 "
                            "--moe-shared-expert-intermediate-size 512 --moe-shared-expert-gate "
                            "--moe-router-enable-expert-bias --moe-latent-size 128 "
                            "--moe-token-dispatcher-type alltoall --moe-grouped-gemm "
                            "--moe-router-dtype fp32 --moe-expert-capacity-factor 1.5 "
                            "--moe-pad-expert-input-to-capacity")
                       .config;
  CHECK(c.model.num_experts == 8);
  CHECK(c.model.moe_router_topk == 1);
  CHECK(c.model.moe_ffn_hidden_size == 1024);
  CHECK(c.model.moe_shared_expert_intermediate_size == 512);
  CHECK(c.model.moe_shared_expert_gate);
  CHECK(c.model.moe_router_enable_expert_bias);
  CHECK(c.model.moe_latent_size == 128);
  CHECK(c.training.moe_token_dispatcher == TokenDispatcher::alltoall);
  CHECK(c.training.moe_grouped_gemm);
  CHECK_THAT(c.training.moe_expert_capacity_factor, Catch::Matchers::WithinRel(1.5));
  CHECK(c.training.moe_pad_expert_input_to_capacity);
  CHECK(c.training.moe_router_fp32);
  CHECK_FALSE(parse_ok(kBase + "--num-experts 8").config.training.moe_router_fp32);
  CHECK(parse_ok(kBase + "--num-experts 8 --overlap-moe-expert-parallel-comm")
            .config.training.overlap_moe_expert_parallel_comm);
  // fp64 router scores have no Config field.
  CHECK(listed(parse_ok(kBase + "--num-experts 8 --moe-router-dtype fp64").unmodeled_flags,
               "--moe-router-dtype"));
  CHECK(parse_error(kBase + "--num-experts 8 --moe-router-dtype bf16").field ==
        "--moe-router-dtype");
  // arguments.py validate_args: the legacy encoder spellings stand for the absent flags.
  const MegatronArgs legacy = parse_ok(
      "--encoder-num-layers 6 --hidden-size 512 --num-attention-heads 8 "
      "--encoder-seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 4 "
      "--vocab-size 50257");
  CHECK(legacy.config.model.num_layers == 6);
  CHECK(legacy.config.training.seq_length == 2048);
  CHECK(legacy.ignored_flags.empty());
  CHECK(parse_error(kBase + "--encoder-seq-length 2048").field == "--encoder-seq-length");
  CHECK(parse_ok(kBase + "--encoder-seq-length 1024").ignored_flags.empty());  // a dump
  // The deprecated SM counts stand for --moe-flex-dispatcher-num-sms when it is not given.
  CHECK(parse_ok(kBase + "--num-experts 8 --moe-deepep-num-sms 32")
            .config.training.moe_flex_dispatcher_num_sms == 32);
  CHECK(parse_ok(kBase + "--num-experts 8 --moe-hybridep-num-sms 16 "
                         "--moe-flex-dispatcher-num-sms 24")
            .config.training.moe_flex_dispatcher_num_sms == 24);
  CHECK(parse_error(kBase + "--num-experts 8 --moe-deepep-num-sms 32 --moe-hybridep-num-sms 16")
            .field == "--moe-hybridep-num-sms");
  CHECK(parse_ok(kBase + "--num-experts 0").config.model.num_experts == 0);
}

TEST_CASE("MLA and MTP flags set their fields") {
  const Config c = parse_ok(kBase +
                            "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 "
                            "--qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 "
                            "--position-embedding-type rope --mtp-num-layers 1 "
                            "--mtp-use-repeated-layer")
                       .config;
  CHECK(c.model.multi_latent_attention);
  CHECK(c.model.q_lora_rank == 1536);
  CHECK(c.model.kv_lora_rank == 512);
  CHECK(c.model.qk_head_dim == 128);
  CHECK(c.model.qk_pos_emb_head_dim == 64);
  CHECK(c.model.v_head_dim == 128);
  CHECK(c.model.mtp_num_layers == 1);
  CHECK(c.model.mtp_use_repeated_layer);
}

TEST_CASE("batch, precision and kernel flags") {
  const Config c = parse_ok(kBase +
                            "--global-batch-size 64 --bf16 --fp8-format hybrid "
                            "--fp8-recipe tensorwise --fp8-param-gather "
                            "--use-distributed-optimizer --transformer-impl local "
                            "--attention-backend unfused --cross-entropy-loss-fusion "
                            "--no-gradient-accumulation-fusion "
                            "--no-create-attention-mask-in-dataloader "
                            "--no-masked-softmax-fusion --deterministic-mode")
                       .config;
  CHECK(c.training.global_batch_size == 64);
  CHECK_FALSE(c.training.masked_softmax_fusion);
  CHECK(c.training.deterministic_mode);
  CHECK(c.training.fp8_recipe == Fp8Recipe::tensorwise);
  CHECK(c.training.fp8_param_gather);
  CHECK(c.training.transformer_impl == TransformerImpl::local);
  CHECK(c.training.attention_backend == AttentionBackend::unfused);
  CHECK(c.training.cross_entropy == CrossEntropyImpl::native_fused);
  CHECK_FALSE(c.training.gradient_accumulation_fusion);
  CHECK_FALSE(c.training.create_attention_mask_in_dataloader);
}

TEST_CASE("--fp8-recipe without --fp8-format reaches only the optimizer; delayed by default") {
  const Config alone = parse_ok(kBase + "--fp8-recipe tensorwise").config;
  CHECK(alone.training.fp8_recipe == Fp8Recipe::none);
  CHECK(alone.optimizer.fp8_recipe == Fp8Recipe::tensorwise);  // training.py -> OptimizerConfig
  CHECK(parse_ok(kBase).config.optimizer.fp8_recipe == Fp8Recipe::delayed);
  CHECK(parse_ok(kBase + "--fp8-format e4m3").config.training.fp8_recipe == Fp8Recipe::delayed);
  // The flags written back say the same.
  CHECK(to_megatron_args(alone).find("--fp8-recipe tensorwise") != std::string::npos);
  CHECK(to_megatron_args(alone).find("--fp8-format") == std::string::npos);
}

TEST_CASE("--fp8-format e4m3 comes back as e4m3 in the flags and Bridge overrides") {
  const Config e4m3 = parse_ok(kBase + "--bf16 --fp8-format e4m3 --fp8-recipe tensorwise").config;
  CHECK(e4m3.training.fp8_format == Fp8Format::e4m3);
  CHECK(to_megatron_args(e4m3).find("--fp8-format e4m3") != std::string::npos);
  CHECK(to_bridge_overrides(e4m3).find("mixed_precision.fp8=e4m3") != std::string::npos);
  const Config hybrid = parse_ok(kBase + "--bf16 --fp8-format hybrid").config;
  CHECK(hybrid.training.fp8_format == Fp8Format::hybrid);
  CHECK(to_megatron_args(hybrid).find("--fp8-format hybrid") != std::string::npos);
  CHECK(parse_error(kBase + "--fp8-format e5m2").field == "--fp8-format");
}

TEST_CASE("optimizer flags set the optimizer and its state precision") {
  const Config c = parse_ok(kBase +
                            "--bf16 --use-distributed-optimizer --use-precision-aware-optimizer "
                            "--main-grads-dtype bf16 --main-params-dtype fp16 "
                            "--exp-avg-dtype fp8 --exp-avg-sq-dtype bf16 "
                            "--optimizer-cpu-offload --optimizer-offload-fraction 0.5 "
                            "--overlap-grad-reduce --ddp-bucket-size 40000000")
                       .config;
  CHECK(c.optimizer.use_distributed_optimizer);
  CHECK(c.optimizer.use_precision_aware_optimizer);
  CHECK(c.optimizer.main_grads_dtype == DType::bf16);
  CHECK(c.optimizer.main_params_dtype == DType::fp16);
  CHECK(c.optimizer.exp_avg_dtype == DType::fp8);
  CHECK(c.optimizer.exp_avg_sq_dtype == DType::bf16);
  CHECK(c.optimizer.optimizer_cpu_offload);
  CHECK_THAT(c.optimizer.optimizer_offload_fraction, Catch::Matchers::WithinRel(0.5));
  CHECK(c.optimizer.overlap_grad_reduce);
  CHECK(c.optimizer.ddp_bucket_size_elements == 40000000);
  CHECK(parse_ok(kBase + "--optimizer sgd").config.optimizer.kind == OptimizerKind::sgd);
  CHECK(parse_ok(kBase + "--optimizer muon").config.optimizer.kind == OptimizerKind::muon);
  const Config dist_muon = parse_ok(kBase + "--optimizer dist_muon").config;
  CHECK(dist_muon.optimizer.kind == OptimizerKind::muon);
  CHECK(dist_muon.optimizer.use_distributed_optimizer);
  CHECK(parse_error(kBase + "--main-params-dtype bf16").field == "--main-params-dtype");
}

TEST_CASE("bf16 gradients reduce in fp32 unless --grad-reduce-in-bf16 or bf16 main grads") {
  CHECK_FALSE(parse_ok(kBase + "--bf16").config.optimizer.grad_reduce_in_bf16);
  CHECK(parse_ok(kBase + "--bf16 --grad-reduce-in-bf16").config.optimizer.grad_reduce_in_bf16);
  CHECK(parse_ok(kBase + "--bf16 --main-grads-dtype bf16").config.optimizer.grad_reduce_in_bf16);
  // Megatron ignores the flag for fp16 and fp32 params.
  CHECK_FALSE(
      parse_ok(kBase + "--fp16 --grad-reduce-in-bf16").config.optimizer.grad_reduce_in_bf16);
  CHECK(parse_error(kBase + "--bf16 --main-grads-dtype bf16 --accumulate-allreduce-grads-in-fp32")
            .field == "--accumulate-allreduce-grads-in-fp32");
  // fp16 with fp32 gradient reduction has no Config field: listed as unmodeled.
  CHECK(listed(parse_ok(kBase + "--fp16 --accumulate-allreduce-grads-in-fp32").unmodeled_flags,
               "--accumulate-allreduce-grads-in-fp32"));
}

TEST_CASE("recompute flags: full takes a method and a layer count") {
  const Config c = parse_ok(kBase +
                            "--recompute-granularity full --recompute-method block "
                            "--recompute-num-layers 2")
                       .config;
  CHECK(c.training.recompute.granularity == RecomputeGranularity::full);
  CHECK(c.training.recompute.method == RecomputeMethod::block);
  CHECK(c.training.recompute.num_layers == 2);
  CHECK(parse_error(kBase + "--recompute-granularity full --recompute-num-layers 1").field ==
        "--recompute-method");
  CHECK(parse_error(kBase + "--recompute-granularity full --recompute-method uniform").field ==
        "--recompute-num-layers");
}

TEST_CASE("recompute flags: selective takes modules, neither method nor layer count") {
  const Config c = parse_ok(kBase +
                            "--num-experts 4 --moe-grouped-gemm --recompute-granularity selective "
                            "--recompute-modules core_attn moe_act layernorm --bf16")
                       .config;
  CHECK(c.training.recompute.granularity == RecomputeGranularity::selective);
  CHECK(c.training.recompute.modules == RecomputeModules{RecomputeModule::core_attn,
                                                         RecomputeModule::moe_act,
                                                         RecomputeModule::layernorm});
  CHECK(c.training.params_dtype == DType::bf16);  // the list stopped at the next flag
  const Config bracketed = parse_ok(kBase +
                                    "--num-experts 4 --moe-grouped-gemm "
                                    "--recompute-granularity selective "
                                    "--recompute-modules \"[layernorm mlp moe_act]\"")
                               .config;
  CHECK(bracketed.training.recompute.modules == RecomputeModules{RecomputeModule::layernorm,
                                                                 RecomputeModule::mlp,
                                                                 RecomputeModule::moe_act});
  CHECK(parse_ok(kBase + "--recompute-activations").config.training.recompute.granularity ==
        RecomputeGranularity::selective);
  // arguments.py's policy only: a warning, selective recompute ignores the method.
  CHECK(parse_ok(kBase + "--recompute-granularity selective --recompute-method uniform")
            .warnings.size() == 1);
  CHECK(parse_error(kBase + "--recompute-granularity selective --recompute-num-layers 1").field ==
        "--recompute-num-layers");
  // An unknown module is malformed input (no Config can hold it): the parser names the flag.
  CHECK(parse_error(kBase + "--recompute-granularity selective --recompute-modules attention")
            .field == "--recompute-modules");
  CHECK(rule_error(kBase + "--num-experts 4 --recompute-granularity selective "
                           "--recompute-modules moe_act")
            .field == "recompute_modules");  // moe_act needs grouped GEMM
  CHECK(parse_error(kBase + "--checkpoint-activations").field == "--checkpoint-activations");
}

TEST_CASE("offload flags: fine-grained offloading takes TE and known modules") {
  const Config c =
      parse_ok(kBase +
               "--fine-grained-activation-offloading --offload-modules "
               "\"[core_attn attn_proj qkv_linear]\" --activation-offload-fraction 0.5")
          .config;
  CHECK(c.training.offload.fine_grained_activation_offloading);
  CHECK(c.training.offload.offload_modules == OffloadModules{OffloadModule::core_attn,
                                                             OffloadModule::attn_proj,
                                                             OffloadModule::qkv_linear});
  CHECK_THAT(c.training.offload.activation_offload_fraction, Catch::Matchers::WithinRel(0.5));
  CHECK(rule_error(kBase + "--fine-grained-activation-offloading").field == "offload_modules");
  CHECK(rule_error(kBase + "--fine-grained-activation-offloading --offload-modules attn_proj")
            .field == "offload_modules");
  CHECK(rule_error(kBase + "--fine-grained-activation-offloading --offload-modules core_attn "
                           "--transformer-impl local")
            .field == "fine_grained_activation_offloading");
  const Config legacy = parse_ok(kBase + "--cpu-offloading-num-layers 2").config;
  CHECK(legacy.training.offload.cpu_offloading);
  CHECK(legacy.training.offload.cpu_offloading_num_layers == 2);
}

TEST_CASE("vocabulary: the caller's tokenizer size wins, --padded-vocab-size is unpadded") {
  CHECK(parse_megatron_args(kBase, 8, 32000)->config.model.vocab_size == 32000);
  const Config padded = parse_ok(kBase + "--padded-vocab-size 50304").config;
  CHECK(padded.model.vocab_size == 50304);
  CHECK(padded.model.make_vocab_size_divisible_by == 1);
  CHECK(parse_ok(kBase + "--make-vocab-size-divisible-by 64")
            .config.model.make_vocab_size_divisible_by == 64);
  const Error e = parse_error(
      "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "
      "--micro-batch-size 1 --tokenizer-type GPT2BPETokenizer");
  CHECK(e.field == "--vocab-size");
}

// ---------------------------------------------------------------------------------------------
// Virtual pipeline degree (arguments.py validate_args)
// ---------------------------------------------------------------------------------------------

TEST_CASE("--num-layers-per-virtual-pipeline-stage x gives VPP = (L/PP)/x") {
  const std::string flags =
      "--num-layers 32 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--micro-batch-size 1 --vocab-size 131072 --pipeline-model-parallel-size 4 ";
  CHECK(parse_ok(flags + "--num-layers-per-virtual-pipeline-stage 1")
            .config.parallel.virtual_stages_per_pipeline_rank == 8);
  CHECK(parse_ok(flags + "--num-layers-per-virtual-pipeline-stage 2")
            .config.parallel.virtual_stages_per_pipeline_rank == 4);
  CHECK(parse_ok(flags + "--num-layers-per-virtual-pipeline-stage 8")
            .config.parallel.virtual_stages_per_pipeline_rank == 1);
  CHECK(parse_error(flags + "--num-layers-per-virtual-pipeline-stage 3").field ==
        "--num-layers-per-virtual-pipeline-stage");
}

TEST_CASE("the VPP rule counts the embedding and loss when they take a layer slot") {
  // 30 layers + embedding + loss = 32 slots over PP 4: 8 per stage, 2 per chunk -> VPP 4.
  const std::string flags =
      "--num-layers 30 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--micro-batch-size 1 --vocab-size 50257 --pipeline-model-parallel-size 4 "
      "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split ";
  CHECK(parse_ok(flags + "--num-layers-per-virtual-pipeline-stage 2")
            .config.parallel.virtual_stages_per_pipeline_rank == 4);
  CHECK(parse_error("--num-layers 30 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
                    "--micro-batch-size 1 --vocab-size 50257 --pipeline-model-parallel-size 4 "
                    "--num-layers-per-virtual-pipeline-stage 2")
            .field == "--num-layers-per-virtual-pipeline-stage");
}

TEST_CASE("--num-virtual-stages-per-pipeline-rank sets VPP directly, also with uneven stages") {
  const std::string flags =
      "--num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--micro-batch-size 1 --vocab-size 50257 --pipeline-model-parallel-size 4 ";
  CHECK(parse_ok(flags + "--num-virtual-stages-per-pipeline-rank 2")
            .config.parallel.virtual_stages_per_pipeline_rank == 2);
  CHECK(parse_ok(flags +
                 "--num-virtual-stages-per-pipeline-rank 2 --decoder-first-pipeline-num-layers 2 "
                 "--decoder-last-pipeline-num-layers 2")
            .config.parallel.virtual_stages_per_pipeline_rank == 2);
  CHECK(parse_error(flags + "--num-layers-per-virtual-pipeline-stage 1 "
                            "--decoder-first-pipeline-num-layers 2")
            .field == "--num-layers-per-virtual-pipeline-stage");
}

TEST_CASE("at most one of the three VPP flags may be given") {
  const Error e = parse_error(kBase +
                              "--pipeline-model-parallel-size 2 "
                              "--num-virtual-stages-per-pipeline-rank 2 "
                              "--num-layers-per-virtual-pipeline-stage 1");
  CHECK(e.field == "--num-layers-per-virtual-pipeline-stage");
  CHECK_THAT(e.message, Contains("at most one"));
}

TEST_CASE("a layout gives VPP = stages / PP and keeps the string without shell escapes") {
  const std::string flags =
      "--num-layers 15 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--micro-batch-size 1 --vocab-size 50257 --pipeline-model-parallel-size 2 "
      "--position-embedding-type rope --mtp-num-layers 1 ";
  const Config plain =
      parse_ok(flags + "--pipeline-model-parallel-layout \"Et*3|(tt|)*6mL\"").config;
  CHECK(plain.parallel.pipeline_layout == "Et*3|(tt|)*6mL");
  CHECK(plain.parallel.virtual_stages_per_pipeline_rank == 4);  // 8 stages over PP 2
  // The validation data keeps the escapes of the CI's shell: "Et*3\\|\\(tt\\|\\)*6mL".
  const Config escaped =
      parse_ok(flags + "--pipeline-model-parallel-layout \"Et*3\\\\|\\\\(tt\\\\|\\\\)*6mL\"")
          .config;
  CHECK(escaped.parallel.pipeline_layout == "Et*3|(tt|)*6mL");
  CHECK(escaped.parallel.virtual_stages_per_pipeline_rank == 4);
  CHECK(rule_error(flags + "--pipeline-model-parallel-layout 'Et*3|(tt|)*5mL'").field ==
        "pipeline_model_parallel_layout");  // 7 stages over PP 2
  CHECK(parse_error(flags + "--pipeline-model-parallel-layout 'Ex|L'").field ==
        "--pipeline-model-parallel-layout");
}

TEST_CASE("the interleaved schedule needs PP > 1; PP 2 without overlapped P2P is a warning") {
  const std::string flags =
      "--num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--micro-batch-size 1 --vocab-size 50257 --num-virtual-stages-per-pipeline-rank 2 ";
  CHECK(rule_error(flags).field == "virtual_stages_per_pipeline_rank");
  CHECK(parse_ok(flags + "--pipeline-model-parallel-size 2")
            .config.parallel.virtual_stages_per_pipeline_rank == 2);
  const MegatronArgs no_overlap =
      parse_ok(flags + "--pipeline-model-parallel-size 2 --no-overlap-p2p-communication");
  CHECK(no_overlap.warnings.size() == 1);
}

TEST_CASE("an even pipeline split needs the layers divisible by PP") {
  const Error e = rule_error(kBase + "--pipeline-model-parallel-size 3", 9);
  CHECK(e.field == "num_layers");
  CHECK_THAT(e.message, Contains("divisible"));
}

// ---------------------------------------------------------------------------------------------
// --moe-layer-freq
// ---------------------------------------------------------------------------------------------

TEST_CASE("--moe-layer-freq N makes every N-th layer MoE") {
  CHECK(*parse_moe_layer_freq("2", 5) == std::vector<std::uint8_t>{1, 0, 1, 0, 1});
  CHECK(*parse_moe_layer_freq("1", 3) == std::vector<std::uint8_t>{1, 1, 1});
  const Config c = parse_ok(kBase + "--num-experts 4 --moe-layer-freq 2").config;
  CHECK(c.model.moe_layer_freq == 2);
  CHECK(c.model.moe_layer_pattern.empty());
  CHECK(parse_moe_layer_freq("0", 4).error().field == "--moe-layer-freq");
}

TEST_CASE("--moe-layer-freq list expressions evaluate like Python") {
  const auto dense_then_moe = parse_moe_layer_freq("[0]*3+[1]*58", 61);
  REQUIRE(dense_then_moe.has_value());
  CHECK(dense_then_moe->size() == 61);
  CHECK((*dense_then_moe)[2] == 0);
  CHECK((*dense_then_moe)[3] == 1);
  CHECK((*dense_then_moe)[60] == 1);
  CHECK(*parse_moe_layer_freq("([0]*1+[1]*15)", 16) ==
        std::vector<std::uint8_t>{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(*parse_moe_layer_freq("[1,0,1]", 3) == std::vector<std::uint8_t>{1, 0, 1});
  CHECK(*parse_moe_layer_freq("[1,0,1,]", 3) == std::vector<std::uint8_t>{1, 0, 1});
  CHECK(*parse_moe_layer_freq("([1]*2+[0])*4", 12) ==
        std::vector<std::uint8_t>{1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0});
  CHECK(*parse_moe_layer_freq("2*[1,0]", 4) == std::vector<std::uint8_t>{1, 0, 1, 0});
  CHECK(*parse_moe_layer_freq("[0]*(1+1)+[1]*2", 4) == std::vector<std::uint8_t>{0, 0, 1, 1});
}

TEST_CASE("--moe-layer-freq list expressions Megatron refuses are errors") {
  // Wrong length (gpt_layer_specs.py "Invalid length of moe_layer_pattern").
  const auto short_pattern = parse_moe_layer_freq("[0]*3+[1]*5", 9);
  REQUIRE_FALSE(short_pattern.has_value());
  CHECK(short_pattern.error().field == "--moe-layer-freq");
  CHECK_THAT(short_pattern.error().message, Contains("8 entries"));
  // _eval_pattern allows only digits and , [ ] ( ) + * -- no spaces, no names.
  CHECK_FALSE(parse_moe_layer_freq("[0]*3 + [1]*5", 8).has_value());
  CHECK_FALSE(parse_moe_layer_freq("[0]*3+[x]*5", 8).has_value());
  CHECK_FALSE(parse_moe_layer_freq("[2]*4", 4).has_value());      // entries are 0 or 1
  CHECK_FALSE(parse_moe_layer_freq("([1],[0])", 2).has_value());  // a tuple
  CHECK_FALSE(parse_moe_layer_freq("[[1],[0]]", 2).has_value());  // nested
  CHECK_FALSE(parse_moe_layer_freq("[1]+1", 2).has_value());
  CHECK_FALSE(parse_moe_layer_freq("[1]*[2]", 2).has_value());
  CHECK_FALSE(parse_moe_layer_freq("([1]*2", 2).has_value());
  CHECK_FALSE(parse_moe_layer_freq("[1]*99999999999", 2).has_value());  // too long
  CHECK_FALSE(parse_moe_layer_freq("abc", 2).has_value());
  CHECK(parse_error(kBase + "--num-experts 4 --moe-layer-freq '[0]*3+[1]*2'").field ==
        "--moe-layer-freq");
}

// ---------------------------------------------------------------------------------------------
// Megatron's argument checks that change memory
// ---------------------------------------------------------------------------------------------

// The rules themselves are the rule book's (normalize()); these check the flags reach them.
TEST_CASE("world size must divide by TP x PP x CP") {
  const Error e = rule_error(kBase + "--tensor-model-parallel-size 4", 6);
  CHECK(e.field == "world_size");
  CHECK_THAT(e.message, Contains("TP x CP x PP"));
  CHECK(parse_megatron_args(kBase, 0).error().field == "world_size");
}

TEST_CASE("global batch must divide by micro batch x DP") {
  // DP = 8, micro batch 4: 32 works, 36 does not.
  CHECK(parse_ok(kBase + "--global-batch-size 32").config.training.global_batch_size == 32);
  CHECK(rule_error(kBase + "--global-batch-size 36").field == "global_batch_size");
}

TEST_CASE("hidden size must divide by heads unless --kv-channels is given") {
  const std::string flags =
      "--num-layers 2 --hidden-size 100 --num-attention-heads 8 --seq-length 128 "
      "--micro-batch-size 1 --vocab-size 1000 ";
  CHECK(rule_error(flags).field == "num_attention_heads");
  CHECK(parse_ok(flags + "--kv-channels 16").config.model.kv_channels == 16);
}

TEST_CASE("context parallelism needs seq-length divisible by 2 x CP") {
  CHECK(rule_error(kBase + "--context-parallel-size 4 --seq-length 1020").field == "seq_length");
  CHECK(parse_ok(kBase + "--context-parallel-size 4").config.parallel.context_parallel == 4);
}

TEST_CASE("max-position-embeddings must cover seq-length for learned positions") {
  CHECK(rule_error(kBase + "--max-position-embeddings 512").field == "max_position_embeddings");
  CHECK(rule_warnings(kBase + "--bf16 --max-position-embeddings 512 --position-embedding-type rope")
            .size() == 1);
}

TEST_CASE("expert parallelism needs experts divisible by EP") {
  CHECK(rule_error(kBase + "--expert-model-parallel-size 2").field == "expert_model_parallel_size");
  CHECK(rule_error(kBase + "--num-experts 6 --expert-model-parallel-size 4", 8).field ==
        "num_experts");
  CHECK(rule_warnings(kBase + "--bf16 --moe-latent-size 64").size() == 1);
}

TEST_CASE("GQA under MLA is Megatron-LM's policy: a warning") {
  CHECK(parse_ok(kBase + "--multi-latent-attention --group-query-attention").warnings.size() == 1);
}

TEST_CASE("MTP without rope is Megatron-LM's policy: a warning") {
  CHECK(rule_warnings(kBase + "--bf16 --mtp-num-layers 1").size() == 1);
}

TEST_CASE("Transformer Engine cross-entropy fusion estimates with a warning") {
  const std::vector<std::string> warnings =
      rule_warnings(kBase + "--bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te");
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Contains("--cross-entropy-fusion-impl te"));
  CHECK_THAT(warnings[0], Contains("core_r0.18"));
}

TEST_CASE("block recompute of 0 layers parses and recomputes nothing") {
  const Config c = parse_ok(kBase +
                            "--recompute-granularity full --recompute-method block "
                            "--recompute-num-layers 0")
                       .config;
  CHECK(c.training.recompute.num_layers == 0);
  CHECK(rule_warnings(kBase + "--bf16 --recompute-granularity full --recompute-method block "
                              "--recompute-num-layers 0")
            .empty());
  CHECK(rule_error(kBase + "--recompute-granularity full --recompute-method uniform "
                           "--recompute-num-layers 0")
            .field == "recompute_num_layers");
}

TEST_CASE("fp8 param gather needs FP8 and a sharded optimizer") {
  CHECK(rule_error(kBase + "--bf16 --fp8-param-gather --use-distributed-optimizer").field ==
        "fp8_param_gather");
  CHECK(rule_error(kBase + "--bf16 --fp8-format hybrid --fp8-param-gather").field ==
        "fp8_param_gather");
}

TEST_CASE("optimizer CPU offload without the precision-aware optimizer is Megatron-LM's rule") {
  CHECK(rule_warnings(kBase + "--bf16 --optimizer-cpu-offload").size() == 1);
}

TEST_CASE("distributing saved activations: SP is an error, no TP a warning") {
  CHECK(rule_warnings(kBase + "--bf16 --recompute-granularity full --recompute-method uniform "
                              "--recompute-num-layers 1 --distribute-saved-activations")
            .size() == 1);
  CHECK(rule_error(kBase + "--tensor-model-parallel-size 2 --sequence-parallel "
                           "--recompute-granularity full --recompute-method uniform "
                           "--recompute-num-layers 1 --distribute-saved-activations")
            .field == "distribute_saved_activations");
  CHECK(parse_ok(kBase + "--tensor-model-parallel-size 2 --recompute-granularity full "
                         "--recompute-method uniform --recompute-num-layers 1 "
                         "--distribute-saved-activations")
            .config.training.recompute.distribute_saved_activations);
}

// ---------------------------------------------------------------------------------------------
// Flags without a Config field
// ---------------------------------------------------------------------------------------------

TEST_CASE("Megatron flags without effect on memory are listed as ignored") {
  const MegatronArgs a = parse_ok(kBase +
                                  "--lr 3e-4 --train-iters 100 --data-path /data/a_text_document "
                                  "--distributed-backend nccl --no-persist-layer-norm "
                                  "--log-interval 10 --use-mcore-models "
                                  "--moe-router-load-balancing-type aux_loss seq_aux_loss");
  for (const std::string flag :
       {"--lr", "--train-iters", "--data-path", "--distributed-backend", "--no-persist-layer-norm",
        "--log-interval", "--use-mcore-models", "--moe-router-load-balancing-type"}) {
    CHECK(listed(a.ignored_flags, flag));
  }
  CHECK(a.unknown_flags.empty());
  CHECK(a.unmodeled_flags.empty());
}

TEST_CASE("flags that are not Megatron's are listed as unknown") {
  const MegatronArgs a = parse_ok(kBase + "--hiden-size 12 --world-size 8 -x 1 --foo");
  CHECK(a.unknown_flags == std::vector<std::string>{"--hiden-size", "--world-size", "-x", "--foo"});
  CHECK(a.config.model.hidden_size == 512);
}

TEST_CASE("memory-relevant flags megamem does not model are listed as unmodeled") {
  const MegatronArgs a = parse_ok(kBase +
                                  "--use-megatron-fsdp --cuda-graph-impl transformer_engine "
                                  "--tp-comm-overlap --tp-comm-overlap-cfg ub.yaml "
                                  "--use-nccl-ub --defer-embedding-wgrad-compute");
  CHECK(a.unmodeled_flags == std::vector<std::string>{"--use-nccl-ub"});
  CHECK(a.config.training.tp_comm_overlap);
  CHECK(a.config.training.cuda_graph_impl == CudaGraphImpl::transformer_engine);
  CHECK(a.config.parallel.fsdp.impl == FsdpImpl::megatron);
  CHECK(a.config.training.defer_embedding_wgrad_compute);
}

// Six [s b / CP, h] bf16 buffers at (TP - 1) / TP: 6 x 2 x 4 x 1024 x 512 x 3/4 B = 18 MiB.
TEST_CASE("a --tp-comm-overlap-cfg file is bounded, not listed as unmodeled") {
  const MegatronArgs a =
      parse_ok(kBase +
               "--tensor-model-parallel-size 4 --sequence-parallel --tp-comm-overlap "
               "--tp-comm-overlap-cfg ub.yaml --delay-wgrad-compute "
               "--overlap-moe-expert-parallel-comm");
  CHECK(a.unmodeled_flags.empty());
  CHECK(a.config.training.delay_wgrad_compute);
  REQUIRE(a.warnings.size() == 1);
  CHECK_THAT(a.warnings[0], Contains("--tp-comm-overlap-cfg is not read"));
  CHECK_THAT(a.warnings[0], Contains("at most 18 MiB"));
}

// arguments.py: a hybrid model without --num-layers takes the pattern's length (Megatron-LM's
// examples/mamba/train.sh passes none).
TEST_CASE("the hybrid layer pattern gives the layer count when --num-layers is absent") {
  const std::string flags =
      "--hidden-size 1024 --num-attention-heads 16 --seq-length 4096 --micro-batch-size 1 "
      "--vocab-size 1000 --hybrid-layer-pattern M-M*M-M* ";
  const MegatronArgs a = parse_ok(flags);
  CHECK(a.config.model.num_layers == 8);
  const Expected<MegatronArgs> plain = parse_megatron_args(
      "--hidden-size 1024 --num-attention-heads 16 --seq-length 4096 --micro-batch-size 1", 8);
  REQUIRE_FALSE(plain.has_value());
  CHECK(plain.error().field == "--num-layers");
}

// gpt_builders.py imports --spec's module in place of the standard layer spec: Megatron-Core's
// own specs are what megamem models; any other one is not.
TEST_CASE("a --spec outside megatron.core is listed as unmodeled") {
  const MegatronArgs core =
      parse_ok(kBase + "--spec megatron.core.models.mamba.mamba_layer_specs mamba_stack_spec");
  CHECK(core.unmodeled_flags.empty());
  const MegatronArgs custom = parse_ok(kBase + "--spec slime_plugins.models.qwen3_next get_spec");
  CHECK(custom.unmodeled_flags == std::vector<std::string>{"--spec"});
}

TEST_CASE("negative numbers are values, not flags") {
  const MegatronArgs a = parse_ok(kBase + "--inference-batch-times-seqlen-threshold -1");
  CHECK(a.unknown_flags.empty());
  CHECK(listed(a.ignored_flags, "--inference-batch-times-seqlen-threshold"));
}

// ---------------------------------------------------------------------------------------------
// Round trip: to_megatron_args is the inverse of parse_megatron_args
// ---------------------------------------------------------------------------------------------

namespace {

// Every Config field that has a Megatron flag.
void check_same_memory_fields(const Config& a, const Config& b) {
  CHECK(a.model.num_layers == b.model.num_layers);
  CHECK(a.model.hidden_size == b.model.hidden_size);
  CHECK(a.model.num_attention_heads == b.model.num_attention_heads);
  CHECK(a.model.num_query_groups == b.model.num_query_groups);
  CHECK(a.model.kv_channels == b.model.kv_channels);
  CHECK(a.model.ffn_hidden_size == b.model.ffn_hidden_size);
  CHECK(a.model.activation == b.model.activation);
  CHECK(a.model.normalization == b.model.normalization);
  CHECK(a.model.qk_layernorm == b.model.qk_layernorm);
  CHECK(a.model.add_bias_linear == b.model.add_bias_linear);
  CHECK(a.model.add_qkv_bias == b.model.add_qkv_bias);
  CHECK(a.model.attention_output_gate == b.model.attention_output_gate);
  CHECK(a.model.position_embedding == b.model.position_embedding);
  CHECK(a.model.max_position_embeddings == b.model.max_position_embeddings);
  CHECK(a.model.untie_embeddings_and_output_weights == b.model.untie_embeddings_and_output_weights);
  CHECK(a.model.vocab_size == b.model.vocab_size);
  CHECK(a.model.make_vocab_size_divisible_by == b.model.make_vocab_size_divisible_by);
  CHECK(a.model.num_experts == b.model.num_experts);
  CHECK(a.model.moe_router_topk == b.model.moe_router_topk);
  CHECK(a.model.moe_ffn_hidden_size == b.model.moe_ffn_hidden_size);
  CHECK(a.model.moe_shared_expert_intermediate_size == b.model.moe_shared_expert_intermediate_size);
  CHECK(a.model.moe_shared_expert_gate == b.model.moe_shared_expert_gate);
  CHECK(a.model.moe_latent_size == b.model.moe_latent_size);
  CHECK(a.model.moe_router_enable_expert_bias == b.model.moe_router_enable_expert_bias);
  CHECK(a.model.moe_layer_pattern == b.model.moe_layer_pattern);
  CHECK(a.model.moe_layer_freq == b.model.moe_layer_freq);
  CHECK(a.model.multi_latent_attention == b.model.multi_latent_attention);
  CHECK(a.model.q_lora_rank == b.model.q_lora_rank);
  CHECK(a.model.kv_lora_rank == b.model.kv_lora_rank);
  CHECK(a.model.qk_head_dim == b.model.qk_head_dim);
  CHECK(a.model.qk_pos_emb_head_dim == b.model.qk_pos_emb_head_dim);
  CHECK(a.model.v_head_dim == b.model.v_head_dim);
  CHECK(a.model.mtp_num_layers == b.model.mtp_num_layers);
  CHECK(a.model.mtp_use_repeated_layer == b.model.mtp_use_repeated_layer);
  CHECK(a.model.hidden_dropout == b.model.hidden_dropout);
  CHECK(a.model.attention_dropout == b.model.attention_dropout);
  CHECK(a.parallel.world_size == b.parallel.world_size);
  CHECK(a.parallel.tensor_parallel == b.parallel.tensor_parallel);
  CHECK(a.parallel.pipeline_parallel == b.parallel.pipeline_parallel);
  CHECK(a.parallel.virtual_stages_per_pipeline_rank == b.parallel.virtual_stages_per_pipeline_rank);
  CHECK(a.parallel.context_parallel == b.parallel.context_parallel);
  CHECK(a.parallel.expert_parallel == b.parallel.expert_parallel);
  CHECK(a.parallel.expert_tensor_parallel == b.parallel.expert_tensor_parallel);
  CHECK(a.parallel.sequence_parallel == b.parallel.sequence_parallel);
  CHECK(a.parallel.decoder_first_pipeline_num_layers ==
        b.parallel.decoder_first_pipeline_num_layers);
  CHECK(a.parallel.decoder_last_pipeline_num_layers == b.parallel.decoder_last_pipeline_num_layers);
  CHECK(a.parallel.account_for_embedding_in_pipeline_split ==
        b.parallel.account_for_embedding_in_pipeline_split);
  CHECK(a.parallel.account_for_loss_in_pipeline_split ==
        b.parallel.account_for_loss_in_pipeline_split);
  CHECK(a.parallel.pipeline_layout == b.parallel.pipeline_layout);
  CHECK(a.parallel.num_distributed_optimizer_instances ==
        b.parallel.num_distributed_optimizer_instances);
  CHECK(a.parallel.microbatch_group_size_per_vp_stage ==
        b.parallel.microbatch_group_size_per_vp_stage);
  CHECK(a.optimizer.kind == b.optimizer.kind);
  CHECK(a.optimizer.use_distributed_optimizer == b.optimizer.use_distributed_optimizer);
  CHECK(a.optimizer.grad_reduce_in_bf16 == b.optimizer.grad_reduce_in_bf16);
  CHECK(a.optimizer.use_precision_aware_optimizer == b.optimizer.use_precision_aware_optimizer);
  CHECK(a.optimizer.main_grads_dtype == b.optimizer.main_grads_dtype);
  CHECK(a.optimizer.main_params_dtype == b.optimizer.main_params_dtype);
  CHECK(a.optimizer.exp_avg_dtype == b.optimizer.exp_avg_dtype);
  CHECK(a.optimizer.exp_avg_sq_dtype == b.optimizer.exp_avg_sq_dtype);
  CHECK(a.optimizer.optimizer_cpu_offload == b.optimizer.optimizer_cpu_offload);
  CHECK(a.optimizer.optimizer_offload_fraction == b.optimizer.optimizer_offload_fraction);
  CHECK(a.optimizer.overlap_grad_reduce == b.optimizer.overlap_grad_reduce);
  CHECK(a.optimizer.ddp_bucket_size_elements == b.optimizer.ddp_bucket_size_elements);
  CHECK(a.training.micro_batch_size == b.training.micro_batch_size);
  CHECK(a.training.global_batch_size == b.training.global_batch_size);
  CHECK(a.training.seq_length == b.training.seq_length);
  CHECK(a.training.params_dtype == b.training.params_dtype);
  CHECK(a.training.fp8_recipe == b.training.fp8_recipe);
  CHECK(a.training.fp8_param_gather == b.training.fp8_param_gather);
  CHECK(a.training.transformer_impl == b.training.transformer_impl);
  CHECK(a.training.attention_backend == b.training.attention_backend);
  CHECK(a.training.moe_token_dispatcher == b.training.moe_token_dispatcher);
  CHECK(a.training.moe_grouped_gemm == b.training.moe_grouped_gemm);
  CHECK(a.training.moe_expert_capacity_factor == b.training.moe_expert_capacity_factor);
  CHECK(a.training.moe_pad_expert_input_to_capacity == b.training.moe_pad_expert_input_to_capacity);
  CHECK(a.training.cross_entropy == b.training.cross_entropy);
  CHECK(a.training.gradient_accumulation_fusion == b.training.gradient_accumulation_fusion);
  CHECK(a.training.create_attention_mask_in_dataloader ==
        b.training.create_attention_mask_in_dataloader);
  CHECK(a.training.moe_router_fp32 == b.training.moe_router_fp32);
  CHECK(a.training.overlap_moe_expert_parallel_comm == b.training.overlap_moe_expert_parallel_comm);
  CHECK(a.training.masked_softmax_fusion == b.training.masked_softmax_fusion);
  CHECK(a.training.deterministic_mode == b.training.deterministic_mode);
  CHECK(a.training.recompute.granularity == b.training.recompute.granularity);
  CHECK(a.training.recompute.method == b.training.recompute.method);
  CHECK(a.training.recompute.num_layers == b.training.recompute.num_layers);
  CHECK(a.training.recompute.distribute_saved_activations ==
        b.training.recompute.distribute_saved_activations);
  CHECK(a.training.recompute.modules == b.training.recompute.modules);
  CHECK(a.training.offload.fine_grained_activation_offloading ==
        b.training.offload.fine_grained_activation_offloading);
  CHECK(a.training.offload.offload_modules == b.training.offload.offload_modules);
  CHECK(a.training.offload.activation_offload_fraction ==
        b.training.offload.activation_offload_fraction);
  CHECK(a.training.offload.cpu_offloading == b.training.offload.cpu_offloading);
  CHECK(a.training.offload.cpu_offloading_num_layers ==
        b.training.offload.cpu_offloading_num_layers);
}

Config round_trip(const Config& config) {
  const std::string flags = to_megatron_args(config);
  INFO("to_megatron_args: " << flags);
  Expected<MegatronArgs> parsed = parse_megatron_args(flags, config.parallel.world_size);
  if (!parsed) FAIL(parsed.error().field + ": " + parsed.error().message);
  CHECK(parsed->unknown_flags.empty());
  CHECK(parsed->ignored_flags.empty());
  return parsed->config;
}

Config small_gpt() {
  Config c;
  c.model.num_layers = 4;
  c.model.hidden_size = 512;
  c.model.num_attention_heads = 8;
  c.model.vocab_size = 50257;
  c.training.seq_length = 1024;
  c.parallel.world_size = 8;
  return c;
}

}  // namespace

TEST_CASE("to_megatron_args of a default config round-trips and names only required flags") {
  const Config c = small_gpt();
  CHECK(to_megatron_args(c) ==
        "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --vocab-size 50257 "
        "--micro-batch-size 1 --seq-length 1024");
  check_same_memory_fields(c, round_trip(c));
}

TEST_CASE("to_megatron_args round-trips a dense GQA model with every dense option") {
  Config c = small_gpt();
  c.model.num_layers = 30;
  c.model.num_query_groups = 2;
  c.model.kv_channels = 128;
  c.model.ffn_hidden_size = 1536;
  c.model.activation = Activation::swiglu;
  c.model.normalization = Normalization::rmsnorm;
  c.model.qk_layernorm = true;
  c.model.add_bias_linear = false;
  c.model.add_qkv_bias = true;
  c.model.attention_output_gate = true;
  c.model.position_embedding = PositionEmbedding::rope;
  c.model.max_position_embeddings = 4096;
  c.model.untie_embeddings_and_output_weights = true;
  c.model.make_vocab_size_divisible_by = 64;
  c.model.hidden_dropout = 0.0;
  c.model.attention_dropout = 0.05;
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 2;
  c.parallel.pipeline_parallel = 4;
  c.parallel.virtual_stages_per_pipeline_rank = 2;
  c.parallel.context_parallel = 2;
  c.parallel.sequence_parallel = true;
  c.parallel.account_for_embedding_in_pipeline_split = true;
  c.parallel.account_for_loss_in_pipeline_split = true;
  c.parallel.num_distributed_optimizer_instances = 2;
  c.parallel.microbatch_group_size_per_vp_stage = 5;
  c.training.micro_batch_size = 2;
  c.training.global_batch_size = 64;
  c.training.params_dtype = DType::bf16;
  c.training.transformer_impl = TransformerImpl::local;
  c.training.attention_backend = AttentionBackend::unfused;
  c.training.cross_entropy = CrossEntropyImpl::native_fused;
  c.training.gradient_accumulation_fusion = false;
  c.training.create_attention_mask_in_dataloader = false;
  c.training.masked_softmax_fusion = false;
  c.training.deterministic_mode = true;
  c.training.recompute.granularity = RecomputeGranularity::full;
  c.training.recompute.method = RecomputeMethod::block;
  c.training.recompute.num_layers = 2;
  c.optimizer.use_distributed_optimizer = true;
  c.optimizer.grad_reduce_in_bf16 = true;
  c.optimizer.overlap_grad_reduce = true;
  c.optimizer.ddp_bucket_size_elements = 40000000;
  check_same_memory_fields(c, round_trip(c));
}

TEST_CASE("to_megatron_args round-trips an MLA MoE model with a layer pattern and a layout") {
  Config c = small_gpt();
  c.model.num_layers = 15;
  c.model.multi_latent_attention = true;
  c.model.q_lora_rank = 1536;
  c.model.kv_lora_rank = 512;
  c.model.qk_head_dim = 64;
  c.model.qk_pos_emb_head_dim = 32;
  c.model.v_head_dim = 96;
  c.model.position_embedding = PositionEmbedding::rope;
  c.model.num_experts = 8;
  c.model.moe_router_topk = 4;
  c.model.moe_ffn_hidden_size = 1024;
  c.model.moe_shared_expert_intermediate_size = 512;
  c.model.moe_shared_expert_gate = true;
  c.model.moe_latent_size = 128;
  c.model.moe_router_enable_expert_bias = true;
  c.model.moe_layer_pattern = {0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
  c.model.mtp_num_layers = 1;
  c.model.mtp_use_repeated_layer = true;
  c.parallel.world_size = 16;
  c.parallel.tensor_parallel = 2;
  c.parallel.pipeline_parallel = 2;
  c.parallel.pipeline_layout = "Et*3|(tt|)*6mL";
  c.parallel.virtual_stages_per_pipeline_rank = 4;
  c.parallel.expert_parallel = 4;
  c.parallel.expert_tensor_parallel = 1;
  c.parallel.sequence_parallel = true;
  c.training.params_dtype = DType::bf16;
  c.training.fp8_recipe = Fp8Recipe::blockwise;
  c.training.moe_token_dispatcher = TokenDispatcher::alltoall;
  c.training.moe_grouped_gemm = true;
  c.training.moe_router_fp32 = true;
  c.training.overlap_moe_expert_parallel_comm = true;
  c.training.moe_expert_capacity_factor = 1.25;
  c.training.moe_pad_expert_input_to_capacity = true;
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::layernorm, RecomputeModule::mla_up_proj,
                                  RecomputeModule::moe_act};
  c.training.offload.fine_grained_activation_offloading = true;
  c.training.offload.offload_modules = {OffloadModule::expert_fc1, OffloadModule::moe_act,
                                        OffloadModule::core_attn, OffloadModule::attn_proj};
  c.training.offload.activation_offload_fraction = 0.75;
  c.optimizer.use_distributed_optimizer = true;
  c.optimizer.use_precision_aware_optimizer = true;
  c.optimizer.main_grads_dtype = DType::bf16;
  c.optimizer.grad_reduce_in_bf16 = true;
  c.optimizer.main_params_dtype = DType::fp16;
  c.optimizer.exp_avg_dtype = DType::bf16;
  c.optimizer.exp_avg_sq_dtype = DType::fp8;
  c.optimizer.optimizer_cpu_offload = true;
  c.optimizer.optimizer_offload_fraction = 0.5;
  const std::string flags = to_megatron_args(c);
  CHECK_THAT(flags, Contains("--moe-layer-freq '([0]*3+[1]*11+[0]*1)'"));
  CHECK_THAT(flags, Contains("--pipeline-model-parallel-layout 'Et*3|(tt|)*6mL'"));
  check_same_memory_fields(c, round_trip(c));
}

TEST_CASE("to_megatron_args round-trips optimizers, uneven stages and legacy offloading") {
  Config c = small_gpt();
  c.model.num_layers = 8;
  c.model.num_experts = 4;
  c.model.moe_layer_freq = 2;
  c.model.activation = Activation::squared_relu;
  c.model.position_embedding = PositionEmbedding::none;
  c.parallel.pipeline_parallel = 4;
  c.parallel.virtual_stages_per_pipeline_rank = 1;
  c.parallel.decoder_first_pipeline_num_layers = 3;
  c.parallel.decoder_last_pipeline_num_layers = 1;
  c.training.params_dtype = DType::fp16;
  c.training.fp8_recipe = Fp8Recipe::delayed;
  c.training.fp8_param_gather = true;
  c.training.moe_token_dispatcher = TokenDispatcher::flex;
  c.optimizer.kind = OptimizerKind::sgd;
  c.optimizer.use_distributed_optimizer = true;
  check_same_memory_fields(c, round_trip(c));

  Config muon = small_gpt();
  muon.optimizer.kind = OptimizerKind::muon;
  muon.optimizer.use_distributed_optimizer = true;
  muon.training.offload.cpu_offloading = true;
  muon.training.offload.cpu_offloading_num_layers = 2;
  muon.training.recompute.granularity = RecomputeGranularity::none;
  check_same_memory_fields(muon, round_trip(muon));
}

TEST_CASE("to_megatron_args spells out 4h for SwiGLU, where Megatron's default differs") {
  Config c = small_gpt();
  c.model.activation = Activation::swiglu;  // ffn_hidden_size 0 = 4h in Config
  CHECK_THAT(to_megatron_args(c), Contains("--ffn-hidden-size 2048"));
  CHECK(round_trip(c).model.ffn_hidden_size == 2048);
}

// ---------------------------------------------------------------------------------------------
// The Megatron-LM CI command lines (../shared/validation/megatron-ci.json)
// ---------------------------------------------------------------------------------------------

namespace {

struct CiCommandLine {
  const char* id;
  std::int64_t world_size;
  std::int64_t vocab_size;
  const char* flags;
};

// Distinct configurations of megatron-ci.json that, together, use every flag in the file.
const CiCommandLine kCiCommandLines[] = {
    {"moe/gpt3_mcore_te_tp2_pp2_ep4_etp1_resume_torch_dist_attn_cudagraph@dev_dgx_h100", 8, 50257,
     R"ARGS(--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 4 --expert-model-parallel-size 4 --context-parallel-size 1 --expert-tensor-parallel-size 1 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --attention-backend unfused --use-mcore-models --sequence-parallel --disable-bias-linear --micro-batch-size 4 --global-batch-size 32 --no-rope-fusion --cross-entropy-loss-fusion --cross-entropy-fusion-impl native --transformer-impl transformer_engine --seq-length 4096 --num-layers 16 --hidden-size 512 --ffn-hidden-size 4096 --num-attention-heads 32 --kv-channels 128 --max-position-embeddings 4096 --position-embedding-type rope --rotary-base 10000 --make-vocab-size-divisible-by 3232 --normalization RMSNorm --norm-epsilon 1e-6 --swiglu --untie-embeddings-and-output-weights --multi-latent-attention --attention-dropout 0.0 --hidden-dropout 0.0 --qk-layernorm --num-experts 32 --moe-layer-freq "([0]*1+[1]*15)" --moe-ffn-hidden-size 1024 --moe-shared-expert-intermediate-size 1024 --moe-router-load-balancing-type seq_aux_loss --moe-router-topk 4 --moe-token-dispatcher-type alltoall --moe-router-pre-softmax --moe-grouped-gemm --moe-aux-loss-coeff 1e-4 --moe-router-group-topk 2 --moe-router-num-groups 4 --moe-router-topk-scaling-factor 2.0 --moe-router-score-function sigmoid --moe-router-enable-expert-bias --moe-router-bias-update-rate 1e-3 --moe-router-dtype fp32 --moe-permute-fusion --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --rotary-scaling-factor 40 --mscale 1.0 --mscale-all-dim 1.0 --cuda-graph-impl transformer_engine --cuda-graph-scope attn --cuda-graph-warmup-steps 0 --te-rng-tracker --bf16 --fp8-format hybrid --fp8-recipe tensorwise)ARGS"},
    {"moe/gpt3_moe_mcore_te_tp4_ep2_etp2_pp2_scoped_cudagraph@dev_dgx_gb200", 8, 50257,
     R"ARGS(--num-layers 13 --hidden-size 512 --num-attention-heads 8 --mtp-num-layers 1 --micro-batch-size 2 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --position-embedding-type rope --rotary-base 10000 --untie-embeddings-and-output-weights --disable-bias-linear --attention-dropout 0.0 --hidden-dropout 0.0 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --expert-model-parallel-size 2 --expert-tensor-parallel-size 2 --pipeline-model-parallel-layout "Et|(tt|)*6mL" --sequence-parallel --num-experts 8 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --moe-token-dispatcher-type alltoall --moe-router-load-balancing-type global_aux_loss --moe-router-topk 2 --moe-router-dtype fp32 --moe-router-fusion --moe-router-enable-expert-bias --moe-router-score-function sigmoid --moe-router-pre-softmax --moe-ffn-hidden-size 1024 --moe-shared-expert-intermediate-size 512 --moe-grouped-gemm --moe-layer-freq "([0]*4+[1]*9)" --moe-permute-fusion --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16 --fp8-format hybrid --fp8-recipe blockwise --first-last-layers-bf16 --no-bias-gelu-fusion --recompute-granularity selective --recompute-modules "[moe_act]" --cuda-graph-impl transformer_engine --cuda-graph-modules "[attn mlp moe_router moe_preprocess]")ARGS"},
    {"gpt/gpt3_mcore_reruns_resume_check_grads@dev_dgx_h100", 1, 50257,
     R"ARGS(--rotary-base 500 --override-opt_param-scheduler --recompute-num-layers 1 --deterministic-mode --bf16 --use-mcore-models --distributed-backend nccl --sequence-parallel --untie-embeddings-and-output-weights --position-embedding-type rope --rotary-percent 1.0 --max-position-embeddings 4096 --num-layers 32 --hidden-size 3072 --ffn-hidden-size 8192 --num-attention-heads 32 --num-query-groups 8 --seq-length 512 --kv-channels 128 --group-query-attention --normalization RMSNorm --swiglu --attention-dropout 0.0 --hidden-dropout 0.0 --no-create-attention-mask-in-dataloader --transformer-impl transformer_engine --disable-bias-linear --overlap-grad-reduce --overlap-param-gather --use-distributed-optimizer --no-gradient-accumulation-fusion --micro-batch-size 2 --global-batch-size 2 --tensor-model-parallel-size 1 --context-parallel-size 1 --pipeline-model-parallel-size 1)ARGS"},
    {"moe/deepseek_proxy_fsdp_ep2_fsdp2_ep_overlap@dev_dgx_h100", 8, 50257,
     R"ARGS(--bf16 --overlap-moe-expert-parallel-comm --delay-wgrad-compute --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --expert-model-parallel-size 2 --context-parallel-size 1 --expert-tensor-parallel-size 1 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --attention-backend unfused --num-distributed-optimizer-instances 1 --use-megatron-fsdp --outer-dp-sharding-strategy no_shard --deterministic-mode --no-gradient-accumulation-fusion --use-mcore-models --sequence-parallel --disable-bias-linear --micro-batch-size 4 --global-batch-size 32 --no-rope-fusion --transformer-impl transformer_engine --seq-length 1024 --num-layers 2 --hidden-size 512 --ffn-hidden-size 2048 --num-attention-heads 8 --kv-channels 128 --max-position-embeddings 1024 --position-embedding-type rope --rotary-base 10000 --make-vocab-size-divisible-by 64 --normalization RMSNorm --norm-epsilon 1e-6 --swiglu --untie-embeddings-and-output-weights --multi-latent-attention --attention-dropout 0.0 --hidden-dropout 0.0 --qk-layernorm --num-experts 8 --moe-layer-freq "([0]*1+[1]*1)" --moe-ffn-hidden-size 1024 --moe-shared-expert-intermediate-size 1024 --moe-router-load-balancing-type seq_aux_loss --moe-router-topk 4 --moe-token-dispatcher-type alltoall --moe-router-pre-softmax --moe-grouped-gemm --moe-aux-loss-coeff 1e-4 --moe-router-group-topk 2 --moe-router-num-groups 4 --moe-router-topk-scaling-factor 2.0 --moe-router-score-function sigmoid --moe-router-enable-expert-bias --moe-router-bias-update-rate 1e-3 --moe-router-dtype fp32 --moe-permute-fusion --q-lora-rank 256 --kv-lora-rank 128 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --rotary-scaling-factor 1.0 --mscale 1.0 --mscale-all-dim 1.0)ARGS"},
    {"gpt/gpt3_mcore_tp2_pp2_uninstall_te@dev_dgx_a100", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl local --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --no-persist-layer-norm --no-masked-softmax-fusion --deterministic-mode --no-gradient-accumulation-fusion --use-mcore-models --fp16 --apply-query-key-layer-scaling)ARGS"},
    {"moe/gpt3_moe_mcore_te_ep8_resume_torch_dist_dist_muon@dev_dgx_gb200", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --disable-bias-linear --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --expert-model-parallel-size 8 --num-experts 8 --moe-token-dispatcher-type allgather --moe-router-load-balancing-type aux_loss --moe-router-topk 2 --moe-router-dtype fp32 --moe-ffn-hidden-size 1024 --moe-grouped-gemm --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16 --no-bias-gelu-fusion --optimizer muon --muon-momentum 0.9 --muon-extra-scale-factor 0.2 --muon-scale-mode spectral --use-distributed-optimizer)ARGS"},
    {"gpt/gpt3_7b_tp1_pp4_memory_speed@dev_dgx_a100", 8, 131072, R"ARGS(--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8 --untie-embeddings-and-output-weights --micro-batch-size 1 --global-batch-size 8 --seq-length 8192 --max-position-embeddings 8192 --tokenizer-type NullTokenizer --vocab-size 131072 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 1 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --deterministic-mode --no-gradient-accumulation-fusion --use-mcore-models --bf16)ARGS"},
    {"gpt/gpt3_mcore_te_tp1_pp1_dist_optimizer_fim_dataset@dev_dgx_gb200", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --use-distributed-optimizer --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-mcore-models --bf16 --attention-backend unfused --fim-data --fim-rate 0.5 --fim-spm-rate 0.5)ARGS"},
    {"gpt/gpt3_weekly_mcore_tp2_pp2_current_scaling_native_fp8_tp_pp_sp_tp_overlap@dev_dgx_gb200",
     8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 2 --global-batch-size 128 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --sequence-parallel --tp-comm-overlap --tp-comm-overlap-cfg tests/functional_tests/test_cases/gpt/gpt3_weekly_mcore_tp2_pp2_current_scaling_native_fp8_tp_pp_sp_tp_overlap/tp_comm_overlap_cfg.yaml --deterministic-mode --no-gradient-accumulation-fusion --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --use-distributed-optimizer --attention-softmax-in-fp32 --bf16 --normalization RMSNorm)ARGS"},
    {"moe/gpt3_moe_mcore_te_tp2_pp2_ep4_etp1_fine_grained_offloading@dev_dgx_gb200", 8, 50257, R"ARGS(--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --expert-model-parallel-size 4 --context-parallel-size 1 --expert-tensor-parallel-size 1 --use-distributed-optimizer --attention-backend unfused --use-mcore-models --sequence-parallel --disable-bias-linear --micro-batch-size 1 --global-batch-size 8 --no-rope-fusion --recompute-granularity selective --recompute-modules "[layernorm mla_up_proj mlp moe_act]" --fine-grained-activation-offloading --offload-modules "[expert_fc1 moe_act attn_norm mlp_norm qkv_linear core_attn attn_proj]" --transformer-impl transformer_engine --seq-length 4096 --num-layers 15 --moe-layer-freq "([0]*3+[1]*12)" --pipeline-model-parallel-layout "Et*3\\\\|\\\\(tt\\\\|\\\\)*6mL" --hidden-size 1024 --ffn-hidden-size 4096 --num-attention-heads 32 --kv-channels 128 --max-position-embeddings 4096 --position-embedding-type rope --rotary-base 10000 --make-vocab-size-divisible-by 3232 --normalization RMSNorm --norm-epsilon 1e-6 --swiglu --untie-embeddings-and-output-weights --multi-latent-attention --mtp-num-layers 1 --mtp-loss-scaling-factor 0.1 --attention-dropout 0.0 --hidden-dropout 0.0 --qk-layernorm --num-experts 32 --moe-ffn-hidden-size 1024 --moe-shared-expert-intermediate-size 1024 --moe-router-load-balancing-type seq_aux_loss --moe-router-topk 4 --moe-token-dispatcher-type alltoall --moe-router-pre-softmax --moe-grouped-gemm --moe-aux-loss-coeff 1e-4 --moe-router-group-topk 2 --moe-router-num-groups 4 --moe-router-topk-scaling-factor 2.0 --moe-router-score-function sigmoid --moe-router-enable-expert-bias --moe-router-bias-update-rate 1e-3 --moe-router-dtype fp32 --moe-permute-fusion --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --rotary-scaling-factor 40 --mscale 1.0 --mscale-all-dim 1.0 --bf16 --overlap-moe-expert-parallel-comm)ARGS"},
    {"gpt/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist_tunable_overlap@dev_dgx_a100", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 40 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 1 --overlap-p2p-communication-warmup-flush --microbatch-group-size-per-virtual-pipeline-stage 5 --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16)ARGS"},
    {"gpt/gpt3_mcore_te_tp1_pp4_vp1_uneven_pipeline@dev_dgx_a100", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 --untie-embeddings-and-output-weights --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-mcore-models --bf16 --decoder-first-pipeline-num-layers 2 --decoder-last-pipeline-num-layers 2 --attention-backend unfused)ARGS"},
    {"gpt/gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split@dev_dgx_a100", 8,
     50257,
     R"ARGS(--num-layers 6 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 --untie-embeddings-and-output-weights --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-mcore-models --bf16 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split --attention-backend unfused)ARGS"},
    {"gpt/gpt3_mcore_te_tp2_pp2_cp2_etp4_calculate_per_token_loss_dp_last@dev_dgx_a100", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --context-parallel-size 2 --sequence-parallel --hidden-dropout 0.0 --attention-dropout 0.0 --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-mcore-models --bf16 --attention-backend flash --use-tp-pp-dp-mapping --expert-tensor-parallel-size 4 --calculate-per-token-loss)ARGS"},
    {"gpt/gpt3_mcore_te_tp2_pp2_resume_torch_dist_defer_embedding_wgrad_compute@dev_dgx_a100", 8,
     50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --defer-embedding-wgrad-compute --wgrad-deferral-limit 2 --deterministic-mode --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16)ARGS"},
    {"gpt/"
     "gpt3_mcore_te_tp4_pp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_param_gather@dev_"
     "dgx_h100",
     8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 4 --pipeline-model-parallel-size 1 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16 --async-strategy mcore --async-ckpt-use-cpu-shm)ARGS"},
    {"gpt/gpt3_mcore_te_tp1_pp1_dist_optimizer_no_mmap_bin_files@dev_dgx_a100", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --use-distributed-optimizer --no-mmap-bin-files --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-mcore-models --bf16 --attention-backend unfused)ARGS"},
    {"gpt/gpt3_mcore_te_tp1_pp1_resume_torch_dist_dist_optimizer@dev_dgx_a100", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --use-distributed-optimizer --no-ckpt-fully-parallel-save --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16)ARGS"},
    {"gpt/gpt3_mcore_te_tp1_pp1_resume_torch_dist_uniform_full_recompute@dev_dgx_a100", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16)ARGS"},
    {"gpt/"
     "gpt3_mcore_te_tp1_pp2_resume_torch_dist_rope_embeddings_interleaved_no_fusion@dev_dgx_a100",
     8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 2 --position-embedding-type rope --rotary-interleaved --no-rope-fusion --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16)ARGS"},
    {"gpt/"
     "gpt3_mcore_te_tp1_pp4_vp1_dist_optimizer_overlap_grad_reduce_param_gather_overlap_optimizer@"
     "dev_dgx_a100",
     8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 1 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --overlap-param-gather-with-optimizer-step --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-mcore-models --bf16 --attention-backend unfused)ARGS"},
    {"gpt/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_decoupled_lr@dev_dgx_a100", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 1 --decoupled-lr 0.0002 --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --bf16)ARGS"},
    {"gpt/"
     "gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_param_gather@"
     "dev_dgx_a100",
     8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 1 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --disable-gloo-process-groups --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16)ARGS"},
    {"gpt/gpt3_mcore_te_tp2_pp1_modelopt_distill_resume@dev_dgx_gb200", 8, 50257,
     R"ARGS(--export-te-mcore-model --num-layers 12 --hidden-size 512 --num-attention-heads 8 --normalization RMSNorm --micro-batch-size 2 --global-batch-size 16 --seq-length 1024 --max-position-embeddings 1024 --position-embedding-type rope --no-rope-fusion --rotary-percent 0.5 --swiglu --untie-embeddings-and-output-weights --disable-bias-linear --distributed-backend nccl --use-distributed-optimizer --transformer-impl transformer_engine --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 --sequence-parallel --deterministic-mode --no-gradient-accumulation-fusion --use-checkpoint-opt_param-scheduler --bf16 --attention-backend unfused)ARGS"},
    {"gpt/gpt3_mcore_te_tp2_pp2_resume_torch_dist@dev_dgx_gb200", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16 --verify-integrity)ARGS"},
    {"gpt/gpt3_mcore_te_tp2_pp2_resume_torch_dist_ddp_average_in_collective@dev_dgx_a100", 8, 50257,
     R"ARGS(--num-layers 12 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --ddp-average-in-collective --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-checkpoint-opt_param-scheduler --use-mcore-models --bf16)ARGS"},
    {"moe/gpt3_mcore_te_tp1_pp1_te_4experts_groupedGEMM_op_fuser@dev_dgx_h100", 8, 50257,
     R"ARGS(--num-layers 4 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 4 --global-batch-size 32 --seq-length 1024 --max-position-embeddings 1024 --distributed-backend nccl --transformer-impl transformer_engine --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --expert-model-parallel-size 1 --moe-grouped-gemm --use-transformer-engine-op-fuser --disable-bias-linear --num-experts 4 --moe-router-load-balancing-type sinkhorn --moe-router-topk 1 --swiglu --deterministic-mode --no-gradient-accumulation-fusion --attention-softmax-in-fp32 --use-mcore-models --bf16 --no-bias-gelu-fusion)ARGS"},
};

}  // namespace

TEST_CASE("every flag of the Megatron-LM CI command lines is known and they all parse") {
  for (const CiCommandLine& ci : kCiCommandLines) {
    INFO(ci.id);
    Expected<MegatronArgs> parsed = parse_megatron_args(ci.flags, ci.world_size, ci.vocab_size);
    if (!parsed) FAIL(parsed.error().field + ": " + parsed.error().message);
    CHECK(parsed->unknown_flags.empty());
    CHECK(parsed->config.model.vocab_size == ci.vocab_size);
    // And the Config survives its own round trip.
    check_same_memory_fields(parsed->config, round_trip(parsed->config));
  }
}

TEST_CASE("CI command lines map onto the expected fields") {
  // moe/gpt3_moe_mcore_te_tp4_ep2_etp2_pp2_scoped_cudagraph: layout, MTP, MoE pattern, fp8.
  const CiCommandLine& scoped = kCiCommandLines[1];
  const MegatronArgs a = *parse_megatron_args(scoped.flags, scoped.world_size, scoped.vocab_size);
  CHECK(a.config.parallel.virtual_stages_per_pipeline_rank == 4);
  CHECK(a.config.model.moe_layer_pattern ==
        std::vector<std::uint8_t>{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(a.config.model.mtp_num_layers == 1);
  CHECK(a.config.training.fp8_recipe == Fp8Recipe::blockwise);
  CHECK(a.config.training.recompute.modules == RecomputeModules{RecomputeModule::moe_act});
  CHECK(a.config.training.cuda_graph_impl == CudaGraphImpl::transformer_engine);
  CHECK(a.config.training.cuda_graph_modules ==
        CudaGraphModules{CudaGraphModule::attn, CudaGraphModule::mlp, CudaGraphModule::moe_router,
                         CudaGraphModule::moe_preprocess});
  CHECK(a.config.training.fp8_bf16_layers_at_start == 1);  // --first-last-layers-bf16
  CHECK(a.config.training.fp8_bf16_layers_at_end == 1);
  CHECK(listed(a.ignored_flags, "--moe-router-load-balancing-type"));
  // gpt/gpt3_7b_tp1_pp4_memory_speed: 32 layers, PP 4, one layer per virtual stage -> VPP 8.
  for (const CiCommandLine& ci : kCiCommandLines) {
    if (std::string(ci.id) != "gpt/gpt3_7b_tp1_pp4_memory_speed@dev_dgx_a100") continue;
    const Config c = parse_megatron_args(ci.flags, ci.world_size, ci.vocab_size)->config;
    CHECK(c.parallel.virtual_stages_per_pipeline_rank == 8);
    CHECK(c.model.num_query_groups == 8);
    CHECK(c.training.params_dtype == DType::bf16);
    CHECK(c.optimizer.use_distributed_optimizer);
  }
}

TEST_CASE("--no-bias-gelu-fusion / --no-bias-swiglu-fusion turn off the activation fusion") {
  CHECK(parse_ok(kBase).config.training.bias_activation_fusion);
  CHECK_FALSE(parse_ok(kBase + "--no-bias-gelu-fusion").config.training.bias_activation_fusion);
  // arguments.py: with --swiglu only the SwiGLU flag counts.
  CHECK(parse_ok(kBase + "--swiglu --no-bias-gelu-fusion").config.training.bias_activation_fusion);
  CHECK_FALSE(
      parse_ok(kBase + "--swiglu --no-bias-swiglu-fusion").config.training.bias_activation_fusion);
}

TEST_CASE("layout flags are the layout's, recompute's and offload's flags, shell-quoted") {
  Config config = fixtures::llama3_70b();
  config.parallel.world_size = 64;
  config.parallel.tensor_parallel = 8;
  config.parallel.sequence_parallel = true;
  config.parallel.pipeline_parallel = 4;
  config.parallel.pipeline_layout = "Et*19|t*20|t*20|t*21L";
  config.training.micro_batch_size = 2;
  config.training.recompute.granularity = RecomputeGranularity::selective;
  config.training.recompute.modules = {RecomputeModule::core_attn, RecomputeModule::mlp};
  const std::string flags = layout_megatron_args(config);
  CHECK(flags ==
        "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
        "--pipeline-model-parallel-layout 'Et*19|t*20|t*20|t*21L' --sequence-parallel "
        "--micro-batch-size 2 --recompute-granularity selective --recompute-modules core_attn mlp");
  // The same flags read back give the same layout.
  const Expected<MegatronArgs> parsed =
      parse_megatron_args(to_megatron_args(config), config.parallel.world_size);
  REQUIRE(parsed.has_value());
  CHECK(layout_megatron_args(parsed->config) == flags);
}

// A registry row's flag is read with the arity of its form (fields.hpp FlagForm), with no
// second table in the parser.
TEST_CASE("a flag known only by its registry row is parsed with its form's arity") {
  const std::string moe = kBase + " --num-experts 8 --expert-model-parallel-size 8";
  CHECK(parse_ok(moe + " --moe-router-force-load-balancing")
            .config.training.moe_router_force_load_balancing);
  CHECK_FALSE(parse_ok(moe).config.training.moe_router_force_load_balancing);
  CHECK(parse_error(moe + " --moe-router-force-load-balancing 1").field ==
        "--moe-router-force-load-balancing");
  CHECK(parse_error(kBase + " --moe-expert-capacity-factor").message == "needs a value");
}

TEST_CASE("the estimate says what it takes for the busiest expert rank unless routing is fixed") {
  const std::string moe = kBase + " --num-experts 8 --expert-model-parallel-size 8";
  auto assumptions = [](const std::string& flags) {
    auto e = estimate(parse_ok(flags).config);
    REQUIRE(e.has_value());
    return e->assumptions;
  };
  const std::vector<std::string> free_routing = assumptions(moe);
  REQUIRE(free_routing.size() == 1);
  CHECK(free_routing[0].find("1.00x its even share") != std::string::npos);
  CHECK(free_routing[0].find("drops no token") != std::string::npos);
  CHECK(assumptions(moe + " --moe-router-force-load-balancing").empty());
  CHECK(assumptions(moe + " --moe-expert-capacity-factor 1.5 --moe-pad-expert-input-to-capacity")
            .empty());
  CHECK(assumptions(kBase + " --num-experts 8").empty());  // EP 1: every GPU gets k x N
}

TEST_CASE("a HuggingFace tokenizer of a preset model gives its vocabulary") {
  // Megatron-LM's examples pass --tokenizer-type HuggingFaceTokenizer --tokenizer-model
  // <repository or path> and no --vocab-size.
  const std::string flags =
      "--num-layers 2 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 1 --tokenizer-type "
      "HuggingFaceTokenizer --tokenizer-model ";
  for (const char* model : {"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct",
                            "/checkpoints/hf/Llama-3.1-8B/"}) {
    Expected<MegatronArgs> args = parse_megatron_args(flags + model, 1);
    REQUIRE(args.has_value());
    CHECK(args->config.model.vocab_size == 128256);
    REQUIRE_FALSE(args->warnings.empty());
    CHECK_THAT(args->warnings.back(), Catch::Matchers::Contains("preset llama-3.1-8b"));
  }
  // --vocab-size wins; an unknown model asks for it.
  Expected<MegatronArgs> given = parse_megatron_args(flags + "Qwen/Qwen3-8B --vocab-size 1000", 1);
  REQUIRE(given.has_value());
  CHECK(given->config.model.vocab_size == 1000);
  Expected<MegatronArgs> unknown = parse_megatron_args(flags + "someone/their-model", 1);
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().field == "--vocab-size");
  CHECK_THAT(unknown.error().message, Catch::Matchers::Contains("someone/their-model"));
}

// Issue 28 item 13: Megatron reads the --moe-* training flags only in MoE layers, so a dense
// model's flags (and Bridge overrides, written from them) leave them out; a MoE model's keep them.
TEST_CASE("a dense model's exported flags carry no MoE training flags") {
  const Config dense = fixtures::llama3_70b();
  const std::string dense_flags = to_megatron_args(dense);
  CHECK(dense_flags.find("--moe-") == std::string::npos);
  CHECK(to_bridge_overrides(dense).find("model.moe_") == std::string::npos);
  Config moe = fixtures::qwen3_235b_a22b();
  moe.training.moe_grouped_gemm = true;
  const std::string moe_flags = to_megatron_args(moe);
  CHECK(moe_flags.find("--moe-token-dispatcher-type alltoall") != std::string::npos);
  CHECK(moe_flags.find("--moe-grouped-gemm") != std::string::npos);
}

TEST_CASE("--apply-query-key-layer-scaling sets attention_softmax_in_fp32, as arguments.py does") {
  CHECK_FALSE(parse_ok(kBase + "--bf16").config.training.attention_softmax_in_fp32);
  CHECK(parse_ok(kBase + "--bf16 --attention-softmax-in-fp32")
            .config.training.attention_softmax_in_fp32);
  CHECK(parse_ok(kBase + "--fp16 --apply-query-key-layer-scaling")
            .config.training.attention_softmax_in_fp32);
}
