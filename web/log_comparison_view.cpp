// The training log's comparison; see log_comparison_view.hpp.
#include "log_comparison_view.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "calculation.hpp"
#include "clip_audit.hpp"
#include "format.hpp"
#include "imgui.h"
#include "megamem/units.hpp"
#include "messages.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

// The comparison's words, in one place (ui.md vocabulary; `megamem compare` prints the same),
// shown through tr() (web/messages/messages.tsv).
constexpr const char* kRankHeading =
    "rank %lld (pipeline rank %d, after %lld iterations, line %zu)";
// "difference" is estimated - measured, in GiB and in % of the measurement.
constexpr const char* kColumns[] = {"GiB", "measured", "estimated", "difference"};
constexpr const char* kRowAllocated = "allocated vs static";
constexpr const char* kRowMaxAllocated = "max allocated vs peak allocated";
constexpr const char* kRowMaxReserved = "max reserved vs peak reserved";
constexpr const char* kParamsSame = "parameters: %s logged, %s estimated (same)";
constexpr const char* kParamsDiffer = "parameters: %s logged, %s estimated (%+lld)";
constexpr const char* kParamsMissing = "parameters: not in the log, %s estimated";
constexpr const char* kLoaded = "The run's configuration is loaded into the calculator: ";
constexpr const char* kTheoretical =
    "Megatron's own theoretical footprint (line %zu): weight and optimizer %.0f MiB";
constexpr const char* kLinesRead = "lines read (%zu)";
constexpr const char* kLine = "line %zu: %s";
constexpr const char* kSkipped = "skipped %s";

// "+1.57 (+12.3 %)": estimated - measured, in GiB and in % of the measurement.
std::string difference_text(std::uint64_t estimated, std::uint64_t measured) {
  double delta = static_cast<double>(estimated) - static_cast<double>(measured);
  if (std::abs(delta) < 0.005 * kBytesPerGiB) delta = 0;  // "+0.00", never "-0.00"
  char text[64];
  if (measured == 0) {
    std::snprintf(text, sizeof text, "%+.2f", delta / kBytesPerGiB);
  } else {
    std::snprintf(text, sizeof text, "%+.2f (%+.1f %%)", delta / kBytesPerGiB,
                  100.0 * delta / static_cast<double>(measured));
  }
  return text;
}

// Text that wraps at its table column's edge.
void wrapped_cell(const std::string& text) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
}

void table_row(const char* label, std::uint64_t measured, std::uint64_t estimated) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  wrapped_cell(tr(label));
  ImGui::TableNextColumn();
  ImGui::Text("%.2f", to_gib(measured));
  audit_last_item("log.measured", "", false);
  ImGui::TableNextColumn();
  ImGui::Text("%.2f", to_gib(estimated));
  audit_last_item("log.estimated", "", false);
  ImGui::TableNextColumn();
  // "+1.57 (+12.3 %)" on two lines when the column is narrower (a phone).
  wrapped_cell(difference_text(estimated, measured));
  audit_last_item("log.difference", difference_text(estimated, measured), false);
}

std::string parameters_text(const RankComparison& row) {
  const std::string estimated = grouped(static_cast<std::uint64_t>(row.estimated_params));
  const std::string logged = grouped(static_cast<std::uint64_t>(row.logged_params));
  if (row.logged_params == 0) return printf_text(tr(kParamsMissing), estimated.c_str());
  if (row.logged_params == row.estimated_params) {
    return printf_text(tr(kParamsSame), logged.c_str(), estimated.c_str());
  }
  return printf_text(tr(kParamsDiffer), logged.c_str(), estimated.c_str(),
                     static_cast<long long>(row.estimated_params - row.logged_params));
}

void rank_table(const RankComparison& row, std::size_t index) {
  const std::string heading =
      printf_text(tr(kRankHeading), static_cast<long long>(row.global_rank), row.pp_rank,
                  static_cast<long long>(row.measured.iteration), row.measured.line);
  wrapped_cell(heading);
  // The row names and the difference wrap; the numbers keep their width.
  const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingFixedFit;
  ImGui::PushID(static_cast<int>(index));
  if (ImGui::BeginTable("##measured vs estimated", 4, flags)) {
    ImGui::TableSetupColumn(tr(kColumns[0]), ImGuiTableColumnFlags_WidthStretch, 1.6f);
    ImGui::TableSetupColumn(tr(kColumns[1]));
    ImGui::TableSetupColumn(tr(kColumns[2]));
    ImGui::TableSetupColumn(tr(kColumns[3]), ImGuiTableColumnFlags_WidthStretch, 1.0f);
    audited_headers_row("log.header");
    const RankMemory& e = *row.estimated;
    // The log's allocated figure is taken after the optimizer step.
    table_row(kRowAllocated, row.measured.allocated_bytes, allocated_after_step_bytes(e));
    table_row(kRowMaxAllocated, row.measured.max_allocated_bytes,
              max_allocated_after_bytes(e, row.measured.iteration));
    table_row(kRowMaxReserved, row.measured.max_reserved_bytes, e.peak_reserved_bytes);
    ImGui::EndTable();
  }
  ImGui::PopID();
  wrapped_cell(parameters_text(row));
}

void lines_read(const LogComparison& c) {
  const std::string title = printf_text(tr(kLinesRead), c.log.lines_read.size());
  if (!ImGui::TreeNode(title.c_str())) return;
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  for (const LogLineRead& read : c.log.lines_read) {
    wrapped_cell(printf_text(tr(kLine), read.line, tr_text(read.what).c_str()));
  }
  for (const std::string& note : c.log.notes) {
    wrapped_cell(printf_text(tr(kSkipped), tr_text(note).c_str()));
  }
  ImGui::PopStyleColor();
  ImGui::TreePop();
}

void left_out(const LogImport& imported) {
  for (const std::string& warning : imported.warnings) {
    wrapped_text(tight_color(), tr("warning: ") + tr_text(warning));
  }
}

// A log with a memory report can anchor every estimate (anchor.hpp): the button sets the
// page's anchor from it, as `megamem estimate --anchor LOG` reads it.
void use_as_anchor_button(AppState& state) {
  LogImport& imported = state.log_import;
  if (imported.comparison->ranks.empty()) return;
  if (ImGui::Button(tr("use as anchor"))) {
    const std::optional<Error> error = anchor_on_log(state, imported.box.text);
    imported.anchor_error = error ? error->field + ": " + error->message : "";
  }
  describe_item(state, "use as anchor", "button", "estimate --anchor LOG",
                "Anchors every estimate on this run: what the estimate got wrong on it, "
                "carried to the configuration being edited (docs/memory-model.md).");
  if (!imported.anchor_error.empty()) {
    wrapped_text(kErrorColor, tr_text(imported.anchor_error));
  }
}

}  // namespace

void draw_log_comparison(AppState& state) {
  const LogImport& imported = state.log_import;
  if (!imported.comparison) return;
  const LogComparison& c = *imported.comparison;
  for (std::size_t i = 0; i < c.ranks.size(); ++i) rank_table(c.ranks[i], i);
  use_as_anchor_button(state);
  if (c.log.theoretical.line > 0) {
    wrapped_text(muted_text_color(), printf_text(tr(kTheoretical), c.log.theoretical.line,
                                                 c.log.theoretical.weight_and_optimizer_mib));
  }
  wrapped_text(muted_text_color(), tr(kLoaded) + imported.link);
  lines_read(c);
  left_out(imported);
}

}  // namespace megamem::web
