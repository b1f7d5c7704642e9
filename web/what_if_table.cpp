// The what-if table (ui.md "WHAT-IF"): the limiting rank's peak under each recompute and
// offload choice, with the saving against the current setting. Clicking a row applies it:
// the row's whole configuration comes from what_if_options() (what_if.hpp). Each row shows
// the step-time change beside the memory saved; the rows rank by GiB saved per % of step time
// on request.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "clip_audit.hpp"
#include "format.hpp"
#include "imgui.h"
#include "messages.hpp"
#include "results_panel.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {

namespace {

// A narrow table (a phone) shows its sizes without " GiB", the page's one unit: with it, the
// choice column kept under ten letters and split its words ("selectiv" / "e: core_att" / "n").
void setup_columns(bool wide) {
  const float number_px =
      ImGui::CalcTextSize(wide ? "-000.00 GiB" : "-000.00").x + ImGui::GetFontSize() * 0.5f;
  ImGui::TableSetupColumn(tr("choice"), ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn(tr("peak"), ImGuiTableColumnFlags_WidthFixed, number_px);
  ImGui::TableSetupColumn(tr("saving"), ImGuiTableColumnFlags_WidthFixed, number_px);
  ImGui::TableSetupColumn(tr("step time"), ImGuiTableColumnFlags_WidthFixed,
                          ImGui::CalcTextSize("+000.0 %").x + ImGui::GetFontSize() * 0.5f);
  if (wide) {
    ImGui::TableSetupColumn(tr("GiB per %"), ImGuiTableColumnFlags_WidthFixed,
                            ImGui::CalcTextSize(tr("GiB per %")).x + ImGui::GetFontSize() * 0.5f);
  }
  ImGui::TableSetupColumn(tr("fits"), ImGuiTableColumnFlags_WidthFixed,
                          ImGui::CalcTextSize(tr("does not fit")).x + ImGui::GetFontSize() * 0.5f);
  audited_headers_row("what-if.header");
}

// GiB saved per % of step time added: the best deal to recompute or offload ranks first. A
// row that saves memory at no time cost ranks above all; one that saves nothing, last.
double gib_per_percent(const WhatIfOption& row) {
  if (!row.valid || row.current || row.saving_bytes <= 0) return -1.0;
  const double percent = std::max(100.0 * row.step_time_change, 0.01);
  return to_gib(static_cast<std::uint64_t>(row.saving_bytes)) / percent;
}

// The rows in table order, or by GiB saved per % of step time (current first).
std::vector<std::size_t> row_order(const AppState& state) {
  std::vector<std::size_t> order(state.what_if.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (state.what_if_by_deal) {
    std::stable_sort(order.begin() + (order.empty() ? 0 : 1), order.end(),
                     [&](std::size_t a, std::size_t b) {
                       return gib_per_percent(state.what_if[a]) > gib_per_percent(state.what_if[b]);
                     });
  }
  return order;
}

// The row's label, clickable when it is a valid change; true when clicked (and applied). The
// label wraps in its column (on a phone "selective ..." rows differ only past the first
// word), and the row is as tall as it.
bool choice_cell(AppState& state, const WhatIfOption& row, std::size_t index) {
  bool applied = false;
  const std::string shown = tr_text(row.label) + (row.current ? tr("  (current)") : "");
  const bool clickable = row.valid && !row.current;
  const float room_px = ImGui::GetContentRegionAvail().x;
  const ImVec2 text_size = ImGui::CalcTextSize(shown.c_str(), nullptr, false, room_px);
  const ImVec2 at = ImGui::GetCursorScreenPos();
  if (ImGui::Selectable(("##" + row.label).c_str(), row.current,
                        ImGuiSelectableFlags_SpanAllColumns, ImVec2(0.0f, text_size.y)) &&
      clickable) {
    state.shared.config = row.config;
    state.edited_key.clear();
    applied = true;
  }
  if (!row.valid) ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), ImGui::GetFontSize(), at,
                                      ImGui::GetColorU32(ImGuiCol_Text), shown.c_str(), nullptr,
                                      room_px);
  if (!row.valid) ImGui::PopStyleColor();
  // A word wider than the column is cut off, or split, all the same.
  if (text_size.x > room_px + 0.5f || widest_word_px(shown) > room_px + 0.5f) {
    note_clipped("what-if.choice", shown, text_size.x, room_px, false);
  }
  char rect_label[32];
  std::snprintf(rect_label, sizeof rect_label, "what-if %zu", index);
  const std::string effect =
      !row.valid    ? row.error
      : row.current ? std::string("The configuration as given.")
                    : row.note + (row.note.empty() ? "" : " ") + "Click to apply this setting.";
  describe_item(state, rect_label, "row",
                row.megatron_flags.empty() ? "(the current flags)" : row.megatron_flags.c_str(),
                effect.c_str());
  return applied;
}

// The step-time change and, on a wide table, GiB saved per % of it.
void time_cells(const WhatIfOption& row, bool wide) {
  ImGui::TableNextColumn();
  if (row.current || row.step_time_s <= 0.0) {
    ImGui::TextUnformatted(row.current && row.step_time_s > 0.0 ? "-" : "?");
  } else {
    const double percent = 100.0 * row.step_time_change;
    ImGui::PushStyleColor(ImGuiCol_Text, percent > 0.05    ? kOverColor
                                         : percent < -0.05 ? kFitsColor
                                                           : muted_text_color());
    ImGui::Text("%+.1f %%", percent);
    ImGui::PopStyleColor();
  }
  if (!wide) return;
  ImGui::TableNextColumn();
  const double deal = gib_per_percent(row);
  if (deal < 0.0) {
    ImGui::TextUnformatted("-");
  } else if (row.step_time_change <= 0.0001) {
    ImGui::TextUnformatted(tr("free"));
  } else {
    ImGui::Text("%.2f", deal);
  }
}

// Peak, saving against the current setting, step time, and whether it fits.
void number_cells(const WhatIfOption& row, bool wide) {
  ImGui::TableNextColumn();
  if (!row.valid) {
    ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
    ImGui::TextUnformatted(tr("not allowed"));
    ImGui::PopStyleColor();
    for (int i = wide ? 4 : 3; i > 0; --i) ImGui::TableNextColumn();
    return;
  }
  const char* unit = wide ? " GiB" : "";
  ImGui::Text("%.2f%s", to_gib(row.peak_total_bytes), unit);
  ImGui::TableNextColumn();
  if (row.current) {
    ImGui::TextUnformatted("-");
  } else {
    const double saving_gib = to_gib(row.saving_bytes);
    ImGui::PushStyleColor(ImGuiCol_Text, saving_gib > 0.005    ? kFitsColor
                                         : saving_gib < -0.005 ? kOverColor
                                                               : muted_text_color());
    // Under half a hundredth of a GiB reads as no change, not "-0.00".
    if (std::abs(saving_gib) < 0.005) {
      ImGui::Text("0.00%s", unit);
    } else {
      ImGui::Text("%+.2f%s", -saving_gib, unit);
    }
    ImGui::PopStyleColor();
  }
  time_cells(row, wide);
  ImGui::TableNextColumn();
  // The row's own verdict from the core (verdict.hpp).
  ImGui::PushStyleColor(ImGuiCol_Text, fit_status_color(row.status));
  ImGui::TextUnformatted(tr(fit_status_word(row.status)));
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
  ImGui::Checkbox(tr("rank by GiB saved per % of step time"), &state.what_if_by_deal);
  describe_item(state, "what-if by deal", "checkbox", "step-time model (docs/planner.md)",
                "Sorts the choices by memory saved per percent of step time they add: the best "
                "deal to recompute or offload first.");
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp;
  const bool wide = ImGui::GetContentRegionAvail().x > ImGui::GetFontSize() * 40.0f;
  bool applied = false;
  if (!ImGui::BeginTable("what-if", wide ? 6 : 5, kFlags)) return false;
  setup_columns(wide);
  for (const std::size_t i : row_order(state)) {
    if (applied) break;
    const WhatIfOption& row = state.what_if[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(i));
    applied = choice_cell(state, row, i);
    number_cells(row, wide);
    ImGui::PopID();
  }
  ImGui::EndTable();
  return applied;
}

}  // namespace megamem::web
