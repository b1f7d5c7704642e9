// The settings column. Each row names its Megatron flag and its effect on memory (tooltip);
// rows are grouped as ui.md lays them out. Index:
//   [errors]    which row explains the current error
//   [model]     architecture, MoE, MLA, MTP, and the import boxes
//   [cluster]   GPU preset, GPU count, node size, capacity
//   [parallel]  TP PP VPP CP EP ETP, derived DP, uneven pipelines
//   [training]  batch, sequence, precision, kernels, MoE dispatch
//   [recompute] recompute and activation offload
//   [optimizer] optimizer, distributed optimizer, CPU offload
//   [runtime]   runtime overheads and per-GPU fixed buffers
#include "inputs_panel.hpp"

#include <cstdio>
#include <string>

#include "imgui.h"
#include "import_boxes.hpp"
#include "theme.hpp"
#include "top_bar.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

// ---- [errors] ---------------------------------------------------------------------------------

struct FieldRow {
  const char* field;  // the core's Error::field
  const char* key;    // the row's share-link key
};
constexpr FieldRow kFieldRows[] = {
    {"num_attention_heads", "tp"},
    {"num_query_groups", "tp"},
    {"ffn_hidden_size", "tp"},
    {"tensor_model_parallel_size", "tp"},
    {"world_size", "gpus"},
    {"pipeline_model_parallel_size", "pp"},
    {"virtual_stages_per_pipeline_rank", "vpp"},
    {"context_parallel_size", "cp"},
    {"expert_model_parallel_size", "ep"},
    {"expert_tensor_parallel_size", "etp"},
    {"num_experts", "ep"},
    {"num_layers", "pp"},
    {"decoder_first_pipeline_num_layers", "pp-first"},
    {"pipeline_model_parallel_layout", "pp-layout"},
    {"global_batch_size", "gbs"},
    {"microbatch_group_size_per_vp_stage", "vpp-group"},
    {"micro_batch_size", "mbs"},
    {"seq_length", "seq"},
    {"hidden_size", "m.hidden"},
    {"vocab_size", "m.vocab"},
    {"make_vocab_size_divisible_by", "m.vocab-div"},
    {"kv_channels", "m.kv-ch"},
    {"moe_router_topk", "m.topk"},
    {"moe_ffn_hidden_size", "m.moe-ffn"},
    {"moe_shared_expert_intermediate_size", "m.shared"},
    {"moe_layer_freq", "m.moe-freq"},
    {"kv_lora_rank", "m.kv-lora"},
    {"q_lora_rank", "m.q-lora"},
    {"mtp_num_layers", "m.mtp"},
    {"max_position_embeddings", "m.max-pos"},
    {"hidden_dropout", "m.hdrop"},
    {"attention_dropout", "m.adrop"},
    {"sequence_parallel", "sp"},
    {"num_distributed_optimizer_instances", "dist-opt-instances"},
    {"recompute_modules", "recompute-modules"},
    {"recompute_num_layers", "recompute-layers"},
    {"distribute_saved_activations", "distribute-saved"},
    {"offload_modules", "offload-modules"},
    {"fine_grained_activation_offloading", "act-offload"},
    {"cpu_offloading", "cpu-offload"},
    {"cpu_offloading_num_layers", "cpu-offload-layers"},
    {"optimizer_cpu_offload", "opt-offload"},
    {"optimizer_offload_fraction", "opt-offload-fraction"},
};

// ---- [model] ----------------------------------------------------------------------------------

void model_rows(InputContext& ctx) {
  ModelConfig& m = ctx.state.shared.config.model;
  ImGui::SetNextItemWidth(-1.0f);
  if (model_picker(ctx.state, "model preset")) ctx.changed = true;

  row_slider(ctx,
             {"layers", "m.layers", "--num-layers",
              "Every layer's weights, gradients, optimizer state and saved activations "
              "scale with the number of layers."},
             &m.num_layers, 1, 256);
  row_int(ctx,
          {"hidden", "m.hidden", "--hidden-size",
           "Attention and MLP weights grow with hidden x hidden; every saved activation "
           "grows with it."},
          &m.hidden_size, 1, 128);
  row_int(ctx,
          {"FFN hidden", "m.ffn", "--ffn-hidden-size (0 = 4 x hidden, SwiGLU 8/3)",
           "MLP weights (two or three hidden x FFN matrices) and the MLP's saved "
           "activations."},
          &m.ffn_hidden_size, 0, 128);
  row_int(ctx,
          {"attention heads", "m.heads", "--num-attention-heads",
           "Must divide by TP; sets the head size. Unfused attention saves heads x seq^2 "
           "scores."},
          &m.num_attention_heads, 1);
  row_int(ctx,
          {"query groups", "m.groups", "--num-query-groups (with --group-query-attention)",
           "Fewer key/value groups shrink the K and V projections and the saved K, V."},
          &m.num_query_groups, 0);
  row_int(ctx,
          {"kv channels", "m.kv-ch", "--kv-channels (0 = hidden / heads)",
           "Head dimension: the size of Q, K, V per head."},
          &m.kv_channels, 0, 8);
  row_int64(ctx,
            {"vocabulary", "m.vocab", "--vocab-size (or the tokenizer's)",
             "Embedding and output layer on the first and last PP rank; the loss keeps "
             "fp32 logits of tokens x vocabulary / TP."},
            &m.vocab_size, 1, 1024);
  row_int(ctx,
          {"vocab divisible by", "m.vocab-div", "--make-vocab-size-divisible-by",
           "The vocabulary is padded to a multiple of this times TP."},
          &m.make_vocab_size_divisible_by, 1);
  row_enum(ctx,
           {"activation", "m.act", "--swiglu / --squared-relu (default GeLU)",
            "SwiGLU doubles the first MLP matrix and saves both halves."},
           &m.activation, {"GeLU", "SwiGLU", "squared ReLU"});
  row_enum(ctx,
           {"normalization", "m.norm", "--normalization",
            "RMSNorm has no bias; norms save their input."},
           &m.normalization, {"LayerNorm", "RMSNorm"});
  row_enum(ctx,
           {"position embedding", "m.pos", "--position-embedding-type",
            "Learned absolute embeddings add max-positions x hidden weights."},
           &m.position_embedding, {"learned absolute", "RoPE", "YaRN", "none"});
  row_int(ctx,
          {"max positions", "m.max-pos", "--max-position-embeddings (0 = sequence length)",
           "Size of a learned position embedding table."},
          &m.max_position_embeddings, 0, 1024);
  row_checkbox(ctx,
               {"untie embeddings", "m.untie", "--untie-embeddings-and-output-weights",
                "A separate output layer (vocabulary x hidden) on the last PP rank."},
               &m.untie_embeddings_and_output_weights);
  row_checkbox(ctx,
               {"linear biases", "m.bias", "--disable-bias-linear clears it",
                "Bias vectors on every linear layer (small)."},
               &m.add_bias_linear);
  row_checkbox(
      ctx, {"QKV bias", "m.qkv-bias", "--add-qkv-bias", "Bias on the QKV projection only (Qwen2)."},
      &m.add_qkv_bias);
  row_checkbox(ctx,
               {"QK layernorm", "m.qk-norm", "--qk-layernorm",
                "Norms on queries and keys: small weights, their inputs are saved."},
               &m.qk_layernorm);
  row_checkbox(ctx,
               {"attention out gate", "m.out-gate", "--attention-output-gate",
                "A gate projection on the attention output: more weights and activations."},
               &m.attention_output_gate);
  row_double(ctx,
             {"hidden dropout", "m.hdrop", "--hidden-dropout",
              "Above 0, each residual add saves a 1-byte mask per element."},
             &m.hidden_dropout, 0.0, 1.0, 0.05, "%.2f");
  row_double(ctx,
             {"attention dropout", "m.adrop", "--attention-dropout",
              "Unfused attention saves its dropout mask and output (seq^2 per head)."},
             &m.attention_dropout, 0.0, 1.0, 0.05, "%.2f");

  if (ImGui::TreeNodeEx("mixture of experts",
                        m.num_experts > 0 ? ImGuiTreeNodeFlags_DefaultOpen : 0)) {
    row_int(ctx,
            {"experts", "m.experts", "--num-experts (0 = dense)",
             "Routed experts, split over EP: E / EP local experts of weights per GPU."},
            &m.num_experts, 0);
    row_int(ctx,
            {"top-k", "m.topk", "--moe-router-topk",
             "Each token is dispatched to k experts: k copies of the dispatched tokens."},
            &m.moe_router_topk, 1);
    row_int(ctx,
            {"expert FFN", "m.moe-ffn", "--moe-ffn-hidden-size (0 = FFN hidden)",
             "Each expert's MLP width: expert weights and expert activations."},
            &m.moe_ffn_hidden_size, 0, 64);
    row_int(ctx,
            {"shared experts FFN", "m.shared", "--moe-shared-expert-intermediate-size",
             "Shared experts (summed width), a TP-split MLP beside the routed experts."},
            &m.moe_shared_expert_intermediate_size, 0, 64);
    row_checkbox(ctx,
                 {"shared expert gate", "m.shared-gate", "--moe-shared-expert-gate",
                  "A gate on the shared experts' output (Qwen2-MoE)."},
                 &m.moe_shared_expert_gate);
    row_int(ctx,
            {"MoE latent size", "m.latent", "--moe-latent-size (0 = none)",
             "Experts work in a smaller latent space with down/up projections."},
            &m.moe_latent_size, 0, 64);
    row_checkbox(ctx,
                 {"expert bias", "m.expert-bias", "--moe-router-enable-expert-bias",
                  "Aux-loss-free balancing: two fp32 buffers of E per MoE layer."},
                 &m.moe_router_enable_expert_bias);
    if (m.moe_layer_pattern.empty()) {
      row_int(ctx,
              {"MoE layer frequency", "m.moe-freq", "--moe-layer-freq N",
               "Every N-th layer is MoE, the others dense."},
              &m.moe_layer_freq, 1);
    } else {
      int moe_layers = 0;
      for (const auto bit : m.moe_layer_pattern) moe_layers += bit;
      char note[96];
      std::snprintf(note, sizeof note, "MoE layers: %d of %zu (pattern from the preset)",
                    moe_layers, m.moe_layer_pattern.size());
      row_note(ctx, note);
    }
    ImGui::TreePop();
  }
  if (ImGui::TreeNodeEx("multi-latent attention",
                        m.multi_latent_attention ? ImGuiTreeNodeFlags_DefaultOpen : 0)) {
    row_checkbox(ctx,
                 {"MLA", "m.mla", "--multi-latent-attention",
                  "DeepSeek's attention: low-rank Q and KV projections, smaller weights, "
                  "more saved intermediates."},
                 &m.multi_latent_attention);
    row_int(ctx,
            {"q LoRA rank", "m.q-lora", "--q-lora-rank (0 = none)",
             "Rank of the query down-projection."},
            &m.q_lora_rank, 0, 64);
    row_int(
        ctx,
        {"kv LoRA rank", "m.kv-lora", "--kv-lora-rank", "Rank of the key/value down-projection."},
        &m.kv_lora_rank, 0, 64);
    row_int(ctx, {"qk head dim", "m.qk-dim", "--qk-head-dim", "Query/key head size (no RoPE)."},
            &m.qk_head_dim, 0, 8);
    row_int(ctx,
            {"qk RoPE dim", "m.qk-pos-dim", "--qk-pos-emb-head-dim",
             "Query/key head part that carries rotary embeddings."},
            &m.qk_pos_emb_head_dim, 0, 8);
    row_int(ctx, {"v head dim", "m.v-dim", "--v-head-dim", "Value head size."}, &m.v_head_dim, 0,
            8);
    ImGui::TreePop();
  }
  if (ImGui::TreeNodeEx("multi-token prediction",
                        m.mtp_num_layers > 0 ? ImGuiTreeNodeFlags_DefaultOpen : 0)) {
    row_int(ctx,
            {"MTP layers", "m.mtp", "--mtp-num-layers",
             "Extra prediction layers with their own embedding copy and loss on the last "
             "stage."},
            &m.mtp_num_layers, 0);
    row_checkbox(ctx,
                 {"MTP shared layer", "m.mtp-repeat", "--mtp-use-repeated-layer",
                  "All MTP depths share one layer's weights."},
                 &m.mtp_use_repeated_layer);
    ImGui::TreePop();
  }
  if (draw_import_boxes(ctx.state)) ctx.changed = true;
}

// ---- [cluster] --------------------------------------------------------------------------------

void cluster_rows(InputContext& ctx) {
  Config& c = ctx.state.shared.config;
  ImGui::SetNextItemWidth(-1.0f);
  if (gpu_picker(ctx.state, "GPU preset")) ctx.changed = true;
  row_int64(ctx,
            {"GPUs", "gpus", "world size (WORLD_SIZE, nodes x GPUs per node)",
             "Data parallel = GPUs / (TP x CP x PP): shards the distributed optimizer and "
             "gradient buffers."},
            &c.parallel.world_size, 1, 8);
  row_int(ctx,
          {"GPUs per node", "g.node", "the node size (NVLink domain)",
           "No effect on memory; used by the planner's communication model."},
          &c.device.gpus_per_node, 1);
  row_double(ctx,
             {"memory (GiB)", "g.mem", "the card's usable memory",
              "The capacity the peak is compared with (fits / does not fit)."},
             &c.device.capacity_gib, 1.0, 4096.0, 1.0, "%.2f");
}

// ---- [parallel] -------------------------------------------------------------------------------

void parallel_rows(InputContext& ctx) {
  ParallelConfig& p = ctx.state.shared.config.parallel;
  row_int(ctx,
          {"TP", "tp", "--tensor-model-parallel-size",
           "Splits each layer's weights and most activations TP ways; heads and FFN must "
           "divide."},
          &p.tensor_parallel, 1);
  row_int(ctx,
          {"PP", "pp", "--pipeline-model-parallel-size",
           "Splits the layers over PP ranks; the first rank keeps activations of up to PP "
           "micro-batches in flight."},
          &p.pipeline_parallel, 1);
  row_int(ctx,
          {"VPP", "vpp", "--num-virtual-stages-per-pipeline-rank",
           "Interleaved schedule: more, smaller chunks per rank and more micro-batches in "
           "flight."},
          &p.virtual_stages_per_pipeline_rank, 1);
  row_int(ctx,
          {"CP", "cp", "--context-parallel-size",
           "Splits the sequence: activations shrink CP ways; the optimizer shards over "
           "DP x CP."},
          &p.context_parallel, 1);
  row_int(ctx,
          {"EP", "ep", "--expert-model-parallel-size",
           "Splits the routed experts: E / EP experts of weights per GPU."},
          &p.expert_parallel, 1);
  row_int(ctx,
          {"ETP", "etp", "--expert-tensor-parallel-size (0 = TP)",
           "Tensor parallelism inside each expert."},
          &p.expert_tensor_parallel, 0);
  row_checkbox(ctx,
               {"sequence parallel", "sp", "--sequence-parallel",
                "With TP > 1, norms and dropouts keep 1/TP of the sequence (needed for MoE "
                "with TP)."},
               &p.sequence_parallel);
  if (ctx.state.last_estimate && !ctx.state.error) {
    const NormalizedConfig& n = ctx.state.last_estimate->normalized;
    char note[160];
    std::snprintf(note, sizeof note, "-> DP %lld, expert-DP %lld, %lld micro-batches per step",
                  static_cast<long long>(n.data_parallel),
                  static_cast<long long>(n.expert_data_parallel),
                  static_cast<long long>(n.num_microbatches));
    row_note(ctx, note);
  }
  if (ImGui::TreeNodeEx("uneven pipeline", p.decoder_first_pipeline_num_layers ||
                                                   p.decoder_last_pipeline_num_layers ||
                                                   !p.pipeline_layout.empty()
                                               ? ImGuiTreeNodeFlags_DefaultOpen
                                               : 0)) {
    row_int(ctx,
            {"first-stage layers", "pp-first", "--decoder-first-pipeline-num-layers",
             "Layers on the first stage (0 = even split)."},
            &p.decoder_first_pipeline_num_layers, 0);
    row_int(ctx,
            {"last-stage layers", "pp-last", "--decoder-last-pipeline-num-layers",
             "Layers on the last stage (0 = even split)."},
            &p.decoder_last_pipeline_num_layers, 0);
    row_checkbox(ctx,
                 {"embedding as a layer", "pp-emb", "--account-for-embedding-in-pipeline-split",
                  "The embedding counts as a layer when splitting."},
                 &p.account_for_embedding_in_pipeline_split);
    row_checkbox(ctx,
                 {"loss as a layer", "pp-loss", "--account-for-loss-in-pipeline-split",
                  "The loss counts as a layer when splitting."},
                 &p.account_for_loss_in_pipeline_split);
    row_text(ctx,
             {"layout", "pp-layout", "--pipeline-model-parallel-layout",
              "Explicit stages, e.g. Et*4|(t*4|)*14tmL (E embedding, t layer, m MTP, L "
              "loss)."},
             &p.pipeline_layout, "e.g. Et*4|(t*4|)*14tmL");
    row_int(ctx,
            {"VPP group", "vpp-group", "--microbatch-group-size-per-virtual-pipeline-stage",
             "Micro-batches per group of the interleaved schedule (0 = PP)."},
            &p.microbatch_group_size_per_vp_stage, 0);
    row_int(ctx,
            {"optimizer instances", "dist-opt-instances", "--num-distributed-optimizer-instances",
             "Replicas of the distributed optimizer: each shards over fewer GPUs."},
            &p.num_distributed_optimizer_instances, 1);
    ImGui::TreePop();
  }
}

// ---- [training] -------------------------------------------------------------------------------

void training_rows(InputContext& ctx) {
  TrainingConfig& t = ctx.state.shared.config.training;
  row_int(ctx,
          {"micro-batch", "mbs", "--micro-batch-size",
           "Sequences per forward: every saved activation scales with it."},
          &t.micro_batch_size, 1);
  row_int64(ctx,
            {"global batch", "gbs", "--global-batch-size (0 = micro-batch x DP)",
             "Sets the micro-batches per step; memory changes only through the pipeline "
             "schedule's warm-up."},
            &t.global_batch_size, 0, 64);
  row_int(ctx,
          {"sequence length", "seq", "--seq-length",
           "Tokens per sequence: activations scale with it (unfused attention with its "
           "square)."},
          &t.seq_length, 1, 512);
  row_enum(ctx,
           {"precision", "dtype", "--bf16 / --fp16 (default fp32)",
            "bf16/fp16 weights take 2 bytes with fp32 main grads and master weights; fp32 "
            "takes 4."},
           &t.params_dtype, {"fp32", "bf16", "fp16", ""});
  row_enum(ctx,
           {"FP8 recipe", "fp8", "--fp8-format with --fp8-recipe",
            "FP8 GEMMs; megamem changes only weight bytes with --fp8-param-gather."},
           &t.fp8_recipe, {"none", "delayed", "tensorwise", "mxfp8", "blockwise"});
  row_checkbox(ctx,
               {"FP8 param gather", "fp8-param-gather", "--fp8-param-gather",
                "GEMM weights stored in 1 byte."},
               &t.fp8_param_gather);
  row_enum(ctx,
           {"transformer impl", "impl", "--transformer-impl",
            "Transformer Engine fuses norms into linears; the local spec saves more."},
           &t.transformer_impl, {"Transformer Engine", "local"});
  row_enum(ctx,
           {"attention backend", "attn", "--attention-backend",
            "Flash/fused keep no seq x seq scores; unfused saves the probabilities."},
           &t.attention_backend, {"auto", "flash", "fused", "unfused", "local"});
  row_enum(ctx,
           {"cross entropy", "ce", "--cross-entropy-loss-fusion / --cross-entropy-fusion-impl",
            "Unfused keeps fp32 logits; fused variants keep less at the loss."},
           &t.cross_entropy, {"unfused", "native fused", "TE fused"});
  row_checkbox(
      ctx,
      {"grad accum. fusion", "grad-acc-fusion", "--no-gradient-accumulation-fusion clears it",
       "Off: a bf16 weight gradient is allocated before accumulating into the "
       "main grad."},
      &t.gradient_accumulation_fusion);
  row_checkbox(ctx,
               {"softmax fusion", "softmax-fusion", "--no-masked-softmax-fusion clears it",
                "Unfused attention only: off keeps an fp32 copy of the scores."},
               &t.masked_softmax_fusion);
  row_checkbox(ctx,
               {"mask in data loader", "mask-in-loader",
                "--no-create-attention-mask-in-dataloader clears it",
                "The attention mask tensor a batch carries (unfused attention)."},
               &t.create_attention_mask_in_dataloader);
  row_checkbox(ctx,
               {"deterministic", "deterministic", "--deterministic-mode",
                "cuBLAS workspaces grow from 8 MiB to 32 MiB per handle."},
               &t.deterministic_mode);
  if (ctx.state.shared.config.model.num_experts > 0 &&
      ImGui::TreeNodeEx("MoE dispatch", ImGuiTreeNodeFlags_DefaultOpen)) {
    row_enum(ctx,
             {"dispatcher", "dispatcher", "--moe-token-dispatcher-type",
              "allgather gathers every token (a global buffer); alltoall sends k copies; "
              "flex adds DeepEP buffers."},
             &t.moe_token_dispatcher, {"allgather", "alltoall", "flex"});
    row_checkbox(ctx,
                 {"grouped GEMM", "grouped-gemm", "--moe-grouped-gemm",
                  "Experts as grouped GEMMs: four more TE workspaces; allows moe_act "
                  "recompute."},
                 &t.moe_grouped_gemm);
    row_checkbox(
        ctx,
        {"router in fp32", "router-fp32", "--moe-router-dtype fp32", "Router scores kept in fp32."},
        &t.moe_router_fp32);
    row_double(ctx,
               {"capacity factor", "capacity", "--moe-expert-capacity-factor (0 = dropless)",
                "Caps tokens per expert at this multiple of the average."},
               &t.moe_expert_capacity_factor, 0.0, 64.0, 0.25, "%.2f");
    row_checkbox(ctx,
                 {"pad to capacity", "pad-capacity", "--moe-pad-expert-input-to-capacity",
                  "Every expert receives exactly its capacity."},
                 &t.moe_pad_expert_input_to_capacity);
    row_double(ctx,
               {"imbalance factor", "imbalance", "(megamem knob, no flag)",
                "The busiest EP rank's share of tokens over the balanced share."},
               &t.moe_imbalance_factor, 1.0, 64.0, 0.1, "%.2f");
    row_checkbox(ctx,
                 {"overlap EP comm.", "moe-overlap", "--overlap-moe-expert-parallel-comm",
                  "One more warm-up micro-batch in flight (interleaved schedule)."},
                 &t.overlap_moe_expert_parallel_comm);
    ImGui::TreePop();
  }
}

// ---- [recompute] ------------------------------------------------------------------------------

void recompute_rows(InputContext& ctx) {
  TrainingConfig& t = ctx.state.shared.config.training;
  RecomputeConfig& r = t.recompute;
  row_enum(ctx,
           {"recompute", "recompute", "--recompute-granularity",
            "selective drops chosen modules' saved tensors; full keeps one input per "
            "layer group and re-runs it in backward."},
           &r.granularity, {"none", "selective", "full"});
  if (r.granularity == RecomputeGranularity::full) {
    row_enum(ctx,
             {"method", "recompute-method", "--recompute-method",
              "uniform: groups of N layers; block: the first N layers of each chunk."},
             &r.method, {"uniform", "block"});
    row_int(ctx,
            {"recompute layers", "recompute-layers", "--recompute-num-layers",
             "Layers per group (uniform) or per chunk (block)."},
            &r.num_layers, 1);
  }
  if (r.granularity == RecomputeGranularity::selective) {
    row_modules(
        ctx,
        {"recompute modules", "recompute-modules", "--recompute-modules",
         "Each checked module's saved tensors are dropped and recomputed in "
         "backward (none checked = core_attn)."},
        &r.modules,
        {"core_attn", "mlp", "moe", "moe_act", "shared_experts", "layernorm", "mla_up_proj"});
  }
  row_checkbox(ctx,
               {"distribute saved", "distribute-saved", "--distribute-saved-activations",
                "Full recompute's kept inputs split over TP (not with sequence "
                "parallel)."},
               &r.distribute_saved_activations);
  OffloadConfig& o = t.offload;
  row_checkbox(ctx,
               {"activation offload", "act-offload", "--fine-grained-activation-offloading",
                "Saved tensors of the listed modules go to host memory, one layer comes "
                "back at a time."},
               &o.fine_grained_activation_offloading);
  if (o.fine_grained_activation_offloading) {
    row_modules(ctx,
                {"offload modules", "offload-modules", "--offload-modules",
                 "Modules whose saved tensors are offloaded."},
                &o.offload_modules,
                {"attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm", "expert_fc1",
                 "moe_act", "fused_group_mlp"});
  }
  row_checkbox(ctx,
               {"legacy CPU offload", "cpu-offload", "--cpu-offloading",
                "All activations of the first N layers go to the host (no PP, no "
                "recompute)."},
               &o.cpu_offloading);
  if (o.cpu_offloading) {
    row_int(ctx,
            {"offloaded layers", "cpu-offload-layers", "--cpu-offloading-num-layers",
             "How many layers' activations go to the host."},
            &o.cpu_offloading_num_layers, 0);
  }
}

// ---- [optimizer] ------------------------------------------------------------------------------

void optimizer_rows(InputContext& ctx) {
  OptimizerConfig& o = ctx.state.shared.config.optimizer;
  row_enum(ctx,
           {"optimizer", "opt", "--optimizer",
            "Adam keeps two moments per parameter; SGD and Muon one momentum."},
           &o.kind, {"Adam", "SGD", "Muon"});
  row_checkbox(ctx,
               {"distributed optimizer", "dist-opt", "--use-distributed-optimizer",
                "Shards master weights and moments over data parallel ranks."},
               &o.use_distributed_optimizer);
  row_checkbox(ctx,
               {"grad reduce in bf16", "grad-bf16", "--grad-reduce-in-bf16",
                "A bf16 gradient buffer (2 bytes) with an fp32 copy in the optimizer."},
               &o.grad_reduce_in_bf16);
  row_checkbox(ctx,
               {"overlap grad reduce", "overlap-grad", "--overlap-grad-reduce",
                "Gradient buckets; changes the DDP buffer padding."},
               &o.overlap_grad_reduce);
  row_checkbox(ctx,
               {"precision-aware", "precision-aware", "--use-precision-aware-optimizer",
                "TE FusedAdam: chosen dtypes for main grads, master weights and moments."},
               &o.use_precision_aware_optimizer);
  if (o.use_precision_aware_optimizer) {
    const std::vector<const char*> dtypes = {"fp32", "bf16", "fp16", "fp8"};
    row_enum(ctx, {"main grads", "main-grads", "--main-grads-dtype", "Gradient buffer dtype."},
             &o.main_grads_dtype, dtypes);
    row_enum(ctx,
             {"main params", "main-params", "--main-params-dtype",
              "Master weight dtype (bf16 keeps a 2-byte remainder by default)."},
             &o.main_params_dtype, dtypes);
    row_enum(ctx, {"exp_avg", "exp-avg", "--exp-avg-dtype", "First Adam moment dtype."},
             &o.exp_avg_dtype, dtypes);
    row_enum(ctx, {"exp_avg_sq", "exp-avg-sq", "--exp-avg-sq-dtype", "Second Adam moment dtype."},
             &o.exp_avg_sq_dtype, dtypes);
    row_checkbox(ctx,
                 {"param remainders", "param-remainders", "--no-store-param-remainders clears it",
                  "bf16 master weights as a 2-byte remainder of the fp32 value."},
                 &o.store_param_remainders);
    row_checkbox(ctx,
                 {"optimizer CPU offload", "opt-offload", "--optimizer-cpu-offload",
                  "Optimizer state moves to host memory."},
                 &o.optimizer_cpu_offload);
    if (o.optimizer_cpu_offload) {
      row_double(ctx,
                 {"offload fraction", "opt-offload-fraction", "--optimizer-offload-fraction",
                  "Share of the optimizer state kept on the host."},
                 &o.optimizer_offload_fraction, 0.0, 1.0, 0.05, "%.2f");
    }
  }
}

// ---- [runtime] --------------------------------------------------------------------------------

void runtime_rows(InputContext& ctx) {
  Config& c = ctx.state.shared.config;
  row_double(ctx,
             {"CUDA context (GiB)", "rt.ctx", "(megamem setting)",
              "Driver and CUDA context memory outside the allocator."},
             &c.runtime.cuda_context_gib, 0.0, 64.0, 0.1, "%.2f");
  row_double(ctx,
             {"NCCL per group (GiB)", "rt.nccl", "(megamem setting)",
              "Buffers per NCCL communicator the rank uses (TP, PP, DP, EP, ...)."},
             &c.runtime.nccl_gib_per_communicator, 0.0, 16.0, 0.05, "%.2f");
  row_double(ctx,
             {"fragmentation", "rt.frag", "(megamem setting, fraction of the peak)",
              "Allocator fragmentation, as a fraction of the allocator peak."},
             &c.runtime.fragmentation_fraction, 0.0, 1.0, 0.01, "%.2f");
  row_double(ctx,
             {"DeepEP buffers (GiB)", "rt.deepep", "(megamem setting, flex dispatcher)",
              "DeepEP's communication buffers with the flex dispatcher."},
             &c.runtime.deepep_buffer_gib, 0.0, 64.0, 0.25, "%.2f");
  row_double(ctx,
             {"TE workspace (MiB)", "g.cublas", "(GPU property)",
              "Transformer Engine's cuBLAS workspace per stream: 32 MiB on Hopper, 4 MiB "
              "before."},
             &c.device.te_cublas_workspace_mib, 0.0, 1024.0, 1.0, "%.1f");
  row_double(ctx,
             {"fixed buffers (MiB)", "g.fixed", "(calibrated)",
              "RNG states, rotary caches and small tensors no formula covers."},
             &c.device.fixed_allocated_mib, 0.0, 4096.0, 1.0, "%.1f");
}

}  // namespace

const char* error_row_key(const AppState& state) {
  if (!state.error) return "";
  if (!state.edited_key.empty()) return state.edited_key.c_str();
  for (const FieldRow& row : kFieldRows) {
    if (state.error->field == row.field) return row.key;
  }
  return "";
}

bool draw_inputs_panel(AppState& state) {
  InputContext ctx{state, error_row_key(state), false, false, ImGui::GetFontSize() * 10.5f};
  static bool error_shown_last_frame = true;

  // An error whose row is hidden (collapsed section, or no row at all) is shown on top.
  if (state.error && !error_shown_last_frame) {
    if (error_box(state)) ctx.changed = true;
    ctx.error_shown = true;
  }

  if (section("MODEL")) model_rows(ctx);
  if (section("CLUSTER")) cluster_rows(ctx);
  if (section("PARALLELISM")) parallel_rows(ctx);
  if (section("TRAINING")) training_rows(ctx);
  if (section("RECOMPUTE AND OFFLOAD")) recompute_rows(ctx);
  if (section("OPTIMIZER")) optimizer_rows(ctx);
  if (section("RUNTIME OVERHEADS", false)) runtime_rows(ctx);
  error_shown_last_frame = ctx.error_shown;
  return ctx.changed;
}

}  // namespace megamem::web
