// What the page drew cut off; see clip_audit.hpp.
#include "clip_audit.hpp"

#include <algorithm>
#include <vector>

#include "imgui.h"
#include "imgui_internal.h"
#include "widgets.hpp"

namespace megamem::web {
namespace {

struct ClippedText {
  std::string where;
  std::string text;
  float needed_px = 0.0f;
  float room_px = 0.0f;
  bool readable = false;
};

struct ClipAudit {
  std::vector<ClippedText> frame;  // the frame being drawn
  std::vector<ClippedText> last;   // the last finished frame
};
ClipAudit audit;

// The whole text in a tooltip, wrapped at the display's width.
void whole_text_tooltip(const std::string& text) {
  place_tooltip_for_touch(ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(tooltip_wrap_px());
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

}  // namespace

void begin_clip_audit_frame() { audit.frame.clear(); }

void end_clip_audit_frame() { audit.last = audit.frame; }

void note_clipped(const char* where, const std::string& text, float needed_px, float room_px,
                  bool readable) {
  audit.frame.push_back(ClippedText{.where = where,
                                    .text = text,
                                    .needed_px = needed_px,
                                    .room_px = room_px,
                                    .readable = readable});
}

bool audit_last_item(const char* where, const std::string& text, bool readable) {
  const ImVec2 min = ImGui::GetItemRectMin();
  const ImVec2 max = ImGui::GetItemRectMax();
  const float clip_px = ImGui::GetWindowDrawList()->GetClipRectMax().x;
  if (max.x <= clip_px + 0.5f) return false;
  note_clipped(where, text, max.x - min.x, std::max(0.0f, clip_px - min.x), readable);
  return true;
}

void readable_text(const char* where, const std::string& text) {
  ImGui::TextUnformatted(text.c_str());
  if (audit_last_item(where, text, true) && ImGui::IsItemHovered()) whole_text_tooltip(text);
}

void fitted_text(const char* where, const std::string& text, float room_px) {
  const float needed_px = ImGui::CalcTextSize(text.c_str()).x;
  if (needed_px <= room_px + 0.5f) {
    ImGui::TextUnformatted(text.c_str());
    return;
  }
  ImGui::TextUnformatted(fit_text(text, room_px).c_str());
  note_clipped(where, text, needed_px, room_px, true);
  if (ImGui::IsItemHovered()) whole_text_tooltip(text);
}

void audited_headers_row(const char* where) {
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers, ImGui::TableGetHeaderRowHeight());
  // Headers sort nothing here: not a stop of the Tab key.
  ImGui::PushItemFlag(ImGuiItemFlags_Inputable, false);
  for (int column = 0; column < ImGui::TableGetColumnCount(); ++column) {
    if (!ImGui::TableSetColumnIndex(column)) continue;
    const char* name = ImGui::TableGetColumnName(column);
    const float room_px = ImGui::GetContentRegionAvail().x;
    const float needed_px = ImGui::CalcTextSize(name, nullptr, true).x;
    ImGui::PushID(column);
    ImGui::TableHeader(name);
    ImGui::PopID();
    if (needed_px <= room_px + 0.5f) continue;
    note_clipped(where, name, needed_px, room_px, true);
    if (ImGui::IsItemHovered()) whole_text_tooltip(name);
  }
  ImGui::PopItemFlag();
}

nlohmann::json clipped_text_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const ClippedText& c : audit.last) {
    out.push_back({{"where", c.where},
                   {"text", c.text},
                   {"needed_px", c.needed_px},
                   {"room_px", c.room_px},
                   {"readable", c.readable}});
  }
  return out;
}

}  // namespace megamem::web
