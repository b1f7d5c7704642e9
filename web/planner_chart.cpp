// The planner's chart: each layout on the Pareto front as a point at (step time, peak memory
// of its limiting rank), joined as the front's staircase; the fastest layouts that fit in
// the fits colour; the configuration shown by the calculator ringed; the memory limit
// (capacity minus margin) dashed. Drawn with ImGui's draw list: a few dozen points.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "format.hpp"
#include "imgui.h"
#include "messages.hpp"
#include "planner_views.hpp"
#include "tab_order.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

struct Point {
  const PlanCandidate* candidate;
  const std::string* query;
  bool fastest;  // in result.top
};

struct Axes {
  ImVec2 origin, size;  // plot area, screen pixels
  double time_min_s, time_max_s, memory_min_gib, memory_max_gib;
  ImVec2 at(double time_s, double memory_gib) const {
    const double x = (time_s - time_min_s) / (time_max_s - time_min_s);
    const double y = (memory_gib - memory_min_gib) / (memory_max_gib - memory_min_gib);
    return ImVec2(origin.x + static_cast<float>(x) * size.x,
                  origin.y + size.y - static_cast<float>(y) * size.y);
  }
};

void dashed_line(ImDrawList* draw, ImVec2 from, float to_x, ImU32 color) {
  const float dash_px = ImGui::GetFontSize() * 0.4f;
  for (float x = from.x; x < to_x; x += dash_px * 2.0f) {
    draw->AddLine(ImVec2(x, from.y), ImVec2(std::min(x + dash_px, to_x), from.y), color, 1.5f);
  }
}

// Pareto points first (their index is the test label's), then the fastest layouts.
std::vector<Point> chart_points(const PlannerState& planner, const PlanResult& result) {
  std::vector<Point> points;
  for (std::size_t i = 0; i < result.pareto.size(); ++i) {
    points.push_back(
        {.candidate = &result.pareto[i], .query = &planner.pareto_queries[i], .fastest = false});
  }
  for (std::size_t i = 0; i < result.top.size(); ++i) {
    points.push_back(
        {.candidate = &result.top[i], .query = &planner.top_queries[i], .fastest = true});
  }
  return points;
}

// The value ranges: every point and the limit, padded (screen placement comes later).
Axes value_ranges(const std::vector<Point>& points, double limit_gib) {
  Axes axes{};
  axes.time_min_s = axes.time_max_s = points.front().candidate->time.step_time_s;
  axes.memory_min_gib = axes.memory_max_gib = limit_gib;
  for (const Point& p : points) {
    axes.time_min_s = std::min(axes.time_min_s, p.candidate->time.step_time_s);
    axes.time_max_s = std::max(axes.time_max_s, p.candidate->time.step_time_s);
    axes.memory_min_gib = std::min(axes.memory_min_gib, to_gib(p.candidate->peak_total_bytes));
  }
  const double time_pad_s = std::max((axes.time_max_s - axes.time_min_s) * 0.05, 1e-3);
  const double memory_pad_gib = std::max((axes.memory_max_gib - axes.memory_min_gib) * 0.08, 0.5);
  axes.time_min_s -= time_pad_s;
  axes.time_max_s += time_pad_s;
  axes.memory_min_gib = std::max(0.0, axes.memory_min_gib - memory_pad_gib);
  axes.memory_max_gib += memory_pad_gib;
  return axes;
}

// Through GetColorU32 the colours take the style's alpha: a stale search is drawn dimmed.
struct ChartColors {
  ImU32 grid = ImGui::GetColorU32(ImGuiCol_Separator);
  ImU32 muted = ImGui::GetColorU32(muted_text_color());
  ImU32 front = ImGui::GetColorU32(kWeightsColor);
  ImU32 fastest = ImGui::GetColorU32(kFitsColor);
  ImU32 limit = ImGui::GetColorU32(kOverColor);
  ImU32 strong = ImGui::GetColorU32(strong_text_color());
};

// Axes with their end values; value labels start at left_x.
void draw_axes(ImDrawList* draw, const Axes& axes, float left_x, const ChartColors& colors) {
  const float em = ImGui::GetFontSize();
  const ImVec2 bottom_left(axes.origin.x, axes.origin.y + axes.size.y);
  draw->AddLine(axes.origin, bottom_left, colors.grid);
  draw->AddLine(bottom_left, ImVec2(axes.origin.x + axes.size.x, bottom_left.y), colors.grid);
  char text[48];
  for (const double gib : {axes.memory_min_gib, axes.memory_max_gib}) {
    std::snprintf(text, sizeof text, "%.1f GiB", gib);
    const ImVec2 at = axes.at(axes.time_min_s, gib);
    draw->AddText(ImVec2(left_x, at.y - em * 0.5f), colors.muted, text);
  }
  for (const double seconds : {axes.time_min_s, axes.time_max_s}) {
    std::snprintf(text, sizeof text, "%.2f s", seconds);
    const ImVec2 at = axes.at(seconds, axes.memory_min_gib);
    const float text_px = ImGui::CalcTextSize(text).x;
    draw->AddText(ImVec2(std::min(at.x, axes.origin.x + axes.size.x - text_px), at.y + em * 0.2f),
                  colors.muted, text);
  }
  const char* x_title = tr("step time");
  draw->AddText(ImVec2(axes.origin.x + (axes.size.x - ImGui::CalcTextSize(x_title).x) * 0.5f,
                       bottom_left.y + em * 0.2f),
                colors.muted, x_title);
}

// The memory limit, dashed and labelled; then the front as a staircase: from each point,
// memory holds until the next (slower) point.
void draw_limit_and_front(ImDrawList* draw, const Axes& axes, double limit_gib,
                          const std::vector<PlanCandidate>& pareto, const ChartColors& colors) {
  const float em = ImGui::GetFontSize();
  const ImVec2 limit_at = axes.at(axes.time_min_s, limit_gib);
  dashed_line(draw, limit_at, axes.origin.x + axes.size.x, colors.limit);
  char text[48];
  std::snprintf(text, sizeof text, tr("limit %.2f GiB"), limit_gib);
  draw->AddText(
      ImVec2(axes.origin.x + axes.size.x - ImGui::CalcTextSize(text).x, limit_at.y - em * 1.1f),
      colors.limit, text);
  for (std::size_t i = 0; i + 1 < pareto.size(); ++i) {
    const PlanCandidate& a = pareto[i];
    const PlanCandidate& b = pareto[i + 1];
    const ImVec2 from = axes.at(a.time.step_time_s, to_gib(a.peak_total_bytes));
    const ImVec2 to = axes.at(b.time.step_time_s, to_gib(b.peak_total_bytes));
    draw->AddLine(from, ImVec2(to.x, from.y), colors.front, 1.5f);
    draw->AddLine(ImVec2(to.x, from.y), to, colors.front, 1.5f);
  }
}

ImVec2 point_at(const Axes& axes, const Point& p) {
  return axes.at(p.candidate->time.step_time_s, to_gib(p.candidate->peak_total_bytes));
}

// Points; returns the one under the mouse: the nearest within half a line.
const Point* draw_points(AppState& state, ImDrawList* draw, const Axes& axes,
                         const std::vector<Point>& points, bool hovered,
                         const ChartColors& colors) {
  const float em = ImGui::GetFontSize();
  const Point* nearest = nullptr;
  float nearest_px2 = em * em * 0.36f;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float r = em * 0.22f;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const ImVec2 at = point_at(axes, p);
    draw->AddCircleFilled(at, r, p.fastest ? colors.fastest : colors.front);
    // For tests: "plan point 3" is result.pareto[3]; "pointer" names the point a click picks.
    char label[32];
    std::snprintf(label, sizeof label, "plan point %zu", i);
    const WidgetRect rect{
        .x = at.x - r, .y = at.y - r, .width = 2 * r, .height = 2 * r, .kind = "point"};
    if (!p.fastest) state.input_rects[label] = rect;
    if (*p.query == state.query) draw->AddCircle(at, em * 0.45f, colors.strong, 0, 2.0f);
    const float dx = at.x - mouse.x, dy = at.y - mouse.y;
    if (hovered && dx * dx + dy * dy < nearest_px2) {
      nearest_px2 = dx * dx + dy * dy;
      nearest = &p;
      WidgetRect& pointer = state.input_rects["pointer"];
      pointer = rect;
      pointer.kind = p.fastest ? "plan chart" : label;
    }
  }
  return nearest;
}

}  // namespace

bool draw_plan_chart(AppState& state, const PlanResult& result) {
  const PlannerState& planner = state.planner;
  const std::vector<Point> points = chart_points(planner, result);
  if (points.empty()) return false;
  const double limit_gib = planner.request->base.device.capacity_gib - planner.request->margin_gib;
  Axes axes = value_ranges(points, limit_gib);

  const float em = ImGui::GetFontSize();
  const ImVec2 corner = ImGui::GetCursorScreenPos();
  const float width_px = ImGui::GetContentRegionAvail().x;
  const float height_px = em * 11.0f;
  const float axis_label_px = ImGui::CalcTextSize("000.0 GiB").x + em * 0.4f;
  axes.origin = ImVec2(corner.x + axis_label_px, corner.y + em * 0.5f);
  axes.size = ImVec2(std::max(width_px - axis_label_px - em, em), height_px - em * 2.2f);
  push_no_tab_stop();  // its points are the rows of the list below, which Tab visits
  ImGui::InvisibleButton("plan chart", ImVec2(width_px, height_px));
  pop_no_tab_stop();
  record_item(state, "plan chart", "chart");
  const bool hovered = ImGui::IsItemHovered();
  const bool clicked = ImGui::IsItemClicked();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ChartColors colors;
  draw_axes(draw, axes, corner.x, colors);
  draw_limit_and_front(draw, axes, limit_gib, result.pareto, colors);
  const Point* nearest = draw_points(state, draw, axes, points, hovered, colors);
  if (!nearest) return false;
  draw->AddCircle(point_at(axes, *nearest), em * 0.4f, colors.strong, 0, 1.5f);
  plan_candidate_tooltip(*nearest->candidate, planner.stale);
  return clicked && *nearest->query != state.query &&
         apply_plan_candidate(state, *nearest->candidate);
}

}  // namespace megamem::web
