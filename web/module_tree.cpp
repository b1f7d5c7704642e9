// The per-module breakdown of the shown rank (ChunkMemory::modules): parameters, weight,
// gradient and optimizer bytes, and activations saved per micro-batch, as a tree whose
// columns sort (siblings are sorted at every level; unsorted = model order).
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "format.hpp"
#include "imgui.h"
#include "messages.hpp"
#include "results_panel.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

// A column's English name: "weights" for "weights##weights" and for the Chinese
// "权重###weights##weights", so test handles and state().modules_sort keep one spelling.
std::string english_column(const char* name) {
  std::string column = name;
  if (const std::size_t id = column.find("###"); id != std::string::npos) column.erase(0, id + 3);
  column.resize(std::min(column.size(), column.find("##")));
  return column;
}

enum Column { kName, kParams, kWeights, kGradients, kOptimizer, kActivations, kColumns };

struct Sort {
  int column = -1;  // -1: model order
  bool descending = true;
};

double key_of(const ModuleMemory& m, int column) {
  switch (column) {
    case kParams:
      return static_cast<double>(m.params);
    case kWeights:
      return static_cast<double>(m.weight_bytes);
    case kGradients:
      return static_cast<double>(m.gradient_bytes);
    case kOptimizer:
      return static_cast<double>(m.optimizer_bytes);
    case kActivations:
      return static_cast<double>(m.activation_bytes);
    default:
      return 0.0;
  }
}

void bytes_cell(std::uint64_t bytes) {
  ImGui::TableNextColumn();
  if (bytes == 0) {
    ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
    ImGui::TextUnformatted("-");
    ImGui::PopStyleColor();
    return;
  }
  const double gib = to_gib(bytes);
  if (gib >= 0.01) {
    ImGui::Text("%.2f GiB", gib);
  } else {
    ImGui::Text("%.2f MiB", to_mib(bytes));
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(tr("%s bytes"), grouped(bytes).c_str());
}

void node(const ModuleMemory& module, const Sort& sort, int depth) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  const bool leaf = module.children.empty();
  ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_SpanFullWidth;
  if (leaf) flags |= ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen;
  if (depth == 0) flags |= ImGuiTreeNodeFlags_DefaultOpen;
  std::string label = module.name;
  if (module.expert) label += tr("  (experts)");
  const bool open = ImGui::TreeNodeEx(module.name.c_str(), flags, "%s", label.c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(count_text(module.params).c_str());
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(tr("%s parameters"),
                      grouped(static_cast<std::uint64_t>(module.params)).c_str());
  }
  bytes_cell(module.weight_bytes);
  bytes_cell(module.gradient_bytes);
  bytes_cell(module.optimizer_bytes);
  bytes_cell(module.activation_bytes);
  if (leaf || !open) return;
  std::vector<std::size_t> order(module.children.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (sort.column > kName) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const double ka = key_of(module.children[a], sort.column);
      const double kb = key_of(module.children[b], sort.column);
      return sort.descending ? ka > kb : ka < kb;
    });
  } else if (sort.column == kName && sort.descending) {
    std::reverse(order.begin(), order.end());
  }
  for (const std::size_t i : order) {
    ImGui::PushID(static_cast<int>(i));
    node(module.children[i], sort, depth + 1);
    ImGui::PopID();
  }
  ImGui::TreePop();
}

// Narrow screens (a phone) drop the gradient and optimizer columns so names stay readable.
void setup_columns(float number_px, bool compact) {
  const ImGuiTableColumnFlags wide_only = compact ? ImGuiTableColumnFlags_Disabled : 0;
  const ImGuiTableColumnFlags number =
      ImGuiTableColumnFlags_WidthFixed | ImGuiTableColumnFlags_PreferSortDescending;
  ImGui::TableSetupColumn(tr("module##module"),
                          ImGuiTableColumnFlags_WidthStretch | ImGuiTableColumnFlags_NoHide);
  ImGui::TableSetupColumn(tr("params##params"), number, number_px);
  ImGui::TableSetupColumn(tr("weights##weights"), number, number_px);
  ImGui::TableSetupColumn(tr("gradients##gradients"), number | wide_only, number_px);
  ImGui::TableSetupColumn(tr("optimizer##optimizer"), number | wide_only, number_px);
  ImGui::TableSetupColumn(tr("act/µbatch##act/µbatch"), number, number_px);
  ImGui::TableSetupScrollFreeze(0, 1);
}

// Headers one by one, so each records its rectangle (tests click on them).
void header_row(AppState& state) {
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
  for (int column = 0; column < kColumns; ++column) {
    ImGui::TableSetColumnIndex(column);
    const char* name = ImGui::TableGetColumnName(column);
    ImGui::TableHeader(name);
    describe_item(state, ("modules header " + english_column(name)).c_str(), "header",
                  "sort by this column",
                  "Click to sort; again to reverse; a third time for model order.");
  }
}

// The table's sort, also kept in the state for tests ("weights descending").
Sort current_sort(AppState& state) {
  Sort sort;
  if (const ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
      specs && specs->SpecsCount > 0) {
    sort.column = specs->Specs[0].ColumnIndex;
    sort.descending = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
  }
  state.modules_sort = sort.column < 0 ? std::string()
                                       : english_column(ImGui::TableGetColumnName(sort.column)) +
                                             (sort.descending ? " descending" : " ascending");
  return sort;
}

}  // namespace

void draw_module_tree(AppState& state, const Estimate& estimate) {
  const int rank = shown_rank(state);
  results_heading("MODULES", "per GPU; activations saved per micro-batch");
  rank_selector(state, estimate, "##modules rank");
  const RankMemory& memory = estimate.ranks[static_cast<std::size_t>(rank)];

  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                     ImGuiTableFlags_Sortable | ImGuiTableFlags_SortTristate |
                                     ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_Resizable;
  const float number_px = ImGui::CalcTextSize("000.00 GiB").x + ImGui::GetFontSize() * 0.5f;
  const bool compact =
      ImGui::GetContentRegionAvail().x < number_px * 5.0f + ImGui::GetFontSize() * 12.0f;
  if (!ImGui::BeginTable("modules", kColumns, kFlags)) return;
  setup_columns(number_px, compact);
  header_row(state);
  const Sort sort = current_sort(state);
  for (const ChunkMemory& chunk : memory.chunks) {
    ImGui::PushID(chunk.vpp_chunk);
    if (chunk.modules.name.empty()) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(tr("(no module tree)"));
    } else {
      node(chunk.modules, sort, 0);
    }
    ImGui::PopID();
  }
  ImGui::EndTable();
}

}  // namespace megamem::web
