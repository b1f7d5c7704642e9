// Per pipeline rank: a bar stacked by category (weights, gradients, optimizer; colours from the
// shared vocabulary) and a table of the same bytes in GiB. Every number is the core's.
#include "results_panel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "imgui.h"
#include "theme.hpp"

namespace megamem::web {
namespace {

constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

double to_gib(std::uint64_t bytes) { return static_cast<double>(bytes) / kBytesPerGib; }

struct Category {
  const char* name;
  ImU32 color;
  std::uint64_t RankMemory::*bytes;
};
constexpr Category kCategories[] = {
    {"weights", kWeightsColor, &RankMemory::weight_bytes},
    {"gradients", kGradientsColor, &RankMemory::gradient_bytes},
    {"optimizer", kOptimizerColor, &RankMemory::optimizer_bytes},
};

void draw_legend() {
  for (const Category& category : kCategories) {
    const float square_px = ImGui::GetTextLineHeight();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(at, ImVec2(at.x + square_px, at.y + square_px),
                                              category.color);
    ImGui::Dummy(ImVec2(square_px, square_px));
    ImGui::SameLine();
    ImGui::TextUnformatted(category.name);
    ImGui::SameLine(0.0f, ImGui::GetFontSize() * 1.5f);
  }
  ImGui::NewLine();
}

// One bar per rank, all on the scale of the largest rank so bars compare.
void draw_rank_bars(const Estimate& estimate) {
  std::uint64_t largest_bytes = 1;
  for (const RankMemory& rank : estimate.ranks) {
    largest_bytes =
        std::max(largest_bytes, rank.weight_bytes + rank.gradient_bytes + rank.optimizer_bytes);
  }
  const float label_width_px = ImGui::CalcTextSize("PP rank 000").x;
  const float bar_height_px = ImGui::GetTextLineHeight() * 1.4f;
  for (const RankMemory& rank : estimate.ranks) {
    ImGui::AlignTextToFramePadding();
    ImGui::Text("PP rank %d", rank.pp_rank);
    ImGui::SameLine(label_width_px + ImGui::GetStyle().ItemSpacing.x * 2.0f);
    const float bar_width_px = ImGui::GetContentRegionAvail().x;
    ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* draw_list = ImGui::GetWindowDrawList();
    for (const Category& category : kCategories) {
      const std::uint64_t bytes = rank.*category.bytes;
      const float width_px = bar_width_px * static_cast<float>(static_cast<double>(bytes) /
                                                               static_cast<double>(largest_bytes));
      const ImVec2 end(at.x + width_px, at.y + bar_height_px);
      // GetColorU32 applies the style alpha, so a stale result dims like the text around it.
      draw_list->AddRectFilled(at, end, ImGui::GetColorU32(category.color));
      // Label the segment with its size when the text fits inside it.
      char label[32];
      std::snprintf(label, sizeof label, "%.2f GiB", to_gib(bytes));
      const ImVec2 label_size = ImGui::CalcTextSize(label);
      if (label_size.x + 8.0f < width_px) {
        draw_list->AddText(ImVec2(at.x + 4.0f, at.y + (bar_height_px - label_size.y) * 0.5f),
                           ImGui::GetColorU32(IM_COL32_WHITE), label);
      }
      if (ImGui::IsMouseHoveringRect(at, end)) {
        ImGui::SetTooltip("PP rank %d %s: %.2f GiB (%llu bytes)", rank.pp_rank, category.name,
                          to_gib(bytes), static_cast<unsigned long long>(bytes));
      }
      at.x = end.x;
    }
    ImGui::Dummy(ImVec2(bar_width_px, bar_height_px));
  }
}

void draw_rank_table(const Estimate& estimate) {
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchSame;
  if (!ImGui::BeginTable("ranks", 5, kFlags)) return;
  ImGui::TableSetupColumn("PP rank");
  for (const Category& category : kCategories) ImGui::TableSetupColumn(category.name);
  ImGui::TableSetupColumn("static total");
  ImGui::TableHeadersRow();
  for (const RankMemory& rank : estimate.ranks) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", rank.pp_rank);
    for (const Category& category : kCategories) {
      ImGui::TableNextColumn();
      ImGui::PushStyleColor(ImGuiCol_Text, category.color);
      ImGui::Text("%.2f GiB", to_gib(rank.*category.bytes));
      ImGui::PopStyleColor();
    }
    ImGui::TableNextColumn();
    ImGui::Text("%.2f GiB", to_gib(rank.static_bytes));
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip(
          "torch.cuda.memory_allocated() after a step: weights, gradients,\n"
          "optimizer state and persistent buffers (no activations yet)");
    }
  }
  ImGui::EndTable();
}

}  // namespace

void draw_results_panel(const AppState& state) {
  if (state.error) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextWrapped("%s: %s", state.error->field.c_str(), state.error->message.c_str());
    ImGui::PopStyleColor();
    ImGui::Spacing();
  }
  if (!state.last_estimate) return;
  const Estimate& estimate = *state.last_estimate;

  // An invalid input never blanks the result: the last valid one stays, dimmed.
  ImGui::PushStyleVar(ImGuiStyleVar_Alpha, state.error ? 0.45f : 1.0f);
  ImGui::PushStyleColor(ImGuiCol_Text, kMutedTextColor);
  ImGui::Text("PER GPU, BY PIPELINE RANK    %.2f B parameters  -  DP %lld  -  limiting: PP rank %d",
              static_cast<double>(estimate.totals.params) / 1e9,
              static_cast<long long>(estimate.normalized.data_parallel), estimate.limiting_pp_rank);
  ImGui::PopStyleColor();
  ImGui::Separator();
  draw_legend();
  draw_rank_bars(estimate);
  ImGui::Spacing();
  draw_rank_table(estimate);
  for (const std::string& warning : estimate.warnings) {
    ImGui::TextWrapped("warning: %s", warning.c_str());
  }
  ImGui::PopStyleVar();
}

}  // namespace megamem::web
