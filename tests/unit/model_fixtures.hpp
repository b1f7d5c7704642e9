// Published architectures used as test fixtures (memory-model.md section 9 worked examples),
// read from the model presets.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "megamem/config.hpp"
#include "megamem/presets.hpp"

namespace megamem::fixtures {

// Megatron-style bf16 training with the distributed optimizer, flash attention, no dropout.
inline Config bf16_training(Config config) {
  config.training.params_dtype = DType::bf16;
  config.optimizer.use_distributed_optimizer = true;
  config.model.hidden_dropout = 0.0;
  config.model.attention_dropout = 0.0;
  config.device.fixed_allocated_mib = 0.0;
  return config;
}

// The architecture of a model preset (presets/models/<id>.json, embedded in the core), so a
// fixture is the preset and not a re-typed copy of it. A missing preset is a broken build.
inline ModelConfig preset_model(std::string_view id) {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  const ModelPreset* preset = catalog ? catalog->find_model(id) : nullptr;
  if (!preset) {
    std::fprintf(stderr, "model preset '%.*s' is not embedded\n", static_cast<int>(id.size()),
                 id.data());
    std::abort();
  }
  return preset->model;
}

// A preset's model in bf16 training at sequence length 4096.
inline Config preset_training(std::string_view id) {
  Config c;
  c.model = preset_model(id);
  c.training.seq_length = 4096;
  return bf16_training(c);
}

// Llama-3-70B: 80 layers, GQA 64/8, SwiGLU 28672, RMSNorm, no biases, untied, V = 128256.
inline Config llama3_70b() { return preset_training("llama-3-70b"); }

// Qwen3-235B-A22B: 94 MoE layers, GQA 64/4 with dh 128, qk-norm, 128 experts top-8.
inline Config qwen3_235b_a22b() {
  Config c = preset_training("qwen3-235b-a22b");
  c.training.moe_token_dispatcher = TokenDispatcher::alltoall;
  return c;
}

// DeepSeek-V3: 61 layers (3 dense, 58 MoE), MLA, 256 experts top-8 + 1 shared, 1 MTP layer.
// The worked examples use plain RoPE and no router expert bias, where the preset (the
// released config.json) has YaRN and the aux-loss-free bias.
inline Config deepseek_v3() {
  Config c = preset_training("deepseek-v3");
  c.model.position_embedding = PositionEmbedding::rope;
  c.model.moe_router_enable_expert_bias = false;
  c.training.moe_token_dispatcher = TokenDispatcher::alltoall;
  return c;
}

// memory-model.md 9.2: Llama-3-70B on 64 GPUs, TP8 with SP, PP4, DP2, mbs 1, gbs 128 (M = 64).
inline Config llama3_70b_tp8_pp4() {
  Config c = llama3_70b();
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 8;
  c.parallel.pipeline_parallel = 4;
  c.parallel.sequence_parallel = true;
  c.training.global_batch_size = 128;
  return c;
}

// Llama-3-70B on 64 GPUs, TP4 PP8 (DP2) with the distributed optimizer: its resume's
// checkpoint load (the Adam moments twice) tops its training step (memory-model.md 5).
inline Config llama3_70b_tp4_pp8_resume_above_training() {
  Config c = llama3_70b();
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 4;
  c.parallel.pipeline_parallel = 8;
  c.optimizer.use_distributed_optimizer = true;
  return c;
}

// memory-model.md 9.3: Qwen3-235B-A22B on 128 GPUs, TP4 with SP, PP4 uneven 23/24/24/23, EP8.
inline Config qwen3_235b_tp4_pp4_ep8() {
  Config c = qwen3_235b_a22b();
  c.parallel.world_size = 128;
  c.parallel.tensor_parallel = 4;
  c.parallel.sequence_parallel = true;
  c.parallel.pipeline_parallel = 4;
  c.parallel.expert_parallel = 8;
  c.parallel.expert_tensor_parallel = 1;
  c.parallel.decoder_first_pipeline_num_layers = 23;
  c.parallel.decoder_last_pipeline_num_layers = 23;
  return c;
}

}  // namespace megamem::fixtures
