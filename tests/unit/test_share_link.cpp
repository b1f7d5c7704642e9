// Share links (docs/share-links.md): short, readable, versioned, exact round trips over random
// configurations, and clear errors for anything malformed or hostile.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "megamem/estimate.hpp"
#include "megamem/fields.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"

using namespace megamem;
using Catch::Matchers::Contains;

namespace {

SharedConfig decode(const std::string& link) {
  const Expected<SharedConfig> shared = decode_share_link(link);
  INFO(link << " -> "
            << (shared ? std::string() : shared.error().field + ": " + shared.error().message));
  REQUIRE(shared.has_value());
  return *shared;
}

Error decode_error(const std::string& link) {
  const Expected<SharedConfig> shared = decode_share_link(link);
  INFO(link);
  REQUIRE_FALSE(shared.has_value());
  return shared.error();
}

const PresetCatalog& catalog() {
  REQUIRE(builtin_presets().has_value());
  return *builtin_presets();
}

// Every Config member, compared through the field registry (test_fields.cpp checks the
// registry has a row for every member of every Config struct).
std::vector<std::string> member_differences(const Config& a, const Config& b) {
  std::vector<std::string> out;
  for (const ConfigField& field : config_fields()) {
    if (field_link_text(field, a) != field_link_text(field, b)) out.emplace_back(field.name);
  }
  return out;
}

// A random configuration touching every member: a preset or a made-up model, random sizes,
// switches, choices, real numbers (including ones without a short decimal form), lists,
// layer patterns and free text.
class RandomConfig {
 public:
  explicit RandomConfig(std::uint32_t seed) : rng_(seed) {}

  SharedConfig next() {
    SharedConfig shared{share_link_defaults(), "", ""};
    Config& c = shared.config;
    const PresetCatalog& presets = catalog();
    if (coin()) {
      const ModelPreset& preset = presets.models[pick(presets.models.size())];
      c.model = preset.model;
      shared.model_id = preset.id;
    }
    if (coin()) {
      const GpuPreset& preset = presets.gpus[pick(presets.gpus.size())];
      c.device = preset.device;
      shared.gpu_id = preset.id;
    }
    ModelConfig& m = c.model;
    if (shared.model_id.empty() || coin()) {
      m.name = coin() ? text() : std::string();
      m.num_layers = size(1, 200);
      m.hidden_size = size(1, 1 << 16);
      m.num_attention_heads = size(1, 256);
      m.num_query_groups = size(0, 64);
      m.kv_channels = size(0, 512);
      m.ffn_hidden_size = size(0, 1 << 17);
      m.activation = static_cast<Activation>(pick(3));
      m.normalization = static_cast<Normalization>(pick(2));
      m.qk_layernorm = coin();
      m.add_bias_linear = coin();
      m.add_qkv_bias = coin();
      m.attention_output_gate = coin();
      m.position_embedding = static_cast<PositionEmbedding>(pick(4));
      m.max_position_embeddings = size(0, 1 << 20);
      m.untie_embeddings_and_output_weights = coin();
      m.vocab_size = size(0, 1 << 30);
      m.make_vocab_size_divisible_by = size(1, 1024);
      m.num_experts = size(0, 512);
      m.moe_router_topk = size(0, 16);
      m.moe_ffn_hidden_size = size(0, 1 << 14);
      m.moe_shared_expert_intermediate_size = size(0, 1 << 14);
      m.moe_shared_expert_gate = coin();
      m.moe_latent_size = size(0, 4096);
      m.moe_router_enable_expert_bias = coin();
      m.moe_layer_pattern.clear();
      if (coin()) {
        for (int i = 0; i < m.num_layers; ++i) m.moe_layer_pattern.push_back(coin() ? 1 : 0);
      }
      m.moe_layer_freq = size(1, 8);
      m.multi_latent_attention = coin();
      m.q_lora_rank = size(0, 2048);
      m.kv_lora_rank = size(0, 1024);
      m.qk_head_dim = size(0, 256);
      m.qk_pos_emb_head_dim = size(0, 128);
      m.v_head_dim = size(0, 256);
      m.mtp_num_layers = size(0, 4);
      m.mtp_use_repeated_layer = coin();
      m.hidden_dropout = fraction();
      m.attention_dropout = fraction();
    }
    ParallelConfig& p = c.parallel;
    p.world_size = size(1, 1 << 20);
    p.tensor_parallel = size(1, 64);
    p.pipeline_parallel = size(1, 64);
    p.virtual_stages_per_pipeline_rank = size(1, 8);
    p.context_parallel = size(1, 16);
    p.expert_parallel = size(1, 256);
    p.expert_tensor_parallel = size(0, 8);
    p.sequence_parallel = coin();
    p.decoder_first_pipeline_num_layers = size(0, 10);
    p.decoder_last_pipeline_num_layers = size(0, 10);
    p.account_for_embedding_in_pipeline_split = coin();
    p.account_for_loss_in_pipeline_split = coin();
    p.pipeline_layout = coin() ? std::string("Et*3|(tt|)*29,m|L") : std::string();
    p.num_distributed_optimizer_instances = size(1, 4);
    p.microbatch_group_size_per_vp_stage = size(0, 16);
    TrainingConfig& t = c.training;
    t.micro_batch_size = size(1, 64);
    t.global_batch_size = size(0, 1 << 20);
    t.seq_length = size(1, 1 << 20);
    t.params_dtype = static_cast<DType>(pick(3));  // fp32, bf16, fp16
    t.fp8_recipe = static_cast<Fp8Recipe>(pick(5));
    t.fp8_param_gather = coin();
    t.transformer_impl = static_cast<TransformerImpl>(pick(2));
    t.attention_backend = static_cast<AttentionBackend>(pick(5));
    t.moe_token_dispatcher = static_cast<TokenDispatcher>(pick(3));
    t.moe_grouped_gemm = coin();
    t.moe_router_fp32 = coin();
    t.overlap_moe_expert_parallel_comm = coin();
    t.moe_expert_capacity_factor = coin() ? 0.0 : real(0.0, 8.0);
    t.moe_pad_expert_input_to_capacity = coin();
    t.moe_imbalance_factor = real(1.0, 3.0);
    t.cross_entropy = static_cast<CrossEntropyImpl>(pick(3));
    t.gradient_accumulation_fusion = coin();
    t.create_attention_mask_in_dataloader = coin();
    t.deterministic_mode = coin();
    t.bias_activation_fusion = coin();
    t.masked_softmax_fusion = coin();
    t.recompute.granularity = static_cast<RecomputeGranularity>(pick(3));
    t.recompute.method = static_cast<RecomputeMethod>(pick(2));
    t.recompute.num_layers = size(0, 64);
    t.recompute.distribute_saved_activations = coin();
    t.recompute.modules = RecomputeModules::from_bits(static_cast<std::uint32_t>(pick(1u << 11)));
    t.offload.fine_grained_activation_offloading = coin();
    t.offload.offload_modules =
        OffloadModules::from_bits(static_cast<std::uint32_t>(pick(1u << 9)));
    t.offload.activation_offload_fraction = fraction();
    t.offload.cpu_offloading = coin();
    t.offload.cpu_offloading_num_layers = size(0, 32);
    t.offload.cpu_offloading_weights = coin();
    OptimizerConfig& o = c.optimizer;
    o.kind = static_cast<OptimizerKind>(pick(3));
    o.use_distributed_optimizer = coin();
    o.grad_reduce_in_bf16 = coin();
    o.use_precision_aware_optimizer = coin();
    o.main_grads_dtype = static_cast<DType>(pick(4));
    o.main_params_dtype = static_cast<DType>(pick(4));
    o.exp_avg_dtype = static_cast<DType>(pick(4));
    o.exp_avg_sq_dtype = static_cast<DType>(pick(4));
    o.store_param_remainders = coin();
    o.optimizer_cpu_offload = coin();
    o.optimizer_offload_fraction = fraction();
    o.overlap_grad_reduce = coin();
    o.ddp_bucket_size_elements = coin() ? 0 : size(1, 1 << 30);
    o.muon_scalar_optimizer = static_cast<OptimizerKind>(pick(3));
    c.runtime.cuda_context_gib = real(0.0, 4.0);
    c.runtime.nccl_gib_per_communicator = real(0.0, 2.0);
    c.runtime.fragmentation_fraction = fraction();
    c.runtime.deepep_buffer_gib = real(0.0, 4.0);
    if (shared.gpu_id.empty() || coin()) {
      DeviceConfig& d = c.device;
      d.name = coin() ? text() : std::string();
      d.capacity_gib = real(8.0, 300.0);
      d.gpus_per_node = size(1, 72);
      d.intra_node_bandwidth_gb_per_s = real(10.0, 2000.0);
      d.inter_node_bandwidth_gb_per_s = real(1.0, 200.0);
      d.peak_bf16_tflops = real(10.0, 5000.0);
      d.te_cublas_workspace_mib = coin() ? 4.0 : 32.0;
      d.fixed_allocated_mib = real(0.0, 100.0);
    }
    return shared;
  }

 private:
  bool coin() { return std::uniform_int_distribution<int>(0, 1)(rng_) == 1; }
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  int size(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  double fraction() { return coin() ? 0.0 : real(0.0, 1.0); }
  // Names with spaces, punctuation and UTF-8, to exercise percent-encoding.
  std::string text() {
    static const std::vector<std::string> pieces = {"H100", " ", "80GB", "&", "=", "%",   "+",
                                                    "#",    "?", "é",    "/", "Ω", "v=2", "-"};
    std::string out;
    const int n = size(1, 6);
    for (int i = 0; i < n; ++i) out += pieces[pick(pieces.size())];
    return out;
  }

  std::mt19937 rng_;
};

}  // namespace

TEST_CASE("a link holds only what differs from the defaults") {
  const SharedConfig shared =
      decode("?model=deepseek-v3&gpu=h100-80gb&gpus=256&pp=8&ep=32&mbs=1&seq=4096");
  CHECK(encode_share_query(shared) ==
        "v=1&c=4827&model=deepseek-v3&gpu=h100-80gb&gpus=256&pp=8&ep=32");
  CHECK(share_link(shared, "https://example.org/megamem/") ==
        "https://example.org/megamem/"
        "?v=1&c=4827&model=deepseek-v3&gpu=h100-80gb&gpus=256&pp=8&ep=32");
}

TEST_CASE("the issue's example link decodes to its configuration") {
  const SharedConfig shared = decode(
      "?model=deepseek-v3&gpu=h100-80gb&gpus=256&tp=4&pp=8&ep=32&mbs=1&seq=4096&recompute=full");
  const Config& c = shared.config;
  CHECK(shared.model_id == "deepseek-v3");
  CHECK(shared.gpu_id == "h100-80gb");
  CHECK(c.model.name == "DeepSeek-V3");
  CHECK(c.model.num_layers == 61);
  CHECK(c.device.capacity_gib == Approx(79.65));
  CHECK(c.parallel.world_size == 256);
  CHECK(c.parallel.tensor_parallel == 4);
  CHECK(c.parallel.pipeline_parallel == 8);
  CHECK(c.parallel.expert_parallel == 32);
  CHECK(c.training.recompute.granularity == RecomputeGranularity::full);
  // Expert TP defaults to TP (4), so ETP x EP x PP = 1024 GPUs > 256: the estimator, not
  // the link, refuses the layout.
  const Expected<Estimate> e = estimate(c, {false, false});
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().field == "expert_model_parallel_size");
}

TEST_CASE("version 1 defaults are a bf16 Megatron-Core run") {
  const Config d = share_link_defaults();
  CHECK(d.training.params_dtype == DType::bf16);
  CHECK(d.optimizer.use_distributed_optimizer);
  CHECK(d.parallel.sequence_parallel);
  CHECK(d.training.moe_token_dispatcher == TokenDispatcher::alltoall);
  CHECK(d.training.moe_grouped_gemm);
  CHECK(d.training.seq_length == 4096);
  CHECK(d.training.micro_batch_size == 1);
  CHECK(d.parallel.world_size == 1);
  // One field at its default keeps the link from meaning "the default recipe" (v= alone).
  CHECK(encode_share_query({d, "", ""}) == "v=1&c=5d35&gpus=1");
}

TEST_CASE("a link that sets nothing opens the default configuration, in its language") {
  // The page's start (#28 item 4): only v=1 or lang=zh is not an empty, invalid model.
  const SharedConfig expected = default_configuration();
  CHECK(expected.model_id == "llama-3-70b");
  for (const char* link : {"v=1", "?lang=zh", "http://localhost:8080/?v=1&lang=zh"}) {
    INFO(link);
    const Expected<SharedConfig> decoded = decode_share_link(link);
    REQUIRE(decoded.has_value());
    CHECK(member_differences(decoded->config, expected.config).empty());
    CHECK(estimate(decoded->config).has_value());
  }
}

TEST_CASE("version 1 defaults equal config.hpp except the documented run settings") {
  Config megatron;
  const std::vector<std::string> changed = member_differences(share_link_defaults(), megatron);
  // In the registry's (link) order.
  const std::vector<std::string> expected = {
      "parallel.sequence_parallel",          "training.seq_length",
      "optimizer.use_distributed_optimizer", "training.params_dtype",
      "training.moe_token_dispatcher",       "training.moe_grouped_gemm"};
  CHECK(changed == expected);
}

TEST_CASE("every key is listed once, presets first") {
  const std::vector<std::string> keys = share_link_keys();
  REQUIRE(keys.size() > 100);
  CHECK(keys[0] == "v");
  CHECK(keys[1] == "c");
  CHECK(keys[2] == "model");
  CHECK(keys[3] == "gpu");
  CHECK(keys[4] == "gpus");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    for (std::size_t j = i + 1; j < keys.size(); ++j) CHECK(keys[i] != keys[j]);
  }
}

TEST_CASE("random configurations survive encode and decode exactly") {
  RandomConfig random(20250611);
  for (int i = 0; i < 400; ++i) {
    const SharedConfig original = random.next();
    const std::string query = encode_share_query(original);
    const Expected<SharedConfig> decoded = decode_share_link(query);
    INFO("case " << i << ": " << query);
    INFO((decoded ? std::string() : decoded.error().field + ": " + decoded.error().message));
    REQUIRE(decoded.has_value());
    CHECK(member_differences(decoded->config, original.config).empty());
    INFO(Catch::Detail::stringify(member_differences(decoded->config, original.config)));
    CHECK(share_link_differences(decoded->config, original.config).empty());
    CHECK(decoded->model_id == original.model_id);
    CHECK(decoded->gpu_id == original.gpu_id);
    CHECK(to_megatron_args(decoded->config) == to_megatron_args(original.config));
    // Encoding is canonical: the decoded configuration gives the same link.
    CHECK(encode_share_query(*decoded) == query);
  }
}

TEST_CASE("a full link, a bare query, a fragment and surrounding space all decode") {
  const std::string query = "v=1&model=qwen3-8b&gpus=8&tp=2";
  const Config expected = decode(query).config;
  for (const std::string& link :
       {"https://host.example/megamem/?" + query, "?" + query, "#" + query,
        "https://host.example/?" + query + "#results", "  " + query + "\n"}) {
    CHECK(member_differences(decode(link).config, expected).empty());
  }
}

TEST_CASE("links without v= are read as version 1") {
  CHECK(decode("model=qwen3-8b&tp=2").config.parallel.tensor_parallel == 2);
}

TEST_CASE("a link from a newer version says so") {
  const Error error = decode_error("?v=2&model=qwen3-8b");
  CHECK(error.field == "v");
  CHECK(error.message.find("version 2") != std::string::npos);
  CHECK(error.message.find("update megamem") != std::string::npos);
  CHECK(decode_error("?v=0").field == "v");
  CHECK(decode_error("?v=one").field == "v");
}

TEST_CASE("an unknown parameter is named, with a suggestion") {
  const Error error = decode_error("?v=1&model=qwen3-8b&tpp=2");
  CHECK(error.field == "tpp");
  CHECK(error.message.find("unknown parameter") != std::string::npos);
  CHECK(error.message.find("did you mean 'tp'") != std::string::npos);
  CHECK(decode_error("?v=1&m.hiden=4096").message.find("'m.hidden'") != std::string::npos);
}

TEST_CASE("bad, negative and huge numbers name the parameter") {
  CHECK(decode_error("?tp=four").field == "tp");
  CHECK(decode_error("?tp=four").message == "expects a positive whole number, got 'four'");
  CHECK(decode_error("?tp=-2").field == "tp");
  CHECK(decode_error("?tp=0").message.find("between 1 and") != std::string::npos);
  CHECK(decode_error("?gpus=99999999999999999999999").field == "gpus");
  CHECK(decode_error("?gpus=99999999999999999999999").message.find("between 1 and 1048576") !=
        std::string::npos);
  CHECK(decode_error("?gpus=2097152").message.find("between 1 and 1048576") != std::string::npos);
  CHECK(decode_error("?m.vocab=9223372036854775807").field == "m.vocab");
  CHECK(decode_error("?rt.frag=1.5").field == "rt.frag");
  CHECK(decode_error("?imbalance=nan").field == "imbalance");
  CHECK(decode_error("?imbalance=inf").field == "imbalance");
  CHECK(decode_error("?imbalance=1e999").field == "imbalance");
  CHECK(decode_error("?imbalance=0x10").field == "imbalance");
  CHECK(decode_error("?sp=maybe").message == "expects 1 or 0, got 'maybe'");
  CHECK(decode_error("?recompute=most").message ==
        "expects one of none, selective, full, got 'most'");
  CHECK(decode_error("?dtype=fp8").field == "dtype");  // not a parameter dtype
}

TEST_CASE("repeated keys are refused") {
  const Error error = decode_error("?tp=2&pp=2&tp=4");
  CHECK(error.field == "tp");
  CHECK(error.message == "is given more than once");
  CHECK(decode_error("?model=qwen3-8b&model=deepseek-v3").field == "model");
}

TEST_CASE("percent-encoding decodes, and malformed escapes name the parameter") {
  const SharedConfig shared = decode("?g.name=My%20GPU+%E2%84%A6&g.mem=40");
  CHECK(shared.config.device.name == "My GPU \xE2\x84\xA6");
  CHECK(decode("?%74p=2").config.parallel.tensor_parallel == 2);  // %74 = 't'
  CHECK(decode_error("?g.name=bad%zz").field == "g.name");
  CHECK(decode_error("?g.name=cut%4").message.find("percent-encoding") != std::string::npos);
  CHECK(decode_error("?g.name=a%0Ab").message == "contains a control character");
  CHECK(decode_error("?tp%=2").message.find("percent-encoding") != std::string::npos);
}

TEST_CASE("names and lists with any characters round-trip") {
  SharedConfig shared{share_link_defaults(), "", ""};
  shared.config.device.name = "A&B=C?D#E%F+G H/é";
  shared.config.model.name = "model, v=2 & more";
  const std::string query = encode_share_query(shared);
  CHECK(query.find(' ') == std::string::npos);
  CHECK(query.find('#') == std::string::npos);
  CHECK(decode(query).config.device.name == shared.config.device.name);
  CHECK(decode(query).config.model.name == shared.config.model.name);
  CHECK(decode_error("?recompute-modules=core_attn,,mlp").field == "recompute-modules");
  CHECK(decode_error("?recompute-modules=Core").field == "recompute-modules");
}

TEST_CASE("MoE layer patterns are written as runs") {
  const Config c = decode("?model=deepseek-v3").config;
  SharedConfig changed{c, "", ""};
  changed.config.model.moe_layer_pattern[5] = 0;
  const std::string query = encode_share_query(changed);
  CHECK(query.find("m.moe-pattern=0*3,1*2,0,1*55") != std::string::npos);
  CHECK(decode_error("?m.moe-pattern=2*3").field == "m.moe-pattern");
  CHECK(decode_error("?m.moe-pattern=0*").field == "m.moe-pattern");
  CHECK(decode_error("?m.moe-pattern=1*99999999").message.find("more than") != std::string::npos);
}

TEST_CASE("unknown presets name the parameter") {
  const Error model = decode_error("?model=gpt-5");
  CHECK(model.field == "model");
  CHECK(model.message.find("'gpt-5' is not a model preset") != std::string::npos);
  CHECK(decode_error("?gpu=tpu-v5").field == "gpu");
  // A shortened id is offered the shortest id it begins; a typo its nearest id.
  CHECK(decode_error("?model=nemotron-3-super-120")
            .message.find("(did you mean 'nemotron-3-super-120b-a12b'?; ") != std::string::npos);
  CHECK(decode("?model=nemotron-3-super").model_id == "nemotron-3-super-120b-a12b");  // alias
  CHECK(decode_error("?model=deepseek-v4").message.find("did you mean 'deepseek-v4-pro'?") !=
        std::string::npos);
  CHECK(decode_error("?gpu=h10").message.find("did you mean 'h100-80gb'?") != std::string::npos);
  // Capitals are not edits: "H200X" is one edit from h200, not two from b200.
  CHECK(decode_error("?gpu=H200X").message.find("did you mean 'h200'?") != std::string::npos);
  CHECK(decode("?gpu=H100").gpu_id == "h100-80gb");
  CHECK(decode_error("?model=zzzzzz").message.find("did you mean") == std::string::npos);
  // A renamed id keeps working through its alias, and is written under its current id.
  const SharedConfig alias = decode("?model=llama-3.1-70b&gpu=h100");
  CHECK(alias.model_id == "llama-3-70b");
  CHECK(alias.gpu_id == "h100-80gb");
  CHECK(encode_share_query(alias) == "v=1&c=fbb5&model=llama-3-70b&gpu=h100-80gb");
}

TEST_CASE("malformed links are errors, not crashes") {
  CHECK(decode_error("").field == "link");
  CHECK(decode_error("?").field == "link");
  CHECK(decode_error("https://host.example/megamem/").field == "link");
  CHECK(decode_error("?tp").message.find("has no value") != std::string::npos);
  CHECK(decode_error("?=2").field == "(empty)");
  CHECK(decode("?v=1&&tp=2&").config.parallel.tensor_parallel == 2);  // empty pairs skipped
  CHECK(decode_error(std::string(70000, 'a')).field == "link");
}

TEST_CASE("10 KB of garbage names the first bad parameter") {
  std::mt19937 rng(7);
  std::string garbage;
  for (int i = 0; i < 10240; ++i) garbage += static_cast<char>(rng() % 256);
  const Expected<SharedConfig> decoded = decode_share_link(garbage);
  REQUIRE_FALSE(decoded.has_value());
  CHECK_FALSE(decoded.error().field.empty());
  CHECK(decoded.error().field.size() <= 48);  // shortened, printable
  for (const char c : decoded.error().field) {
    CHECK(static_cast<unsigned char>(c) >= 0x20);
    CHECK(static_cast<unsigned char>(c) < 0x7f);
  }
}

TEST_CASE("random text never crashes the decoder") {
  std::mt19937 rng(11);
  const std::string alphabet = "=&?#%+,*.-_0123456789abcdefmptvgsx";
  const std::vector<std::string> keys = share_link_keys();
  int decoded = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string link;
    const int parts = static_cast<int>(rng() % 6);
    for (int p = 0; p < parts; ++p) {
      link += (p ? "&" : "") + keys[rng() % keys.size()] + "=";
      const int n = static_cast<int>(rng() % 8);
      for (int k = 0; k < n; ++k) link += alphabet[rng() % alphabet.size()];
    }
    const Expected<SharedConfig> result = decode_share_link(link);
    if (result) {
      ++decoded;
      CHECK(decode_share_link(encode_share_query(*result)).has_value());
    } else {
      CHECK_FALSE(result.error().field.empty());
      CHECK_FALSE(result.error().message.empty());
    }
  }
  CHECK(decoded > 0);
}

TEST_CASE("a link to each recipe estimates the same as the recipe") {
  for (const RecipePreset& recipe : catalog().recipes) {
    INFO(recipe.id);
    const Expected<SharedConfig> direct = recipe_config(recipe);
    REQUIRE(direct.has_value());
    const std::string link = share_link(*direct, "https://host.example/");
    INFO(link);
    const SharedConfig linked = decode(link);
    CHECK(member_differences(linked.config, direct->config).empty());
    const Expected<Estimate> a = estimate(direct->config, {false, false});
    const Expected<Estimate> b = estimate(linked.config, {false, false});
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    REQUIRE(a->ranks.size() == b->ranks.size());
    for (std::size_t r = 0; r < a->ranks.size(); ++r) {
      CHECK(a->ranks[r].static_bytes == b->ranks[r].static_bytes);
      CHECK(a->ranks[r].peak_total_bytes == b->ranks[r].peak_total_bytes);
    }
  }
}

TEST_CASE("command-line style parameters apply on top of a configuration") {
  const SharedConfig base = decode("?model=qwen3-30b-a3b&gpu=h100-80gb&gpus=8");
  const Expected<SharedConfig> changed =
      apply_share_parameters(base, {{"ep", "8"}, {"recompute", "full"}, {"m.layers", "24"}});
  REQUIRE(changed.has_value());
  CHECK(changed->config.parallel.expert_parallel == 8);
  CHECK(changed->model_id == "qwen3-30b-a3b");
  CHECK(changed->config.model.num_layers == 24);
  CHECK(encode_share_query(*changed) ==
        "v=1&c=2fdc&model=qwen3-30b-a3b&gpu=h100-80gb&gpus=8&ep=8&recompute=full&m.layers=24");
  const Expected<SharedConfig> refused = apply_share_parameters(base, {{"v", "1"}});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().field == "v");
}

TEST_CASE("a configuration equal to a preset is linked by its id") {
  Config config = share_link_defaults();
  config.model = catalog().find_model("mixtral-8x7b")->model;
  config.model.name.clear();  // as an import without a name
  config.device = catalog().find_gpu("a100-80gb")->device;
  const SharedConfig shared = with_detected_presets(config);
  CHECK(shared.model_id == "mixtral-8x7b");
  CHECK(shared.gpu_id == "a100-80gb");
  CHECK(encode_share_query(shared) == "v=1&c=2789&model=mixtral-8x7b&gpu=a100-80gb");
  config.model.num_layers = 31;
  CHECK(with_detected_presets(config).model_id.empty());
}

TEST_CASE("share_parameters lists every value, defaults included, for display") {
  const SharedConfig shared = decode("?model=qwen3-8b&tp=2");
  const LinkParameters all = share_parameters(shared, true);
  // No gpu= without a GPU preset, and no c= (the encoder adds it).
  CHECK(all.size() == share_link_keys().size() - 2);
  const LinkParameters changed = share_parameters(shared, false);
  REQUIRE(changed.size() == 3);
  CHECK(changed[2] == std::pair<std::string, std::string>("tp", "2"));
}

TEST_CASE("a link read in part applies what parses and lists what does not") {
  PartialLink partial =
      decode_share_link_partially("?v=1&model=llama-3.1-8b&gpus=-32&tp=2&cp=two&tp=4&x%zz=1");
  CHECK(partial.shared.model_id == "llama-3.1-8b");
  CHECK(partial.shared.config.parallel.tensor_parallel == 2);
  std::vector<std::string> fields;
  for (const Error& error : partial.errors) fields.push_back(error.field);
  // Query errors (the repeated key, the broken escape) in link order, then the values.
  CHECK(fields == std::vector<std::string>{"tp", "x%zz", "gpus", "cp"});
  // decode_share_link is strict: the first of them.
  const Expected<SharedConfig> strict =
      decode_share_link("?v=1&model=llama-3.1-8b&gpus=-32&tp=2&cp=two&tp=4&x%zz=1");
  REQUIRE_FALSE(strict.has_value());
  CHECK(strict.error().field == "tp");
  // Nothing readable, or a newer version: the default configuration.
  for (const char* link : {"?v=1&model=gpt-17", "?v=99&model=llama-3.1-8b", "?tp=two"}) {
    INFO(link);
    partial = decode_share_link_partially(link);
    CHECK_FALSE(partial.errors.empty());
    CHECK(partial.shared.model_id == default_configuration().model_id);
  }
  // An unknown model with settings that parse: those settings on the default's model, not on
  // an empty one (which no layout suits: "num_layers must be at least 1").
  partial = decode_share_link_partially("?v=1&model=nope&gpus=8&tp=2");
  REQUIRE(partial.errors.size() == 1);
  CHECK(partial.errors.front().field == "model");
  CHECK(partial.shared.model_id == default_configuration().model_id);
  CHECK(partial.shared.config.model.num_layers == default_configuration().config.model.num_layers);
  CHECK(partial.shared.config.parallel.world_size == 8);
  CHECK(partial.shared.config.parallel.tensor_parallel == 2);
}

// Issue 28 item 11: a bad GPU count fell back to version 1's one GPU, which no layout with TP 2
// runs on; it keeps the default configuration's count, as an unknown model keeps its model.
TEST_CASE("a GPU count that does not parse keeps the default configuration's") {
  for (const char* gpus : {"-32", "0", "many", "1.5"}) {
    const std::string link = std::string("?v=1&model=qwen3-8b&gpus=") + gpus + "&tp=2";
    INFO(link);
    const PartialLink partial = decode_share_link_partially(link);
    REQUIRE(partial.errors.size() == 1);
    CHECK(partial.errors.front().field == "gpus");
    CHECK_THAT(partial.errors.front().message, Contains(gpus));
    CHECK(partial.shared.model_id == "qwen3-8b");
    CHECK(partial.shared.config.parallel.tensor_parallel == 2);
    CHECK(partial.shared.config.parallel.world_size ==
          default_configuration().config.parallel.world_size);
    CHECK(estimate(partial.shared.config).has_value());
  }
}

// Issue 28 item 11: a link cut inside a value still parses ("seq=10240" arrives as "seq=10"),
// so a new link carries c=, four hex digits of FNV-1a over its sorted settings. The digits
// here were computed by hand-written Python (the same FNV-1a), not by this code.
TEST_CASE("the checksum c= detects a link cut or edited after it was made") {
  const SharedConfig shared = decode("?model=qwen3-8b&gpus=8&tp=2&seq=10240");
  const std::string query = encode_share_query(shared);
  CHECK(query == "v=1&c=98e0&model=qwen3-8b&gpus=8&tp=2&seq=10240");
  CHECK(decode_share_link(query).has_value());
  // The same settings in another order (a tool that sorts a query) still match.
  CHECK(decode_share_link("v=1&c=98e0&seq=10240&tp=2&gpus=8&model=qwen3-8b").has_value());
  // Cut inside the last value: every parameter parses, the checksum names the cut.
  const std::string cut = query.substr(0, query.size() - 3);
  const Error error = decode_error(cut);
  CHECK(error.field == "c");
  CHECK_THAT(error.message, Contains("cut short or edited") && Contains("'seq=10'"));
  // The page applies what arrived and shows the error beside it.
  const PartialLink partial = decode_share_link_partially(cut);
  CHECK(partial.shared.config.training.seq_length == 10);
  REQUIRE(partial.errors.size() == 1);
  CHECK(partial.errors.front().field == "c");
  // Cut inside a value that then fails ("tp=" left empty): the cut is named first, since it
  // explains the broken value after it.
  const std::string cut_tp = "v=1&c=98e0&model=qwen3-8b&gpus=8&tp=";
  const PartialLink broken = decode_share_link_partially(cut_tp);
  REQUIRE(broken.errors.size() == 2);
  CHECK(broken.errors.front().field == "c");
  CHECK(broken.errors.back().field == "tp");
  // Edited by hand: the same message; without c= (an old link, or c= dropped) it is read.
  CHECK(decode_error("v=1&c=98e0&model=qwen3-8b&gpus=8&tp=4&seq=10240").field == "c");
  CHECK(decode_share_link("v=1&model=qwen3-8b&gpus=8&tp=4&seq=10240").has_value());
  // The view (lang=) is not a setting: adding it keeps the checksum.
  CHECK(decode_share_link(query + "&lang=zh").has_value());
  // A configuration with nothing to write still writes one field (v= alone opens the default
  // recipe), and so its checksum.
  CHECK(encode_share_query(SharedConfig{share_link_defaults(), "", ""}) == "v=1&c=5d35&gpus=1");
}

TEST_CASE("a link that sets only a default re-encodes to the same configuration") {
  // fuzz_share_link found it: "m.window-pattern=" decodes to share_link_defaults() (a custom,
  // empty model), which encoded as "v=1" alone, and that opens the default recipe instead.
  const Expected<SharedConfig> decoded = decode_share_link("?m.window-pattern=");
  REQUIRE(decoded.has_value());
  const std::string query = encode_share_query(*decoded);
  const Expected<SharedConfig> again = decode_share_link("?" + query);
  REQUIRE(again.has_value());
  CHECK(again->model_id == decoded->model_id);
  CHECK(share_link_differences(again->config, decoded->config).empty());
  CHECK(encode_share_query(*again) == query);
}
