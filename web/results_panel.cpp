// The results column; see results_panel.hpp.
#include "results_panel.hpp"

#include <cstdio>
#include <string>

#include "clip_audit.hpp"
#include "export_panel.hpp"
#include "format.hpp"
#include "imgui.h"
#include "megamem/layout_label.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"
#include "messages.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

// docs/memory-model.md section 9, one line each.
constexpr const char* kNotModeled[] = {
    "Megatron-FSDP, CUDA graphs, FP8 activation caches and TE's FP8 transpose copies "
    "(--fp8-param-gather changes only weight bytes).",
    "Muon's layer-wise distributed optimizer bin-packs whole tensors onto DP ranks; megamem uses "
    "the average share, so one rank can hold more or less (up to 25 % in Megatron's CI).",
    "--activation-offload-fraction and --delta-offload-bytes-across-pp-ranks (all eligible "
    "groups are taken as offloaded).",
    "Context-parallel ring-attention buffers beyond the saved set; NCCL EP's buffers (the flex "
    "dispatcher's ncclep backend); MoE imbalance beyond the imbalance-factor knob.",
    "Memory outside the training step: checkpoint saving, evaluation.",
    "The optimizer step's own transients (fused Adam and the distributed optimizer work in "
    "place; taken as zero).",
    "Allocator behaviour: fragmentation is a fraction of the peak, not simulated.",
};

void not_modeled_line(AppState& state) {
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::SetNextItemOpen(state.not_modeled_open);
  // Shortened to the row with "..." (a phone cut it mid-word, or mid-glyph in Chinese); the
  // open row lists it all.
  const std::string label =
      fit_text(tr("Not modeled: Megatron-FSDP, CUDA graphs, FP8 caches, Muon's per-rank packing, "
                  "checkpoint and eval memory, allocator behaviour..."),
               ImGui::GetContentRegionAvail().x - ImGui::GetTreeNodeToLabelSpacing());
  state.not_modeled_open =
      ImGui::TreeNodeEx("##not modeled", ImGuiTreeNodeFlags_SpanAvailWidth, "%s", label.c_str());
  describe_item(state, "not modeled", "tree", "docs/memory-model.md, section 9",
                "What the estimate leaves out; click for the list.");
  if (state.not_modeled_open) {
    ImGui::PushTextWrapPos(0.0f);
    for (const char* line : kNotModeled) bullet_wrapped(tr(line));
    ImGui::PopTextWrapPos();
    ImGui::TreePop();
  }
  ImGui::PopStyleColor();
}

void summary_line(const Estimate& estimate) {
  const NormalizedConfig& n = estimate.normalized;
  const Config& c = n.config;
  std::string text = c.model.name.empty() ? std::string(tr("model")) : c.model.name;
  text += " (" + count_text(estimate.totals.params) + tr(" params");
  if (estimate.totals.active_params != estimate.totals.params) {
    text += ", " + count_text(estimate.totals.active_params) + tr(" active");
  }
  text += ")";
  char layout[200];
  std::snprintf(layout, sizeof layout,
                n.num_microbatches == 1
                    ? tr("  %s  DP%lld expert-DP%lld  mbs %d  seq %d  %lld micro-batch")
                    : tr("  %s  DP%lld expert-DP%lld  mbs %d  seq %d  %lld micro-batches"),
                layout_summary_label(c.parallel).c_str(), static_cast<long long>(n.data_parallel),
                static_cast<long long>(n.expert_data_parallel), c.training.micro_batch_size,
                c.training.seq_length, static_cast<long long>(n.num_microbatches));
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted((text + layout).c_str());
  ImGui::PopTextWrapPos();
}

}  // namespace

const std::string& recipe_of_query(const std::string& query) {
  static std::string asked;
  static std::string name;
  if (query == asked) return name;
  asked = query;
  name.clear();
  const Expected<PresetCatalog>& catalog = builtin_presets();
  for (std::size_t i = 0; catalog && i < catalog->recipes.size() && name.empty(); ++i) {
    const Expected<SharedConfig> shared = recipe_config(catalog->recipes[i]);
    if (shared && encode_share_query(*shared) == query) name = catalog->recipes[i].name;
  }
  return name;
}

void results_heading(const char* title, const char* note) {
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  const float line_px = ImGui::GetContentRegionAvail().x;
  ImGui::TextUnformatted(tr(title));
  if (note) {
    // Beside the title where the line holds both, else wrapped below it: on a phone the
    // rank bars' capacity and error band were cut off at the window's edge.
    const float gap_px = ImGui::GetFontSize();
    const float both_px =
        ImGui::CalcTextSize(tr(title)).x + gap_px + ImGui::CalcTextSize(tr(note)).x;
    if (both_px <= line_px) ImGui::SameLine(0.0f, gap_px);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(tr(note));
    ImGui::PopTextWrapPos();
    audit_last_item("results.heading", tr(note), false);
  }
  ImGui::PopStyleColor();
  ImGui::Separator();
}

void rank_selector(AppState& state, const Estimate& estimate, const char* id) {
  const int ranks = static_cast<int>(estimate.ranks.size());
  if (ranks <= 1) return;
  const int shown = shown_rank(state);
  char preview[48];
  std::snprintf(preview, sizeof preview, tr("PP rank %d%s"), shown,
                shown == estimate.limiting_pp_rank ? tr(" (limiting)") : "");
  ImGui::SetNextItemWidth(ImGui::CalcTextSize(tr("PP rank 000 (limiting)")).x +
                          ImGui::GetFrameHeight() * 1.5f);
  if (ImGui::BeginCombo(id, preview)) {
    for (int r = 0; r < ranks; ++r) {
      char label[48];
      std::snprintf(label, sizeof label, tr("PP rank %d%s"), r,
                    r == estimate.limiting_pp_rank ? tr(" (limiting)") : "");
      if (ImGui::Selectable(label, r == shown)) state.selected_rank = r;
    }
    ImGui::EndCombo();
  }
  describe_item(state, id, "combo", "pipeline rank",
                "The rank the timeline and the module tree show (click a bar too).");
}

namespace {

// One paragraph of the link-error box, broken by wrap_text (Dear ImGui cuts a Chinese run
// anywhere, so a line could start with its '；'); Dear ImGui still breaks a line that one
// over-long word leaves too wide. Recorded as drawn for the tests.
void link_error_paragraph(AppState& state, const std::string& text, float width_px) {
  const std::string lines = wrap_text(text, width_px - 1.0f);
  ImGui::TextUnformatted(lines.c_str());
  state.link_error_shown += lines + "\n";
}

// The texts of the link-error box, wrapped at `wrap_local_px` (window coordinates).
void link_error_lines(AppState& state, float wrap_local_px) {
  ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
  ImGui::TextUnformatted(tr("Part of this link could not be read"));
  ImGui::PopStyleColor();
  ImGui::PushTextWrapPos(wrap_local_px);
  const float width_px = wrap_local_px - ImGui::GetCursorPosX();
  link_error_paragraph(state, state.link_error->field + ": " + tr_text(state.link_error->message),
                       width_px);
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  if (state.link_error_count > 1) {
    const int more = static_cast<int>(state.link_error_count - 1);
    link_error_paragraph(state,
                         printf_text(more == 1 ? tr("and %d more parameter not read.")
                                               : tr("and %d more parameters not read."),
                                     more),
                         width_px);
  }
  link_error_paragraph(
      state,
      tr("Showing what the rest of the link sets (the default configuration when nothing "
         "else); docs/share-links.md describes the link format."),
      width_px);
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
}

// A tinted box as tall as its wrapped text (a box of fixed height cut its last line on a
// phone): the text first, on the draw list's upper channel, then the box under it.
void link_error_box(AppState& state) {
  const ImGuiStyle& style = ImGui::GetStyle();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 top_left = ImGui::GetCursorScreenPos();
  const float width_px = ImGui::GetContentRegionAvail().x;
  const ImVec2 pad = style.WindowPadding;
  draw->ChannelsSplit(2);
  draw->ChannelsSetCurrent(1);
  ImGui::SetCursorScreenPos(ImVec2(top_left.x + pad.x, top_left.y + pad.y));
  ImGui::BeginGroup();
  link_error_lines(state, ImGui::GetCursorPosX() + width_px - 2.0f * pad.x);
  ImGui::EndGroup();
  record_item(state, "link error text", "text");
  const ImVec2 bottom_right(top_left.x + width_px, ImGui::GetItemRectMax().y + pad.y);
  draw->ChannelsSetCurrent(0);
  draw->AddRectFilled(top_left, bottom_right, kErrorColor & 0x30FFFFFF, style.FrameRounding);
  draw->ChannelsMerge();
  ImGui::SetCursorScreenPos(top_left);
  ImGui::Dummy(ImVec2(width_px, bottom_right.y - top_left.y));  // the box's room
  record_item(state, "link error", "text");
}

// Invalid settings: what is wrong, the fixes, and what the dimmed result below is of (another
// configuration: the last valid one). True when a fix was applied.
bool invalid_settings_box(AppState& state) {
  wrapped_text(kErrorColor, tr("Invalid settings - ") + state.error->field + ": " +
                                tr_text(state.error->message));
  bool applied = suggestion_buttons(state, "results suggestion");
  if (state.suggestions.empty()) {
    wrapped_text(muted_text_color(),
                 "No valid layout is near these settings; the planner below searches them all.");
  }
  if (!state.last_estimate) return applied;
  const Config& last = state.estimated.config;
  wrapped_text(muted_text_color(),
               printf_text(tr("Below, dimmed: the last valid configuration, %s on %lld x %s, %s - "
                              "not the settings above."),
                           model_name_or(last.model.name, tr("custom model")),
                           static_cast<long long>(last.parallel.world_size),
                           last.device.name.c_str(), layout_summary_label(last.parallel).c_str()));
  if (!applied && ImGui::SmallButton(tr("Go back to it"))) {
    state.shared = state.estimated;
    state.edited_key.clear();
    applied = true;
  }
  describe_item(state, "back to last valid", "button", "the last valid configuration",
                "Restores the configuration the dimmed result is of.");
  return applied;
}

}  // namespace

bool draw_results_panel(AppState& state) {
  state.link_error_shown.clear();
  if (state.link_error) link_error_box(state);
  bool changed = state.error && invalid_settings_box(state);
  if (!state.layout_note.empty()) {
    wrapped_text(tight_color(), state.layout_note);
    record_item(state, "layout note", "text");
  }
  if (!state.last_estimate) {
    // Nothing valid yet (an invalid link opened): the planner finds a layout for the model.
    return draw_planner_panel(state) || changed;
  }
  const Estimate& estimate = *state.last_estimate;

  // An invalid input never blanks the result: the last valid one stays, dimmed.
  const float dim = state.error ? 0.45f : 1.0f;
  ImGui::PushStyleVar(ImGuiStyleVar_Alpha, dim);
  summary_line(estimate);
  // The default page is a published recipe: say which (#28 item 13), as for any recipe loaded.
  if (const std::string& recipe = recipe_of_query(state.query); !recipe.empty()) {
    wrapped_text(muted_text_color(), printf_text(tr("the published recipe %s"), recipe.c_str()));
  }
  not_modeled_line(state);
  for (const std::string& warning : estimate.warnings) {
    wrapped_text(tight_color(), tr("warning: ") + tr_text(warning));
  }
  draw_rank_bars(state, estimate);
  changed |= draw_what_if_table(state, estimate);
  changed |= draw_planner_panel(state);
  draw_timeline(state, estimate, dim);
  draw_module_tree(state, estimate);
  draw_export_panel(state, estimate);
  ImGui::PopStyleVar();
  return changed;
}

}  // namespace megamem::web
