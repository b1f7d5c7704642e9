// The keyboard across the page (issue #28 item 8): Tab and Shift+Tab visit every control of
// the page's windows in their visual order (the top bar, the settings, the results, and round
// again), Enter activates the control that has the keyboard, and Tab goes on from the field
// just edited. Dear ImGui 1.86 tabs only through the text fields of the focused window, wraps
// at its end and, with no field being edited, starts again at the window's first field; its
// Enter starts editing a field but presses no button.
#pragma once

#include <string>

namespace megamem::web {

// After ImGui::NewFrame(), before any window: the first frames give the first window (the top
// bar) the keyboard; a move decided at the end of a window last frame is made (its first
// field for Tab, its last for Shift+Tab); Tab with nothing being edited goes on from the
// control that has the keyboard; Enter presses it.
void begin_tab_order_frame(const char* first_window);

// After the last window: what has the keyboard, for keyboard_focus_json(), and its ring.
void end_tab_order_frame();

// Just after ImGui::Begin() of a page window: its buttons, checkboxes, pickers, rows and tree
// nodes become stops of the Tab key (ImGui's own +/- of a number field do not: typing the
// number does what they do). Undone by tab_onward().
void begin_tab_stops();

// Just before ImGui::End() of a page window: when Tab passes the window's last control (or
// Shift+Tab its first), or the window has none, the keyboard goes to `next` (`previous`).
void tab_onward(const char* next, const char* previous);

// Around widgets that are no stop of the Tab key (charts that only show a tooltip, ImGui's
// +/- buttons of a number field).
void push_no_tab_stop();
void pop_no_tab_stop();

// Called by record_item() for each labelled item: names the item when it has the keyboard.
void note_keyboard_focus(const char* label);

// The ring drawn around the control that has the keyboard while the keyboard is in use (a
// click hides it, a key shows it again), clipped to its window; in canvas pixels.
struct FocusRing {
  bool shown = false;
  float x = 0, y = 0, width = 0, height = 0;  // its outer edge, as drawn
  float thickness_px = 0;
  unsigned color = 0;  // ImU32, 0xAABBGGRR
};

// The control that has the keyboard, as the last frame drew it (id 0: none).
struct KeyboardFocus {
  unsigned id = 0;
  std::string label;                          // "" for an item the page does not name
  std::string window;                         // the page window it is in ("settings")
  float x = 0, y = 0, width = 0, height = 0;  // on the canvas
  // In its window's content, scrolling undone: an order compares while the window scrolls.
  float content_x = 0, content_y = 0;
  FocusRing ring;
};
const KeyboardFocus& keyboard_focus();

}  // namespace megamem::web
