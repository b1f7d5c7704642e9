// The top bar and the preset pickers; see top_bar.hpp.
#include "top_bar.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "calculation.hpp"
#include "clip_audit.hpp"
#include "format.hpp"
#include "imgui.h"
#include "megamem/fields.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"
#include "messages.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

bool contains_ignoring_case(const std::string& text, const std::string& needle) {
  if (needle.empty()) return true;
  const auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  return lower(text).find(lower(needle)) != std::string::npos;
}

// The filter field at the top of an open picker; focused when the picker opens. True when
// Enter was pressed in it (the first match is then picked).
bool filter_field(AppState& state, std::string* filter) {
  if (ImGui::IsWindowAppearing()) {
    filter->clear();
    ImGui::SetKeyboardFocusHere();
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%s", filter->c_str());
  ImGui::SetNextItemWidth(-1.0f);
  // The buffer is edited in place as one types; the call is true only on Enter.
  const bool enter = ImGui::InputTextWithHint("##filter", tr("type to filter"), buffer,
                                              sizeof buffer, ImGuiInputTextFlags_EnterReturnsTrue);
  // Tests type into the picker once this field has the keyboard ("keyboard focus").
  record_item(state, "picker filter", "input");
  *filter = buffer;
  return enter;
}

// True when the model's architecture differs from its preset's (an m.* link key of an
// architecture field): a run setting (dropout, vocabulary padding, position count) is no other
// model, as with_detected_presets() judges an import. Computed once per configuration (it
// walks every link field).
bool model_edited(const AppState& state) {
  static std::uint64_t computed_for = ~std::uint64_t{0};
  static bool edited = false;
  if (computed_for == state.estimates_computed) return edited;
  computed_for = state.estimates_computed;
  edited = false;
  if (state.shared.model_id.empty()) return false;
  const Expected<PresetCatalog>& catalog = builtin_presets();
  if (!catalog) return false;
  const ModelPreset* preset = catalog->find_model(state.shared.model_id);
  if (!preset) return false;
  Config base = state.shared.config;
  base.model = preset->model;
  for (const std::string& key : share_link_differences(state.shared.config, base)) {
    const ConfigField* field = field_by_link_key(key);
    if (field && is_architecture_field(*field, state.shared.config.model)) edited = true;
  }
  return edited;
}

}  // namespace

std::string model_title(const AppState& state) {
  std::string title = state.shared.config.model.name;
  if (title.empty())
    title = state.shared.model_id.empty() ? tr("custom model") : state.shared.model_id;
  if (model_edited(state)) title += tr(" (edited)");
  return title;
}

namespace {

std::string gpu_title(const AppState& state) {
  const std::string& name = state.shared.config.device.name;
  if (!name.empty()) return name;
  char text[48];
  std::snprintf(text, sizeof text, "GPU %.0f GiB", state.shared.config.device.capacity_gib);
  return text;
}

// A dot in the verdict's colour, as tall as a frame.
void verdict_dot(ImU32 color) {
  const float radius_px = ImGui::GetFontSize() * 0.38f;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float line_px = ImGui::GetFrameHeight();
  ImGui::GetWindowDrawList()->AddCircleFilled(ImVec2(at.x + radius_px, at.y + line_px * 0.5f),
                                              radius_px, color);
  ImGui::Dummy(ImVec2(radius_px * 2.0f, line_px));
  ImGui::SameLine();
}

// Invalid inputs: the rule broken and the cheapest fix, never another configuration's numbers
// (the results column labels the last valid result as the configuration it is of).
// Returns true when the fix was applied.
bool invalid_verdict(AppState& state, float width_px, bool narrow) {
  verdict_dot(kErrorColor);
  const Error& error = *state.error;
  const float fix_px = state.suggestions.empty() ? 0.0f
                       : narrow                  ? width_px
                                                 : ImGui::GetFontSize() * 12.0f;
  // The dot (verdict_dot, one frame height with its spacing) is already drawn.
  width_px -= ImGui::GetFrameHeight();
  const float text_px = std::max(width_px - fix_px - ImGui::GetFrameHeight(), width_px * 0.5f);
  const std::string text = verdict_text(state);
  ImGui::AlignTextToFramePadding();
  ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
  if (narrow) {
    // A phone has no room beside it: the rule wraps, whole (shortened to the room left it
    // read "invalid - world_size 2...", on the results and the settings alike).
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
  } else {
    fitted_text("top-bar.verdict", text, text_px);
  }
  ImGui::PopStyleColor();
  describe_item(state, "verdict", "text", error.field.c_str(), text.c_str());
  if (state.suggestions.empty()) return false;
  const Suggestion& fix = state.suggestions.front();
  const std::string label = fit_text(tr("fix: ") + tr_text(fix.label), fix_px);
  // Beside the rule when the row has room for the button, else on the next line (a phone).
  if (!narrow) ImGui::SameLine();
  const float button_px =
      ImGui::CalcTextSize(label.c_str()).x + ImGui::GetStyle().FramePadding.x * 2;
  if (!narrow && ImGui::GetContentRegionAvail().x < button_px) ImGui::NewLine();
  if (ImGui::SmallButton(label.c_str())) {
    state.shared.config = fix.config;
    state.edited_key.clear();
    return true;
  }
  describe_item(state, "top fix", "button", fix.label.c_str(),
                "The least change that makes the settings valid; the settings column lists "
                "the others beside the field that is wrong.");
  return false;
}

// While an anchor is set: what the verdict is anchored on, with a button that drops the
// anchor; or, when the anchor does not apply to this configuration, that the raw verdict shows.
void anchor_mark(AppState& state) {
  if (!state.anchor) return;
  const float em = ImGui::GetFontSize();
  // The reason a refused anchor does not apply is below the rank bars (rank_bars.cpp): it can
  // be longer than the row has room for.
  const std::string source = tr_text(state.anchor->measured.source);
  const std::string mark = printf_text(
      state.anchor_refused ? tr("anchor on %s not applied") : tr("anchored on %s"), source.c_str());
  // Beside the verdict when it fits, else on a line of its own, wrapped (a phone).
  ImGui::SameLine(0.0f, em);
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(mark.c_str()).x) ImGui::NewLine();
  ImGui::AlignTextToFramePadding();
  ImGui::PushStyleColor(ImGuiCol_Text, state.anchor_refused ? tight_color() : muted_text_color());
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(mark.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  ImGui::SameLine();
  const float button_px =
      ImGui::CalcTextSize(tr("drop anchor")).x + ImGui::GetStyle().FramePadding.x * 2;
  if (ImGui::GetContentRegionAvail().x < button_px) ImGui::NewLine();
  if (ImGui::SmallButton(tr("drop anchor"))) {
    state.anchor.reset();
    reanchor(state);
  }
  describe_item(state, "drop anchor", "button", "drop the anchor (link: anchor=)",
                "Shows the raw estimate again; the link no longer carries the measured run.");
}

void verdict(AppState& state, bool compact) {
  if (!state.last_estimate) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kErrorColor), "%s", tr("no valid estimate"));
    return;
  }
  const Estimate& estimate = *state.last_estimate;
  const Verdict& shown = shown_verdict(state);
  const ImU32 color = fit_status_color(shown.status);
  verdict_dot(color);
  ImGui::AlignTextToFramePadding();
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  if (large_font() && !compact) ImGui::PushFont(large_font());
  // On a phone the line may be narrower than the verdict: it wraps, the free or over number
  // on the next line.
  const std::string text = verdict_text(state);
  const bool wraps = ImGui::CalcTextSize(text.c_str()).x > ImGui::GetContentRegionAvail().x;
  if (wraps) ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text.c_str());
  if (wraps) ImGui::PopTextWrapPos();
  audit_last_item("top-bar.verdict", text, false);
  if (large_font() && !compact) ImGui::PopFont();
  ImGui::PopStyleColor();
  describe_item(state, "verdict", "text", "peak per GPU against the card's capacity",
                "The limiting pipeline rank's peak (static + activations + transients + "
                "runtime overheads) against the GPU's memory. Borderline (amber): the capacity "
                "lies inside the estimate's error band, the spread of its errors on validated "
                "runs with this configuration's features.");
  if (estimate.ranks.size() > 1) {
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
    const std::string limiting = printf_text(tr("limiting: PP rank %d"), shown.limiting_pp_rank);
    // Beside the verdict when the row has room, else under it.
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(limiting.c_str()).x) {
      ImGui::NewLine();
    }
    ImGui::TextUnformatted(limiting.c_str());
    audit_last_item("top-bar.limiting", limiting, false);
    ImGui::PopStyleColor();
  }
  anchor_mark(state);
}

// What the model and GPU pickers differ in, by preset kind: the text the filter searches,
// the row shown, and what picking the row changes.
std::string search_text(const ModelPreset& preset) { return preset.id + " " + preset.name; }
std::string search_text(const GpuPreset& preset) { return preset.id + " " + preset.device.name; }

std::string row_text(const ModelPreset& preset) {
  char row[160];
  std::snprintf(row, sizeof row, tr("%s  (%s params)"), preset.name.c_str(),
                count_text(preset.published_params).c_str());
  return row;
}
std::string row_text(const GpuPreset& preset) {
  char row[160];
  std::snprintf(row, sizeof row, "%s  (%.2f GiB)", preset.device.name.c_str(),
                preset.device.capacity_gib);
  return row;
}

void pick(const ModelPreset& preset, AppState& state) {
  state.shared.model_id = preset.id;
  state.shared.config.model = preset.model;
  state.edited_key = "model";
}
void pick(const GpuPreset& preset, AppState& state) {
  state.shared.gpu_id = preset.id;
  state.shared.config.device = preset.device;
  state.edited_key = "gpu";
}

// A preset picker: the combo titled `title`, its filter and the catalog's `presets` matching
// it (`selected_id` marked), then its description. True when a row was picked.
template <typename Preset>
bool preset_combo(AppState& state, const char* label,
                  const std::vector<Preset> PresetCatalog::*presets, const std::string& title,
                  std::string* filter, const std::string& selected_id, const char* what,
                  const char* help) {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  bool changed = false;
  const std::string id = std::string("##") + label;
  if (ImGui::BeginCombo(id.c_str(), title.c_str(), ImGuiComboFlags_HeightLarge)) {
    bool enter = filter_field(state, filter);
    for (std::size_t i = 0; catalog && i < ((*catalog).*presets).size() && !changed; ++i) {
      const Preset& preset = ((*catalog).*presets)[i];
      if (!contains_ignoring_case(search_text(preset), *filter)) continue;
      if (ImGui::Selectable(row_text(preset).c_str(), preset.id == selected_id) || enter) {
        pick(preset, state);
        changed = true;
      }
      enter = false;  // Enter picks the first match only
    }
    if (changed) ImGui::CloseCurrentPopup();
    ImGui::EndCombo();
  }
  describe_item(state, label, "combo", what, help);
  return changed;
}

}  // namespace

std::string verdict_text(const AppState& state) {
  // A link read in part: the verdict is of what was read, and says so, invalid or not (what
  // it left out, a GPU count, can be what makes the rest invalid).
  const std::string link_mark = state.link_error ? std::string(tr("link partly read - ")) : "";
  if (state.error) return link_mark + tr("invalid - ") + tr_text(state.error->message);
  if (!state.last_estimate) return tr("no valid estimate");
  return link_mark + verdict_words(shown_verdict(state));
}

bool model_picker(AppState& state, const char* label) {
  return preset_combo(state, label, &PresetCatalog::models, model_title(state), &state.model_filter,
                      state.shared.model_id, "model preset (link: model=<id>)",
                      "A published architecture; every field stays editable below.");
}

bool gpu_picker(AppState& state, const char* label) {
  return preset_combo(state, label, &PresetCatalog::gpus, gpu_title(state), &state.gpu_filter,
                      state.shared.gpu_id, "GPU preset (link: gpu=<id>)",
                      "The card's usable memory, node size and workspace sizes.");
}

namespace {

// A recipe's source and notes, as the tooltip of its row.
void recipe_tooltip(const RecipePreset& recipe) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
  ImGui::TextUnformatted(recipe.source.c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::TextUnformatted(recipe.notes.c_str());
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// Loads a recipe's whole configuration; false when it cannot be read.
bool load_recipe(AppState& state, const RecipePreset& recipe) {
  Expected<SharedConfig> shared = recipe_config(recipe);
  if (!shared) return false;
  state.shared = std::move(shared).value();
  state.edited_key.clear();
  return true;
}

}  // namespace

bool recipe_picker(AppState& state, const char* label) {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  bool changed = false;
  const std::string id = std::string("##") + label;
  if (ImGui::BeginCombo(id.c_str(), tr("recipes"), ImGuiComboFlags_HeightLarge)) {
    // Typing filters by id and name; Enter loads the first match, as in the model picker.
    bool enter = filter_field(state, &state.recipe_filter);
    state.recipes_shown.clear();
    for (std::size_t i = 0; catalog && i < catalog->recipes.size() && !changed; ++i) {
      const RecipePreset& recipe = catalog->recipes[i];
      // The title in the page's language (templates: "{0} pre-training on {1} (...)"); the
      // filter finds a recipe by its English name and id too.
      const std::string& title = tr_text(recipe.name);
      if (!contains_ignoring_case(recipe.id + " " + recipe.name + " " + title,
                                  state.recipe_filter)) {
        continue;
      }
      state.recipes_shown.push_back(title);
      if (ImGui::Selectable(title.c_str()) || enter) changed = load_recipe(state, recipe);
      enter = false;  // Enter loads the first match only
      if (ImGui::IsItemHovered()) recipe_tooltip(recipe);
    }
    if (changed) ImGui::CloseCurrentPopup();
    ImGui::EndCombo();
  }
  describe_item(state, label, "combo", "published training recipes",
                "Loads a published run's model, GPUs and settings.");
  return changed;
}

namespace {

// A phone's top bar: the verdict, then what is being estimated and the settings button.
void narrow_row(AppState& state, TopBarActions& actions) {
  if (state.error) {
    actions.changed |= invalid_verdict(state, ImGui::GetContentRegionAvail().x, true);
  } else {
    verdict(state, true);
  }
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  ImGui::AlignTextToFramePadding();
  const std::string what = printf_text(
      tr("%s on %lld x %s"), model_title(state).c_str(),
      static_cast<long long>(state.shared.config.parallel.world_size), gpu_title(state).c_str());
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(what.c_str());
  ImGui::PopTextWrapPos();
  audit_last_item("top-bar.what", what, false);
  ImGui::PopStyleColor();
  // The settings on a phone start from a published recipe too, as the wide bar's picker does
  // (a phone had no way to load one).
  if (state.show_settings_on_phone) {
    ImGui::SetNextItemWidth(-1.0f);
    actions.changed |= recipe_picker(state, "recipes");
  }
  // Ids that stay when the label changes ("###..."): the button keeps the keyboard.
  if (ImGui::Button(
          (std::string(tr(state.show_settings_on_phone ? "Results" : "Settings")) + "###settings")
              .c_str())) {
    actions.toggle_settings = true;
  }
  describe_item(state, "Settings", "button", "settings", "Shows the settings or the results.");
  ImGui::SameLine();
}

bool gpus_input(AppState& state) {
  std::int64_t gpus = state.shared.config.parallel.world_size;
  bool changed = false;
  if (ImGui::InputScalar("##top gpus", ImGuiDataType_S64, &gpus, nullptr, nullptr, "%lld") &&
      gpus >= 1 && gpus != state.shared.config.parallel.world_size) {
    state.shared.config.parallel.world_size = gpus;
    state.edited_key = "gpus";
    changed = true;
  }
  describe_item(state, "top GPUs", "input", "world size (WORLD_SIZE)",
                "Data parallel = GPUs / (TP x CP x PP).");
  const std::string digits = std::to_string(gpus);
  const float needed_px =
      ImGui::CalcTextSize(digits.c_str()).x + ImGui::GetStyle().FramePadding.x * 2;
  if (needed_px > ImGui::GetItemRectSize().x) {
    note_clipped("top-bar.gpus", digits, needed_px, ImGui::GetItemRectSize().x, false);
  }
  return changed;
}

// A wide top bar: model on GPUs x GPU, recipes, then the verdict, leaving `buttons_px` for
// the buttons at the right end.
void wide_row(AppState& state, TopBarActions& actions, float buttons_px) {
  const float em = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(em * 13.0f);
  actions.changed |= model_picker(state, "top model");
  ImGui::SameLine();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tr("on"));
  ImGui::SameLine();
  // Room for a 7-digit count (the count is bounded to 2^20).
  ImGui::SetNextItemWidth(std::max(
      em * 4.5f, ImGui::CalcTextSize("0000000").x + ImGui::GetStyle().FramePadding.x * 2.5f));
  actions.changed |= gpus_input(state);
  ImGui::SameLine();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("\xc3\x97");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 9.0f);
  actions.changed |= gpu_picker(state, "top GPU");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 6.5f);
  actions.changed |= recipe_picker(state, "recipes");
  ImGui::SameLine(0.0f, em * 1.5f);
  // The verdict takes the rest of the row, the buttons' room kept; a row too short for it
  // puts it on a line of its own.
  const float reserved_px = buttons_px + em * 2.5f;
  if (ImGui::GetContentRegionAvail().x - reserved_px < em * (state.error ? 26.0f : 34.0f)) {
    ImGui::NewLine();
  }
  if (state.error) {
    actions.changed |=
        invalid_verdict(state, ImGui::GetContentRegionAvail().x - reserved_px, false);
  } else {
    verdict(state, false);
  }
  ImGui::SameLine(0.0f, em);
}

}  // namespace

TopBarActions draw_top_bar(AppState& state, bool narrow) {
  TopBarActions actions;
  const float em = ImGui::GetFontSize();
  if (large_font()) ImGui::PushFont(large_font());
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("megamem");
  if (large_font()) ImGui::PopFont();
  ImGui::SameLine(0.0f, em);
  const char* copy_label = tr(state.link_copied ? "Copied" : "Copy link");
  // The switch names the other language, in that language.
  const char* language_label = state.language == Language::zh ? "English" : "简体中文";
  const float buttons_px =
      ImGui::CalcTextSize(language_label).x + ImGui::CalcTextSize(tr("Copy link")).x +
      ImGui::CalcTextSize(tr("Light")).x + ImGui::GetStyle().FramePadding.x * 6 +
      ImGui::GetStyle().ItemSpacing.x * 2;
  if (narrow) {
    narrow_row(state, actions);
  } else {
    wide_row(state, actions, buttons_px);
  }
  if (!narrow && ImGui::GetContentRegionAvail().x > buttons_px) {
    ImGui::SetCursorPosX(ImGui::GetWindowContentRegionMax().x - buttons_px);
  } else if (!narrow) {
    ImGui::NewLine();  // a longer verdict (another language) leaves no room: the next row
  }
  // Ids that stay when the label changes ("###..."): Enter on one keeps the keyboard on it.
  if (ImGui::Button((std::string(language_label) + "###language").c_str())) {
    actions.toggle_language = true;
  }
  describe_item(state, "language", "button", "English / 简体中文",
                "Shows the page in the other language; the link keeps the choice (lang=).");
  ImGui::SameLine();
  if (ImGui::Button((std::string(copy_label) + "###copy link").c_str())) actions.copy_link = true;
  describe_item(state, "Copy link", "button", "share link",
                "Copies this page's address: the whole configuration, readable and versioned.");
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr(light_theme() ? "Dark" : "Light")) + "###theme").c_str())) {
    actions.toggle_theme = true;
  }
  describe_item(state, "theme", "button", "theme", "Switches between the dark and light theme.");
  return actions;
}

}  // namespace megamem::web
