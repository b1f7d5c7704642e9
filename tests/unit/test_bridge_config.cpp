// Megatron-Bridge configurations (bridge_config.hpp): recipe overrides out and back in, mixed
// precision recipes, unknown keys and unusable values. The YAML reader is tested natively in
// test_bridge_yaml.cpp (yaml-cpp is not part of the wasm build).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "megamem/bridge_config.hpp"
#include "megamem/share_link.hpp"
#include "random_megatron_config.hpp"

using namespace megamem;

namespace {

BridgeImport import_overrides(const std::string& overrides, std::int64_t world_size) {
  const Expected<BridgeNode> tree = parse_bridge_overrides(overrides);
  if (!tree) FAIL(tree.error().field + ": " + tree.error().message);
  const Expected<BridgeImport> imported = import_bridge_config(*tree, world_size);
  if (!imported) FAIL(imported.error().field + ": " + imported.error().message);
  return *imported;
}

Error import_error(const std::string& overrides) {
  const Expected<BridgeNode> tree = parse_bridge_overrides(overrides);
  REQUIRE(tree.has_value());
  const Expected<BridgeImport> imported = import_bridge_config(*tree, 8);
  REQUIRE_FALSE(imported.has_value());
  return imported.error();
}

const std::string kSmallGpt =
    "model.num_layers=4 model.hidden_size=512 model.num_attention_heads=8 model.seq_length=1024 "
    "model.vocab_size=50257 train.micro_batch_size=1 ";

}  // namespace

TEST_CASE("Bridge overrides of a configuration read back to the same configuration") {
  testing::RandomMegatronConfig random(4242);
  for (int i = 0; i < 200; ++i) {
    const Config original = random.next();
    const std::string overrides = to_bridge_overrides(original);
    INFO(overrides);
    const BridgeImport imported = import_overrides(overrides, original.parallel.world_size);
    CHECK(imported.warnings.empty());
    const Config back = testing::with_unexported_fields(imported.args.config, original);
    CHECK(share_link_differences(original, back).empty());
  }
}

TEST_CASE("Bridge overrides name the fields recipes take") {
  Config c = share_link_defaults();
  c.model.num_layers = 4;
  c.model.hidden_size = 512;
  c.model.num_attention_heads = 8;
  c.model.vocab_size = 50257;
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 4;
  const std::string overrides = to_bridge_overrides(c);
  CHECK(overrides.find("model.tensor_model_parallel_size=4") != std::string::npos);
  CHECK(overrides.find("train.micro_batch_size=1") != std::string::npos);
  CHECK(overrides.find("mixed_precision.bf16=true") != std::string::npos);
  CHECK(overrides.find("ddp.use_distributed_optimizer=true") != std::string::npos);
  // Fields whose Bridge path is not model.<flag>: the registry rows' bridge_field.
  c.training.fp8_recipe = Fp8Recipe::mxfp8;
  c.training.fp8_param_gather = true;
  c.optimizer.overlap_grad_reduce = true;
  c.optimizer.ddp_bucket_size_elements = 40'000'000;
  const std::string fp8 = to_bridge_overrides(c);
  for (const char* field : {"mixed_precision.fp8=hybrid", "mixed_precision.fp8_recipe=mxfp8",
                            "mixed_precision.fp8_param_gather=true", "ddp.overlap_grad_reduce=true",
                            "ddp.bucket_size=40000000", "model.seq_length="}) {
    INFO(field << " in " << fp8);
    CHECK(fp8.find(field) != std::string::npos);
  }
}

TEST_CASE("a mixed-precision recipe name sets the precision fields it sets in Bridge") {
  // training/mixed_precision.py: bf16_with_fp8_current_scaling_mixed is hybrid FP8 with
  // per-tensor current scaling and fp8_param_gather (which needs the distributed optimizer).
  const BridgeImport fp8 =
      import_overrides(kSmallGpt +
                           "ddp.use_distributed_optimizer=true "
                           "mixed_precision=bf16_with_fp8_current_scaling_mixed",
                       8);
  CHECK(fp8.args.config.training.params_dtype == DType::bf16);
  CHECK(fp8.args.config.training.fp8_recipe == Fp8Recipe::tensorwise);
  CHECK(fp8.args.config.training.fp8_param_gather);
  // first_last_layers_bf16: one bf16 layer at each end (transformer_config.py defaults).
  CHECK(fp8.args.config.training.fp8_bf16_layers_at_start == 1);
  CHECK(fp8.args.config.training.fp8_bf16_layers_at_end == 1);
  const BridgeImport fp16 = import_overrides(kSmallGpt + "mixed_precision=fp16-mixed", 8);
  CHECK(fp16.args.config.training.params_dtype == DType::fp16);
}

// training/config.py runtime_config_update: MixedPrecisionConfig.setup copies fp8_recipe
// (tensorwise by default, also for bf16_mixed) onto the optimizer config; without a
// mixed_precision section the optimizer keeps Megatron-Core's None (as delayed).
TEST_CASE("a Bridge mixed-precision config hands its fp8_recipe to the optimizer") {
  const BridgeImport bf16 = import_overrides(kSmallGpt + "mixed_precision=bf16_mixed", 8);
  CHECK(bf16.args.config.training.fp8_recipe == Fp8Recipe::none);
  CHECK(bf16.args.config.optimizer.fp8_recipe == Fp8Recipe::tensorwise);
  const BridgeImport named = import_overrides(
      kSmallGpt + "mixed_precision.bf16=true mixed_precision.fp8_recipe=delayed", 8);
  CHECK(named.args.config.optimizer.fp8_recipe == Fp8Recipe::delayed);
  const BridgeImport none = import_overrides(kSmallGpt, 8);
  CHECK(none.args.config.optimizer.fp8_recipe == Fp8Recipe::delayed);
}

TEST_CASE("a Bridge config's env_vars set expandable segments and turn NVLS off") {
  // ConfigContainer.env_vars (training/config.py): what Bridge's H100 performance recipes set.
  const BridgeImport env = import_overrides(
      kSmallGpt +
          "env_vars.PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True env_vars.NCCL_NVLS_ENABLE=0 "
          "env_vars.CUDA_DEVICE_MAX_CONNECTIONS=1",
      8);
  CHECK(env.args.config.runtime.expandable_segments);
  CHECK_FALSE(env.args.config.runtime.nccl_nvls);
  CHECK(env.warnings.empty());
  const BridgeImport plain = import_overrides(kSmallGpt, 8);
  CHECK_FALSE(plain.args.config.runtime.expandable_segments);
  CHECK(plain.args.config.runtime.nccl_nvls);
}

TEST_CASE("mixed_precision fields override the model's, as MixedPrecisionConfig.setup does") {
  const BridgeImport imported = import_overrides(kSmallGpt +
                                                     "model.bf16=true mixed_precision.bf16=false "
                                                     "mixed_precision.fp16=true",
                                                 8);
  CHECK(imported.args.config.training.params_dtype == DType::fp16);
}

TEST_CASE("an unknown Bridge key is a warning naming it") {
  const BridgeImport imported = import_overrides(kSmallGpt + "model.hiden_size=12", 8);
  REQUIRE(imported.warnings.size() == 1);
  CHECK(imported.warnings.front().find("model.hiden_size") == 0);
}

TEST_CASE("Bridge DDP fields that change memory reach the flag parser") {
  // ddp.nccl_ub is Megatron-LM's --use-nccl-ub (not modeled, so named), and
  // ddp.outer_dp_sharding_strategy its --outer-dp-sharding-strategy (HFSDP, modeled).
  const BridgeImport defaults =
      import_overrides(kSmallGpt +
                           "ddp.keep_fp8_transpose_cache=false ddp.nccl_ub=false "
                           "ddp.outer_dp_sharding_strategy=no_shard",
                       8);
  CHECK(defaults.args.unmodeled_flags.empty());
  CHECK(defaults.warnings.empty());
  const BridgeImport set =
      import_overrides(kSmallGpt +
                           "ddp.keep_fp8_transpose_cache=true ddp.nccl_ub=true "
                           "ddp.outer_dp_sharding_strategy=optim",
                       8);
  CHECK(set.args.unmodeled_flags ==
        std::vector<std::string>{"--keep-fp8-transpose-cache", "--use-nccl-ub"});
  CHECK(set.args.config.parallel.fsdp.outer_sharding == FsdpSharding::optim);
}

TEST_CASE("a TransformerConfig field without a flag is named when set to what megamem leaves out") {
  const BridgeImport defaults = import_overrides(
      kSmallGpt + "model.fp8_dot_product_attention=false model.deallocate_pipeline_outputs=true",
      8);
  CHECK(defaults.warnings.empty());
  const BridgeImport set = import_overrides(kSmallGpt +
                                                "model.disable_parameter_transpose_cache=true "
                                                "model.deallocate_pipeline_outputs=false",
                                            8);
  REQUIRE(set.warnings.size() == 2);
  CHECK(set.warnings[0].find("model.disable_parameter_transpose_cache") == 0);
  CHECK(set.warnings[0].find("not modeled") != std::string::npos);
  CHECK(set.warnings[1].find("model.deallocate_pipeline_outputs") == 0);
}

TEST_CASE("a Bridge value megamem cannot use is an error naming the key") {
  CHECK(import_error(kSmallGpt + "model.num_layers=four").message.find("model.num_layers") == 0);
  CHECK(import_error(kSmallGpt + "mixed_precision=bf17_mixed").message.find("unknown recipe") !=
        std::string::npos);
}

TEST_CASE("Bridge's unpadded vocabulary is used as is unless should_pad_vocab") {
  // models/gpt_provider.py provide(): should_pad_vocab defaults to False.
  const BridgeImport plain = import_overrides(kSmallGpt, 8);
  CHECK(plain.args.config.model.make_vocab_size_divisible_by == 1);
  const BridgeImport padded = import_overrides(kSmallGpt + "model.should_pad_vocab=true", 8);
  CHECK(padded.args.config.model.make_vocab_size_divisible_by == 128);
}

TEST_CASE("malformed overrides name the word") {
  const Expected<BridgeNode> tree = parse_bridge_overrides("model.num_layers");
  REQUIRE_FALSE(tree.has_value());
  CHECK(tree.error().field == "model.num_layers");
  // Hydra's '+' alone (a stray space after it) is named as written, not as an empty word.
  const Expected<BridgeNode> lone_plus = parse_bridge_overrides("+ model.num_layers=4");
  REQUIRE_FALSE(lone_plus.has_value());
  CHECK(lone_plus.error().field == "+");
}

TEST_CASE("Bridge-only fields (the Gemma soft-caps) are read, written back and checked") {
  const BridgeImport imported = import_overrides(kSmallGpt +
                                                     "model.final_logit_softcapping=30.0 "
                                                     "model.attn_logit_softcapping=50.0",
                                                 8);
  CHECK(imported.warnings.empty());
  CHECK(imported.args.config.model.final_logit_softcapping == 30.0);
  CHECK(imported.args.config.model.attn_logit_softcapping == 50.0);
  const std::string back = to_bridge_overrides(imported.args.config);
  CHECK(back.find("model.final_logit_softcapping=30") != std::string::npos);
  CHECK(back.find("model.attn_logit_softcapping=50") != std::string::npos);
  // Gemma 3's providers leave them None; a value that is no number is named and ignored.
  CHECK(import_overrides(kSmallGpt + "model.final_logit_softcapping=None", 8).warnings.empty());
  const BridgeImport bad = import_overrides(kSmallGpt + "model.attn_logit_softcapping=fifty", 8);
  REQUIRE(bad.warnings.size() == 1);
  CHECK(bad.warnings[0].find("model.attn_logit_softcapping") != std::string::npos);
  CHECK(bad.args.config.model.attn_logit_softcapping == 0.0);
}

TEST_CASE("Bridge-only fields: Kimi K3's KDA layers, sizes and Attention Residuals block") {
  // KimiK3ModelProvider (kimi/kimi_k3_provider.py): kimi_kda_layers holds 1-based layer numbers.
  const BridgeImport imported =
      import_overrides(kSmallGpt +
                           "model.kimi_kda_layers=[1,2,4] model.kimi_linear_num_heads=8 "
                           "model.kimi_linear_head_dim=64 model.kimi_attn_res_block_size=2",
                       8);
  CHECK(imported.warnings.empty());
  const ModelConfig& m = imported.args.config.model;
  CHECK(m.kda_layer_pattern == std::vector<std::uint8_t>{1, 1, 0, 1});
  CHECK(m.kda_num_heads == 8);
  CHECK(m.kda_head_dim == 64);
  CHECK(m.kda_conv_kernel == 4);
  CHECK(m.attn_res_block_size == 2);
  const std::string back = to_bridge_overrides(imported.args.config);
  CHECK(back.find("model.kimi_kda_layers=[1,2,4]") != std::string::npos);
  CHECK(back.find("model.kimi_linear_num_heads=8") != std::string::npos);
  CHECK(back.find("model.kimi_attn_res_block_size=2") != std::string::npos);
  // The conv kernel keeps megamem's default 4, KimiK3ModelProvider's too: the overrides write
  // only what differs from the defaults, and it reads back the same.
  CHECK(back.find("kimi_linear_conv_kernel_size") == std::string::npos);
  const BridgeImport again = import_overrides(back, 8);
  CHECK(again.warnings.empty());
  CHECK(again.args.config.model.kda_layer_pattern == m.kda_layer_pattern);
  CHECK(again.args.config.model.kda_conv_kernel == 4);
  CHECK(again.args.config.model.kda_head_dim == 64);
  // A layer number outside 1..num_layers is named and ignored.
  const BridgeImport bad = import_overrides(kSmallGpt + "model.kimi_kda_layers=[0,5]", 8);
  REQUIRE(bad.warnings.size() == 1);
  CHECK(bad.warnings[0].find("model.kimi_kda_layers") != std::string::npos);
  CHECK(bad.args.config.model.kda_layer_pattern.empty());
  // Without KDA layers the KDA sizes are not written.
  CHECK(to_bridge_overrides(bad.args.config).find("kimi_linear") == std::string::npos);
}

TEST_CASE("a MiniMax-M3 provider keeps its router weights fp32: the class says so") {
  // minimax_m3_bridge.py registers _promote_router_weights_to_float32 in the provider's
  // __post_init__; a run_config.yaml names the class in model._target_ and no field.
  const std::string moe = kSmallGpt + "model.num_moe_experts=8 ";
  CHECK_FALSE(import_overrides(moe, 8).args.config.model.moe_router_fp32_params);
  const BridgeImport m3 =
      import_overrides(moe +
                           "model._target_=megatron.bridge.models.minimax_m3.minimax_m3_bridge."
                           "MiniMaxM3ModelProvider",
                       8);
  CHECK(m3.args.config.model.moe_router_fp32_params);
  CHECK(m3.args.config.model.name == "MiniMaxM3ModelProvider");
}

TEST_CASE("A Bridge-only boolean reads and writes as a Python boolean") {
  // TransformerConfig.use_fused_weighted_squared_relu has no Megatron-LM flag; Bridge's
  // Nemotron 3 recipes set it (recipes/nemotronh/*).
  const std::string moe = kSmallGpt +
                          "model.num_moe_experts=8 model.moe_router_topk=2 "
                          "model.moe_ffn_hidden_size=512 model.add_bias_linear=false ";
  CHECK_FALSE(import_overrides(moe, 8).args.config.training.moe_fused_weighted_squared_relu);
  const BridgeImport fused =
      import_overrides(moe + "model.use_fused_weighted_squared_relu=true", 8);
  CHECK(fused.args.config.training.moe_fused_weighted_squared_relu);
  CHECK(fused.warnings.empty());
  CHECK(to_bridge_overrides(fused.args.config).find("model.use_fused_weighted_squared_relu=true") !=
        std::string::npos);
}
