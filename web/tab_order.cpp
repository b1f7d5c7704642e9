// Tab order across windows; see tab_order.hpp. Reads Dear ImGui 1.86's tabbing request
// (imgui.cpp NavUpdateCreateTabbingRequest / NavProcessItemForTabbingRequest): direction
// +1 (a field is being edited), 0 (none is: the window's first field) or -1 (Shift+Tab); the
// counter is 1 once the current field was passed with no field after it.
#include "tab_order.hpp"

#include <string>

#include "imgui.h"
#include "imgui_internal.h"

namespace megamem::web {
namespace {

struct TabMove {
  std::string window;  // "" = none pending
  int direction = 0;   // +1: its first field, -1: its last
};
TabMove pending;
bool first_window_focused = false;

// Starts a tabbing request in `window` as if Tab had been pressed there with nothing edited
// (its first field) or Shift+Tab from before its first field (its last).
void tab_into(ImGuiWindow* window, int direction) {
  ImGuiContext& g = *GImGui;
  ImGui::FocusWindow(window);
  ImGui::ClearActiveID();
  g.NavId = 0;
  ImGui::NavMoveRequestSubmit(
      ImGuiDir_None, direction > 0 ? ImGuiDir_Down : ImGuiDir_Up, ImGuiNavMoveFlags_Tabbing,
      ImGuiScrollFlags_KeepVisibleEdgeX | ImGuiScrollFlags_KeepVisibleEdgeY);
  g.NavTabbingDir = direction > 0 ? 0 : -1;
  g.NavTabbingResultFirst.Clear();
  g.NavTabbingCounter = -1;
}

}  // namespace

void begin_tab_order_frame(const char* first_window) {
  if (!first_window_focused) {
    if (ImGuiWindow* first = ImGui::FindWindowByName(first_window)) {
      ImGui::FocusWindow(first);
      first_window_focused = true;
    }
  }
  if (pending.window.empty()) return;
  if (ImGuiWindow* window = ImGui::FindWindowByName(pending.window.c_str())) {
    tab_into(window, pending.direction);
  }
  pending.window.clear();
}

void tab_onward(const char* next, const char* previous) {
  ImGuiContext& g = *GImGui;
  ImGuiWindow* window = ImGui::GetCurrentWindow();
  const bool tabbing = g.NavMoveScoringItems && (g.NavMoveFlags & ImGuiNavMoveFlags_Tabbing) &&
                       !(g.NavMoveFlags & ImGuiNavMoveFlags_FocusApi);
  if (!tabbing || g.NavWindow == nullptr || g.NavWindow->RootWindow != window) return;
  const bool no_field = g.NavTabbingResultFirst.ID == 0;
  bool leaves = false;
  if (g.NavTabbingDir > 0) leaves = g.NavTabbingCounter == 1 || no_field;  // past the last
  if (g.NavTabbingDir == 0) leaves = no_field;                             // nothing to land on
  // Shift+Tab still looking at the window's end: the current field was its first. (Entered
  // from the next window, NavId is 0 and the last field found is the one to land on.)
  if (g.NavTabbingDir < 0) leaves = g.NavId != 0 || g.NavMoveResultLocal.ID == 0;
  if (!leaves) return;
  ImGui::NavMoveRequestCancel();
  pending = TabMove{.window = g.NavTabbingDir < 0 ? previous : next,
                    .direction = g.NavTabbingDir < 0 ? -1 : 1};
}

}  // namespace megamem::web
