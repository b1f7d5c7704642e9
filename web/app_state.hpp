// The web app's state: the configuration being edited (with the presets it came from), the
// last valid estimate, what is wrong with the current inputs, and the view's own settings.
// One struct, owned by app.cpp; panels receive it by reference and own nothing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "megamem/anchor.hpp"
#include "megamem/estimate.hpp"
#include "megamem/expected.hpp"
#include "megamem/megatron_log.hpp"
#include "megamem/planner.hpp"
#include "megamem/share_link.hpp"
#include "megamem/what_if.hpp"
#include "messages.hpp"

namespace megamem::web {

// Screen rectangle of one labelled input, in canvas pixels (for tests that click on it).
struct WidgetRect {
  float x = 0, y = 0, width = 0, height = 0;
  std::string kind;     // "slider", "input", "checkbox", "combo", "button"
  unsigned int id = 0;  // Dear ImGui's item ID (0: none), as window.megamem.inputLog() names it
};

// A nearby configuration the core suggests for an invalid one ("TP 4"): valid, same model.
struct Suggestion {
  std::string field;  // the core field it changes first ("tensor_model_parallel_size")
  std::string label;  // "TP 4"
  std::string query;  // its share-link query ("v=1&model=...")
  Config config;      // the configuration with that change
  // The core's verdict of its estimate (nullopt when it does not estimate): whether the fix
  // fits is shown beside it (#28 item 1).
  std::optional<Verdict> verdict;
};

// Text boxes that import a model or a whole configuration.
struct ImportBox {
  std::string text;
  std::string error;               // inline error of the last attempt ("" = none)
  std::vector<std::string> notes;  // approximations or ignored flags of the last import
};

// The "paste a training log" box: its messages, and the run the last log described, measured
// beside estimated (shared, not copied: its ranks point into its own estimate).
struct LogImport {
  ImportBox box;
  std::shared_ptr<const LogComparison> comparison;  // null until a log was read
  std::string link;                                 // the run's share link
  std::vector<std::string> warnings;                // what the comparison leaves out
  std::string anchor_error;                         // why "use as anchor" could not
};

// The last memory snapshot the page offered for download (export_panel.cpp).
struct SnapshotDownload {
  int pp_rank = -1;  // -1: none yet
  std::string file_name;
  std::size_t bytes = 0;
  std::string error;  // why the last one could not be written
};

// The layout planner (planner_panel.cpp): its options, the last search, and the link queries
// that tell whether that search still belongs to the configuration being edited.
struct PlannerState {
  double margin_gib = 2.0;  // headroom kept under the card's capacity
  bool search_recompute = true;
  bool search_offload = true;
  bool show_pareto = false;  // list the Pareto front instead of the fastest layouts
  PlanKeep keep;             // layout fields the search keeps at the calculator's values
  // The search under way: advanced a time slice a frame (planning.cpp), so the page stays
  // responsive; a change of what it searches restarts it, Cancel drops it.
  std::optional<PlanSearch> search;
  std::optional<PlanRequest> search_request;  // of the search under way
  std::string search_key;                     // what it searches (planning.cpp search_key)
  PlanProgress progress;                      // of the search under way
  double search_started_s = 0.0;              // when it (re)started
  double search_work_ms = 0.0;                // time its slices took so far
  int search_frames = 0;                      // frames it has been advanced in
  // Each frame's slice of the latest search (ms), for its quantiles: the mean counts the time
  // other processes held the core while a slice ran, the low decile does not (e2e
  // web_planner).
  std::vector<float> search_slices_ms;
  bool cancelled = false;              // the last search was cancelled
  std::optional<PlanRequest> request;  // of the last search that ended
  std::optional<PlanResult> result;    // of the last search that succeeded
  std::optional<Error> error;          // why the last search could not run
  double search_ms = 0.0;              // the last search's own time (its slices)
  double search_wall_ms = 0.0;         // from its start to its end, frames between
  int search_frames_taken = 0;         // frames it took
  // plan_inputs() of the searched configuration and of every candidate listed (one with
  // optimizer offload differs: it turns the precision-aware optimizer on), as link queries.
  std::vector<std::string> inputs_queries;
  std::vector<std::string> top_queries;     // link query of each result.top entry
  std::vector<std::string> pareto_queries;  // link query of each result.pareto entry
  bool inputs_changed = false;              // the configuration's plan_inputs() changed
  std::string stale_checked_query;          // the query inputs_changed was computed for
  bool stale = false;  // the configuration or the options changed since the search
  // The configuration being edited, as the list compares its rows with (plan_reference: the
  // top bar's estimate, and its step time), and the query and result it was made for.
  std::optional<PlanReference> reference;
  std::string reference_key;
  // What the last frame drew (for tests): the line above the rows, and each row as
  // "index|peak|peak change|step|step change|rows folded into it" ("3|66.92 GiB|-2.62 GiB|...").
  std::string shown_reference;
  std::string shown_anchor_note;  // the planner's figures are raw while an anchor applies
  std::vector<std::string> shown_rows;
};

struct AppState {
  // --- what the user edits -------------------------------------------------------------------
  SharedConfig shared;     // config + model/GPU preset ids (the share link's source)
  std::string edited_key;  // share-link key of the input edited last ("tp"), for errors
  // A model, GPU or GPU count was picked: the layout is made valid once no input is active.
  bool layout_check_pending = false;
  std::string layout_note;  // what that changed in the layout ("" = nothing)
  // The --pipeline-model-parallel-layout that check wrote ("" = none): it follows PP and VPP
  // edits, where a layout the user typed or linked stays as given.
  std::string generated_layout;

  // --- results --------------------------------------------------------------------------------
  std::optional<Estimate> last_estimate;  // last valid result, kept while inputs are invalid
  SharedConfig estimated;                 // the configuration last_estimate is of
  std::vector<WhatIfOption> what_if;      // rows of last_estimate with their configs
  bool what_if_pending = false;           // last_estimate.what_if not computed yet
  double changed_at_s = 0.0;              // when the inputs last changed
  std::optional<Error> error;             // why the current inputs are invalid, if they are
  std::vector<Suggestion> suggestions;    // nearest valid values for the error
  std::uint64_t estimates_computed = 0;   // how often the inputs changed
  std::uint64_t result_version = 0;       // bumps with every new estimate (for caches)
  double estimate_ms = 0.0;               // time of the last estimate (diagnostics)
  double what_if_ms = 0.0;                // time of the last what-if table
  double frame_ms = 0.0;                  // UI time per frame, moving average (diagnostics)
  double frame_worst_ms = 0.0;            // the slowest frame since state() was last read

  // --- the anchor (issue #26) -----------------------------------------------------------------
  // The measured run every estimate is anchored on, as the link carries it (anchor=, anchor-*):
  // set from a pasted log ("use as anchor") or an opened link, dropped from the top bar.
  std::optional<Anchor> anchor;
  std::optional<AnchoredEstimate> anchored;  // of last_estimate, when the anchor applies
  std::optional<Verdict> anchored_verdict;   // the verdict of the anchored peaks
  std::optional<Error> anchor_refused;       // why the anchor does not apply to last_estimate

  // --- the link -------------------------------------------------------------------------------
  std::string base_url;                    // page address without query ("http://host/")
  std::string query;                       // the current configuration's query ("v=1&...")
  std::string pushed_query;                // the query the browser's address bar shows
  std::optional<Error> link_error;         // the first parameter of the opened link not read
  std::size_t link_error_count = 0;        // parameters of it not read
  std::string link_error_text;             // that link
  std::string link_error_shown;            // the box's paragraphs as the last frame broke them
  std::vector<std::string> recipes_shown;  // the recipes picker's rows when last open
  bool link_copied = false;                // "Copy link" feedback
  double link_copied_at_s = 0.0;

  // --- the view -------------------------------------------------------------------------------
  int selected_rank = -1;  // PP rank shown by the timeline and module tree; -1 = limiting
  bool light = false;
  // The page's language: the link's lang= when it has one (kept in view.language and written
  // back into the address), the browser's language otherwise.
  Language language = Language::en;
  LinkView view;
  bool show_settings_on_phone = false;
  bool not_modeled_open = false;
  std::string modules_sort;      // "weights descending"; "" = model order
  bool what_if_by_deal = false;  // what-if rows by GiB saved per % of step time
  std::string model_filter;
  std::string gpu_filter;
  std::string recipe_filter;
  ImportBox hf_import;
  ImportBox flags_import;
  LogImport log_import;
  ImportBox bridge_import;
  // A paste the browser refused for its size (bytes; 0 = none): the box being typed into says so.
  double refused_paste_bytes = 0.0;
  SnapshotDownload snapshot;
  PlannerState planner;

  // --- for tests --------------------------------------------------------------------------------
  std::map<std::string, WidgetRect> input_rects;  // by input label, refreshed every frame
};

// The rank the detail views show.
inline int shown_rank(const AppState& state) {
  if (!state.last_estimate) return 0;
  const int ranks = static_cast<int>(state.last_estimate->ranks.size());
  if (state.selected_rank >= 0 && state.selected_rank < ranks) return state.selected_rank;
  return state.last_estimate->limiting_pp_rank;
}

// The verdict the page shows: of the anchored peaks while an anchor applies, else the raw one.
inline const Verdict& shown_verdict(const AppState& state) {
  return state.anchored_verdict ? *state.anchored_verdict : state.last_estimate->verdict;
}

}  // namespace megamem::web
