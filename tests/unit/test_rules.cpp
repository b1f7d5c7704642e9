// The rule book (core/src/rules): one TEST_CASE per rule that test_normalize.cpp and
// test_layer_placement.cpp do not already name. An error names the field and the Megatron
// source; a policy of one launcher or version is a warning and the estimate still comes.
#include <catch2/catch.hpp>

#include "megamem/estimate.hpp"
#include "model_fixtures.hpp"

using namespace megamem;
using Catch::Matchers::Contains;

namespace {
// A small dense GPT on 8 GPUs that every rule accepts.
Config dense() {
  Config c = fixtures::llama3_70b();
  c.model.num_layers = 8;
  c.parallel.world_size = 8;
  c.parallel.tensor_parallel = 2;
  c.parallel.sequence_parallel = true;
  c.training.global_batch_size = 0;
  return c;
}
// A small MoE model on 16 GPUs.
Config moe() {
  Config c = fixtures::qwen3_235b_a22b();
  c.model.num_layers = 4;
  c.parallel.world_size = 16;
  c.parallel.tensor_parallel = 4;
  c.parallel.sequence_parallel = true;
  c.parallel.expert_parallel = 4;
  return c;
}
Error error_of(const Config& c) {
  Expected<NormalizedConfig> n = normalize(c);
  REQUIRE_FALSE(n.has_value());
  return n.error();
}
std::vector<std::string> warnings_of(const Config& c) {
  Expected<NormalizedConfig> n = normalize(c);
  if (!n) FAIL(n.error().field + ": " + n.error().message);
  return n->warnings;
}
}  // namespace

TEST_CASE("the fixtures pass every rule without a warning") {
  CHECK(warnings_of(dense()).empty());
  CHECK(warnings_of(moe()).empty());
}

TEST_CASE("rule errors cite the Megatron-LM file they come from") {
  Config c = dense();
  c.parallel.tensor_parallel = 3;
  c.parallel.world_size = 24;
  CHECK_THAT(error_of(c).message, Contains("megatron/core/transformer/transformer_config.py"));
}

TEST_CASE("dropout and offload fractions lie in [0, 1]") {
  Config c = dense();
  c.model.hidden_dropout = 1.5;
  CHECK(error_of(c).field == "hidden_dropout");
  c = dense();
  c.optimizer.optimizer_offload_fraction = -0.1;
  CHECK(error_of(c).field == "optimizer_offload_fraction");
}

TEST_CASE("kv_channels defaults to hidden / heads, which must divide") {
  Config c = dense();
  c.model.kv_channels = 0;
  c.model.hidden_size = 8190;
  CHECK(error_of(c).field == "num_attention_heads");
  c.model.kv_channels = 128;
  CHECK(normalize(c).has_value());
}

TEST_CASE("learned positions must cover the sequence; with rope it is a warning") {
  Config c = dense();
  c.model.position_embedding = PositionEmbedding::learned_absolute;
  c.model.max_position_embeddings = c.training.seq_length / 2;
  CHECK(error_of(c).field == "max_position_embeddings");
  c.model.position_embedding = PositionEmbedding::rope;
  CHECK(warnings_of(c).size() == 1);
}

TEST_CASE("MTP with learned positions is Megatron-LM's policy: a warning") {
  Config c = dense();
  c.model.mtp_num_layers = 1;
  c.model.position_embedding = PositionEmbedding::learned_absolute;
  c.model.max_position_embeddings = c.training.seq_length;
  CHECK(warnings_of(c).size() == 1);
}

TEST_CASE("a MoE latent size on a dense model is a warning") {
  Config c = dense();
  c.model.moe_latent_size = 64;
  CHECK(warnings_of(c).size() == 1);
}

TEST_CASE("multi-latent attention needs its ranks") {
  Config c = fixtures::deepseek_v3();
  c.model.kv_lora_rank = 0;
  CHECK(error_of(c).field == "kv_lora_rank");
}

TEST_CASE("FFN must divide by TP") {
  Config c = dense();
  c.model.ffn_hidden_size = 28673;
  CHECK(error_of(c).field == "ffn_hidden_size");
}

TEST_CASE("distributed-optimizer instances must divide DP x CP and expert-DP") {
  Config c = dense();
  c.parallel.num_distributed_optimizer_instances = 3;
  CHECK(error_of(c).field == "num_distributed_optimizer_instances");
}

TEST_CASE("EP > 1 needs experts") {
  Config c = dense();
  c.parallel.expert_parallel = 2;
  CHECK(error_of(c).field == "expert_model_parallel_size");
}

TEST_CASE("router top-k lies between 1 and the expert count") {
  Config c = moe();
  c.model.moe_router_topk = c.model.num_experts + 1;
  CHECK(error_of(c).field == "moe_router_topk");
}

TEST_CASE("expert FFN must divide by ETP") {
  Config c = moe();
  c.parallel.expert_tensor_parallel = 4;
  c.model.moe_ffn_hidden_size = 1538;
  CHECK(error_of(c).field == "moe_ffn_hidden_size");
}

TEST_CASE("shared experts must divide by TP") {
  Config c = moe();
  c.model.moe_shared_expert_intermediate_size = 1026;
  CHECK(error_of(c).field == "moe_shared_expert_intermediate_size");
}

TEST_CASE("a MoE layer pattern has one entry per layer") {
  Config c = moe();
  c.model.moe_layer_pattern = {1, 0, 1};
  CHECK(error_of(c).field == "moe_layer_freq");
}

TEST_CASE("sequence parallel splits the sequence over TP") {
  Config c = dense();
  c.training.seq_length = 4095;
  c.model.max_position_embeddings = 8192;
  CHECK(error_of(c).field == "seq_length");
}

TEST_CASE("TP communication overlap without sequence parallelism is Megatron-LM's policy") {
  Config c = dense();
  c.training.tp_comm_overlap = true;
  CHECK(warnings_of(c).empty());
  // arguments.py asserts SP; TE would silently overlap nothing, so the estimate still comes.
  c.parallel.sequence_parallel = false;
  std::vector<std::string> warnings = warnings_of(c);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Contains("--tp-comm-overlap needs --sequence-parallel"));
  CHECK_THAT(warnings[0], Contains("arguments.py"));
  CHECK(estimate(c).has_value());
  // At TP 1 arguments.py turns SP off, so the assert fires there too.
  c.parallel.sequence_parallel = true;
  c.parallel.tensor_parallel = 1;
  CHECK(warnings_of(c).size() == 1);
}

TEST_CASE("fp32 training is estimated without a warning") {
  Config c = dense();
  c.training.params_dtype = DType::fp32;
  CHECK(warnings_of(c).empty());
  CHECK(estimate(c).has_value());
}

TEST_CASE("context parallel cuts the sequence into 2 x CP chunks") {
  Config c = dense();
  c.parallel.tensor_parallel = 1;
  c.parallel.context_parallel = 4;
  c.training.seq_length = 4100;
  c.model.max_position_embeddings = 8192;
  CHECK(error_of(c).field == "seq_length");
}

TEST_CASE("interleaving needs PP > 1") {
  Config c = dense();
  c.parallel.virtual_stages_per_pipeline_rank = 2;
  CHECK(error_of(c).field == "virtual_stages_per_pipeline_rank");
}

TEST_CASE("the interleaved schedule's micro-batch groups lie in [PP, M]") {
  Config c = dense();
  c.parallel.pipeline_parallel = 4;
  c.parallel.tensor_parallel = 1;
  c.parallel.virtual_stages_per_pipeline_rank = 2;
  c.training.global_batch_size = 2;  // M = 1 < PP
  CHECK(error_of(c).field == "global_batch_size");
  c.training.global_batch_size = 6;  // M = 3, group 4 > M
  CHECK(error_of(c).field == "global_batch_size");
  c.training.global_batch_size = 10;  // M = 5: 5 mod 4 = 1 < PP
  CHECK(error_of(c).field == "microbatch_group_size_per_vp_stage");
  c.training.global_batch_size = 16;
  CHECK(normalize(c).has_value());
}

TEST_CASE("layers are placed once, by normalize") {
  Config c = dense();
  c.parallel.pipeline_parallel = 4;
  c.parallel.tensor_parallel = 1;
  const Expected<NormalizedConfig> n = normalize(c);
  REQUIRE(n.has_value());
  REQUIRE(n->stages.size() == 4);
  CHECK(n->stages[3].first_layer == 6);
  const Expected<Estimate> e = estimate(c);
  REQUIRE(e.has_value());
  CHECK(e->normalized.stages.size() == 4);
}

TEST_CASE("full recompute: uniform needs a layer per group, block may recompute none") {
  Config c = dense();
  c.training.recompute.granularity = RecomputeGranularity::full;
  c.training.recompute.method = RecomputeMethod::uniform;
  c.training.recompute.num_layers = 0;
  CHECK(error_of(c).field == "recompute_num_layers");
  c.training.recompute.method = RecomputeMethod::block;
  CHECK(warnings_of(c).empty());
}

TEST_CASE("block recompute of 0 layers estimates as no recompute") {
  Config none = dense();
  Config block = dense();
  block.training.recompute.granularity = RecomputeGranularity::full;
  block.training.recompute.method = RecomputeMethod::block;
  block.training.recompute.num_layers = 0;
  const Expected<Estimate> a = estimate(none), b = estimate(block);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(a->ranks[0].activation_peak_bytes == b->ranks[0].activation_peak_bytes);
}

TEST_CASE("distributed saved activations: an error with SP, a warning without TP") {
  Config c = dense();
  c.training.recompute.granularity = RecomputeGranularity::full;
  c.training.recompute.distribute_saved_activations = true;
  CHECK(error_of(c).field == "distribute_saved_activations");
  c.parallel.tensor_parallel = 1;
  CHECK(warnings_of(c).size() == 1);
}

TEST_CASE("recompute modules of unmodeled layers are a warning") {
  Config c = dense();
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::core_attn, RecomputeModule::gdn_norm_out};
  CHECK(warnings_of(c).size() == 1);
}

TEST_CASE("fine-grained offloading: known modules, attn_proj with core_attn, TE, no legacy") {
  Config c = dense();
  c.training.offload.fine_grained_activation_offloading = true;
  c.training.offload.offload_modules = {};
  CHECK(error_of(c).field == "offload_modules");
  c.training.offload.offload_modules = {OffloadModule::attn_proj};
  CHECK(error_of(c).field == "offload_modules");
  c.training.offload.offload_modules = {OffloadModule::core_attn, OffloadModule::attn_proj};
  CHECK(normalize(c).has_value());
  c.training.transformer_impl = TransformerImpl::local;
  CHECK(error_of(c).field == "fine_grained_activation_offloading");
}

TEST_CASE("legacy CPU offloading keeps at least one layer on the GPU") {
  Config c = dense();
  c.parallel.tensor_parallel = 1;
  c.training.offload.cpu_offloading = true;
  c.training.offload.cpu_offloading_num_layers = c.model.num_layers;
  CHECK(error_of(c).field == "cpu_offloading_num_layers");
}

TEST_CASE("FP8 parameter gathering needs FP8 and the distributed optimizer") {
  Config c = dense();
  c.training.fp8_param_gather = true;
  c.training.fp8_recipe = Fp8Recipe::none;
  CHECK(error_of(c).field == "fp8_param_gather");
  c.training.fp8_recipe = Fp8Recipe::tensorwise;
  c.optimizer.use_distributed_optimizer = false;
  CHECK(error_of(c).field == "fp8_param_gather");
}

TEST_CASE("only Megatron-LM asks for the precision-aware optimizer with CPU offload") {
  Config c = dense();
  c.optimizer.optimizer_cpu_offload = true;
  c.optimizer.use_precision_aware_optimizer = false;
  CHECK(warnings_of(c).size() == 1);  // arguments.py; Megatron-Core runs it
  c.optimizer.use_precision_aware_optimizer = true;
  c.optimizer.use_distributed_optimizer = true;
  c.training.fp8_recipe = Fp8Recipe::tensorwise;
  c.training.fp8_param_gather = true;
  CHECK(warnings_of(c).size() == 1);  // arguments.py asks for delayed scaling here
}

TEST_CASE("Transformer Engine cross-entropy fusion estimates with a version warning") {
  Config c = dense();
  c.training.cross_entropy = CrossEntropyImpl::te_fused;
  const std::vector<std::string> warnings = warnings_of(c);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Contains("core_r0.18"));
  const Expected<Estimate> e = estimate(c);
  REQUIRE(e.has_value());
  CHECK(e->warnings == warnings);
}

TEST_CASE("FP8 recipes the GPU cannot run are estimated with a warning naming the GPU") {
  // transformer_engine/pytorch/quantization.py: FP8 from compute capability 8.9, MXFP8 on
  // 10.x only, blockwise scaling from 9.0.
  const auto warned = [](Fp8Recipe recipe, int compute_capability) {
    Config c = dense();
    c.training.fp8_recipe = recipe;
    c.device.name = "GPU";
    c.device.compute_capability = compute_capability;
    for (const std::string& warning : warnings_of(c)) {
      if (warning.find("Transformer Engine refuses it on GPU") != std::string::npos) return true;
    }
    return false;
  };
  CHECK(warned(Fp8Recipe::tensorwise, 80));
  CHECK_FALSE(warned(Fp8Recipe::tensorwise, 90));
  CHECK(warned(Fp8Recipe::mxfp8, 90));
  CHECK_FALSE(warned(Fp8Recipe::mxfp8, 100));
  CHECK(warned(Fp8Recipe::mxfp8, 120));
  CHECK(warned(Fp8Recipe::blockwise, 89));
  CHECK_FALSE(warned(Fp8Recipe::blockwise, 90));
  CHECK_FALSE(warned(Fp8Recipe::none, 80));
}

// TransformerConfig.__post_init__: what the EP overlap's combined 1F1B schedule needs.
TEST_CASE("the EP overlap needs EP, an interleaved schedule at PP > 1, no full recompute") {
  Config c = moe();  // 4 layers, TP4 EP4
  c.parallel.world_size = 32;
  c.parallel.pipeline_parallel = 2;
  c.training.global_batch_size = 16;  // M = 4 per DP rank: groups of PP for the interleaving
  c.training.overlap_moe_expert_parallel_comm = true;
  CHECK(error_of(c).field == "virtual_pipeline_model_parallel_size");
  c.parallel.virtual_stages_per_pipeline_rank = 2;
  const Expected<NormalizedConfig> interleaved = normalize(c);
  if (!interleaved) FAIL(interleaved.error().field << ": " << interleaved.error().message);
  c.training.recompute.granularity = RecomputeGranularity::full;
  CHECK(error_of(c).field == "recompute_granularity");
  c.training.recompute.granularity = RecomputeGranularity::selective;
  c.training.recompute.modules = {RecomputeModule::moe};  // core_v0.17 refuses it: a warning
  CHECK(warnings_of(c).size() == 1);
  c.training.recompute.granularity = RecomputeGranularity::none;
  c.parallel.expert_parallel = 1;
  CHECK(error_of(c).field == "expert_model_parallel_size");
}
