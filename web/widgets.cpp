// Labelled input rows; see widgets.hpp.
#include "widgets.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "clip_audit.hpp"
#include "format.hpp"
#include "imgui.h"
#include "imgui_internal.h"  // GetItemID (1.86: not in imgui.h)
#include "messages.hpp"
#include "platform.hpp"
#include "tab_order.hpp"
#include "theme.hpp"

namespace megamem::web {
namespace {

float reset_button_px() {
  return ImGui::CalcTextSize(tr("reset")).x + ImGui::GetStyle().FramePadding.x * 2 +
         ImGui::GetStyle().ItemInnerSpacing.x;
}

// The label column, then the widget on the same line, as wide as the column allows (less the
// room of the reset button a preset's field shows once edited; an edited label is marked).
void begin_row(InputContext& ctx, const char* label) {
  const bool edited = !ctx.preset_value.empty();
  ImGui::AlignTextToFramePadding();
  ImGui::PushStyleColor(ImGuiCol_Text, edited ? kTightColor : muted_text_color());
  // A label wider than its column is shortened, not run into the widget (the windowed layers'
  // rows at 1280 x 720).
  const float room_px =
      ctx.label_width_px - ImGui::GetCursorPosX() - ImGui::GetStyle().ItemSpacing.x;
  fitted_text("input.label", edited ? "\xe2\x80\xa2 " + std::string(tr(label)) : tr(label),
              room_px);
  ImGui::PopStyleColor();
  ImGui::SameLine(ctx.label_width_px);
  ImGui::SetNextItemWidth(edited || ctx.preset_field ? -reset_button_px() : -1.0f);
}

// After an edited field's widget: "reset" to the preset's value (ctx.reset_clicked).
void reset_button(InputContext& ctx, const InputSpec& spec) {
  if (ctx.preset_value.empty()) return;
  ImGui::SameLine(0.0f, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::SmallButton((std::string(tr("reset")) + "##" + spec.label).c_str())) {
    ctx.reset_clicked = true;
  }
  char help[200];
  std::snprintf(help, sizeof help,
                tr("Edited: the model preset's value is %s. Click to restore it."),
                ctx.preset_value.c_str());
  describe_item(ctx.state, (std::string(spec.label) + " reset").c_str(), "button", spec.flag, help);
}

std::string hidden_id(const char* label) { return std::string("##") + label; }

// Edit bookkeeping, and the error explained under this row when it concerns the row's key.
bool finish_row(InputContext& ctx, const InputSpec& spec, bool changed) {
  if (changed) {
    ctx.changed = true;
    if (spec.key[0] != '\0') ctx.state.edited_key = spec.key;
  }
  if (ctx.state.error && !ctx.error_shown && spec.key[0] != '\0' && ctx.error_key == spec.key) {
    ctx.error_shown = true;
    if (error_box(ctx.state)) ctx.changed = true;
  }
  return changed;
}

// After the widget: tooltip, rectangle, the reset of an edited field, then finish_row().
bool end_row(InputContext& ctx, const InputSpec& spec, const char* kind, bool changed) {
  describe_item(ctx.state, spec.label, kind, spec.flag, spec.effect);
  reset_button(ctx, spec);
  return finish_row(ctx, spec, changed);
}

// Whether the last item's tooltip shows. With a mouse: while hovered, not while edited. On a
// touch screen the pointer stays where the finger lifted, so hovering would keep a tooltip
// open: a tap on the item opens its tooltip, a second tap or a tap elsewhere closes it.
bool tooltip_wanted(const char* label) {
  const bool hovered = ImGui::IsItemHovered();
  if (!pointer_is_touch()) return hovered && !ImGui::IsItemActive();
  static std::string tapped;  // the item whose tooltip a tap opened
  if (ImGui::IsMouseClicked(0)) {
    if (hovered) {
      tapped = tapped == label ? "" : label;
    } else if (tapped == label) {
      tapped.clear();
    }
  }
  return tapped == label && !ImGui::IsItemActive();
}

// The tooltip box: a first line and a muted explanation; its rectangle is recorded as
// "tooltip <label>" (for tests).
void tooltip(AppState& state, const char* label, const char* first, const char* second) {
  place_tooltip_for_touch(ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(tooltip_wrap_px());
  ImGui::TextUnformatted(first);
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::TextUnformatted(second);
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
  const ImVec2 at = ImGui::GetWindowPos();
  const ImVec2 size = ImGui::GetWindowSize();
  state.input_rects[std::string("tooltip ") + label] =
      WidgetRect{.x = at.x, .y = at.y, .width = size.x, .height = size.y, .kind = "text"};
  ImGui::EndTooltip();
}

}  // namespace

namespace {
struct TooltipPlace {
  float top_bar_bottom_px = 0.0f;  // the top bar's bottom edge, last frame
};
TooltipPlace tooltips;
}  // namespace

void note_top_bar_bottom(float bottom_px) { tooltips.top_bar_bottom_px = bottom_px; }

float tooltip_wrap_px() {
  const float em = ImGui::GetFontSize();
  return std::min(em * 28.0f, ImGui::GetIO().DisplaySize.x - em * 2.0f -
                                  ImGui::GetStyle().WindowPadding.x * 4.0f);
}

void place_tooltip_for_touch(ImVec2 item_min, ImVec2 item_max) {
  if (!pointer_is_touch()) return;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float x = style.WindowPadding.x;
  if (item_max.y < ImGui::GetIO().DisplaySize.y * 0.6f) {
    const float y = std::max(item_max.y, tooltips.top_bar_bottom_px) + style.ItemSpacing.y;
    ImGui::SetNextWindowPos(ImVec2(x, y), ImGuiCond_Always, ImVec2(0.0f, 0.0f));
  } else {
    ImGui::SetNextWindowPos(ImVec2(x, item_min.y - style.ItemSpacing.y), ImGuiCond_Always,
                            ImVec2(0.0f, 1.0f));
  }
}

void bullet_wrapped(const std::string& text) {
  ImGui::Bullet();  // leaves the line open
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
}

void verbatim_text(ImU32 color, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

void wrapped_text(ImU32 color, const std::string& text) { verbatim_text(color, tr_text(text)); }

void record_item(AppState& state, const char* label, const char* kind) {
  const ImVec2 min = ImGui::GetItemRectMin();
  const ImVec2 max = ImGui::GetItemRectMax();
  state.input_rects[label] = WidgetRect{.x = min.x,
                                        .y = min.y,
                                        .width = max.x - min.x,
                                        .height = max.y - min.y,
                                        .kind = kind,
                                        .id = ImGui::GetItemID()};
  note_keyboard_focus(label);
  // Where the keyboard is (Tab order tests): the item being edited or navigated to.
  if (ImGui::IsItemActive() || ImGui::IsItemFocused()) {
    state.input_rects["keyboard focus"] = WidgetRect{
        .x = min.x, .y = min.y, .width = max.x - min.x, .height = max.y - min.y, .kind = label};
  }
  // The item ImGui sees under the pointer (tests press the mouse only once it is the item they
  // aim at): disabled items and items behind an active text field count, as a click would reach
  // them; an item under an open popup does not.
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled |
                           ImGuiHoveredFlags_AllowWhenBlockedByActiveItem)) {
    state.input_rects["pointer"] = WidgetRect{
        .x = min.x, .y = min.y, .width = max.x - min.x, .height = max.y - min.y, .kind = label};
  }
}

void describe_item(AppState& state, const char* label, const char* kind, const char* flag,
                   const char* effect) {
  record_item(state, label, kind);
  if (tooltip_wanted(label)) tooltip(state, label, tr(flag), tr(effect));
}

bool row_int(InputContext& ctx, const InputSpec& spec, int* value, int min, int step) {
  begin_row(ctx, spec.label);
  int edited = *value;
  push_no_tab_stop();  // the field is a stop, its +/- are not
  bool changed = ImGui::InputInt(hidden_id(spec.label).c_str(), &edited, step, step * 8);
  pop_no_tab_stop();
  edited = std::max(edited, min);
  changed = changed && edited != *value;
  if (changed) *value = edited;
  return end_row(ctx, spec, "input", changed);
}

bool row_int64(InputContext& ctx, const InputSpec& spec, std::int64_t* value, std::int64_t min,
               std::int64_t step) {
  begin_row(ctx, spec.label);
  std::int64_t edited = *value;
  const std::int64_t step_fast = step * 8;
  push_no_tab_stop();  // the field is a stop, its +/- are not
  bool changed = ImGui::InputScalar(hidden_id(spec.label).c_str(), ImGuiDataType_S64, &edited,
                                    &step, &step_fast, "%lld");
  pop_no_tab_stop();
  edited = std::max(edited, min);
  changed = changed && edited != *value;
  if (changed) *value = edited;
  return end_row(ctx, spec, "input", changed);
}

namespace {

// One -/+ button of row_int_steps; true when it moved *value. Its tooltip names the value it
// steps to (computed on hover, once per configuration).
bool step_button(InputContext& ctx, const InputSpec& spec, int direction, int* value,
                 const std::function<std::optional<std::int64_t>(int)>& next) {
  const char* sign = direction < 0 ? "-" : "+";
  const float button_px = ImGui::GetFrameHeight();
  ImGui::SameLine(0.0f, ImGui::GetStyle().ItemInnerSpacing.x);
  const bool pressed =
      ImGui::Button((sign + std::string("##") + spec.label).c_str(), ImVec2(button_px, button_px));
  const std::string label = std::string(spec.label) + " " + sign;
  record_item(ctx.state, label.c_str(), "button");
  static std::string cached_for;  // the query and button the cached step belongs to
  static std::optional<std::int64_t> cached;
  const bool show = tooltip_wanted(label.c_str());
  if (pressed || show) {
    const std::string key = ctx.state.query + "|" + label;
    if (key != cached_for) cached = next(direction);
    cached_for = key;
  }
  if (show) {
    char text[160];
    std::snprintf(text, sizeof text, tr("to %lld, the nearest value that divides"),
                  static_cast<long long>(cached.value_or(0)));
    tooltip(ctx.state, label.c_str(), tr(spec.label),
            cached ? text : tr("no value in this direction divides; type one to try it"));
  }
  if (!pressed || !cached) return false;
  *value = static_cast<int>(*cached);
  cached_for.clear();  // the configuration changes
  return true;
}

}  // namespace

bool row_int_steps(InputContext& ctx, const InputSpec& spec, int* value, int min,
                   const std::function<std::optional<std::int64_t>(int direction)>& next) {
  begin_row(ctx, spec.label);
  const float buttons_px = 2.0f * (ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::SetNextItemWidth(std::max(1.0f, ImGui::GetContentRegionAvail().x - buttons_px));
  int edited = *value;
  bool changed = ImGui::InputInt(hidden_id(spec.label).c_str(), &edited, 0, 0);
  edited = std::max(edited, min);
  changed = changed && edited != *value;
  if (changed) *value = edited;
  describe_item(ctx.state, spec.label, "input", spec.flag, spec.effect);
  for (const int direction : {-1, +1}) {
    changed = step_button(ctx, spec, direction, value, next) || changed;
  }
  return finish_row(ctx, spec, changed);
}

void row_not_applicable(InputContext& ctx, const InputSpec& spec, const char* why_not) {
  begin_row(ctx, spec.label);
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const ImVec2 size(std::max(1.0f, ImGui::GetContentRegionAvail().x), ImGui::GetFrameHeight());
  ImGui::Dummy(size);  // the whole width carries the tooltip
  ImGui::GetWindowDrawList()->AddText(
      ImVec2(at.x + ImGui::GetStyle().FramePadding.x, at.y + ImGui::GetStyle().FramePadding.y),
      ImGui::GetColorU32(ImGuiCol_TextDisabled), "\xe2\x80\x94");
  describe_item(ctx.state, spec.label, "not-applicable", spec.flag, why_not);
  finish_row(ctx, spec, false);
}

bool row_slider(InputContext& ctx, const InputSpec& spec, int* value, int min, int max) {
  begin_row(ctx, spec.label);
  const bool changed = ImGui::SliderInt(hidden_id(spec.label).c_str(), value, min, max, "%d",
                                        ImGuiSliderFlags_AlwaysClamp);
  return end_row(ctx, spec, "slider", changed);
}

bool row_double(InputContext& ctx, const InputSpec& spec, double* value, double min, double max,
                double step, const char* format) {
  begin_row(ctx, spec.label);
  double edited = *value;
  push_no_tab_stop();  // the field is a stop, its +/- are not
  bool changed =
      ImGui::InputDouble(hidden_id(spec.label).c_str(), &edited, step, step * 10.0, format);
  pop_no_tab_stop();
  edited = std::clamp(edited, min, max);
  changed = changed && edited != *value;
  if (changed) *value = edited;
  return end_row(ctx, spec, "input", changed);
}

bool row_checkbox(InputContext& ctx, const InputSpec& spec, bool* value) {
  begin_row(ctx, spec.label);
  const bool changed = ImGui::Checkbox(hidden_id(spec.label).c_str(), value);
  return end_row(ctx, spec, "checkbox", changed);
}

bool row_text(InputContext& ctx, const InputSpec& spec, std::string* value, const char* hint) {
  begin_row(ctx, spec.label);
  char buffer[1024];
  std::snprintf(buffer, sizeof buffer, "%s", value->c_str());
  const bool changed =
      ImGui::InputTextWithHint(hidden_id(spec.label).c_str(), tr(hint), buffer, sizeof buffer);
  if (changed) {
    *value = buffer;
    add_glyphs_for_text(*value);  // typed CJK: its glyphs join the font atlas (fonts.hpp)
  }
  return end_row(ctx, spec, "input", changed);
}

bool row_choice(InputContext& ctx, const InputSpec& spec, int* index,
                const std::vector<const char*>& names) {
  begin_row(ctx, spec.label);
  bool changed = false;
  const int count = static_cast<int>(names.size());
  const char* preview = *index >= 0 && *index < count ? tr(names[*index]) : "?";
  if (ImGui::BeginCombo(hidden_id(spec.label).c_str(), preview)) {
    for (int i = 0; i < count; ++i) {
      if (names[i][0] == '\0') continue;  // a value the page does not offer
      const bool selected = i == *index;
      if (ImGui::Selectable(tr(names[i]), selected) && !selected) {
        *index = i;
        changed = true;
      }
      if (selected) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  return end_row(ctx, spec, "combo", changed);
}

bool row_modules(InputContext& ctx, const InputSpec& spec, std::vector<std::string>* modules,
                 const std::vector<const char*>& known) {
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::TextUnformatted(tr(spec.label));
  ImGui::PopStyleColor();
  describe_item(ctx.state, spec.label, "label", spec.flag, spec.effect);
  bool changed = false;
  ImGui::Indent(ctx.label_width_px * 0.25f);
  const float available_px = ImGui::GetContentRegionAvail().x;
  float used_px = 0.0f;
  for (const char* name : known) {
    const auto it = std::find(modules->begin(), modules->end(), name);
    bool on = it != modules->end();
    const float width_px = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                           ImGui::CalcTextSize(name).x + ImGui::GetStyle().ItemSpacing.x;
    if (used_px > 0.0f && used_px + width_px < available_px) {
      ImGui::SameLine();
    } else {
      used_px = 0.0f;
    }
    used_px += width_px;
    const std::string id = std::string(name) + "##" + spec.label;
    if (ImGui::Checkbox(id.c_str(), &on)) {
      if (on) {
        modules->push_back(name);
      } else {
        modules->erase(std::find(modules->begin(), modules->end(), name));
      }
      changed = true;
    }
    describe_item(ctx.state, (std::string(spec.label) + ": " + name).c_str(), "checkbox", spec.flag,
                  spec.effect);
  }
  ImGui::Unindent(ctx.label_width_px * 0.25f);
  return finish_row(ctx, spec, changed);
}

void row_note(InputContext& ctx, const char* text) {
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ctx.label_width_px -
                       ImGui::GetStyle().WindowPadding.x);
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::TextWrapped("%s", tr_text(text).c_str());
  ImGui::PopStyleColor();
}

bool section(const char* title, bool default_open) {
  ImGui::Spacing();
  const bool open =
      ImGui::CollapsingHeader(tr(title), default_open ? ImGuiTreeNodeFlags_DefaultOpen : 0);
  note_keyboard_focus(title);  // a stop of the Tab key, named in keyboardFocus()
  return open;
}

bool error_box(AppState& state, const char* rect_prefix) {
  if (!state.error) return false;
  ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(tr_text(state.error->message).c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  const bool applied = suggestion_buttons(state, rect_prefix);
  ImGui::Spacing();
  return applied;
}

std::string verdict_words(const Verdict& verdict) {
  // The core's verdict (verdict.hpp); the page only words it.
  const double capacity_gib = to_gib(verdict.capacity_bytes);
  const double headroom_gib = static_cast<double>(verdict.headroom_bytes) / kBytesPerGiB;
  const double peak_gib = capacity_gib - headroom_gib;
  const char* word = tr(fit_status_word(verdict.status));
  char text[160];
  if (headroom_gib >= 0) {
    std::snprintf(text, sizeof text, tr("%s: %.2f / %.2f GiB, %.2f GiB free"), word, peak_gib,
                  capacity_gib, headroom_gib);
  } else {
    std::snprintf(text, sizeof text, tr("%s: %.2f / %.2f GiB, %.2f GiB over"), word, peak_gib,
                  capacity_gib, -headroom_gib);
  }
  return text;
}

bool suggestion_buttons(AppState& state, const char* rect_prefix) {
  if (state.suggestions.empty()) return false;
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::TextUnformatted(tr("nearest valid, least change first (click to apply):"));
  ImGui::PopStyleColor();
  // One per line, cheapest first; a label wider than the column is shortened (the tooltip
  // and the link carry it whole).
  for (const Suggestion& suggestion : state.suggestions) {
    const std::string shown =
        fit_text(tr_text(suggestion.label),
                 ImGui::GetContentRegionAvail().x - ImGui::GetStyle().FramePadding.x * 2);
    ImGui::PushID(suggestion.query.c_str());
    const bool clicked = ImGui::SmallButton(shown.c_str());
    ImGui::PopID();
    describe_item(state, (std::string(rect_prefix) + " " + suggestion.label).c_str(), "button",
                  tr_text(suggestion.label).c_str(),
                  "Applies this change: the result is a valid configuration of the same model.");
    if (suggestion.verdict) {
      ImGui::Indent();
      wrapped_text(fit_status_color(suggestion.verdict->status),
                   verdict_words(*suggestion.verdict));
      ImGui::Unindent();
    }
    if (clicked) {
      state.shared.config = suggestion.config;
      state.edited_key.clear();  // a later error shows beside its own field
      return true;
    }
  }
  return false;
}

namespace {

void legend_square(ImVec2 at, float square_px, ImU32 color, bool striped) {
  const float top_px = at.y + (ImGui::GetTextLineHeight() - square_px) * 0.5f;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(ImVec2(at.x, top_px), ImVec2(at.x + square_px, top_px + square_px), color,
                      2.0f);
  for (float d = 2.0f; striped && d < square_px * 2.0f; d += 4.0f) {
    draw->AddLine(ImVec2(at.x + std::max(0.0f, d - square_px), top_px + std::min(d, square_px)),
                  ImVec2(at.x + std::min(d, square_px), top_px + std::max(0.0f, d - square_px)),
                  IM_COL32(255, 255, 255, 140), 1.5f);
  }
}

}  // namespace

void legend_entry(ImU32 color, bool striped, const char* name, const char* tooltip) {
  const float square_px = ImGui::GetTextLineHeight() * 0.8f;
  const float width_px =
      square_px + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(tr(name)).x;
  if (ImGui::GetCursorPosX() > ImGui::GetStyle().WindowPadding.x &&
      ImGui::GetContentRegionAvail().x < width_px) {
    ImGui::NewLine();
  }
  legend_square(ImGui::GetCursorScreenPos(), square_px, color, striped);
  ImGui::Dummy(ImVec2(square_px, ImGui::GetTextLineHeight()));
  if (tooltip != nullptr && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tooltip);
  ImGui::SameLine(0.0f, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::TextUnformatted(tr(name));
  if (tooltip != nullptr && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tooltip);
  ImGui::SameLine(0.0f, ImGui::GetFontSize() * 1.2f);
}

namespace {

// Chinese closing punctuation (，：。、；）！？」』】): a line never starts with it.
bool closing_punctuation(const std::string& text, std::size_t at) {
  static const char* const kClosing[] = {"\xef\xbc\x8c", "\xef\xbc\x9a", "\xe3\x80\x82",
                                         "\xe3\x80\x81", "\xef\xbc\x9b", "\xef\xbc\x89",
                                         "\xef\xbc\x81", "\xef\xbc\x9f", "\xe3\x80\x8d",
                                         "\xe3\x80\x8f", "\xe3\x80\x91"};
  for (const char* mark : kClosing) {
    if (text.compare(at, 3, mark) == 0) return true;
  }
  return false;
}

// The end of the unit of `text` at `at` no line break falls inside: a space, an English
// word, or one Chinese character; each with the closing punctuation after it.
std::size_t unit_end(const std::string& text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t end = at + 1;
  if (byte(at) >= 0x80) {
    while (end < text.size() && (byte(end) & 0xC0) == 0x80) ++end;
  } else if (text[at] != ' ') {
    while (end < text.size() && byte(end) < 0x80 && text[end] != ' ') ++end;
  }
  while (end < text.size() && closing_punctuation(text, end)) end += 3;
  return end;
}

}  // namespace

std::string wrap_text(const std::string& text, float width_px) {
  std::string wrapped;
  std::string line;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = unit_end(text, at);
    const std::string unit = text.substr(at, end - at);
    at = end;
    if (unit == " " && line.empty()) continue;  // no line starts with a space
    if (line.empty() || ImGui::CalcTextSize((line + unit).c_str()).x <= width_px) {
      line += unit;
      continue;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    wrapped += line + "\n";
    line = unit == " " ? "" : unit;
  }
  return wrapped + line;
}

bool wrap_splits_word(const std::string& text, float width_px) {
  const ImFont* font = ImGui::GetFont();
  const float scale = ImGui::GetFontSize() / font->FontSize;
  const auto word_char = [](char c) {
    return static_cast<unsigned char>(c) < 0x80 && c != ' ' && c != '\n';
  };
  for (std::size_t start = 0; start < text.size();) {  // each line the text breaks itself
    const std::size_t newline = std::min(text.find('\n', start), text.size());
    const char* end = text.data() + newline;
    for (const char* s = text.data() + start; s < end;) {
      const char* line_end = font->CalcWordWrapPositionA(scale, s, end, width_px);
      if (line_end == s) ++line_end;  // ImGui draws at least one character a line
      if (line_end < end && word_char(line_end[-1]) && word_char(*line_end)) return true;
      s = line_end;
      while (s < end && *s == ' ') ++s;
    }
    start = newline + 1;
  }
  return false;
}

std::string fit_text(const std::string& text, float width_px) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width_px) return text;
  std::string shown = text;
  // Whole characters only: a UTF-8 continuation byte (10xxxxxx) goes with its lead byte.
  while (!shown.empty() && ImGui::CalcTextSize((shown + "...").c_str()).x > width_px) {
    while (!shown.empty() && (static_cast<unsigned char>(shown.back()) & 0xC0) == 0x80) {
      shown.pop_back();
    }
    if (!shown.empty()) shown.pop_back();
  }
  return shown + "...";
}

}  // namespace megamem::web
