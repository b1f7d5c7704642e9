// The import boxes; see import_boxes.hpp.
#include "import_boxes.hpp"

#include <string>
#include <utility>

#include "imgui.h"
#include "megamem/hf_config.hpp"
#include "megamem/import_merge.hpp"
#include "megamem/megatron_args.hpp"
#include "messages.hpp"
#include "platform.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

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
  for (const std::string& note : box.notes) ImGui::BulletText("%s", tr_text(note).c_str());
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
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
  multiline("##text", &box.text, ImGui::GetTextLineHeight() * 6.0f);
  describe_item(state, title, "input", flag, effect);
  if (ImGui::Button(tr(button))) {
    changed = target == kHfConfigBox ? import_hf_config_text(state, box.text)
                                     : import_megatron_flags_text(state, box.text);
  }
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
  ImGui::PopID();
  ImGui::TreePop();
  return changed;
}

}  // namespace

bool import_hf_config_text(AppState& state, const std::string& text) {
  ImportBox& box = state.hf_import;
  box.error.clear();
  box.notes.clear();
  const Expected<HfImport> imported = import_hf_config(text);
  if (!imported) {
    box.error = imported.error().field + ": " + imported.error().message;
    return false;
  }
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
  box.error.clear();
  box.notes.clear();
  const Expected<MegatronArgs> parsed =
      parse_megatron_args(text, state.shared.config.parallel.world_size);
  if (!parsed) {
    box.error = parsed.error().field + ": " + parsed.error().message;
    return false;
  }
  state.shared = merge_megatron_flags(state.shared, parsed->config);
  const auto list = [&](const std::vector<std::string>& flags, const char* what) {
    if (flags.empty()) return;
    std::string joined;
    for (const std::string& flag : flags) joined += (joined.empty() ? "" : " ") + flag;
    box.notes.push_back(std::string(what) + joined);
  };
  list(parsed->unmodeled_flags, "change memory but are not modeled: ");
  list(parsed->unknown_flags, "not Megatron-LM flags, ignored: ");
  if (!parsed->ignored_flags.empty()) {
    box.notes.push_back(std::to_string(parsed->ignored_flags.size()) +
                        " flags without effect on memory ignored");
  }
  box.notes.insert(box.notes.begin(), "applied on " +
                                          std::to_string(state.shared.config.parallel.world_size) +
                                          " GPUs (GPU, runtime and environment settings kept)");
  state.edited_key.clear();
  return true;
}

bool draw_import_boxes(AppState& state) {
  bool changed = false;
  changed |= box(state, state.hf_import, kHfConfigBox, "paste HuggingFace config.json",
                 "Paste a model's config.json (Llama, Mistral, Qwen2/3, Qwen MoE, Mixtral, "
                 "DeepSeek-V2/V3, Kimi-K2) and press Import: it replaces the model.",
                 "Import", "HuggingFace config.json",
                 "The architecture as Megatron-Bridge's converters would build it.");
  changed |= box(state, state.flags_import, kMegatronFlagsBox, "paste Megatron flags",
                 "Paste the flags of a Megatron-LM launch (pretrain_gpt.py ...) and press "
                 "Apply: it replaces model, layout and training settings on the current GPUs.",
                 "Apply", "Megatron-LM command line",
                 "Every memory-relevant flag is read; others are listed below.");
  return changed;
}

}  // namespace megamem::web
