// The web app's one state, its defaults, the frame layout (inputs left, results right) and the
// JSON the page exposes to scripts and tests.
#include "app.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "app_state.hpp"
#include "imgui.h"
#include "inputs_panel.hpp"
#include "megamem/estimate.hpp"
#include "megamem/json_output.hpp"
#include "megamem/megatron_args.hpp"
#include "results_panel.hpp"
#include "theme.hpp"

namespace megamem::web {
namespace {

AppState state;

// A Llama-3-8B-shaped dense GPT on 16 GPUs (TP 2, PP 2, DP 4): a familiar starting point.
Config default_config() {
  Config config;
  config.model.name = "dense GPT";
  config.model.num_layers = 32;
  config.model.hidden_size = 4096;
  config.model.ffn_hidden_size = 14336;
  config.model.num_attention_heads = 32;
  config.model.num_query_groups = 8;
  config.model.vocab_size = 128256;
  config.model.activation = Activation::swiglu;
  config.model.normalization = Normalization::rmsnorm;
  config.model.position_embedding = PositionEmbedding::rope;
  config.model.add_bias_linear = false;
  config.model.untie_embeddings_and_output_weights = true;
  config.parallel.world_size = 16;
  config.parallel.tensor_parallel = 2;
  config.parallel.pipeline_parallel = 2;
  config.training.seq_length = 4096;
  config.training.micro_batch_size = 1;
  config.training.params_dtype = DType::bf16;
  config.optimizer.use_distributed_optimizer = true;
  return config;
}

// Re-estimates from the current inputs; an error keeps the previous estimate on screen.
void recompute() {
  ++state.estimates_computed;
  Expected<Estimate> result = estimate(state.config);
  if (result) {
    state.last_estimate = std::move(result).value();
    state.error.reset();
  } else {
    state.error = result.error();
  }
}

}  // namespace

void app_init(float content_scale) {
  apply_theme(content_scale);
  state.config = default_config();
  recompute();
}

void app_frame(float display_width_px, float display_height_px) {
  const float inputs_width_px = std::min(display_width_px * 0.4f, ImGui::GetFontSize() * 30.0f);
  constexpr ImGuiWindowFlags kPanelFlags =
      ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
      ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;

  ImGui::SetNextWindowPos(ImVec2(0.0f, 0.0f));
  ImGui::SetNextWindowSize(ImVec2(inputs_width_px, display_height_px));
  ImGui::Begin("megamem - inputs", nullptr, kPanelFlags);
  if (draw_inputs_panel(state)) recompute();
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(inputs_width_px, 0.0f));
  ImGui::SetNextWindowSize(ImVec2(display_width_px - inputs_width_px, display_height_px));
  ImGui::Begin("megamem - static memory per GPU (weights, gradients, optimizer)", nullptr,
               kPanelFlags);
  draw_results_panel(state);
  ImGui::End();
}

std::string app_state_json() {
  nlohmann::json state_json;
  state_json["config"] = nlohmann::json::parse(config_to_json(state.config));
  state_json["megatron_args"] = to_megatron_args(state.config);
  state_json["world_size"] = state.config.parallel.world_size;
  state_json["result"] = state.last_estimate
                             ? nlohmann::json::parse(estimate_to_json(*state.last_estimate))
                             : nlohmann::json();
  state_json["error"] =
      state.error ? nlohmann::json{{"field", state.error->field}, {"message", state.error->message}}
                  : nlohmann::json();
  state_json["estimates_computed"] = state.estimates_computed;
  return state_json.dump();
}

std::string app_input_rects_json() {
  nlohmann::json rects = nlohmann::json::object();
  for (const auto& [label, rect] : state.input_rects) {
    rects[label] = {{"x", rect.x}, {"y", rect.y}, {"width", rect.width}, {"height", rect.height}};
  }
  return rects.dump();
}

}  // namespace megamem::web
