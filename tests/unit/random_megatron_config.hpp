// Random configurations Megatron-LM would run (a model preset, a layout that divides, batch,
// precision, recompute and optimizer choices), for the round trips of the formats that carry a
// whole configuration: Megatron flags, training logs, Megatron-Bridge overrides and YAML.
#pragma once

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

namespace megamem::testing {

class RandomMegatronConfig {
 public:
  explicit RandomMegatronConfig(std::uint32_t seed) : rng_(seed) {}

  // The next configuration estimate() and parse_megatron_args(to_megatron_args()) accept.
  Config next() {
    for (;;) {
      Config c = candidate();
      if (!estimate(c, {.module_tree = false, .timeline = false}).has_value()) continue;
      if (!parse_megatron_args(to_megatron_args(c), c.parallel.world_size).has_value()) continue;
      return c;
    }
  }

 private:
  Config candidate() {
    const Expected<PresetCatalog>& presets = builtin_presets();
    REQUIRE(presets.has_value());
    Config c = share_link_defaults();
    c.model = presets->models[pick(presets->models.size())].model;
    if (c.model.num_layers > 16 && coin()) c.model.num_layers = 16;  // keep MoE patterns short
    c.model.moe_layer_pattern.clear();
    layout(c);
    training(c);
    return c;
  }

  void layout(Config& c) {
    ParallelConfig& p = c.parallel;
    p.tensor_parallel = one_of({1, 2, 4, 8});
    p.pipeline_parallel = one_of({1, 2, 4});
    p.context_parallel = one_of({1, 1, 2});
    p.expert_parallel = c.model.num_experts > 0 ? one_of({1, 2, 4, 8}) : 1;
    const int data_parallel = one_of({1, 2, 4, 8}) * p.expert_parallel;
    p.world_size =
        std::int64_t{p.tensor_parallel} * p.pipeline_parallel * p.context_parallel * data_parallel;
    p.sequence_parallel = p.tensor_parallel > 1 && coin();
    p.virtual_stages_per_pipeline_rank = p.pipeline_parallel > 2 && coin() ? 2 : 1;
  }

  void training(Config& c) {
    TrainingConfig& t = c.training;
    t.micro_batch_size = one_of({1, 2, 4});
    t.seq_length = one_of({2048, 4096, 8192});
    c.model.max_position_embeddings = t.seq_length;
    const std::int64_t dp =
        c.parallel.world_size / (std::int64_t{c.parallel.tensor_parallel} *
                                 c.parallel.pipeline_parallel * c.parallel.context_parallel);
    t.global_batch_size = t.micro_batch_size * dp * one_of({1, 4, 8});
    t.params_dtype = coin() ? DType::bf16 : DType::fp16;
    t.fp8_recipe =
        t.params_dtype == DType::bf16 && coin() ? Fp8Recipe::tensorwise : Fp8Recipe::none;
    const int recompute = one_of({0, 1, 2});
    if (recompute == 1) {
      t.recompute.granularity = RecomputeGranularity::selective;
      t.recompute.modules =
          coin() ? RecomputeModules{RecomputeModule::core_attn}
                 : RecomputeModules{RecomputeModule::core_attn, RecomputeModule::mlp};
    } else if (recompute == 2) {
      t.recompute.granularity = RecomputeGranularity::full;
      t.recompute.method = coin() ? RecomputeMethod::uniform : RecomputeMethod::block;
      t.recompute.num_layers = 1;
    }
    c.optimizer.use_distributed_optimizer = coin();
    c.optimizer.overlap_grad_reduce = coin();
  }

  bool coin() { return std::uniform_int_distribution<int>(0, 1)(rng_) == 1; }
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  int one_of(std::initializer_list<int> values) {
    return *(values.begin() + static_cast<std::ptrdiff_t>(pick(values.size())));
  }

  std::mt19937 rng_;
};

// Config fields no Megatron flag, log or Bridge override carries (the device, runtime
// overheads, megamem's own knobs), copied from `from` so the rest can be compared exactly.
inline Config with_unexported_fields(Config config, const Config& from) {
  config.model.name = from.model.name;
  config.device = from.device;
  config.runtime = from.runtime;
  config.training.moe_imbalance_factor = from.training.moe_imbalance_factor;
  config.optimizer.store_param_remainders = from.optimizer.store_param_remainders;
  // Megatron-LM has no flag for the sandwich norms, the windowed layers' own attention shape,
  // V's own head dimension or the soft-caps that Megatron-Bridge builds (Gemma 2/3,
  // Step-3.5, MiMo-V2-Flash), and main's has none for the head-wise attention gate (Step-3.5).
  config.model.post_sublayer_norms = from.model.post_sublayer_norms;
  // Nor for the plain-PyTorch norms of Megatron-Bridge's Gemma 4 dense layer.
  config.model.torch_rms_norms = from.model.torch_rms_norms;
  config.model.local_layer_spec = from.model.local_layer_spec;
  config.model.fast_gelu = from.model.fast_gelu;
  // Nor for Gemma 4 E2B/E4B's per-layer embeddings and shared K/V (Gemma4DenseProvider).
  config.model.per_layer_input_size = from.model.per_layer_input_size;
  config.model.kv_shared_layers = from.model.kv_shared_layers;
  config.model.double_wide_shared_mlp = from.model.double_wide_shared_mlp;
  // Nor for its MoE layer's norms and router (Gemma4ModelProvider).
  config.model.gemma4_moe_layer = from.model.gemma4_moe_layer;
  config.model.head_wise_attn_gate = from.model.head_wise_attn_gate;
  // Nor for the fp32 router weight Megatron-Bridge's MiniMax-M3 provider keeps.
  config.model.moe_router_fp32_params = from.model.moe_router_fp32_params;
  // Nor for DeepSeek-V4's compressed attention and hash routing (Megatron-LM dev only).
  config.model.csa_compress_ratios = from.model.csa_compress_ratios;
  config.model.csa_window_size = from.model.csa_window_size;
  config.model.o_groups = from.model.o_groups;
  config.model.o_lora_rank = from.model.o_lora_rank;
  config.model.moe_n_hash_layers = from.model.moe_n_hash_layers;
  config.model.v_channels = from.model.v_channels;
  config.model.final_logit_softcapping = from.model.final_logit_softcapping;
  config.model.attn_logit_softcapping = from.model.attn_logit_softcapping;
  config.model.window_num_attention_heads = from.model.window_num_attention_heads;
  config.model.window_num_query_groups = from.model.window_num_query_groups;
  config.model.window_kv_channels = from.model.window_kv_channels;
  // Nor for Kimi K3's KDA layers and Attention Residuals (Megatron-Bridge kimi_k3_provider.py).
  config.model.kda_layer_pattern = from.model.kda_layer_pattern;
  config.model.kda_num_heads = from.model.kda_num_heads;
  config.model.kda_head_dim = from.model.kda_head_dim;
  config.model.kda_conv_kernel = from.model.kda_conv_kernel;
  config.model.attn_res_block_size = from.model.attn_res_block_size;
  // Nor for the MTP layer specs Megatron-Bridge gives MiMo-V2-Flash and Step-3.5.
  config.model.mtp_layer_kind = from.model.mtp_layer_kind;
  // --fp8-format is written only under FP8 (it turns FP8 on).
  if (from.training.fp8_recipe == Fp8Recipe::none) {
    config.training.fp8_format = from.training.fp8_format;
  }
  // A dense model's MoE training flags are not written (ConfigField::moe_only).
  if (from.model.num_experts == 0) {
    for (const ConfigField& field : config_fields()) {
      if (!field.moe_only) continue;
      if (field.kind == FieldKind::real) {
        field.set_real(config, field.get_real(from));
      } else {
        field.set_int(config, field.get_int(from));
      }
    }
  }
  return config;
}

}  // namespace megamem::testing
