// The web app's one state and its transitions: opening links, edits, the deferred what-if
// table, the address bar and history; the frame layout (top bar, settings left, results
// right; results only on a phone); and the JSON the page exposes to scripts and tests.
#include "app.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app_state.hpp"
#include "calculation.hpp"
#include "clip_audit.hpp"
#include "fonts.hpp"
#include "imgui.h"
#include "import_boxes.hpp"
#include "inputs_panel.hpp"
#include "megamem/anchor_input.hpp"
#include "megamem/json_output.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"
#include "planning.hpp"
#include "platform.hpp"
#include "results_panel.hpp"
#include "tab_order.hpp"
#include "theme.hpp"
#include "top_bar.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

AppState state;

struct Layout {
  float pixel_ratio = 1.0f;
  float top_bar_height_px = 0.0f;
};
Layout layout;

// Below this width (CSS pixels) the page shows one column: results, or settings on demand.
constexpr float kNarrowCssPx = 760.0f;
// The what-if table is priced once the inputs rest this long (seconds).
constexpr double kWhatIfDelayS = 0.15;

std::string query_of_url(const std::string& url) {
  const std::size_t question = url.find('?');
  if (question == std::string::npos) return "";
  std::string query = url.substr(question + 1);
  const std::size_t hash = query.find('#');
  if (hash != std::string::npos) query.resize(hash);
  return query;
}

// The configuration changed (an edit, a link, a preset): estimate it, re-encode the link.
void configuration_changed() {
  recompute(state, now_seconds());
  state.query = encode_share_query(state.shared);
}

// The address bar's query: the configuration, then the view settings (lang=), then the anchor.
std::string page_query() {
  const std::string view = encode_link_view(state.view);
  std::string query = view.empty() ? state.query : state.query + "&" + view;
  if (state.anchor) query += "&" + encode_link_anchor(*state.anchor);
  return query;
}

// Pushes the query to the address bar once no input is being dragged or typed into.
void sync_address_bar() {
  const std::string query = page_query();
  if (query == state.pushed_query || ImGui::IsAnyItemActive()) return;
  show_query(query, /*push=*/true);
  state.pushed_query = query;
}

// Shows the page in `language`; the Chinese glyphs join the font atlas only when needed (the
// font is fetched the first time), at the start of a frame (update_fonts, fonts.hpp).
void set_page_language(Language language) {
  state.language = language;
  set_language(language);
  use_chinese_glyphs(language == Language::zh);
}

// The link's lang= when it has one, else the browser's language.
void follow_link_language(const std::string& url, bool has_query) {
  state.view = LinkView{};
  if (has_query) {
    const Expected<LinkView> view = decode_link_view(url);
    if (view) state.view = *view;
  }
  const std::string code = state.view.language.empty() ? browser_language() : state.view.language;
  set_page_language(code.rfind("zh", 0) == 0 ? Language::zh : Language::en);
}

// The link's anchor (anchor=, anchor-*), or none; one that cannot be read is the link's
// error when it has no other, and no anchor is set.
void follow_link_anchor(const std::string& url, bool has_query) {
  state.anchor.reset();
  if (!has_query) return;
  Expected<std::optional<Anchor>> anchor = decode_link_anchor(url);
  if (anchor) {
    state.anchor = std::move(anchor).value();
  } else if (!state.link_error) {
    state.link_error = anchor.error();
    state.link_error_count = 1;
    state.link_error_text = url;
  }
}

// {field, message}, or null.
nlohmann::json error_json(const std::optional<Error>& error) {
  return error ? nlohmann::json{{"field", error->field}, {"message", error->message}}
               : nlohmann::json();
}

// The `fraction` quantile of the latest search's per-frame slices (ms); 0 before its first
// frame.
double slice_quantile_ms(std::vector<float> slices_ms, double fraction) {
  if (slices_ms.empty()) return 0.0;
  const auto at = slices_ms.begin() +
                  static_cast<std::ptrdiff_t>(static_cast<double>(slices_ms.size() - 1) * fraction);
  std::nth_element(slices_ms.begin(), at, slices_ms.end());
  return *at;
}

// The planner panel for scripts: its options, status, and the search as `megamem plan --json`
// prints it for the same link and options.
nlohmann::json planner_json(AppState& app) {
  update_plan_staleness(app);
  update_plan_reference(app);
  const PlannerState& planner = app.planner;
  nlohmann::json out;
  out["status"] = planner.search      ? "searching"
                  : planner.cancelled ? "cancelled"
                  : planner.error     ? "error"
                  : planner.result    ? "done"
                                      : "idle";
  const PlanProgress& p = planner.progress;
  out["progress"] = {
      {"candidates_done", p.candidates_done},
      {"candidates_total", p.candidates_total},
      {"layouts_done", p.layouts_done},
      {"layouts_total", p.layouts_total},
      {"ranking", p.ranking},
      {"frames", planner.search ? planner.search_frames : planner.search_frames_taken},
      {"work_ms", planner.search ? planner.search_work_ms : planner.search_ms},
      {"median_slice_ms", slice_quantile_ms(planner.search_slices_ms, 0.5)},
      {"low_decile_slice_ms", slice_quantile_ms(planner.search_slices_ms, 0.1)}};
  out["search_wall_ms"] = planner.search_wall_ms;
  out["stale"] = planner.stale;
  out["margin_gib"] = planner.margin_gib;
  out["search_recompute"] = planner.search_recompute;
  out["search_offload"] = planner.search_offload;
  out["view"] = planner.show_pareto ? "pareto" : "fastest";
  out["search_ms"] = planner.search_ms;
  out["error"] = error_json(planner.error);
  out["result"] = planner.result
                      ? plan_json(*planner.request, *planner.result, planner.search_ms / 1000.0)
                      : nlohmann::json();
  out["top_queries"] = planner.top_queries;
  out["pareto_queries"] = planner.pareto_queries;
  out["shown_reference"] = planner.shown_reference;
  out["shown_anchor_note"] = planner.shown_anchor_note;
  out["shown_rows"] = planner.shown_rows;
  return out;
}

constexpr ImGuiWindowFlags kPanelFlags =
    ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
    ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
    ImGuiWindowFlags_NoTitleBar;

}  // namespace

void app_init(float pixel_ratio) {
  layout.pixel_ratio = pixel_ratio;
  apply_theme(state.light, pixel_ratio);
  ImGui::GetIO().ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  state.base_url = page_base_url();
  app_open_link(page_url());
  update_fonts(pixel_ratio);  // the language is known: the fonts it needs are asked for
  mark_startup_step("fonts configured");
}

void app_open_link(const std::string& url) {
  const std::string query = query_of_url(url);
  state.link_error.reset();
  state.link_error_count = 0;
  state.edited_key.clear();
  state.selected_rank = -1;
  if (query.empty()) {
    state.shared = default_configuration();
  } else {
    // What parses is applied; the first parameter that does not is named (#28 item 11).
    PartialLink decoded = decode_share_link_partially(url);
    state.shared = std::move(decoded.shared);
    if (!decoded.errors.empty()) {
      state.link_error = decoded.errors.front();
      state.link_error_count = decoded.errors.size();
      state.link_error_text = url;
    }
  }
  mark_startup_step("link decoded (presets parsed)");
  add_glyphs_for_text(config_json(state.shared.config).dump());  // names in the link
  follow_link_language(url, !query.empty());
  follow_link_anchor(url, !query.empty());
  configuration_changed();
  mark_startup_step("first estimate");
  // A link with an error keeps the address the user opened (the error panel quotes it) until
  // they edit, though the default configuration is shown meanwhile. A valid one is put in
  // canonical form in place: the same configuration, written as this build writes it.
  if (!state.link_error && query != page_query()) show_query(page_query(), /*push=*/false);
  state.pushed_query = page_query();
}

void app_clipboard_text(int target, const std::string& text) {
  if (ImportBox* box = import_box(state, target)) box->text = text;
  add_glyphs_for_text(text);
}

void app_paste_refused(int target, double bytes) {
  if (target < 0) {
    state.refused_paste_bytes = bytes;  // a Ctrl+V: the box being typed into says so
  } else {
    refuse_paste(state, target, bytes);
  }
}

namespace {

// The top bar, as tall as its content; applies its theme, settings and copy buttons.
// Returns whether the configuration changed.
bool top_bar_window(float display_width_px, float display_height_px, bool narrow, double now) {
  ImGui::SetNextWindowPos(ImVec2(0.0f, 0.0f));
  ImGui::SetNextWindowSizeConstraints(ImVec2(display_width_px, 0.0f),
                                      ImVec2(display_width_px, display_height_px * 0.5f));
  ImGui::Begin("top bar", nullptr, kPanelFlags | ImGuiWindowFlags_AlwaysAutoResize);
  begin_tab_stops();
  const TopBarActions actions = draw_top_bar(state, narrow);
  layout.top_bar_height_px = ImGui::GetWindowHeight();
  note_top_bar_bottom(layout.top_bar_height_px);
  const char* body = narrow && !state.show_settings_on_phone ? "results" : "settings";
  tab_onward(body, narrow ? body : "results");
  ImGui::End();
  if (actions.toggle_settings) state.show_settings_on_phone = !state.show_settings_on_phone;
  if (actions.toggle_theme) {
    state.light = !state.light;
    apply_theme(state.light, layout.pixel_ratio);
  }
  if (actions.toggle_language) {
    // An explicit choice: kept in the link so that whoever opens it reads the same language.
    state.view.language = state.language == Language::zh ? "en" : "zh";
    set_page_language(state.language == Language::zh ? Language::en : Language::zh);
  }
  if (actions.copy_link) {
    copy_to_clipboard(state.base_url + "?" + page_query());
    state.link_copied = true;
    state.link_copied_at_s = now;
  }
  if (state.link_copied && now - state.link_copied_at_s > 2.0) state.link_copied = false;
  return actions.changed;
}

// The settings and results windows below the top bar: side by side, or one of them on a
// phone. Returns whether the configuration changed.
bool body_windows(float display_width_px, float display_height_px, bool narrow) {
  bool changed = false;
  const float top = layout.top_bar_height_px;
  const float body_height = std::max(display_height_px - top, 1.0f);
  const float em = ImGui::GetFontSize();
  const float inputs_width = narrow ? display_width_px
                                    : std::clamp(display_width_px * 0.34f, em * 24.0f,
                                                 std::min(em * 34.0f, display_width_px * 0.5f));
  if (!narrow || state.show_settings_on_phone) {
    ImGui::SetNextWindowPos(ImVec2(0.0f, top));
    ImGui::SetNextWindowSize(ImVec2(inputs_width, body_height));
    ImGui::Begin("settings", nullptr, kPanelFlags);
    begin_tab_stops();
    // On a phone the results view, which shows the note, is hidden while a model is picked
    // here (#28 item 2): the layout change is said where it was made.
    if (narrow && !state.layout_note.empty()) {
      wrapped_text(tight_color(), state.layout_note);
      record_item(state, "layout note", "text");
    }
    changed |= draw_inputs_panel(state);
    tab_onward(narrow ? "top bar" : "results", "top bar");
    ImGui::End();
  }
  if (!narrow || !state.show_settings_on_phone) {
    const float left = narrow ? 0.0f : inputs_width;
    ImGui::SetNextWindowPos(ImVec2(left, top));
    ImGui::SetNextWindowSize(ImVec2(display_width_px - left, body_height));
    ImGui::PushStyleColor(ImGuiCol_WindowBg, ImGui::ColorConvertU32ToFloat4(
                                                 light_theme() ? rgb(0xFFFFFF) : rgb(0x1C1C20)));
    ImGui::Begin("results", nullptr, kPanelFlags);
    begin_tab_stops();
    changed |= draw_results_panel(state);
    tab_onward("top bar", narrow ? "top bar" : "settings");
    ImGui::End();
    ImGui::PopStyleColor();
  }
  return changed;
}

// Adds the frame's time to the smoothed and worst frame times when the frame ends.
struct FrameTimer {
  double started_s;
  ~FrameTimer() {
    const double ms = (now_seconds() - started_s) * 1000.0;
    state.frame_ms = state.frame_ms == 0.0 ? ms : state.frame_ms * 0.9 + ms * 0.1;
    state.frame_worst_ms = std::max(state.frame_worst_ms, ms);
  }
};

// A PP or VPP edit re-places the layers when the placement is not the user's: a layout the
// page wrote is derived again for the new sizes instead of failing on its stage count, and
// Megatron's even split that no longer divides becomes an uneven one (issue #28 item 2). A
// layout or uneven split the user gave stays as given.
void follow_pipeline_size(AppState& app) {
  ParallelConfig& p = app.shared.config.parallel;
  const bool generated = !p.pipeline_layout.empty() && p.pipeline_layout == app.generated_layout;
  const bool even_split = p.pipeline_layout.empty() && p.decoder_first_pipeline_num_layers == 0 &&
                          p.decoder_last_pipeline_num_layers == 0;
  if (generated) p.pipeline_layout.clear();
  if (generated || even_split) app.layout_check_pending = true;
}

}  // namespace

void app_prepare_frame(float pixel_ratio) {
  if (pixel_ratio != layout.pixel_ratio) {
    layout.pixel_ratio = pixel_ratio;
    apply_theme(state.light, pixel_ratio);
  }
  update_fonts(pixel_ratio);
}

bool app_frame(float display_width_px, float display_height_px, float pixel_ratio) {
  const double now = now_seconds();
  const FrameTimer timer{now};
  advance_plan(state, ImGui::IsAnyItemActive(),
               ImGui::IsAnyItemActive() || ImGui::IsMouseDown(ImGuiMouseButton_Left));
  const bool narrow = display_width_px / pixel_ratio < kNarrowCssPx;
  state.input_rects.clear();
  begin_clip_audit_frame();
  begin_tab_order_frame("top bar");
  bool changed = top_bar_window(display_width_px, display_height_px, narrow, now);
  changed |= body_windows(display_width_px, display_height_px, narrow);
  end_clip_audit_frame();
  end_tab_order_frame();
  if (changed) {
    const std::string& key = state.edited_key;
    state.layout_check_pending = key == "model" || key == "gpu" || key == "gpus";
    if (key == "pp" || key == "vpp") follow_pipeline_size(state);
    if (!state.layout_check_pending) state.layout_note.clear();
  }
  // A picked model, GPU or GPU count lands on a valid layout (a typed count once typed).
  if (state.layout_check_pending && !ImGui::IsAnyItemActive()) {
    state.layout_check_pending = false;
    changed |= keep_layout_valid(state);
  }
  if (changed) {
    state.link_error.reset();
    state.link_error_count = 0;
    configuration_changed();
  }
  // Idle work: the what-if table, then the address bar. The frame that prices the table was
  // built without it, so it asks for the next, which draws it: when the frames owed to input
  // were drawn before, the page went idle showing "pricing the alternatives...", and the
  // table appeared, moving everything below it, only in the frame the next input woke: under
  // a click aimed at the layout before it (issue 24).
  const bool what_if_priced = state.what_if_pending && !ImGui::IsAnyItemActive() &&
                              now - state.changed_at_s > kWhatIfDelayS;
  if (what_if_priced) finish_what_if(state);
  sync_address_bar();
  return what_if_priced || state.what_if_pending || state.planner.search.has_value() ||
         state.link_copied || fonts_pending() || state.layout_check_pending ||
         ImGui::IsAnyItemActive() || page_query() != state.pushed_query;
}

namespace {

// As `megamem estimate --json` prints them for an invalid configuration: {label, field, url,
// verdict, headroom_bytes}.
nlohmann::json suggestions_json() {
  nlohmann::json suggestions = nlohmann::json::array();
  for (const Suggestion& suggestion : state.suggestions) {
    nlohmann::json entry = {{"label", suggestion.label},
                            {"field", suggestion.field},
                            {"url", state.base_url + "?" + suggestion.query}};
    if (suggestion.verdict) {
      entry["verdict"] = fit_status_name(suggestion.verdict->status);
      entry["headroom_bytes"] = suggestion.verdict->headroom_bytes;
    }
    suggestions.push_back(std::move(entry));
  }
  return suggestions;
}

}  // namespace

std::string app_state_json() {
  finish_what_if(state);
  const std::string url = state.base_url + "?" + page_query();
  nlohmann::json out;
  out["config"] = config_json(state.shared.config);
  out["url"] = url;
  out["query"] = state.query;
  out["model_id"] = state.shared.model_id;
  out["model_title"] = model_title(state);  // the model picker's, "(edited)" and all
  out["gpu_id"] = state.shared.gpu_id;
  out["megatron_args"] = to_megatron_args(state.shared.config);
  out["world_size"] = state.shared.config.parallel.world_size;
  if (state.last_estimate) {
    nlohmann::json result = estimate_json(*state.last_estimate);
    // As `megamem estimate --json --base-url <page>` prints it: the link of the estimate.
    result["link"] = state.base_url + "?" + encode_share_query(state.estimated);
    out["result"] = std::move(result);
  } else {
    out["result"] = nullptr;
  }
  out["error"] = error_json(state.error);
  out["suggestions"] = suggestions_json();
  out["link_error"] = error_json(state.link_error);
  out["link_error_shown"] = state.link_error_shown;  // with the line breaks drawn
  out["layout_note"] = state.layout_note;
  out["verdict"] = verdict_text(state);
  out["recipes_shown"] = state.recipes_shown;
  out["recipe"] = recipe_of_query(state.query);  // the published recipe the page shows, or ""
  // As `megamem estimate --url <the page's link> --json` prints it.
  out["anchored"] = state.anchored ? anchored_json(*state.anchored) : nlohmann::json();
  out["anchor_refused"] = error_json(state.anchor_refused);
  out["estimates_computed"] = state.estimates_computed;
  out["selected_rank"] = shown_rank(state);
  out["light_theme"] = state.light;
  out["language"] = language_code(state.language);
  out["untranslated"] = untranslated();
  out["fonts"] = fonts_json();
  out["modules_sort"] = state.modules_sort;
  out["clipped_text"] = clipped_text_json();  // the last frame's (clip_audit.hpp)
  out["timings_ms"] = {{"estimate", state.estimate_ms},
                       {"what_if", state.what_if_ms},
                       {"frame", state.frame_ms},
                       {"frame_worst", state.frame_worst_ms}};
  state.frame_worst_ms = 0.0;
  out["settings_shown_on_phone"] = state.show_settings_on_phone;
  out["planner"] = planner_json(state);
  out["hf_import"] = {{"text", state.hf_import.text},
                      {"error", state.hf_import.error},
                      {"notes", state.hf_import.notes}};
  out["flags_import"] = {{"text", state.flags_import.text},
                         {"error", state.flags_import.error},
                         {"notes", state.flags_import.notes}};
  out.update(import_boxes_json(state));  // log_import, bridge_import, bridge_overrides, snapshot
  return out.dump();
}

double app_full_estimate_ms(int repeats) { return full_estimate_ms(state.shared.config, repeats); }

std::string app_input_rects_json() {
  nlohmann::json rects = nlohmann::json::object();
  for (const auto& [label, rect] : state.input_rects) {
    rects[label] = {{"x", rect.x},           {"y", rect.y},       {"width", rect.width},
                    {"height", rect.height}, {"kind", rect.kind}, {"id", rect.id}};
  }
  return rects.dump();
}

std::string app_keyboard_focus_json() {
  const KeyboardFocus& f = keyboard_focus();
  return nlohmann::json{{"id", f.id},
                        {"label", f.label},
                        {"window", f.window},
                        {"x", f.x},
                        {"y", f.y},
                        {"width", f.width},
                        {"height", f.height},
                        {"content_x", f.content_x},
                        {"content_y", f.content_y},
                        {"ring",
                         {{"shown", f.ring.shown},
                          {"x", f.ring.x},
                          {"y", f.ring.y},
                          {"width", f.ring.width},
                          {"height", f.ring.height},
                          {"thickness_px", f.ring.thickness_px},
                          {"color", f.ring.color}}}}
      .dump();
}

}  // namespace megamem::web
