// Every input names its Megatron flag and its effect on memory in a tooltip, and records its
// rectangle in AppState::input_rects under its label (tests click on inputs by label).
#include "inputs_panel.hpp"

#include <cstdint>

#include "imgui.h"
#include "theme.hpp"

namespace megamem::web {
namespace {

// After an input: show its flag and effect on hover, remember where it is.
void describe_last_input(AppState& state, const char* label, const char* megatron_flag,
                         const char* memory_effect) {
  const ImVec2 min = ImGui::GetItemRectMin();
  const ImVec2 max = ImGui::GetItemRectMax();
  state.input_rects[label] = WidgetRect{min.x, min.y, max.x - min.x, max.y - min.y};
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(megatron_flag);
    ImGui::PushStyleColor(ImGuiCol_Text, kMutedTextColor);
    ImGui::TextUnformatted(memory_effect);
    ImGui::PopStyleColor();
    ImGui::EndTooltip();
  }
}

bool slider_int(AppState& state, const char* label, int* value, int min, int max,
                const char* megatron_flag, const char* memory_effect) {
  const bool changed = ImGui::SliderInt(label, value, min, max, "%d", ImGuiSliderFlags_AlwaysClamp);
  describe_last_input(state, label, megatron_flag, memory_effect);
  return changed;
}

bool input_int(AppState& state, const char* label, int* value, int step, const char* megatron_flag,
               const char* memory_effect) {
  const bool changed = ImGui::InputInt(label, value, step, step * 8);
  describe_last_input(state, label, megatron_flag, memory_effect);
  return changed;
}

bool input_int64(AppState& state, const char* label, std::int64_t* value, std::int64_t step,
                 const char* megatron_flag, const char* memory_effect) {
  const std::int64_t step_fast = step * 8;
  const bool changed = ImGui::InputScalar(label, ImGuiDataType_S64, value, &step, &step_fast);
  describe_last_input(state, label, megatron_flag, memory_effect);
  return changed;
}

bool checkbox(AppState& state, const char* label, bool* value, const char* megatron_flag,
              const char* memory_effect) {
  const bool changed = ImGui::Checkbox(label, value);
  describe_last_input(state, label, megatron_flag, memory_effect);
  return changed;
}

void section_heading(const char* title) {
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, kMutedTextColor);
  ImGui::TextUnformatted(title);
  ImGui::PopStyleColor();
  ImGui::Separator();
}

}  // namespace

bool draw_inputs_panel(AppState& state) {
  ModelConfig& model = state.config.model;
  ParallelConfig& parallel = state.config.parallel;
  bool changed = false;
  ImGui::PushItemWidth(ImGui::GetContentRegionAvail().x * 0.55f);

  section_heading("MODEL (dense GPT, SwiGLU, RMSNorm, RoPE)");
  changed |= slider_int(state, "layers", &model.num_layers, 1, 256, "--num-layers",
                        "Every layer's weights, gradients and optimizer state scale with it.");
  changed |= input_int(state, "hidden", &model.hidden_size, 128, "--hidden-size",
                       "Attention and MLP weights grow with hidden x hidden and hidden x ffn.");
  changed |= input_int(state, "ffn hidden", &model.ffn_hidden_size, 128, "--ffn-hidden-size",
                       "MLP weights: 3 x hidden x ffn per layer with SwiGLU.");
  changed |= slider_int(state, "attention heads", &model.num_attention_heads, 1, 256,
                        "--num-attention-heads", "Must divide by TP; sets the head size.");
  changed |= slider_int(state, "query groups", &model.num_query_groups, 1, 256,
                        "--num-query-groups (with --group-query-attention)",
                        "Fewer groups shrink the K and V projections.");
  changed |= input_int64(state, "vocabulary", &model.vocab_size, 1024, "--vocab-size",
                         "Embedding and output layer (untied) on the first and last PP rank.");

  section_heading("PARALLELISM");
  changed |= slider_int(state, "TP", &parallel.tensor_parallel, 1, 64,
                        "--tensor-model-parallel-size", "Splits each layer's weights TP ways.");
  changed |= slider_int(state, "PP", &parallel.pipeline_parallel, 1, 64,
                        "--pipeline-model-parallel-size", "Splits the layers over PP ranks.");
  changed |= input_int64(state, "GPUs", &parallel.world_size, 1, "world size (WORLD_SIZE)",
                         "Data parallel = GPUs / (TP x PP); shards the distributed optimizer.");
  if (state.last_estimate && !state.error) {
    ImGui::PushStyleColor(ImGuiCol_Text, kMutedTextColor);
    ImGui::Text("-> data parallel %lld",
                static_cast<long long>(state.last_estimate->normalized.data_parallel));
    ImGui::PopStyleColor();
  }

  section_heading("TRAINING");
  changed |=
      checkbox(state, "distributed optimizer", &state.config.optimizer.use_distributed_optimizer,
               "--use-distributed-optimizer",
               "Shards fp32 master weights and Adam moments over data parallel ranks.");
  bool bf16 = state.config.training.params_dtype == DType::bf16;
  if (checkbox(state, "bf16", &bf16, "--bf16",
               "bf16 weights (2 bytes) with fp32 main grads and master weights; off = fp32.")) {
    state.config.training.params_dtype = bf16 ? DType::bf16 : DType::fp32;
    changed = true;
  }

  ImGui::PopItemWidth();
  return changed;
}

}  // namespace megamem::web
