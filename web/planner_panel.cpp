// The layout planner (ui.md "LAYOUT PLANNER"; docs/planner.md): a search over TP, PP, VPP,
// CP, EP, ETP, micro-batch size, recompute and offload for the model, cluster and training
// settings being edited; the fastest layouts that fit, or the Pareto front of memory against
// step time, with why the rest fail. Clicking a row applies its whole configuration, so the
// calculator and the link show it. The search runs on demand, a slice each frame
// (planning.cpp), with a progress bar and Cancel: it needs from a tenth of a second to a few
// seconds of work, and the page has one thread.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
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

// The table's columns: the change from the current configuration goes under the peak and the
// step time (a second line). A narrow table (a phone) puts recompute under the layout and
// leaves offload, tokens/s and MFU to the row's tooltip: in a recompute column of its own,
// "layernorm" was split mid-word.
int peak_column(bool wide) { return wide ? 5 : 3; }

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
  if (wide) ImGui::TableSetupColumn(tr("recompute"), ImGuiTableColumnFlags_WidthStretch, 1.6f);
  if (wide) ImGui::TableSetupColumn(tr("offload"), ImGuiTableColumnFlags_WidthStretch, 1.2f);
  fixed("peak", "000.00 GiB");
  fixed("step", "000.000 s");
  if (wide) fixed("tokens/s/GPU", "tokens/s/GPU");
  if (wide) fixed("MFU", "00.0 %");
  audited_headers_row("planner.header");
}

// A row of the list as drawn: its candidate, its figures and its change from the current
// configuration, and the rows folded into it.
struct ShownPlanRow {
  std::size_t index = 0;    // its candidate's place in the list shown (result.top or .pareto)
  std::string peak;         // "58.32 GiB"
  std::string step;         // "1.234 s"
  std::string peak_change;  // "-3.10 GiB" ("" = not known)
  std::string step_change;  // "+12.3 %"
  std::size_t alike = 0;    // rows folded into it: the same peak and step as drawn
};

// A row's figures as drawn, with its change from the current configuration (plan_change).
ShownPlanRow shown_row(const PlanCandidate& c, std::size_t index,
                       const std::optional<PlanReference>& reference) {
  ShownPlanRow row;
  row.index = index;
  row.peak = gib_text(c.peak_total_bytes);
  row.step = printf_text("%.3f s", c.time.step_time_s);
  if (!reference) return row;
  const PlanChange change = plan_change(c, *reference);
  // Under half a hundredth (of a GiB, of a percent) reads as no change, not "-0.00".
  if (change.peak_known) {
    const double gib = to_gib(change.peak_bytes);
    row.peak_change = std::abs(gib) < 0.005 ? "0.00 GiB" : printf_text("%+.2f GiB", gib);
  }
  if (change.time_known) {
    const double percent = 100.0 * change.step_time;
    row.step_change = std::abs(percent) < 0.05 ? "0.0 %" : printf_text("%+.1f %%", percent);
  }
  return row;
}

// The rows to draw, in the planner's order: a row that reads like an earlier one (the same
// peak and step time as drawn) is folded into it and counted there; the current layout stands
// for its group, so "(current)" is never folded away.
std::vector<ShownPlanRow> fold_alike(const AppState& state, const std::vector<PlanCandidate>& rows,
                                     const std::vector<std::string>& queries) {
  std::vector<ShownPlanRow> shown;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ShownPlanRow row = shown_row(rows[i], i, state.planner.reference);
    const auto same = std::find_if(shown.begin(), shown.end(), [&](const ShownPlanRow& s) {
      return s.peak == row.peak && s.step == row.step;
    });
    if (same == shown.end()) {
      shown.push_back(std::move(row));
      continue;
    }
    row.alike = same->alike + 1;
    if (i < queries.size() && queries[i] == state.query) {
      *same = std::move(row);  // the current row stands for the rows it reads like
    } else {
      same->alike = row.alike;
    }
  }
  return shown;
}

// The texts of a candidate's row that wrap in their columns: the layout (marked when it is
// the current one), how an uneven split places the layers, the rows folded into it,
// recompute and offload.
struct CandidateTexts {
  std::string layout;
  std::string split;  // "" for Megatron's even split
  std::string alike;  // "+2 alike" ("" = none)
  std::string recompute;
  std::string offload;
};

CandidateTexts candidate_texts(const AppState& state, const PlanCandidate& c, bool current,
                               std::size_t alike) {
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
  if (alike > 0) texts.alike = printf_text(tr("+%d alike"), static_cast<int>(alike));
  return texts;
}

// The height `text` takes wrapped in table column `column` of the current row.
float wrapped_height(int column, const std::string& text) {
  if (text.empty()) return 0.0f;
  ImGui::TableSetColumnIndex(column);
  const float room_px = ImGui::GetContentRegionAvail().x;
  return ImGui::CalcTextSize(wrap_text(text, room_px - 1.0f).c_str(), nullptr, false, room_px).y;
}

// `text` wrapped at its column's edge, muted or in the text colour: broken by wrap_text, since
// Dear ImGui takes "选择性重计算：moe_act," for one word and split it inside "moe_act" on
// the Chinese page. A word wider than the column is still split where the wrap falls: noted
// as cut off (state().clipped_text), `readable` when the row's tooltip holds it.
void wrapped_cell(const std::string& text, bool muted = false, bool readable = false) {
  if (text.empty()) return;
  const float room_px = ImGui::GetContentRegionAvail().x;
  const std::string lines = wrap_text(text, room_px - 1.0f);
  if (muted) ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(lines.c_str());
  ImGui::PopTextWrapPos();
  if (muted) ImGui::PopStyleColor();
  if (wrap_splits_word(lines, room_px)) {
    note_clipped("planner.cell", text, ImGui::CalcTextSize(text.c_str()).x, room_px, readable);
  }
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

// The row's height: its tallest wrapped cell.
float row_height(const CandidateTexts& texts, const ShownPlanRow& row, bool wide) {
  const float spacing_px = ImGui::GetStyle().ItemSpacing.y;
  float layout_px = wrapped_height(1, texts.layout);
  for (const std::string* below : {&texts.split, wide ? nullptr : &texts.recompute, &texts.alike}) {
    if (below && !below->empty()) layout_px += spacing_px + wrapped_height(1, *below);
  }
  const int peak = peak_column(wide);
  const auto two_lines = [&](int column, const std::string& first, const std::string& second) {
    return wrapped_height(column, first) +
           (second.empty() ? 0.0f : spacing_px + wrapped_height(column, second));
  };
  return std::max({layout_px, wide ? wrapped_height(3, texts.recompute) : 0.0f,
                   wide ? wrapped_height(4, texts.offload) : 0.0f,
                   two_lines(peak, row.peak, row.peak_change),
                   two_lines(peak + 1, row.step, row.step_change)});
}

// One candidate's row; true when clicked and applied. Its texts wrap in their columns (a
// phone's columns are narrow), and the row grows to hold them.
bool candidate_row(AppState& state, const std::vector<PlanCandidate>& rows, const ShownPlanRow& row,
                   bool current, bool wide) {
  const PlanCandidate& c = rows[row.index];
  const CandidateTexts texts = candidate_texts(state, c, current, row.alike);
  ImGui::TableNextRow();
  const float height_px = row_height(texts, row, wide);
  const bool applied = candidate_selectable(state, c, row.index, current, height_px);
  ImGui::TableSetColumnIndex(1);
  wrapped_cell(texts.layout);
  wrapped_cell(texts.split, true, true);  // the tooltip's flags hold the layout string
  if (!wide) wrapped_cell(texts.recompute);
  wrapped_cell(texts.alike, true);
  ImGui::TableNextColumn();
  wrapped_cell(std::to_string(c.config.training.micro_batch_size));
  if (wide) {
    ImGui::TableNextColumn();
    wrapped_cell(texts.recompute);
    ImGui::TableNextColumn();
    wrapped_cell(texts.offload);
  }
  ImGui::TableNextColumn();
  wrapped_cell(row.peak);
  wrapped_cell(row.peak_change, true);
  ImGui::TableNextColumn();
  wrapped_cell(row.step);
  wrapped_cell(row.step_change, true);
  if (wide) {
    ImGui::TableNextColumn();
    wrapped_cell(printf_text("%.0f", c.time.tokens_per_s_per_gpu));
    ImGui::TableNextColumn();
    wrapped_cell(printf_text("%.1f %%", 100.0 * c.time.mfu));
  }
  return applied;
}

// While an anchor applies the top bar shows anchored peaks, but the search prices every
// candidate raw (anchoring needs each candidate's whole estimate): say so, with the top bar's
// figure, rather than compare rows with a peak they were not computed like.
void draw_anchor_note(AppState& state) {
  PlannerState& planner = state.planner;
  planner.shown_anchor_note.clear();
  if (!state.anchored || !state.last_estimate) return;
  const Verdict& verdict = shown_verdict(state);
  const auto rank = static_cast<std::size_t>(verdict.limiting_pp_rank);
  if (rank >= state.anchored->ranks.size()) return;
  planner.shown_anchor_note = printf_text(
      tr("Planner figures are raw estimates; the top bar's %.2f GiB (%s) is anchored on %s."),
      to_gib(state.anchored->ranks[rank].anchored_peak_total_bytes),
      tr(fit_status_word(verdict.status)), tr_text(state.anchored->anchor.source).c_str());
  verbatim_text(tight_color(), planner.shown_anchor_note);
}

// The current configuration, above the rows that show their change from it: its layout, the
// raw estimate's peak and verdict (the rows' figures), and its step time as the search prices
// the rows. Drawn whether or not a row fits, so an empty search still says what it compares.
void draw_reference(AppState& state) {
  PlannerState& planner = state.planner;
  planner.shown_reference.clear();
  if (!planner.reference) return;
  const PlanReference& r = *planner.reference;
  if (r.error) {
    planner.shown_reference =
        printf_text(tr("current: %s does not run (%s)"), r.layout.c_str(), r.error->field.c_str());
  } else {
    // A step the model cannot price reads "?" (never a made-up 0 s).
    const std::string step = r.step_time_s > 0 ? printf_text("%.3f s", r.step_time_s) : "?";
    planner.shown_reference =
        printf_text(tr("current: %s, %.2f GiB (%s), step %s"), r.layout.c_str(),
                    to_gib(r.peak_total_bytes), tr(fit_status_word(r.status)), step.c_str());
  }
  verbatim_text(strong_text_color(), planner.shown_reference);
  record_item(state, "plan current", "text");
  draw_anchor_note(state);
}

bool draw_candidates(AppState& state, const std::vector<PlanCandidate>& rows,
                     const std::vector<std::string>& queries) {
  const bool wide = ImGui::GetContentRegionAvail().x > ImGui::GetFontSize() * 44.0f;
  // Every row in the results column, which scrolls: a table scrolling inside itself is a
  // child window that Dear ImGui skips (for Tab too) while it is out of sight.
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp;
  const std::vector<ShownPlanRow> shown = fold_alike(state, rows, queries);
  for (const ShownPlanRow& row : shown) {
    state.planner.shown_rows.push_back(
        printf_text("%zu|%s|%s|%s|%s|%zu", row.index, row.peak.c_str(), row.peak_change.c_str(),
                    row.step.c_str(), row.step_change.c_str(), row.alike));
  }
  if (!ImGui::BeginTable("planner", wide ? 9 : 5, kFlags)) return false;
  setup_candidate_columns(wide);
  bool applied = false;
  for (const ShownPlanRow& row : shown) {
    if (applied) break;
    const bool current = row.index < queries.size() && queries[row.index] == state.query;
    ImGui::PushID(static_cast<int>(row.index));
    applied = candidate_row(state, rows, row, current, wide);
    ImGui::PopID();
  }
  ImGui::EndTable();
  return applied;
}

void draw_rejections(const PlanResult& result) {
  if (result.rejections.empty()) return;
  // Counted as the summary counts them: every candidate that does not fit or is invalid (the
  // title said "the other N", which read as the candidates not shown, fitting ones included).
  const std::int64_t rejected = result.stats.out_of_memory + result.stats.invalid;
  const std::string title = printf_text(tr("Why %s candidates do not fit or are invalid"),
                                        grouped(static_cast<std::uint64_t>(rejected)).c_str());
  if (!ImGui::TreeNodeEx("##plan rejections", ImGuiTreeNodeFlags_SpanAvailWidth, "%s",
                         title.c_str())) {
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
  update_plan_reference(state);
  state.planner.shown_rows.clear();  // drawn again below when there is a list
  state.planner.shown_reference.clear();
  state.planner.shown_anchor_note.clear();
  // The planner works for any inputs, also invalid ones (it replaces the layout): never dimmed
  // with the calculator's result.
  ImGui::PushStyleVar(ImGuiStyleVar_Alpha, 1.0f);
  results_heading("LAYOUT PLANNER",
                  "the fastest layouts that fit; click a row or a point to apply it");
  draw_controls(state);
  draw_summary(state);
  PlannerState& planner = state.planner;
  bool applied = false;
  if (!planner.search) draw_reference(state);  // also above an empty search or an error
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
