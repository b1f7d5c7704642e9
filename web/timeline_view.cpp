// The memory timeline of one training step for the shown rank (RankMemory::timeline): every
// forward, backward and the optimizer step in schedule order, each column as high as the
// memory inside it, coloured by what that memory is; the card's capacity as a dashed line and
// the peak marked. The columns are drawn by our GLSL program (timeline_renderer.cpp); axes,
// labels and the hover read-out by ImGui.
#include <algorithm>
#include <cstdio>
#include <string>

#include "format.hpp"
#include "imgui.h"
#include "messages.hpp"
#include "results_panel.hpp"
#include "tab_order.hpp"
#include "theme.hpp"
#include "timeline_renderer.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

struct TimelineCache {
  std::uint64_t result_version = ~std::uint64_t{0};
  int rank = -1;
  double scale_bytes = 1.0;  // bytes at the top of the chart
  std::size_t peak_index = 0;
  TimelineChart chart;
};
TimelineCache cache;

void color_of(ImU32 color, float out[4]) {
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4(color);
  out[0] = c.x;
  out[1] = c.y;
  out[2] = c.z;
  out[3] = c.w;
}

// "optimizer step": the JSON's name of the event, spaced for reading.
std::string kind_text(TimelineEvent::Kind kind) {
  std::string text(timeline_event_name(kind));
  std::replace(text.begin(), text.end(), '_', ' ');
  return tr_text(text);
}

// What is allocated as operation `i` starts: what the one before left, and before the first
// the static memory (zero_grad has freed the last step's fp32 grad copy: timeline.cpp).
std::uint64_t held_before(const RankMemory& rank, std::size_t i) {
  return i > 0 ? rank.timeline[i - 1].allocated_after_bytes : rank.static_bytes;
}

// Rebuilds the chart's columns when the estimate or the rank changed.
void update_cache(const AppState& state, const Estimate& estimate, int rank_index) {
  if (cache.result_version == state.result_version && cache.rank == rank_index) return;
  cache.result_version = state.result_version;
  cache.rank = rank_index;
  const RankMemory& rank = estimate.ranks[static_cast<std::size_t>(rank_index)];
  const double capacity = estimate.normalized.config.device.capacity_gib * kBytesPerGiB;
  double top = std::max(capacity, static_cast<double>(rank.peak_total_bytes));
  top *= 1.08;  // room for the peak label
  cache.scale_bytes = top;
  const auto level = [&](double bytes) { return static_cast<float>(bytes / top); };
  const double runtime = static_cast<double>(rank.runtime_overhead_bytes);
  double edge = runtime;
  cache.chart.bands[0] = level(edge);
  edge += static_cast<double>(rank.weight_bytes);
  cache.chart.bands[1] = level(edge);
  edge += static_cast<double>(rank.gradient_bytes);
  cache.chart.bands[2] = level(edge);
  edge += static_cast<double>(rank.optimizer_bytes);
  cache.chart.bands[3] = level(edge);
  edge += static_cast<double>(rank.persistent_buffer_bytes);
  cache.chart.bands[4] = level(edge);
  color_of(kRuntimeColor, cache.chart.colors[0]);
  color_of(kWeightsColor, cache.chart.colors[1]);
  color_of(kGradientsColor, cache.chart.colors[2]);
  color_of(kOptimizerColor, cache.chart.colors[3]);
  color_of(kBuffersColor, cache.chart.colors[4]);
  color_of(kActivationsColor, cache.chart.colors[5]);
  color_of(kTransientsColor, cache.chart.colors[6]);
  cache.chart.columns.clear();
  cache.peak_index = 0;
  std::uint64_t peak = 0;
  for (std::size_t i = 0; i < rank.timeline.size(); ++i) {
    const TimelineEvent& event = rank.timeline[i];
    cache.chart.columns.push_back(
        {level(runtime + static_cast<double>(held_before(rank, i))),
         level(runtime + static_cast<double>(event.allocated_after_bytes)),
         level(runtime + static_cast<double>(event.peak_during_bytes)),
         static_cast<float>(static_cast<int>(event.kind))});
    if (event.peak_during_bytes > peak) {
      peak = event.peak_during_bytes;
      cache.peak_index = i;
    }
  }
  ++cache.chart.version;
}

// The chart's plot area (screen pixels) and its vertical scale.
struct Plot {
  ImVec2 origin, min, max;  // origin: the gutter's top left; min/max: the plot area
  double scale_bytes = 1.0;
  float y_of(double bytes) const {
    return max.y - static_cast<float>(bytes / scale_bytes) * (max.y - min.y);
  }
};

// Gridlines every "nice" number of GiB, labelled in the gutter.
void draw_gridlines(ImDrawList* draw, const Plot& plot, ImU32 axis) {
  const double top_gib = to_gib(plot.scale_bytes);
  double step_gib = 1.0;
  for (const double candidate : {1.0, 2.0, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0, 200.0, 500.0}) {
    step_gib = candidate;
    if (top_gib / candidate <= 6.0) break;
  }
  for (double g = 0.0; g <= top_gib; g += step_gib) {
    const float y = plot.y_of(g * kBytesPerGiB);
    draw->AddLine(ImVec2(plot.min.x, y), ImVec2(plot.max.x, y), axis & 0x30FFFFFF);
    char label[24];
    std::snprintf(label, sizeof label, "%.0f GiB", g);
    draw->AddText(ImVec2(plot.origin.x, y - ImGui::GetTextLineHeight() * 0.5f), axis, label);
  }
}

// The card's capacity, dashed.
void draw_capacity(ImDrawList* draw, const Plot& plot, double capacity_bytes) {
  const float capacity_y = plot.y_of(capacity_bytes);
  for (float x = plot.min.x; x < plot.max.x; x += 8.0f) {
    draw->AddLine(ImVec2(x, capacity_y), ImVec2(std::min(x + 4.0f, plot.max.x), capacity_y),
                  ImGui::GetColorU32(strong_text_color()), 1.5f);
  }
  draw->AddText(ImVec2(plot.min.x + 4.0f, capacity_y - ImGui::GetTextLineHeight()),
                ImGui::GetColorU32(strong_text_color()), tr("capacity"));
}

// The peak: a triangle above its column and its value.
void draw_peak(ImDrawList* draw, const Plot& plot, const RankMemory& rank, float column_px) {
  const float em = ImGui::GetFontSize();
  const float peak_x = plot.min.x + (static_cast<float>(cache.peak_index) + 0.5f) * column_px;
  const float peak_y = plot.y_of(static_cast<double>(rank.peak_total_bytes));
  const float s = em * 0.35f;
  draw->AddTriangleFilled(
      ImVec2(peak_x, peak_y - 2.0f), ImVec2(peak_x - s, peak_y - 2.0f - s * 1.6f),
      ImVec2(peak_x + s, peak_y - 2.0f - s * 1.6f), ImGui::GetColorU32(strong_text_color()));
  char peak_label[64];
  std::snprintf(peak_label, sizeof peak_label, tr("peak %.2f GiB"), to_gib(rank.peak_total_bytes));
  const float label_w = ImGui::CalcTextSize(peak_label).x;
  const float label_x = std::clamp(peak_x - label_w * 0.5f, plot.min.x, plot.max.x - label_w);
  draw->AddText(ImVec2(label_x, peak_y - 4.0f - s * 1.6f - ImGui::GetTextLineHeight()),
                ImGui::GetColorU32(strong_text_color()), peak_label);
}

// One line of a tooltip: what a block is, its size in GiB and bytes.
void block_line(const char* what, std::uint64_t bytes) {
  ImGui::Text(tr("%s: %s (%s bytes)"), tr(what), gib_text(bytes).c_str(), grouped(bytes).c_str());
}

// What each block of the operation's column is (timeline.cpp simulate_rank: a forward adds
// its micro-batch's saved activations; a backward runs its working set on top of them all
// and frees its own at its end; the table's transients are the working set at the peak).
void event_tooltip(const std::vector<TimelineEvent>& timeline, std::size_t i,
                   const RankMemory& rank) {
  const TimelineEvent& event = timeline[i];
  const std::uint64_t static_bytes = rank.static_bytes;
  const std::uint64_t held = held_before(rank, i);
  const std::uint64_t after = event.allocated_after_bytes;
  const std::uint64_t saved = std::max(held, after);
  ImGui::BeginTooltip();
  if (event.kind == TimelineEvent::Kind::optimizer_step) {
    ImGui::TextUnformatted(tr("optimizer step: on static memory, no activations"));
  } else {
    ImGui::Text(tr("%s of micro-batch %lld, chunk %d"), kind_text(event.kind).c_str(),
                static_cast<long long>(event.microbatch), event.vpp_chunk);
  }
  block_line("static: weights, gradients, optimizer state, buffers", static_bytes);
  if (event.kind == TimelineEvent::Kind::optimizer_step && rank.optimizer_step_bytes > 0) {
    block_line("fp32 copy of the 16-bit gradients, until the next zero_grad",
               rank.optimizer_step_bytes);
  }
  if (event.kind != TimelineEvent::Kind::optimizer_step) {
    block_line("saved activations held as it starts", held - std::min(held, static_bytes));
    if (event.kind == TimelineEvent::Kind::forward) {
      block_line("activations this forward saves", after - std::min(after, held));
    } else {
      block_line("activations this backward frees at its end (striped)",
                 held - std::min(held, after));
    }
  }
  // A step's are its FP8 master casts (RankMemory::fp8_master_casts), shown when it has any.
  const std::uint64_t inside = event.peak_during_bytes - std::min(event.peak_during_bytes, saved);
  if (event.kind != TimelineEvent::Kind::optimizer_step || inside > 0) {
    block_line("working set inside, on top (transients)", inside);
  }
  block_line("allocated after it", after);
  block_line("peak inside it", event.peak_during_bytes);
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::Text(tr("+ runtime overheads %s outside the allocator"),
              gib_text(rank.runtime_overhead_bytes).c_str());
  ImGui::PopStyleColor();
  ImGui::EndTooltip();
}

// The column under the mouse: a marker line and its event's tooltip.
void hover_column(ImDrawList* draw, const Plot& plot, const RankMemory& rank, float column_px) {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mouse.x < plot.min.x || mouse.x >= plot.max.x) return;
  const auto index = std::min(rank.timeline.size() - 1,
                              static_cast<std::size_t>((mouse.x - plot.min.x) / column_px));
  const float x = plot.min.x + (static_cast<float>(index) + 0.5f) * column_px;
  draw->AddLine(ImVec2(x, plot.min.y), ImVec2(x, plot.max.y),
                ImGui::GetColorU32(strong_text_color()) & 0x80FFFFFF);
  event_tooltip(rank.timeline, index, rank);
}

// The blocks above the static bands, named: the table's "activations" and "transients" are
// these blocks at the peak column.
void timeline_legend() {
  const struct {
    ImU32 color;
    bool striped;
    const char* name;
  } blocks[] = {{kActivationsColor, false, "saved activations"},
                {kActivationsColor, true, "activations a backward frees"},
                {kTransientsColor, false, "working set inside an operation (transients)"}};
  for (const auto& block : blocks) {
    legend_entry(ImGui::GetColorU32(block.color), block.striped, block.name, nullptr);
  }
  ImGui::NewLine();
}

}  // namespace

void draw_timeline(AppState& state, const Estimate& estimate, float dim) {
  const int rank_index = shown_rank(state);
  const RankMemory& rank = estimate.ranks[static_cast<std::size_t>(rank_index)];
  char note[128];
  std::snprintf(note, sizeof note, tr("PP rank %d, one training step, %zu operations"), rank_index,
                rank.timeline.size());
  results_heading("TIMELINE", note);
  rank_selector(state, estimate, "##timeline rank");
  if (rank.timeline.empty()) {
    ImGui::TextUnformatted(tr("(no timeline for this rank)"));
    return;
  }
  update_cache(state, estimate, rank_index);
  cache.chart.dim = dim;

  const float em = ImGui::GetFontSize();
  const float gutter_px = ImGui::CalcTextSize("000 GiB ").x;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width_px = std::max(ImGui::GetContentRegionAvail().x, em * 10.0f);
  const float height_px = std::clamp(width_px * 0.28f, em * 9.0f, em * 16.0f);
  const Plot plot{.origin = origin,
                  .min = ImVec2(origin.x + gutter_px, origin.y + em * 0.4f),
                  .max = ImVec2(origin.x + width_px, origin.y + height_px),
                  .scale_bytes = cache.scale_bytes};
  push_no_tab_stop();  // shows a tooltip only
  ImGui::InvisibleButton("timeline", ImVec2(width_px, height_px + em * 1.4f));
  pop_no_tab_stop();
  const bool hovered = ImGui::IsItemHovered();
  record_item(state, "timeline", "chart");
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(plot.min, plot.max, ImGui::GetColorU32(ImGuiCol_FrameBg));
  if (timeline_renderer_error().empty()) {
    add_timeline_chart(draw, &cache.chart, plot.min, plot.max);
  } else {
    draw->AddText(ImVec2(plot.min.x + em, plot.min.y + em), ImGui::GetColorU32(kErrorColor),
                  (tr("timeline shader failed: ") + timeline_renderer_error()).c_str());
  }
  const ImU32 axis = ImGui::GetColorU32(muted_text_color());
  draw_gridlines(draw, plot, axis);
  draw_capacity(draw, plot, estimate.normalized.config.device.capacity_gib * kBytesPerGiB);
  const float column_px = (plot.max.x - plot.min.x) / static_cast<float>(rank.timeline.size());
  draw_peak(draw, plot, rank, column_px);
  // The x axis: schedule order, with the step's phases named.
  draw->AddText(ImVec2(plot.min.x, plot.max.y + em * 0.2f), axis,
                tr("schedule order: forwards, backwards (darker), optimizer step; hover a column "
                   "for its blocks"));
  if (hovered) hover_column(draw, plot, rank, column_px);
  timeline_legend();
}

}  // namespace megamem::web
