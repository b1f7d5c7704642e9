// Text the page drew narrower than it is (issue #28 item 7): each frame, every audited text
// that did not fit the room it was given, and whether it can still be read (a tooltip with the
// whole text, or a wrap). window.megamem.state().clipped_text lists the last frame's, so a
// test can require that nothing is cut off without a way to read it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace megamem::web {

// Before the first window of a frame, and after the last: the frame's list becomes the one
// reported.
void begin_clip_audit_frame();
void end_clip_audit_frame();

// `text` needed `needed_px` where `room_px` was left; `readable`: a tooltip or the link
// carries the whole text. `where` names the place ("what-if header", "verdict").
void note_clipped(const char* where, const std::string& text, float needed_px, float room_px,
                  bool readable);

// The last item's right edge against the current clip rectangle (a window's or a table
// column's): when it passes it, the item is noted as clipped (`readable` as above). True
// when it was clipped.
bool audit_last_item(const char* where, const std::string& text, bool readable);

// Unformatted text that stays readable: when it passes the clip rectangle, hovering (or a
// tap) shows the whole of it. Noted as clipped and readable.
void readable_text(const char* where, const std::string& text);

// Text shortened to `room_px` when it is wider (the whole of it in a tooltip), noted as
// clipped and readable; a label column's label that would run into its widget.
void fitted_text(const char* where, const std::string& text, float room_px);

// The headers of the current table (as TableHeadersRow draws them), each noted when its
// column is narrower than its name, with the whole name in a tooltip.
void audited_headers_row(const char* where);

// [{where, text, needed_px, room_px, readable}] of the last finished frame.
nlohmann::json clipped_text_json();

}  // namespace megamem::web
