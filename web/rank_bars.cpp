// Per pipeline rank, one bar stacked by category in ui.md's colours, on a common scale with
// the card's capacity marked; hovering a segment shows its exact bytes and the rule behind
// it; clicking a rank selects it for the timeline and the module tree.
#include <algorithm>
#include <cstdio>

#include "format.hpp"
#include "imgui.h"
#include "messages.hpp"
#include "results_panel.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

void legend() {
  for (const Category& category : kCategories) {
    legend_entry(ImGui::GetColorU32(category.color), false, category.name, tr(category.rule));
  }
  ImGui::NewLine();
}

// The device-level terms of a rank: the allocator's reserve, then each overhead outside the
// allocator with the source of its size (runtime_overheads.cpp).
void device_memory_lines(const RankMemory& rank) {
  ImGui::Text(tr("reserved by the allocator %s (allocator peak %s)"),
              gib_text(rank.peak_reserved_bytes).c_str(),
              gib_text(rank.peak_allocated_bytes).c_str());
  for (const DeviceOverhead& overhead : rank.device_overheads) {
    ImGui::Text("+ %.*s %s", static_cast<int>(overhead.name.size()), overhead.name.data(),
                gib_text(overhead.bytes).c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
    ImGui::TextUnformatted(overhead.source.data(), overhead.source.data() + overhead.source.size());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
  }
}

// Where the bars go: one row per rank, a label column, the bars on a common scale, a value
// column; the same for every row.
struct BarGeometry {
  ImDrawList* draw;
  double capacity_bytes;
  double scale_bytes;  // the width of a full bar: the capacity or the largest peak
  float label_px;
  float bar_height_px;
  float origin_x;
  float bar_width_px;
};

// Bars scale to the card's capacity, or to the largest peak when one exceeds it.
double bar_scale_bytes(const Estimate& estimate, double capacity_bytes) {
  double scale_bytes = capacity_bytes;
  for (const RankMemory& rank : estimate.ranks) {
    scale_bytes = std::max(scale_bytes, static_cast<double>(rank.peak_total_bytes));
  }
  return scale_bytes;
}

void segment_tooltip(const RankMemory& rank, const Category& category, std::uint64_t bytes) {
  ImGui::BeginTooltip();
  ImGui::Text(tr("PP rank %d %s: %s"), rank.pp_rank, tr(category.name), gib_text(bytes).c_str());
  ImGui::Text(tr("%s bytes"), grouped(bytes).c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
  ImGui::TextUnformatted(tr(category.rule));
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  if (category.bytes == &RankMemory::runtime_overhead_bytes) device_memory_lines(rank);
  if (category.bytes == &RankMemory::optimizer_bytes && rank.lazy_optimizer_bytes > 0) {
    // Adam's moments come at the optimizer's first step (memory-model.md 5): a log's report
    // after iteration 1 shows the lower first-iteration peak.
    ImGui::Text(tr("%s of it is created at the optimizer's first step: the first iteration "
                   "peaks at %s allocated"),
                gib_text(rank.lazy_optimizer_bytes).c_str(),
                gib_text(rank.first_iteration_peak_allocated_bytes).c_str());
  }
  if (category.bytes == &RankMemory::optimizer_bytes && rank.resume_load_peak_bytes > 0) {
    // A resume's checkpoint load (memory-model.md 5).
    ImGui::Text(tr("A resume's checkpoint load (with its optimizer state) peaks at %s "
                   "allocated: the Adam state is held twice"),
                gib_text(rank.resume_load_peak_bytes).c_str());
  }
  ImGui::EndTooltip();
}

// The rank's bar, one segment per category; returns where the bar ends.
float draw_segments(const BarGeometry& g, const RankMemory& rank, ImVec2 row, bool row_hovered) {
  float x = g.origin_x + g.label_px;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (const Category& category : kCategories) {
    const std::uint64_t bytes = rank.*category.bytes;
    const float width_px =
        g.bar_width_px * static_cast<float>(static_cast<double>(bytes) / g.scale_bytes);
    const ImVec2 min(x, row.y);
    const ImVec2 max(x + width_px, row.y + g.bar_height_px);
    // GetColorU32 applies the style alpha, so a stale result dims like the text around it.
    g.draw->AddRectFilled(min, max, ImGui::GetColorU32(category.color));
    if (row_hovered && mouse.x >= min.x && mouse.x < max.x) segment_tooltip(rank, category, bytes);
    x += width_px;
  }
  return x;
}

// The peak, with the headroom or the overshoot.
void draw_peak(const BarGeometry& g, const RankMemory& rank, const RankVerdict& verdict, ImVec2 row,
               bool row_hovered, float bar_end_x) {
  const double peak_gib = to_gib(rank.peak_total_bytes);
  char value[48];
  std::snprintf(value, sizeof value, "%.2f GiB", peak_gib);
  // The core's verdict of the rank (verdict.hpp).
  const ImU32 color =
      verdict.status == FitStatus::fits ? strong_text_color() : fit_status_color(verdict.status);
  // Values in their own column right of the scale, so the capacity line never crosses one.
  const float value_x = g.origin_x + g.label_px + g.bar_width_px + ImGui::GetFontSize() * 0.5f;
  g.draw->AddText(ImVec2(value_x, row.y + (g.bar_height_px - ImGui::GetTextLineHeight()) * 0.5f),
                  ImGui::GetColorU32(color), value);
  if (row_hovered && ImGui::GetIO().MousePos.x >= bar_end_x) {
    ImGui::BeginTooltip();
    ImGui::Text(tr("PP rank %d peak: %s (%s bytes)"), rank.pp_rank,
                gib_text(rank.peak_total_bytes).c_str(), grouped(rank.peak_total_bytes).c_str());
    ImGui::Text(tr("static %s"), gib_text(rank.static_bytes).c_str());
    device_memory_lines(rank);
    ImGui::EndTooltip();
  }
}

void draw_rank_row(AppState& state, const Estimate& estimate, const BarGeometry& g,
                   const RankMemory& rank, int shown) {
  ImGui::PushID(rank.pp_rank);
  const ImVec2 row = ImGui::GetCursorScreenPos();
  // The whole row selects the rank.
  if (ImGui::Selectable("##rank", rank.pp_rank == shown && estimate.ranks.size() > 1,
                        ImGuiSelectableFlags_AllowItemOverlap, ImVec2(0.0f, g.bar_height_px))) {
    state.selected_rank = rank.pp_rank;
  }
  const bool row_hovered = ImGui::IsItemHovered();
  g.draw->AddText(
      ImVec2(row.x, row.y + (g.bar_height_px - ImGui::GetTextLineHeight()) * 0.5f),
      ImGui::GetColorU32(rank.pp_rank == estimate.limiting_pp_rank ? strong_text_color()
                                                                   : muted_text_color()),
      ("PP rank " + std::to_string(rank.pp_rank)).c_str());
  const float bar_end_x = draw_segments(g, rank, row, row_hovered);
  draw_peak(g, rank, estimate.verdict.ranks[static_cast<std::size_t>(rank.pp_rank)], row,
            row_hovered, bar_end_x);
  ImGui::PopID();
}

// The capacity line across all rows.
void draw_capacity_line(const BarGeometry& g, float first_row_y) {
  const float capacity_x = g.origin_x + g.label_px +
                           g.bar_width_px * static_cast<float>(g.capacity_bytes / g.scale_bytes);
  const float last_row_y = ImGui::GetCursorScreenPos().y - ImGui::GetStyle().ItemSpacing.y;
  for (float y = first_row_y - 2.0f; y < last_row_y + 2.0f; y += 6.0f) {
    g.draw->AddLine(ImVec2(capacity_x, y),
                    ImVec2(capacity_x, std::min(y + 3.0f, last_row_y + 2.0f)),
                    ImGui::GetColorU32(strong_text_color()), 1.5f);
  }
}

// While an anchor applies: each rank's anchored peak beside its raw one, in the colour of the
// anchored verdict of the rank (the top bar's verdict is of these).
// A refused anchor: the raw bars stand, with the reason.
void anchored_lines(const AppState& state) {
  if (state.anchor_refused) {
    wrapped_text(tight_color(), printf_text(tr("anchor not applied: %s"),
                                            tr_text(state.anchor_refused->message).c_str()));
  }
  if (!state.anchored || !state.anchored_verdict) return;
  const AnchoredEstimate& anchored = *state.anchored;
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::Text(tr("anchored on %s: measured max allocated %.2f GiB on PP rank %d"),
              tr_text(anchored.anchor.source).c_str(), to_gib(anchored.anchor.peak_allocated_bytes),
              anchored.anchor.pp_rank);
  ImGui::PopStyleColor();
  for (std::size_t i = 0; i < anchored.ranks.size(); ++i) {
    const AnchoredRank& rank = anchored.ranks[i];
    const FitStatus status = state.anchored_verdict->ranks[i].status;
    ImGui::PushStyleColor(
        ImGuiCol_Text, status == FitStatus::fits ? strong_text_color() : fit_status_color(status));
    ImGui::Text(tr("PP rank %d: anchored %.2f GiB (raw %.2f GiB)"), rank.pp_rank,
                to_gib(rank.anchored_peak_total_bytes), to_gib(rank.raw_peak_total_bytes));
    ImGui::PopStyleColor();
  }
  for (const std::string& warning : anchored.warnings) {
    wrapped_text(tight_color(), tr("warning: ") + tr_text(warning));
  }
}

}  // namespace

void draw_rank_bars(AppState& state, const Estimate& estimate) {
  const double capacity_bytes = estimate.normalized.config.device.capacity_gib * kBytesPerGiB;
  char note[160];
  const ErrorBand& band = estimate.verdict.band;
  std::snprintf(note, sizeof note,
                tr("limiting: PP rank %d   capacity %.2f GiB   band %+.1f .. %+.1f %%"),
                estimate.limiting_pp_rank, estimate.normalized.config.device.capacity_gib,
                band.low_percent, band.high_percent);
  results_heading("PER GPU, BY PIPELINE RANK", note);
  legend();

  const float label_px = ImGui::CalcTextSize(tr("PP rank 000 ")).x;
  const float value_px = ImGui::CalcTextSize(tr("000.00 GiB  over")).x;
  const BarGeometry geometry{
      .draw = ImGui::GetWindowDrawList(),
      .capacity_bytes = capacity_bytes,
      .scale_bytes = bar_scale_bytes(estimate, capacity_bytes),
      .label_px = label_px,
      .bar_height_px = ImGui::GetTextLineHeight() * 1.25f,
      .origin_x = ImGui::GetCursorScreenPos().x,
      .bar_width_px = std::max(ImGui::GetContentRegionAvail().x - label_px - value_px,
                               ImGui::GetFontSize() * 6),
  };
  const int shown = shown_rank(state);
  const float first_row_y = ImGui::GetCursorScreenPos().y;
  for (const RankMemory& rank : estimate.ranks)
    draw_rank_row(state, estimate, geometry, rank, shown);
  draw_capacity_line(geometry, first_row_y);
  anchored_lines(state);
}

}  // namespace megamem::web
