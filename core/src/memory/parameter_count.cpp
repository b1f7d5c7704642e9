// Parameter tensors per stage and per GPU; see parameter_count.hpp.
#include "memory/parameter_count.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "memory/fp8_memory.hpp"

namespace megamem {
namespace {

// Room for the tensors of one layer (a MoE layer with MLA registers 20-odd), reserved in an
// empty list so that it does not grow by doubling from one element.
constexpr std::size_t kLayerTensorCapacity = 32;

// Appends a stage's tensors, each module's from its spec (core/src/modules/).
class StageBuilder {
 public:
  StageBuilder(const NormalizedConfig& normalized, std::vector<ParamTensor>& out)
      : n_(normalized), out_(out) {
    if (out_.capacity() == 0) out_.reserve(kLayerTensorCapacity);
  }

  void embedding(bool shared) {
    ParamSink sink = sink_for(-1, false, false);
    embedding_params(n_, shared, sink);
  }

  // fp8: the layer's GEMM weights run in FP8 (fp8_memory.hpp fp8_layer).
  void decoder_layer(int layer, LayerKind kind, bool fp8) {
    ParamSink sink = sink_for(layer, false, layer_kind_is_moe(kind), fp8);
    layer_params(module_context(n_, kind, fp8), sink);
  }

  void final_layernorm() {
    ParamSink sink = sink_for(-1, false, false);
    final_norm_params(n_, sink);
  }

  void output_layer(bool shared) {
    ParamSink sink = sink_for(-1, false, false);
    output_layer_params(n_, shared, sink);
  }

  // megatron/core/transformer/multi_token_prediction.py: MultiTokenPredictionLayer (enorm,
  // hnorm, eh_proj, its inner layers, final_layernorm). It runs the whole MTP layer in the
  // global FP8 context. A hybrid model's inner layers are a HybridStack of the '/' part.
  void mtp_layer(int depth, const std::vector<LayerKind>& kinds) {
    const bool fp8 = fp8_enabled(n_.config.training);
    const bool moe = std::any_of(kinds.begin(), kinds.end(), layer_kind_is_moe);
    ParamSink sink = sink_for(depth, true, moe, fp8);
    mtp_projection_params(n_, sink);
    for (const LayerKind kind : kinds) {
      ParamSink inner = sink_for(depth, true, layer_kind_is_moe(kind), fp8);
      layer_params(module_context(n_, kind, fp8), inner);
    }
    mtp_final_norm_params(n_, sink);
  }

 private:
  ParamSink sink_for(int layer, bool mtp, bool moe, bool fp8 = false) {
    ParamTensor tag;
    tag.layer = layer;
    tag.mtp = mtp;
    tag.moe_layer = moe;
    tag.fp8 = fp8;
    return ParamSink(out_, n_.config.model, tag);
  }

  const NormalizedConfig& n_;
  std::vector<ParamTensor>& out_;
};

LayerKind kind_of_layer(const NormalizedConfig& normalized, int layer) {
  return normalized.layer_kinds[static_cast<std::size_t>(layer)];
}

bool layer_is_fp8(const NormalizedConfig& normalized, int layer) {
  return fp8_layer(normalized.config.training, normalized.config.model.num_layers, layer);
}

}  // namespace

void append_stage_tensors(const NormalizedConfig& normalized, const StagePlacement& stage,
                          std::vector<ParamTensor>& out) {
  const ModelConfig& model = normalized.config.model;
  const bool pipelined = normalized.config.parallel.pipeline_parallel > 1;
  const bool tied = !model.untie_embeddings_and_output_weights;
  // gpt_model.py: the embedding exists where pre_process or mtp_process; copies on other
  // stages are kept in sync through the embedding group, in their own bucket.
  const bool embedding_copy = stage.num_mtp_layers > 0 && !stage.has_embedding;
  const bool shared = pipelined && (tied || model.mtp_num_layers > 0);
  StageBuilder builder(normalized, out);
  if (stage.has_embedding || embedding_copy) builder.embedding(shared);
  for (int i = 0; i < stage.num_layers; ++i) {
    const int layer = stage.first_layer + i;
    builder.decoder_layer(layer, kind_of_layer(normalized, layer), layer_is_fp8(normalized, layer));
  }
  if (stage.has_loss) builder.final_layernorm();
  // megatron/core/transformer/multi_token_prediction.py: MTP layers use the spec of the last
  // decoder layer (a hybrid model's: the '/' part's layers, NormalizedConfig::mtp_layer_kinds).
  // With --mtp-use-repeated-layer one layer's weights serve every depth (_build_layers).
  const int mtp_built =
      model.mtp_use_repeated_layer ? std::min(stage.num_mtp_layers, 1) : stage.num_mtp_layers;
  for (int depth = 0; depth < mtp_built; ++depth)
    builder.mtp_layer(depth, normalized.mtp_layer_kinds);
  // gpt_model.py: the output layer skips its weight only where it is tied to a local
  // embedding (pre_process); every other loss stage allocates a full copy.
  if (stage.has_loss && !(tied && stage.has_embedding)) builder.output_layer(shared && tied);
}

LayerTemplates layer_templates(const NormalizedConfig& normalized) {
  LayerTemplates templates;
  const TrainingConfig& t = normalized.config.training;
  const bool fp8 = fp8_enabled(t);
  const bool bf16_layers = fp8 && t.fp8_bf16_layers_at_start + t.fp8_bf16_layers_at_end > 0;
  const bool moe = normalized.config.model.num_experts > 0;
  StageBuilder(normalized, templates.dense).decoder_layer(0, LayerKind::dense, fp8);
  if (moe) StageBuilder(normalized, templates.moe).decoder_layer(0, LayerKind::moe, fp8);
  if (bf16_layers) {
    StageBuilder(normalized, templates.dense_bf16).decoder_layer(0, LayerKind::dense, false);
  }
  if (bf16_layers && moe) {
    StageBuilder(normalized, templates.moe_bf16).decoder_layer(0, LayerKind::moe, false);
  }
  // The kinds the model has, in one pass over its layers rather than a search per kind.
  std::array<bool, kLayerKindCount> has{};
  for (const LayerKind kind : normalized.layer_kinds) has[static_cast<std::size_t>(kind)] = true;
  for (std::size_t k = 2; k < kLayerKindCount; ++k) {
    const auto kind = static_cast<LayerKind>(k);
    if (!has[k]) continue;
    StageBuilder(normalized, templates.hybrid[k]).decoder_layer(0, kind, fp8);
    if (bf16_layers)
      StageBuilder(normalized, templates.hybrid_bf16[k]).decoder_layer(0, kind, false);
  }
  return templates;
}

void stage_params(const NormalizedConfig& normalized, const StagePlacement& stage,
                  const LayerTemplates& templates, StageParams& out) {
  out.blocks.clear();
  // The same stage as append_stage_tensors, with layers kept as runs of a template.
  StagePlacement ends = stage;
  ends.num_layers = 0;
  out.ends.clear();
  append_stage_tensors(normalized, ends, out.ends);
  // append_stage_tensors lists the embedding first: the head before the layers, the rest after.
  const auto tail = std::find_if(out.ends.begin(), out.ends.end(), [](const ParamTensor& t) {
    return t.module != ModuleKind::word_embedding && t.module != ModuleKind::position_embedding;
  });
  auto add = [&](const ParamTensor* tensors, std::size_t count, std::int64_t repeat,
                 bool layer_template) {
    if (count > 0 && repeat > 0) out.blocks.push_back({tensors, count, repeat, layer_template});
  };
  const auto head_count = static_cast<std::size_t>(tail - out.ends.begin());
  add(out.ends.data(), head_count, 1, false);
  // Runs of layers of one kind (dense, MoE or a hybrid kind), FP8 or kept in bf16
  // (--first-last-layers-bf16).
  auto kind = [&](int layer) {
    return std::pair{kind_of_layer(normalized, layer), layer_is_fp8(normalized, layer)};
  };
  const bool fp8 = fp8_enabled(normalized.config.training);
  int i = 0;
  while (i < stage.num_layers) {
    const auto run_kind = kind(stage.first_layer + i);
    const auto [layer_kind, layer_fp8] = run_kind;
    int run = 1;
    while (i + run < stage.num_layers && kind(stage.first_layer + i + run) == run_kind) ++run;
    const std::vector<ParamTensor>& layer = templates.of(layer_kind, layer_fp8 != fp8);
    add(layer.data(), layer.size(), run, true);
    i += run;
  }
  add(out.ends.data() + head_count, out.ends.size() - head_count, 1, false);
}

ModelTotals count_model_totals(const NormalizedConfig& normalized) {
  // The whole model on one GPU, unpadded vocabulary: unique parameters. Layers of one kind
  // are identical, so each kind is listed once and counted as often as it occurs.
  NormalizedConfig whole = normalized;
  whole.config.parallel.tensor_parallel = 1;
  whole.config.parallel.pipeline_parallel = 1;
  whole.config.parallel.expert_parallel = 1;
  whole.config.parallel.expert_tensor_parallel = 1;
  whole.padded_vocab_size = normalized.config.model.vocab_size;
  const ModelConfig& model = normalized.config.model;
  std::array<std::int64_t, kLayerKindCount> layers_of_kind{};
  for (const LayerKind kind : normalized.layer_kinds)
    ++layers_of_kind[static_cast<std::size_t>(kind)];
  const int mtp_built =
      model.mtp_use_repeated_layer ? std::min(model.mtp_num_layers, 1) : model.mtp_num_layers;

  const double active_expert_share =
      model.num_experts > 0 ? static_cast<double>(model.moe_router_topk) / model.num_experts : 1.0;
  ModelTotals totals;
  double active = 0;
  std::vector<ParamTensor> tensors;
  StageBuilder builder(whole, tensors);
  auto count = [&](std::int64_t times) {
    for (const ParamTensor& tensor : tensors) {
      const std::int64_t elements = tensor.elements() * times;
      if (tensor.mtp) {
        totals.mtp_params += elements;
        continue;
      }
      totals.params += elements;
      active += static_cast<double>(elements) * (tensor.expert ? active_expert_share : 1.0);
    }
    tensors.clear();
  };
  builder.embedding(false);
  builder.final_layernorm();
  if (model.untie_embeddings_and_output_weights) builder.output_layer(false);
  count(1);
  for (std::size_t k = 0; k < kLayerKindCount; ++k) {
    if (layers_of_kind[k] == 0) continue;
    builder.decoder_layer(0, static_cast<LayerKind>(k), false);
    count(layers_of_kind[k]);
  }
  builder.mtp_layer(0, normalized.mtp_layer_kinds);
  count(mtp_built);
  totals.active_params = static_cast<std::int64_t>(active + 0.5);
  const std::int64_t padding_rows = normalized.padded_vocab_size - model.vocab_size;
  const int vocab_matrices = model.untie_embeddings_and_output_weights ? 2 : 1;
  totals.padded_params =
      totals.params + totals.mtp_params + padding_rows * model.hidden_size * vocab_matrices;
  return totals;
}

}  // namespace megamem
