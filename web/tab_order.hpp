// Tab and Shift+Tab across the page's windows in their visual order: the top bar, the
// settings, the results, and round again. Dear ImGui 1.86 tabs only through the text fields
// of the focused window and wraps at its end (the first Tab of a fresh page landed in the
// planner's margin, the only field of the results window, and stayed there).
#pragma once

namespace megamem::web {

// After ImGui::NewFrame(), before any window: the first frames give the first window (the top
// bar) the keyboard, and a move decided at the end of a window last frame is made (its first
// field for Tab, its last for Shift+Tab).
void begin_tab_order_frame(const char* first_window);

// Just before ImGui::End() of a page window: when Tab passes the window's last field (or
// Shift+Tab its first), or the window has none, the keyboard goes to `next` (`previous`).
void tab_onward(const char* next, const char* previous);

}  // namespace megamem::web
