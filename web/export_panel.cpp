// The export section; see export_panel.hpp.
#include "export_panel.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

#include "imgui.h"
#include "megamem/bridge_config.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/memory_snapshot.hpp"
#include "messages.hpp"
#include "platform.hpp"
#include "results_panel.hpp"
#include "theme.hpp"
#include "widgets.hpp"

namespace megamem::web {
namespace {

// The section's words, in one place.
constexpr const char* kHeading = "EXPORT";
constexpr const char* kHeadingNote = "where the run's own data opens";
constexpr const char* kSnapshotButton = "Download memory snapshot (PP rank %d)";
constexpr const char* kSnapshotLabel = "download memory snapshot";
constexpr const char* kSnapshotFlag = "megamem estimate --snapshot FILE --rank P";
constexpr const char* kSnapshotEffect =
    "The rank's estimated training step as the pickle torch.cuda.memory._dump_snapshot() "
    "writes: open it at pytorch.org/memory_viz beside a real run's snapshot.";
constexpr const char* kSnapshotDone = "%s: %zu bytes";
constexpr const char* kSnapshotFile = "megamem-pp-rank-%d.pickle";
constexpr const char* kFlagsTitle = "Megatron-LM flags";
constexpr const char* kFlagsFlag = "megamem estimate --print-megatron-args";
constexpr const char* kOverridesTitle = "Megatron-Bridge overrides";
constexpr const char* kOverridesFlag = "megamem estimate --print-bridge-overrides";
constexpr const char* kCopy = "Copy";
constexpr const char* kCopyEffect = "Copies the text to the clipboard.";

// The texts of the estimate shown, rebuilt when it changes.
struct ExportTexts {
  std::uint64_t result_version = ~std::uint64_t{0};
  std::string flags;
  std::string overrides;
};
ExportTexts texts;

void snapshot_button(AppState& state, const Estimate& estimate) {
  const int rank = shown_rank(state);
  char button[96];
  std::snprintf(button, sizeof button, tr(kSnapshotButton), rank);
  const bool pressed = ImGui::Button(button);
  describe_item(state, kSnapshotLabel, "button", kSnapshotFlag, kSnapshotEffect);
  if (pressed) {
    SnapshotDownload& snapshot = state.snapshot;
    snapshot = SnapshotDownload{.pp_rank = rank};
    const Expected<std::string> pickle = memory_snapshot_pickle(estimate, rank);
    if (pickle) {
      char name[64];
      std::snprintf(name, sizeof name, kSnapshotFile, rank);
      snapshot.file_name = name;
      snapshot.bytes = pickle->size();
      download_file(snapshot.file_name, *pickle, "application/octet-stream");
    } else {
      snapshot.error = pickle.error().message;
    }
  }
  if (!state.snapshot.error.empty()) wrapped_text(kErrorColor, state.snapshot.error);
  if (state.snapshot.bytes > 0) {
    char done[160];
    std::snprintf(done, sizeof done, tr(kSnapshotDone), state.snapshot.file_name.c_str(),
                  state.snapshot.bytes);
    wrapped_text(muted_text_color(), done);
  }
}

// The text, wrapped, under its title and a Copy button (the title is the test handle).
void copyable(AppState& state, const char* title, const char* flag, const std::string& text) {
  ImGui::PushID(title);
  ImGui::TextUnformatted(tr(title));
  ImGui::SameLine();
  if (ImGui::SmallButton(tr(kCopy))) copy_to_clipboard(text);
  describe_item(state, (std::string(title) + ": " + kCopy).c_str(), "button", flag, kCopyEffect);
  verbatim_text(muted_text_color(), text);
  ImGui::PopID();
}

}  // namespace

void draw_export_panel(AppState& state, const Estimate& estimate) {
  if (texts.result_version != state.result_version) {
    texts.result_version = state.result_version;
    texts.flags = to_megatron_args(state.estimated.config);
    texts.overrides = to_bridge_overrides(state.estimated.config);
  }
  results_heading(kHeading, kHeadingNote);
  snapshot_button(state, estimate);
  copyable(state, kFlagsTitle, kFlagsFlag, texts.flags);
  copyable(state, kOverridesTitle, kOverridesFlag, texts.overrides);
}

}  // namespace megamem::web
