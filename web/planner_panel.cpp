// The layout planner (ui.md "LAYOUT PLANNER"; docs/planner.md): a search over TP, PP, VPP,
// CP, EP, ETP, micro-batch size, recompute and offload for the model, cluster and training
// settings being edited; the fastest layouts that fit, or the Pareto front of memory against
// step time, with why the rest fail. Clicking a row applies its whole configuration, so the
// calculator and the link show it. The search runs on demand, a slice each frame
// (planning.cpp), with a progress bar and Cancel: it needs from a tenth of a second to a few
// seconds of work, and the page has one thread.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "clip_audit.hpp"
#include "format.hpp"
#include "imgui.h"
#include "megamem/layout_label.hpp"
#include "megamem/megatron_args.hpp"
#include "messages.hpp"
#include "planner_views.hpp"
#include "planning.hpp"
#include "results_panel.hpp"
#include "tab_order.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

// On the line of the last item when `width_px` more still fits, else on the next: a row of
// controls wraps on a phone instead of running off the window's edge (the search options
// were out of reach at 390 px).
void same_line_if_room(float width_px, float spacing_px = -1.0f) {
  ImGui::SameLine(0.0f, spacing_px);
  if (ImGui::GetContentRegionAvail().x < width_px) ImGui::NewLine();
}

float checkbox_px(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label, nullptr, true).x;
}

// "keep" boxes: layout fields the search holds at the calculator's values.
void keep_controls(AppState& state) {
  PlanKeep& keep = state.planner.keep;
  const ParallelConfig& p = state.shared.config.parallel;
  const struct {
    const char* label;
    bool* value;
    int current;
  } boxes[] = {{"TP", &keep.tensor_parallel, p.tensor_parallel},
               {"PP", &keep.pipeline_parallel, p.pipeline_parallel},
               {"CP", &keep.context_parallel, p.context_parallel},
               {"EP", &keep.expert_parallel, p.expert_parallel},
               {"mbs", &keep.micro_batch_size, state.shared.config.training.micro_batch_size}};
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr("keep"));
  for (const auto& box : boxes) {
    char label[32];
    std::snprintf(label, sizeof label, "%s %d", box.label, box.current);
    same_line_if_room(checkbox_px(label));
    ImGui::PushID(box.label);
    ImGui::Checkbox(label, box.value);
    ImGui::PopID();
    describe_item(state, (std::string("plan keep ") + box.label).c_str(), "checkbox",
                  "megamem plan --tp/--pp/--cp/--ep/--mbs <value>",
                  "Keeps this field at the calculator's value; the search varies the rest "
                  "(with PP kept, the virtual stages are still searched).");
  }
}

// The search button and options.
void draw_controls(AppState& state) {
  PlannerState& planner = state.planner;
  const bool searched = planner.request.has_value();
  ImGui::BeginDisabled(planner.search.has_value());
  const char* button = planner.search ? "Searching..."
                       : searched     ? "Search again"
                                      : "Find the fastest layouts that fit";
  // One ID whatever the label says: a click that lands as the label changes (the search ends,
  // or is cancelled, between the press and the release) still presses the same button, and
  // the button keeps the keyboard.
  if (ImGui::Button((std::string(tr(button)) + "###plan search").c_str())) request_plan(state);
  ImGui::EndDisabled();
  describe_item(state, "plan search", "button", "megamem plan",
                "Searches every layout of this model on this cluster with these training "
                "settings, keeps those that fit and ranks them by the step-time model.");
  const float em = ImGui::GetFontSize();
  const float spacing_px = ImGui::GetStyle().ItemSpacing.x;
  same_line_if_room(ImGui::CalcTextSize(tr("margin")).x + em * 9.0f + ImGui::CalcTextSize("GiB").x +
                        spacing_px * 2.0f,
                    em);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr("margin"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 9.0f);
  double margin = planner.margin_gib;
  // Taken as typed: plan() names margin_gib when it is negative or leaves no memory.
  push_no_tab_stop();  // the field is a stop, its +/- are not
  if (ImGui::InputDouble("##plan margin", &margin, 0.5, 2.0, "%.2f")) planner.margin_gib = margin;
  pop_no_tab_stop();
  describe_item(state, "plan margin", "input", "megamem plan --margin-gib",
                "Headroom kept under the card's capacity: a layout fits when its limiting "
                "rank's peak plus this margin is at most the capacity.");
  ImGui::SameLine();
  ImGui::TextUnformatted("GiB");
  same_line_if_room(checkbox_px(tr("search recompute")), em);
  ImGui::Checkbox(tr("search recompute"), &planner.search_recompute);
  describe_item(state, "plan search recompute", "checkbox", "megamem plan --no-recompute-search",
                "Try no recompute, Megatron's selective module sets and full recompute; off "
                "keeps the recompute setting of the calculator.");
  same_line_if_room(checkbox_px(tr("search offload")), em);
  ImGui::Checkbox(tr("search offload"), &planner.search_offload);
  describe_item(state, "plan search offload", "checkbox", "megamem plan --no-offload-search",
                "Try activation offload, optimizer CPU offload and both; off keeps the offload "
                "settings of the calculator.");
  keep_controls(state);
}

// The search under way: a bar with its counts, and Cancel.
void draw_progress(AppState& state) {
  const PlanProgress& p = state.planner.progress;
  char text[160];
  if (p.ranking) {
    std::snprintf(text, sizeof text, tr("ranking the %s candidates searched"),
                  grouped(static_cast<std::uint64_t>(p.candidates_done)).c_str());
  } else {
    std::snprintf(text, sizeof text, tr("%s of %s candidates (%s of %s layouts)"),
                  grouped(static_cast<std::uint64_t>(p.candidates_done)).c_str(),
                  grouped(static_cast<std::uint64_t>(p.candidates_total)).c_str(),
                  grouped(static_cast<std::uint64_t>(p.layouts_done)).c_str(),
                  grouped(static_cast<std::uint64_t>(p.layouts_total)).c_str());
  }
  const double fraction =
      p.ranking || p.candidates_total == 0
          ? 1.0
          : static_cast<double>(p.candidates_done) / static_cast<double>(p.candidates_total);
  const ImGuiStyle& style = ImGui::GetStyle();
  const float cancel_px = ImGui::CalcTextSize(tr("Cancel")).x + style.FramePadding.x * 2.0f;
  const float bar_px = ImGui::GetContentRegionAvail().x - cancel_px - style.ItemSpacing.x;
  ImGui::ProgressBar(static_cast<float>(fraction), ImVec2(std::max(bar_px, cancel_px), 0.0f), text);
  record_item(state, "plan progress", "progress");
  ImGui::SameLine();
  if (ImGui::Button(tr("Cancel"))) cancel_plan(state);
  describe_item(state, "plan cancel", "button", "megamem plan (Ctrl-C)",
                "Stops the search; the list of the search before it stays.");
  wrapped_text(muted_text_color(),
               "The search runs a slice each frame: the page stays usable, and a change of the "
               "settings starts it again.");
}

void draw_summary(AppState& state) {
  const PlannerState& planner = state.planner;
  if (planner.search) {
    draw_progress(state);
    return;
  }
  if (planner.cancelled) {
    wrapped_text(tight_color(), planner.result ? "Search cancelled: the list below is from the "
                                                 "search before it."
                                               : "Search cancelled.");
  }
  if (planner.error) {
    verbatim_text(kErrorColor, tr("The search could not run - ") + planner.error->field + ": " +
                                   tr_text(planner.error->message));
    return;
  }
  if (!planner.result) {
    wrapped_text(
        muted_text_color(),
        "Searches TP, PP, VPP, CP, EP, ETP, the micro-batch size, recompute and offload for "
        "this model on this cluster with these training settings, keeps the layouts that fit "
        "and ranks them by the step-time model (docs/planner.md).");
    return;
  }
  const PlanStats& s = planner.result->stats;
  const PlanRequest& request = *planner.request;
  char text[320];
  std::snprintf(
      text, sizeof text,
      tr("%s candidates (%s layouts) searched in %.2f s: %s fit under %.2f GiB, %s out of "
         "memory, %s invalid"),
      grouped(static_cast<std::uint64_t>(s.candidates)).c_str(),
      grouped(static_cast<std::uint64_t>(s.layouts)).c_str(), planner.search_ms / 1000.0,
      grouped(static_cast<std::uint64_t>(s.fitting)).c_str(),
      request.base.device.capacity_gib - request.margin_gib,
      grouped(static_cast<std::uint64_t>(s.out_of_memory)).c_str(),
      grouped(static_cast<std::uint64_t>(s.invalid)).c_str());
  wrapped_text(muted_text_color(), text);
  if (request.global_batch_proposed) {
    // plan_request_for: the configuration has no global batch; the search keeps its own.
    std::snprintf(text, sizeof text,
                  tr("No global batch is set: planned for %lld, %s (set it under training)."),
                  static_cast<long long>(request.base.training.global_batch_size),
                  tr(request.global_batch_proposed));
    wrapped_text(muted_text_color(), text);
  }
  if (planner.stale) {
    wrapped_text(tight_color(),
                 "The settings changed since this search: the list below is for the earlier "
                 "ones. Search again to update it.");
  }
}

// The rows; returns true when one was applied (state.shared changed).
void setup_candidate_columns(bool wide) {
  const auto fixed = [](const char* name, const char* widest) {
    ImGui::TableSetupColumn(
        tr(name), ImGuiTableColumnFlags_WidthFixed,
        std::max(ImGui::CalcTextSize(tr(widest)).x, ImGui::CalcTextSize(tr(name)).x) +
            ImGui::GetFontSize() * 0.4f);
  };
  fixed("#", "00");
  ImGui::TableSetupColumn(tr("layout"), ImGuiTableColumnFlags_WidthStretch, 2.2f);
  fixed("mbs", "mbs");
  ImGui::TableSetupColumn(tr("recompute"), ImGuiTableColumnFlags_WidthStretch, 1.6f);
  if (wide) ImGui::TableSetupColumn(tr("offload"), ImGuiTableColumnFlags_WidthStretch, 1.2f);
  fixed("peak", "000.00 GiB");
  fixed("step", "000.000 s");
  if (wide) fixed("tokens/s/GPU", "tokens/s/GPU");
  if (wide) fixed("MFU", "00.0 %");
  audited_headers_row("planner.header");
}

// The texts of a candidate's row that wrap in their columns: the layout (marked when it is
// the current one), how an uneven split places the layers, recompute and offload.
struct CandidateTexts {
  std::string layout;
  std::string split;  // "" for Megatron's even split
  std::string recompute;
  std::string offload;
};

CandidateTexts candidate_texts(const AppState& state, const PlanCandidate& c, bool current) {
  const ParallelConfig& p = c.config.parallel;
  CandidateTexts texts{
      .layout = layout_label(p), .recompute = tr_text(c.recompute), .offload = tr_text(c.offload)};
  texts.layout += current ? tr("  (current)")
                  : texts.layout == layout_label(state.shared.config.parallel)
                      ? tr("  (current layout)")
                      : "";
  if (!p.pipeline_layout.empty()) {
    texts.split = printf_text(tr("layout %s"), p.pipeline_layout.c_str());
  } else if (p.decoder_first_pipeline_num_layers > 0 || p.decoder_last_pipeline_num_layers > 0) {
    texts.split =
        printf_text(tr("first stage %d, last %d layers"), p.decoder_first_pipeline_num_layers,
                    p.decoder_last_pipeline_num_layers);
  }
  return texts;
}

// The height `text` takes wrapped in table column `column` of the current row.
float wrapped_height(int column, const std::string& text) {
  if (text.empty()) return 0.0f;
  ImGui::TableSetColumnIndex(column);
  return ImGui::CalcTextSize(text.c_str(), nullptr, false, ImGui::GetContentRegionAvail().x).y;
}

// `text` wrapped at its column's edge, muted or in the text colour.
void wrapped_cell(const std::string& text, bool muted = false) {
  if (muted) ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  if (muted) ImGui::PopStyleColor();
}

// The row's number (a Selectable as tall as the row's wrapped texts, spanning every column:
// a click anywhere on the row applies it); true when clicked and applied.
bool candidate_selectable(AppState& state, const PlanCandidate& c, std::size_t i, bool current,
                          float height_px) {
  ImGui::TableSetColumnIndex(0);
  char index[16];
  std::snprintf(index, sizeof index, "%zu", i + 1);
  bool applied = false;
  if (ImGui::Selectable(index, current, ImGuiSelectableFlags_SpanAllColumns,
                        ImVec2(0.0f, height_px)) &&
      !current) {
    applied = apply_plan_candidate(state, c);
  }
  char rect_label[32];
  std::snprintf(rect_label, sizeof rect_label, "plan row %zu", i);
  record_item(state, rect_label, "row");
  if (ImGui::IsItemHovered()) plan_candidate_tooltip(c, state.planner.stale);
  return applied;
}

// One candidate's row; true when clicked and applied. Its texts wrap in their columns (a
// phone's columns are narrow), and the row grows to hold them.
bool candidate_row(AppState& state, const PlanCandidate& c, std::size_t i, bool current,
                   bool wide) {
  const CandidateTexts texts = candidate_texts(state, c, current);
  ImGui::TableNextRow();
  float layout_px = wrapped_height(1, texts.layout);
  if (!texts.split.empty()) {
    layout_px += ImGui::GetStyle().ItemSpacing.y + wrapped_height(1, texts.split);
  }
  const float height_px = std::max({layout_px, wrapped_height(3, texts.recompute),
                                    wide ? wrapped_height(4, texts.offload) : 0.0f});
  const bool applied = candidate_selectable(state, c, i, current, height_px);
  ImGui::TableSetColumnIndex(1);
  wrapped_cell(texts.layout);
  if (!texts.split.empty()) wrapped_cell(texts.split, true);
  ImGui::TableNextColumn();
  ImGui::Text("%d", c.config.training.micro_batch_size);
  ImGui::TableNextColumn();
  wrapped_cell(texts.recompute);
  if (wide) {
    ImGui::TableNextColumn();
    wrapped_cell(texts.offload);
  }
  ImGui::TableNextColumn();
  ImGui::Text("%.2f GiB", to_gib(c.peak_total_bytes));
  ImGui::TableNextColumn();
  ImGui::Text("%.3f s", c.time.step_time_s);
  if (wide) {
    ImGui::TableNextColumn();
    ImGui::Text("%.0f", c.time.tokens_per_s_per_gpu);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f %%", 100.0 * c.time.mfu);
  }
  return applied;
}

bool draw_candidates(AppState& state, const std::vector<PlanCandidate>& rows,
                     const std::vector<std::string>& queries) {
  const bool wide = ImGui::GetContentRegionAvail().x > ImGui::GetFontSize() * 44.0f;
  // Every row in the results column, which scrolls: a table scrolling inside itself is a
  // child window that Dear ImGui skips (for Tab too) while it is out of sight.
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("planner", wide ? 9 : 6, kFlags)) return false;
  setup_candidate_columns(wide);
  bool applied = false;
  for (std::size_t i = 0; i < rows.size() && !applied; ++i) {
    const bool current = i < queries.size() && queries[i] == state.query;
    ImGui::PushID(static_cast<int>(i));
    applied = candidate_row(state, rows[i], i, current, wide);
    ImGui::PopID();
  }
  ImGui::EndTable();
  return applied;
}

void draw_rejections(const PlanResult& result) {
  if (result.rejections.empty()) return;
  std::int64_t rejected = 0;
  for (const PlanRejection& r : result.rejections) rejected += r.count;
  char title[96];
  std::snprintf(title, sizeof title, tr("Why the other %s candidates fail"),
                grouped(static_cast<std::uint64_t>(rejected)).c_str());
  if (!ImGui::TreeNodeEx("##plan rejections", ImGuiTreeNodeFlags_SpanAvailWidth, "%s", title)) {
    return;
  }
  ImGui::PushTextWrapPos(0.0f);
  for (const PlanRejection& r : result.rejections) {
    const std::string count = grouped(static_cast<std::uint64_t>(r.count));
    if (r.reason == "out_of_memory") {
      bullet_wrapped(printf_text(tr("%s out of memory: the limiting rank's peak is above %s"),
                                 count.c_str(), r.example.c_str()));
    } else {
      // The rule with its numbers as written for one of them (r.rule has them as "N").
      bullet_wrapped(printf_text(tr("%s invalid, %s, e.g. %s"), count.c_str(), r.field.c_str(),
                                 tr_text(r.example).c_str()));
    }
  }
  ImGui::PopTextWrapPos();
  ImGui::TreePop();
}

}  // namespace

void plan_candidate_tooltip(const PlanCandidate& c, bool stale) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 34.0f);
  ImGui::TextUnformatted(layout_megatron_args(c.config).c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::Text(tr("peak %.2f GiB on PP rank %d; step %.3f s, %.0f tokens/s per GPU, %.0f TFLOP/s "
                 "per GPU (model), MFU %.1f %%"),
              to_gib(c.peak_total_bytes), c.limiting_pp_rank, c.time.step_time_s,
              c.time.tokens_per_s_per_gpu, c.time.model_tflops_per_gpu, 100.0 * c.time.mfu);
  const StepTimeBreakdown& b = c.time.breakdown;
  const struct {
    const char* name;
    double seconds;
  } parts[] = {{"compute", b.compute_s},          {"recompute", b.recompute_s},
               {"TP communication", b.tp_comm_s}, {"CP communication", b.cp_comm_s},
               {"EP communication", b.ep_comm_s}, {"PP communication", b.pp_comm_s},
               {"offload", b.offload_s},          {"pipeline bubble", b.pipeline_bubble_s},
               {"DP communication", b.dp_comm_s}, {"optimizer", b.optimizer_s}};
  for (const auto& part : parts) {
    if (part.seconds > 0.0) ImGui::BulletText("%s %.3f s", tr(part.name), part.seconds);
  }
  ImGui::TextUnformatted(tr(stale ? "Search again to apply a layout: this one is for the earlier "
                                    "settings."
                                  : "Click to apply this layout to the calculator and the link."));
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

bool apply_plan_candidate(AppState& state, const PlanCandidate& candidate) {
  if (state.planner.stale) return false;
  state.shared.config = candidate.config;
  state.edited_key.clear();
  state.selected_rank = -1;
  return true;
}

bool draw_planner_panel(AppState& state) {
  update_plan_staleness(state);
  // The planner works for any inputs, also invalid ones (it replaces the layout): never dimmed
  // with the calculator's result.
  ImGui::PushStyleVar(ImGuiStyleVar_Alpha, 1.0f);
  results_heading("LAYOUT PLANNER",
                  "the fastest layouts that fit; click a row or a point to apply it");
  draw_controls(state);
  draw_summary(state);
  PlannerState& planner = state.planner;
  bool applied = false;
  if (planner.result && !planner.search) {
    const PlanResult& result = *planner.result;
    if (result.top.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, kOverColor);
      // With no candidate at all there are no reasons to list: the kept fields or the GPU
      // count leave no layout to try.
      ImGui::TextWrapped("%s", result.rejections.empty()
                                   ? tr("No layout was tried: no layout of this model on these "
                                        "GPUs has the kept values. Untick a keep box.")
                                   : tr("No layout fits; the reasons are below."));
      ImGui::PopStyleColor();
    } else {
      if (planner.stale) ImGui::PushStyleVar(ImGuiStyleVar_Alpha, 0.55f);
      applied |= draw_plan_chart(state, result);
      if (ImGui::RadioButton(tr("fastest"), !planner.show_pareto)) planner.show_pareto = false;
      describe_item(state, "plan fastest", "radio", "megamem plan",
                    "The fastest layouts that fit, fastest first (green in the chart).");
      ImGui::SameLine();
      if (ImGui::RadioButton(tr("Pareto front"), planner.show_pareto)) planner.show_pareto = true;
      describe_item(state, "plan pareto", "radio", "megamem plan --json (pareto)",
                    "Each layout that no other beats in both memory and step time: the least "
                    "memory for each step time, fastest first (blue in the chart).");
      applied |= planner.show_pareto ? draw_candidates(state, result.pareto, planner.pareto_queries)
                                     : draw_candidates(state, result.top, planner.top_queries);
      if (planner.stale) ImGui::PopStyleVar();
    }
    draw_rejections(result);
  }
  ImGui::PopStyleVar();
  return applied;
}

}  // namespace megamem::web
