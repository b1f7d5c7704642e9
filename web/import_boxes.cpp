// The import boxes; see import_boxes.hpp.
#include "import_boxes.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "imgui.h"
#include "log_comparison_view.hpp"
#include "megamem/bridge_yaml.hpp"
#include "megamem/hf_config.hpp"
#include "megamem/import_merge.hpp"
#include "megamem/json_output.hpp"
#include "megamem/launch_script.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/share_link.hpp"
#include "messages.hpp"
#include "platform.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

// The log and Megatron-Bridge boxes' words, in one place (ui.md vocabulary).
struct BoxWords {
  const char* title;
  const char* hint;
  const char* button;
  const char* flag;
  const char* effect;
};
constexpr BoxWords kLogWords{
    "paste a training log",
    "Paste a Megatron-LM training log (pretrain_gpt.py output: its argument dump and the "
    "\"[Rank N] (after K iterations) memory (MB)\" lines) and press Compare: the run's "
    "configuration is loaded and each printed rank's measured memory is shown beside the "
    "estimate.",
    "Compare", "megamem compare LOG",
    "The configuration exactly as it ran; measured allocated and reserved memory per rank."};
constexpr BoxWords kBridgeWords{
    "paste a Megatron-Bridge config",
    "Paste a Megatron-Bridge run_config.yaml (ConfigContainer.to_yaml(), saved with each "
    "checkpoint) and press Apply: it replaces model, layout and training settings on the "
    "current GPUs.",
    "Apply", "megamem estimate --bridge-config run_config.yaml",
    "model, train, ddp, optimizer, dataset, mixed_precision and comm_overlap are read."};
constexpr const char* kPasteTooLarge =
    "The pasted text is %.1f MiB; the page takes pastes up to %zu MiB. Paste the start of a "
    "training log (the argument dump and the first memory reports come early), or use "
    "`megamem compare LOG` (logs up to %zu MiB).";
constexpr const char* kAppliedOn =
    "applied on %lld GPUs (GPU, runtime and environment settings kept)";
constexpr const char* kAppliedOnLauncher =
    "applied on %lld GPUs, the launcher's --nproc_per_node x --nnodes (GPU, runtime and "
    "environment settings kept)";
constexpr const char* kScriptLines = "read the %s command: %s";

// std::string-backed multiline text (ImGui's resize callback, as misc/cpp/imgui_stdlib does).
int resize_callback(ImGuiInputTextCallbackData* data) {
  if (data->EventFlag == ImGuiInputTextFlags_CallbackResize) {
    auto* text = static_cast<std::string*>(data->UserData);
    text->resize(static_cast<std::size_t>(data->BufTextLen));
    data->Buf = text->data();
  }
  return 0;
}

bool multiline(const char* id, std::string* text, float height_px) {
  return ImGui::InputTextMultiline(id, text->data(), text->capacity() + 1, ImVec2(-1.0f, height_px),
                                   ImGuiInputTextFlags_CallbackResize, resize_callback, text);
}

void messages(const ImportBox& box) {
  ImGui::PushTextWrapPos(0.0f);
  if (!box.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextUnformatted(tr_text(box.error).c_str());
    ImGui::PopStyleColor();
  }
  ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
  for (const std::string& note : box.notes) bullet_wrapped(tr_text(note));
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
}

bool import_text(AppState& state, int target, const std::string& text) {
  switch (target) {
    case kHfConfigBox:
      return import_hf_config_text(state, text);
    case kMegatronFlagsBox:
      return import_megatron_flags_text(state, text);
    case kTrainingLogBox:
      return import_training_log_text(state, text);
    case kBridgeConfigBox:
      return import_bridge_config_text(state, text);
    default:
      return false;
  }
}

std::string applied_on(const AppState& state, const char* format = kAppliedOn) {
  char text[200];
  std::snprintf(text, sizeof text, format,
                static_cast<long long>(state.shared.config.parallel.world_size));
  return text;
}

// The box starts over; an import that failed leaves its error ("field: message"). True when
// `result` holds a value.
template <typename T>
bool start_over(ImportBox& box, const Expected<T>& result) {
  box.error.clear();
  box.notes.clear();
  if (result) return true;
  box.error = result.error().field + ": " + result.error().message;
  return false;
}

// A whole run (flags, a launch script or a Bridge config) replaces the configuration on the
// page's GPUs (import_merge.hpp: what it keeps); the box says on how many.
void apply_run(AppState& state, ImportBox& box, const Config& run, const char* applied_format) {
  state.shared = merge_megatron_flags(state.shared, run);
  box.notes.insert(box.notes.begin(), applied_on(state, applied_format));
  state.edited_key.clear();
}

// For a script (more than a line of flags): which command and lines were read, and what in
// them was not understood, each naming its line.
void script_notes(const LaunchScript& script, std::vector<std::string>& notes) {
  if (script.program.empty() && script.used_lines.size() < 2 && script.ignored_lines == 0) return;
  const std::string lines = used_lines_text(script);
  if (script.program.empty()) {
    notes.push_back(lines);
  } else {
    char text[400];
    std::snprintf(text, sizeof text, kScriptLines, script.program.c_str(), lines.c_str());
    notes.push_back(text);
  }
  notes.insert(notes.end(), script.warnings.begin(), script.warnings.end());
}

bool box(AppState& state, ImportBox& box, int target, const char* title, const char* hint,
         const char* button, const char* flag, const char* effect) {
  bool changed = false;
  const bool open = ImGui::TreeNode(title, "%s", tr(title));
  describe_item(state, (std::string(title) + " (open)").c_str(), "tree", flag, effect);
  if (!open) return false;
  ImGui::PushID(title);
  if (box.text.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, muted_text_color());
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(tr(hint));
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
  }
  if (multiline("##text", &box.text, ImGui::GetTextLineHeight() * 6.0f))
    add_glyphs_for_text(box.text);
  describe_item(state, title, "input", flag, effect);
  if (state.refused_paste_bytes > 0.0 && ImGui::IsItemActive()) {
    refuse_paste(state, target, state.refused_paste_bytes);
  }
  if (ImGui::Button(tr(button))) changed = import_text(state, target, box.text);
  describe_item(state, (std::string(title) + ": " + button).c_str(), "button", flag, effect);
  ImGui::SameLine();
  if (ImGui::Button(tr("Paste"))) read_clipboard(target);
  ImGui::SameLine();
  if (ImGui::Button(tr("Clear"))) {
    box.text.clear();
    box.error.clear();
    box.notes.clear();
  }
  messages(box);
  if (target == kTrainingLogBox) draw_log_comparison(state);
  ImGui::PopID();
  ImGui::TreePop();
  return changed;
}

}  // namespace

bool import_hf_config_text(AppState& state, const std::string& text) {
  ImportBox& box = state.hf_import;
  const Expected<HfImport> imported = import_hf_config(text);
  if (!start_over(box, imported)) return false;
  state.shared = merge_hf_model(state.shared, imported->model, "imported " + imported->model_type);
  box.notes = imported->notes;
  box.notes.insert(box.notes.begin(),
                   "imported a " + imported->model_type + " model" +
                       (state.shared.model_id.empty()
                            ? std::string()
                            : " (the " + state.shared.model_id + " preset's architecture)"));
  state.edited_key = "model";
  return true;
}

bool import_megatron_flags_text(AppState& state, const std::string& text) {
  ImportBox& box = state.flags_import;
  // The page's GPU count unless the script's torchrun says how many GPUs it runs on.
  const Expected<MegatronLaunch> parsed =
      parse_megatron_launch(text, {.default_world_size = state.shared.config.parallel.world_size});
  if (!start_over(box, parsed)) {
    const Expected<LaunchScript> script = read_launch_script(text);
    if (script) script_notes(*script, box.notes);  // the lines behind a missing or bad flag
    return false;
  }
  script_notes(parsed->script, box.notes);
  const MegatronArgs& args = parsed->args;
  const auto list = [&](const std::vector<std::string>& flags, const char* what) {
    if (flags.empty()) return;
    std::string joined;
    for (const std::string& flag : flags) joined += (joined.empty() ? "" : " ") + flag;
    box.notes.push_back(std::string(what) + joined);
  };
  list(args.unmodeled_flags, "change memory but are not modeled: ");
  list(args.unknown_flags, "not Megatron-LM flags, ignored: ");
  if (!args.ignored_flags.empty()) {
    box.notes.push_back(std::to_string(args.ignored_flags.size()) +
                        " flags without effect on memory ignored");
  }
  // As `megamem estimate --megatron-args` warns (the vocabulary a --tokenizer-model gives,
  // flags Megatron-LM would refuse): the page's import says what the CLI says.
  for (const std::string& warning : args.warnings) box.notes.push_back("warning: " + warning);
  apply_run(state, box, args.config, parsed->script.world_size ? kAppliedOnLauncher : kAppliedOn);
  return true;
}

bool import_training_log_text(AppState& state, const std::string& text) {
  LogImport& imported = state.log_import;
  imported.comparison.reset();
  imported.warnings.clear();
  imported.anchor_error.clear();
  // The log does not name its GPU: the page's device is kept (`megamem compare --gpu`).
  Expected<LogComparison> compared = compare_megatron_log(text, {.gpu_id = state.shared.gpu_id});
  if (!start_over(imported.box, compared)) return false;
  auto comparison = std::make_shared<const LogComparison>(std::move(compared).value());
  state.shared = comparison->shared;
  imported.link = share_link(comparison->shared, state.base_url);
  imported.warnings = log_comparison_warnings(*comparison);
  // The notes `megamem compare` prints, in the box's note area (#28 item 12).
  imported.box.notes = log_comparison_notes(*comparison);
  imported.comparison = std::move(comparison);
  state.edited_key.clear();
  return true;
}

bool import_bridge_config_text(AppState& state, const std::string& text) {
  ImportBox& box = state.bridge_import;
  const Expected<BridgeImport> imported =
      import_bridge_yaml(text, state.shared.config.parallel.world_size);
  if (!start_over(box, imported)) return false;
  for (const std::string& warning : imported->warnings) box.notes.push_back("warning: " + warning);
  apply_run(state, box, imported->args.config, kAppliedOn);
  return true;
}

ImportBox* import_box(AppState& state, int target) {
  switch (target) {
    case kHfConfigBox:
      return &state.hf_import;
    case kMegatronFlagsBox:
      return &state.flags_import;
    case kTrainingLogBox:
      return &state.log_import.box;
    case kBridgeConfigBox:
      return &state.bridge_import;
    default:
      return nullptr;
  }
}

void refuse_paste(AppState& state, int target, double bytes) {
  state.refused_paste_bytes = 0.0;
  ImportBox* box = import_box(state, target);
  if (box == nullptr) return;
  char text[400];
  std::snprintf(text, sizeof text, tr(kPasteTooLarge), bytes / (1024.0 * 1024.0),
                kMaxPasteBytes >> 20, kMaxMegatronLogBytes >> 20);
  box->error = text;
}

nlohmann::json import_boxes_json(const AppState& state) {
  const auto box_json = [](const ImportBox& box) {
    return nlohmann::json{
        {"text_bytes", box.text.size()}, {"error", box.error}, {"notes", box.notes}};
  };
  const LogImport& log = state.log_import;
  nlohmann::json log_json = box_json(log.box);
  log_json["warnings"] = log.warnings;
  log_json["comparison"] =
      log.comparison ? log_comparison_json(*log.comparison, log.link) : nlohmann::json();
  const SnapshotDownload& snapshot = state.snapshot;
  return {{"log_import", std::move(log_json)},
          {"bridge_import", box_json(state.bridge_import)},
          {"bridge_overrides", to_bridge_overrides(state.shared.config)},
          {"snapshot",
           {{"pp_rank", snapshot.pp_rank},
            {"file_name", snapshot.file_name},
            {"bytes", snapshot.bytes},
            {"error", snapshot.error}}}};
}

bool draw_import_boxes(AppState& state) {
  bool changed = false;
  changed |= box(state, state.hf_import, kHfConfigBox, "paste HuggingFace config.json",
                 "Paste a model's config.json (Llama, Mistral, Qwen2/3, Qwen MoE, Mixtral, "
                 "DeepSeek-V2/V3, Kimi-K2) and press Import: it replaces the model.",
                 "Import", "HuggingFace config.json",
                 "The architecture as Megatron-Bridge's converters would build it.");
  changed |= box(state, state.flags_import, kMegatronFlagsBox, "paste Megatron flags",
                 "Paste the flags of a Megatron-LM launch (pretrain_gpt.py ...) or its whole "
                 "launch script (comments, variables, bash arrays) and press Apply: it replaces "
                 "model, layout and training settings on the current GPUs, or on the GPUs of "
                 "the script's torchrun.",
                 "Apply", "Megatron-LM command line",
                 "Every memory-relevant flag is read; others are listed below.");
  for (const auto& [target, words] :
       {std::pair{kBridgeConfigBox, &kBridgeWords}, std::pair{kTrainingLogBox, &kLogWords}}) {
    changed |= box(state, *import_box(state, target), target, words->title, words->hint,
                   words->button, words->flag, words->effect);
  }
  state.refused_paste_bytes = 0.0;  // shown by the box being typed into, if one was
  return changed;
}

}  // namespace megamem::web
