// Tab order across windows and through every control; see tab_order.hpp. Reads Dear ImGui
// 1.86's tabbing request (imgui.cpp NavUpdateCreateTabbingRequest /
// NavProcessItemForTabbingRequest): direction +1 (a field is being edited), 0 (none is: the
// window's first field) or -1 (Shift+Tab); the counter is 1 once the current field was passed
// with no field after it. An item is a stop when it carries ImGuiItemFlags_Inputable; ImGui
// gives that flag to its text fields only, and a tab onto an item with it asks the item for
// text input (NavActivateInputId), which buttons, checkboxes, combos, selectables and tree
// nodes ignore: they are focused, not pressed.
#include "tab_order.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "imgui.h"
#include "imgui_internal.h"
#include "theme.hpp"

namespace megamem::web {
namespace {

struct TabMove {
  std::string window;  // "" = none pending
  int direction = 0;   // +1: its first field, -1: its last
};

struct TabOrder {
  TabMove pending;
  bool first_window_focused = false;
  bool nav_id_alive = false;  // the item with the keyboard was drawn last frame
  bool focus_named = false;   // note_keyboard_focus() found it this frame
  KeyboardFocus focus;
};
TabOrder tab;

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

bool tabbing_request() {
  const ImGuiContext& g = *GImGui;
  return g.NavMoveScoringItems && (g.NavMoveFlags & ImGuiNavMoveFlags_Tabbing) &&
         !(g.NavMoveFlags & ImGuiNavMoveFlags_FocusApi);
}

// Tab with no field being edited: on from the control that has the keyboard, not back to the
// window's first field (ImGui 1.86 restarts unless a field is active).
void tab_from_focus() {
  ImGuiContext& g = *GImGui;
  if (tabbing_request() && g.NavTabbingDir == 0 && g.NavId != 0 && tab.nav_id_alive) {
    g.NavTabbingDir = +1;
  }
  // A control reached by Tab shows that it has the keyboard (ImGui highlights only those
  // reached by the arrow keys).
  if (g.NavJustMovedToId != 0 && g.NavJustMovedToId == g.NavId) {
    g.NavDisableHighlight = false;
    g.NavDisableMouseHover = true;
  }
}

// A key pressed or a character typed while a control has the keyboard shows its ring: ImGui
// shows it only after a move by the arrow keys or Tab, so a field edited after a click, then
// left with Enter, kept the keyboard with nothing to show it.
void key_shows_ring() {
  ImGuiContext& g = *GImGui;
  if (g.NavId == 0 || !g.NavDisableHighlight) return;
  bool key = g.IO.InputQueueCharacters.Size > 0;
  for (int k = 0; k < IM_ARRAYSIZE(g.IO.KeysDown) && !key; ++k) key = ImGui::IsKeyPressed(k, false);
  if (key) g.NavDisableHighlight = false;
}

// Enter presses the control that has the keyboard, as Space does (ImGui's Enter only starts
// editing a field).
void enter_activates() {
  ImGuiContext& g = *GImGui;
  const bool enter = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false) ||
                     ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter), false);
  if (!enter || g.ActiveId != 0 || g.NavId == 0 || !tab.nav_id_alive || g.NavDisableHighlight ||
      g.NavWindow == nullptr) {
    return;
  }
  g.NavActivateId = g.NavActivateDownId = g.NavActivatePressedId = g.NavId;
  g.NavActivateInputId = g.NavId;  // a field starts editing
}

// The item `id` at `rect` of `window`, with its position in the window's content (scrolling
// of the window and its parents undone), so that positions compare while windows scroll.
KeyboardFocus focus_of(ImGuiID id, const ImGuiWindow* window, const ImRect& rect) {
  ImVec2 scroll(0.0f, 0.0f);
  const ImGuiWindow* root = window;
  for (const ImGuiWindow* w = window; w != nullptr; w = w->ParentWindow) {
    scroll = ImVec2(scroll.x + w->Scroll.x, scroll.y + w->Scroll.y);
    root = w;
    if (!(w->Flags & ImGuiWindowFlags_ChildWindow)) break;
  }
  return KeyboardFocus{.id = id,
                       .window = window->RootWindow->Name,
                       .x = rect.Min.x,
                       .y = rect.Min.y,
                       .width = rect.GetWidth(),
                       .height = rect.GetHeight(),
                       .content_x = rect.Min.x - root->Pos.x + scroll.x,
                       .content_y = rect.Min.y - root->Pos.y + scroll.y};
}

// The ring around the control that has the keyboard, in its window's draw list (under the
// popups and tooltips drawn over it) and inside the window; as thick as the font is large, so
// a phone's 3x pixels show it too.
void draw_focus_ring() {
  ImGuiContext& g = *GImGui;
  tab.focus.ring = FocusRing{};
  ImGuiWindow* window = g.NavWindow;
  if (tab.focus.id == 0 || g.NavDisableHighlight || window == nullptr) return;
  const float thickness_px = std::max(2.0f, std::round(g.FontSize * 0.12f));
  const float gap_px = thickness_px + 1.0f;  // clear of the control's own border
  ImRect ring(tab.focus.x - gap_px, tab.focus.y - gap_px, tab.focus.x + tab.focus.width + gap_px,
              tab.focus.y + tab.focus.height + gap_px);
  const ImRect& clip = window->InnerClipRect;
  if (!clip.Overlaps(ring)) return;
  window->DrawList->PushClipRect(clip.Min, clip.Max);
  // AddRect strokes half a pixel in from the points it is given: the ring covers exactly
  // `ring`, as reported.
  const float half_px = thickness_px * 0.5f - 0.5f;
  window->DrawList->AddRect(ImVec2(ring.Min.x + half_px, ring.Min.y + half_px),
                            ImVec2(ring.Max.x - half_px, ring.Max.y - half_px), focus_ring_color(),
                            g.Style.FrameRounding, 0, thickness_px);
  window->DrawList->PopClipRect();
  ring.ClipWith(clip);
  tab.focus.ring = FocusRing{.shown = true,
                             .x = ring.Min.x,
                             .y = ring.Min.y,
                             .width = ring.GetWidth(),
                             .height = ring.GetHeight(),
                             .thickness_px = thickness_px,
                             .color = focus_ring_color()};
}

}  // namespace

void begin_tab_order_frame(const char* first_window) {
  if (!tab.first_window_focused) {
    if (ImGuiWindow* first = ImGui::FindWindowByName(first_window)) {
      ImGui::FocusWindow(first);
      tab.first_window_focused = true;
    }
  }
  tab_from_focus();
  key_shows_ring();
  enter_activates();
  tab.focus_named = false;
  if (tab.pending.window.empty()) return;
  if (ImGuiWindow* window = ImGui::FindWindowByName(tab.pending.window.c_str())) {
    tab_into(window, tab.pending.direction);
  }
  tab.pending.window.clear();
}

void end_tab_order_frame() {
  const ImGuiContext& g = *GImGui;
  tab.nav_id_alive = g.NavIdIsAlive;
  if (g.NavId == 0 || g.NavWindow == nullptr || !g.NavIdIsAlive) {
    tab.focus = KeyboardFocus{};
  } else if (!tab.focus_named) {
    const ImGuiWindow* window = g.NavWindow;
    const ImRect rel = window->NavRectRel[0];
    const ImVec2 start = window->DC.CursorStartPos;
    tab.focus = focus_of(
        g.NavId, window,
        ImRect(rel.Min.x + start.x, rel.Min.y + start.y, rel.Max.x + start.x, rel.Max.y + start.y));
  }
  draw_focus_ring();
}

void begin_tab_stops() { ImGui::PushItemFlag(ImGuiItemFlags_Inputable, true); }

void tab_onward(const char* next, const char* previous) {
  ImGui::PopItemFlag();  // begin_tab_stops()
  ImGuiContext& g = *GImGui;
  ImGuiWindow* window = ImGui::GetCurrentWindow();
  if (!tabbing_request() || g.NavWindow == nullptr || g.NavWindow->RootWindow != window) return;
  const bool no_field = g.NavTabbingResultFirst.ID == 0;
  bool leaves = false;
  if (g.NavTabbingDir > 0) leaves = g.NavTabbingCounter == 1 || no_field;  // past the last
  if (g.NavTabbingDir == 0) leaves = no_field;                             // nothing to land on
  // Shift+Tab still looking at the window's end: the current field was its first. (Entered
  // from the next window, NavId is 0 and the last field found is the one to land on.)
  if (g.NavTabbingDir < 0) leaves = g.NavId != 0 || g.NavMoveResultLocal.ID == 0;
  if (!leaves) return;
  ImGui::NavMoveRequestCancel();
  tab.pending = TabMove{.window = g.NavTabbingDir < 0 ? previous : next,
                        .direction = g.NavTabbingDir < 0 ? -1 : 1};
}

void push_no_tab_stop() { ImGui::PushItemFlag(ImGuiItemFlags_Inputable, false); }

void pop_no_tab_stop() { ImGui::PopItemFlag(); }

void note_keyboard_focus(const char* label) {
  const ImGuiContext& g = *GImGui;
  const ImGuiWindow* window = ImGui::GetCurrentWindow();
  const ImRect item(ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
  const ImGuiID id = ImGui::GetItemID();
  // A number field with -/+ is a group of items (id 0 once none is active): it has the
  // keyboard when the field in it has.
  const ImRect& rel = window->NavRectRel[0];
  const ImVec2 start = window->DC.CursorStartPos;
  const ImRect field(rel.Min.x + start.x, rel.Min.y + start.y, rel.Max.x + start.x,
                     rel.Max.y + start.y);
  const bool group = id == 0 && g.NavWindow == window && g.NavIdIsAlive && item.Contains(field);
  if (g.NavId == 0 || (id != g.NavId && !group)) return;
  tab.focus = focus_of(g.NavId, window, group ? field : item);
  tab.focus.label = label;
  tab.focus_named = true;
}

const KeyboardFocus& keyboard_focus() { return tab.focus; }

}  // namespace megamem::web
