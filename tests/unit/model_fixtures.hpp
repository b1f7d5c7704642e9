// Published architectures used as test fixtures (memory-model.md section 9 worked examples).
#pragma once

#include "megamem/config.hpp"

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

// Llama-3-70B: 80 layers, GQA 64/8, SwiGLU 28672, RMSNorm, no biases, untied, V = 128256.
inline Config llama3_70b() {
  Config c;
  c.model.name = "Llama-3-70B";
  c.model.num_layers = 80;
  c.model.hidden_size = 8192;
  c.model.num_attention_heads = 64;
  c.model.num_query_groups = 8;
  c.model.kv_channels = 128;
  c.model.ffn_hidden_size = 28672;
  c.model.activation = Activation::swiglu;
  c.model.normalization = Normalization::rmsnorm;
  c.model.add_bias_linear = false;
  c.model.position_embedding = PositionEmbedding::rope;
  c.model.untie_embeddings_and_output_weights = true;
  c.model.vocab_size = 128256;
  c.training.seq_length = 4096;
  return bf16_training(c);
}

// Qwen3-235B-A22B: 94 MoE layers, GQA 64/4 with dh 128, qk-norm, 128 experts top-8.
inline Config qwen3_235b_a22b() {
  Config c;
  c.model.name = "Qwen3-235B-A22B";
  c.model.num_layers = 94;
  c.model.hidden_size = 4096;
  c.model.num_attention_heads = 64;
  c.model.num_query_groups = 4;
  c.model.kv_channels = 128;
  c.model.ffn_hidden_size = 12288;
  c.model.activation = Activation::swiglu;
  c.model.normalization = Normalization::rmsnorm;
  c.model.qk_layernorm = true;
  c.model.add_bias_linear = false;
  c.model.position_embedding = PositionEmbedding::rope;
  c.model.untie_embeddings_and_output_weights = true;
  c.model.vocab_size = 151936;
  c.model.num_experts = 128;
  c.model.moe_router_topk = 8;
  c.model.moe_ffn_hidden_size = 1536;
  c.training.seq_length = 4096;
  c.training.moe_token_dispatcher = TokenDispatcher::alltoall;
  return bf16_training(c);
}

// DeepSeek-V3: 61 layers (3 dense, 58 MoE), MLA, 256 experts top-8 + 1 shared, 1 MTP layer.
inline Config deepseek_v3() {
  Config c;
  c.model.name = "DeepSeek-V3";
  c.model.num_layers = 61;
  c.model.hidden_size = 7168;
  c.model.num_attention_heads = 128;
  c.model.ffn_hidden_size = 18432;
  c.model.activation = Activation::swiglu;
  c.model.normalization = Normalization::rmsnorm;
  c.model.qk_layernorm = true;
  c.model.add_bias_linear = false;
  c.model.position_embedding = PositionEmbedding::rope;
  c.model.untie_embeddings_and_output_weights = true;
  c.model.vocab_size = 129280;
  c.model.multi_latent_attention = true;
  c.model.q_lora_rank = 1536;
  c.model.kv_lora_rank = 512;
  c.model.qk_head_dim = 128;
  c.model.qk_pos_emb_head_dim = 64;
  c.model.v_head_dim = 128;
  c.model.num_experts = 256;
  c.model.moe_router_topk = 8;
  c.model.moe_ffn_hidden_size = 2048;
  c.model.moe_shared_expert_intermediate_size = 2048;
  c.model.moe_layer_pattern.assign(61, 1);
  for (int i = 0; i < 3; ++i) c.model.moe_layer_pattern[static_cast<std::size_t>(i)] = 0;
  c.model.mtp_num_layers = 1;
  c.training.seq_length = 4096;
  c.training.moe_token_dispatcher = TokenDispatcher::alltoall;
  return bf16_training(c);
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
