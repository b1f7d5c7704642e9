// The what-if table (ui.md "WHAT-IF"): the limiting rank's peak under each recompute and
// offload choice, with the saving against the current setting. Clicking a row applies it:
// the row's whole configuration comes from what_if_options() (what_if.hpp).
#include <cstdio>
#include <string>

#include "format.hpp"
#include "imgui.h"
#include "messages.hpp"
#include "results_panel.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {

namespace {

void setup_columns() {
  const float number_px = ImGui::CalcTextSize("-000.00 GiB").x + ImGui::GetFontSize() * 0.5f;
  ImGui::TableSetupColumn(tr("choice"), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn(tr("peak"), ImGuiTableColumnFlags_WidthFixed, number_px);
  ImGui::TableSetupColumn(tr("saving"), ImGuiTableColumnFlags_WidthFixed, number_px);
  ImGui::TableSetupColumn(tr("fits"), ImGuiTableColumnFlags_WidthFixed,
                          ImGui::CalcTextSize(tr("does not fit")).x + ImGui::GetFontSize() * 0.5f);
  ImGui::TableHeadersRow();
}

// The row's label, clickable when it is a valid change; true when clicked (and applied).
bool choice_cell(AppState& state, const WhatIfOption& row, std::size_t index) {
  bool applied = false;
  const std::string label =
      tr_text(row.label) + (row.current ? tr("  (current)") : "") + "###" + row.label;
  const bool clickable = row.valid && !row.current;
  if (!row.valid) ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  if (ImGui::Selectable(label.c_str(), row.current, ImGuiSelectableFlags_SpanAllColumns) &&
      clickable) {
    state.shared.config = row.config;
    state.edited_key.clear();
    applied = true;
  }
  if (!row.valid) ImGui::PopStyleColor();
  char rect_label[32];
  std::snprintf(rect_label, sizeof rect_label, "what-if %zu", index);
  describe_item(state, rect_label, "row",
                row.megatron_flags.empty() ? "(the current flags)" : row.megatron_flags.c_str(),
                row.valid
                    ? (row.current ? "The configuration as given." : "Click to apply this setting.")
                    : tr_text(row.error).c_str());
  return applied;
}

// Peak, saving against the current setting, and whether it fits.
void number_cells(const WhatIfOption& row, double capacity_bytes) {
  ImGui::TableNextColumn();
  if (!row.valid) {
    ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
    ImGui::TextUnformatted(tr("not allowed"));
    ImGui::PopStyleColor();
    ImGui::TableNextColumn();
    ImGui::TableNextColumn();
    return;
  }
  ImGui::Text("%.2f GiB", to_gib(row.peak_total_bytes));
  ImGui::TableNextColumn();
  if (row.current) {
    ImGui::TextUnformatted("-");
  } else {
    const double saving_gib = to_gib(row.saving_bytes);
    ImGui::PushStyleColor(ImGuiCol_Text, saving_gib > 0.005    ? kFitsColor
                                         : saving_gib < -0.005 ? kOverColor
                                                               : muted_text_color());
    ImGui::Text("%+.2f GiB", -saving_gib);
    ImGui::PopStyleColor();
  }
  ImGui::TableNextColumn();
  const bool fits = static_cast<double>(row.peak_total_bytes) <= capacity_bytes;
  ImGui::PushStyleColor(ImGuiCol_Text, fits ? kFitsColor : kOverColor);
  ImGui::TextUnformatted(tr(fits ? "fits" : "does not fit"));
  ImGui::PopStyleColor();
}

}  // namespace

bool draw_what_if_table(AppState& state, const Estimate& estimate) {
  results_heading("WHAT-IF",
                  "peak of the limiting rank under each choice; click a row to apply it");
  if (state.what_if_pending || estimate.what_if.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
    ImGui::TextUnformatted(tr("pricing the alternatives..."));
    ImGui::PopStyleColor();
    return false;
  }
  const double capacity_bytes = estimate.normalized.config.device.capacity_gib * kBytesPerGiB;
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp;
  bool applied = false;
  if (!ImGui::BeginTable("what-if", 4, kFlags)) return false;
  setup_columns();
  for (std::size_t i = 0; i < state.what_if.size() && !applied; ++i) {
    const WhatIfOption& row = state.what_if[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(i));
    applied = choice_cell(state, row, i);
    number_cells(row, capacity_bytes);
    ImGui::PopID();
  }
  ImGui::EndTable();
  return applied;
}

}  // namespace megamem::web
