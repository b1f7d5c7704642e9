// Estimates, the deferred what-if table and the nearest valid configurations; see
// calculation.hpp.
#include "calculation.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "format.hpp"
#include "megamem/anchor_input.hpp"
#include "megamem/estimate.hpp"
#include "megamem/share_link.hpp"
#include "megamem/suggestions.hpp"
#include "megamem/what_if.hpp"
#include "messages.hpp"
#include "platform.hpp"

namespace megamem::web {

void recompute(AppState& state, double now_s) {
  ++state.estimates_computed;
  state.changed_at_s = now_s;
  // What-if is its own call, deferred: finish_what_if().
  Expected<Estimate> result = estimate(state.shared.config);
  state.estimate_ms = (now_seconds() - now_s) * 1000.0;
  if (result) {
    state.last_estimate = std::move(result).value();
    state.estimated = state.shared;
    state.what_if.clear();
    state.what_if_pending = true;
    state.error.reset();
    state.suggestions.clear();
    ++state.result_version;
    reanchor(state);
  } else {
    state.error = result.error();
    state.suggestions = nearest_valid_values(state.shared);
  }
}

void reanchor(AppState& state) {
  state.anchored.reset();
  state.anchored_verdict.reset();
  state.anchor_refused.reset();
  if (!state.anchor || !state.last_estimate) return;
  Expected<AnchoredEstimate> anchored = anchor_estimate(*state.anchor, *state.last_estimate);
  if (!anchored) {
    state.anchor_refused = anchored.error();
    return;
  }
  state.anchored_verdict = anchored_verdict(*state.last_estimate, *anchored);
  state.anchored = std::move(anchored).value();
}

std::optional<Error> anchor_on_log(AppState& state, const std::string& log_text) {
  // A pasted log has no file name: the anchor goes by this one (link: anchor-name).
  const Expected<Anchor> from_log = anchor_from_log(log_text, "pasted log");
  if (!from_log) return from_log.error();
  Expected<std::optional<Anchor>> linked = decode_link_anchor(encode_link_anchor(*from_log));
  if (!linked) return linked.error();
  state.anchor = std::move(linked).value();
  reanchor(state);
  return std::nullopt;
}

void finish_what_if(AppState& state) {
  if (!state.what_if_pending || !state.last_estimate) return;
  state.what_if_pending = false;
  const double started_s = now_seconds();
  state.what_if = what_if_options(state.estimated.config);
  state.last_estimate->what_if.assign(state.what_if.begin(), state.what_if.end());
  state.what_if_ms = (now_seconds() - started_s) * 1000.0;
  ++state.result_version;
}

double full_estimate_ms(const Config& config, int repeats) {
  const double started_s = now_seconds();
  std::size_t rows = 0;
  for (int i = 0; i < repeats; ++i) {
    Expected<Estimate> result = estimate(config);
    if (result) rows += what_if_options(config).size();
  }
  const double elapsed_ms = (now_seconds() - started_s) * 1000.0;
  return rows > 0 ? elapsed_ms / repeats : 0.0;  // 0: no valid estimate to time
}

bool keep_layout_valid(AppState& state) {
  state.layout_note.clear();
  // A PP or VPP edit keeps its size: the layers place around it (issue #28 item 2).
  const std::string_view kept = state.edited_key == "pp"    ? "pipeline_model_parallel_size"
                                : state.edited_key == "vpp" ? "virtual_stages_per_pipeline_rank"
                                                            : "";
  const Expected<megamem::Suggestion> layout = valid_layout_for(state.shared.config, kept);
  if (!layout || layout->label.empty()) return false;  // valid as it is, or no layout runs
  const std::string& new_layout = layout->config.parallel.pipeline_layout;
  if (new_layout != state.shared.config.parallel.pipeline_layout) {
    state.generated_layout = new_layout;
  }
  state.shared.config = layout->config;
  const Config& c = state.shared.config;
  state.layout_note =
      printf_text(tr("The layout was changed to one that Megatron-Core accepts for %s on %lld "
                     "GPUs: %s (the old one does not apply); the verdict above says whether it "
                     "fits."),
                  model_name_or(c.model.name, tr("the model")),
                  static_cast<long long>(c.parallel.world_size), tr_text(layout->label).c_str());
  return true;
}

std::vector<Suggestion> nearest_valid_values(const SharedConfig& shared) {
  std::vector<Suggestion> out;
  // The rule book's suggestions (core/src/plan/suggestions.cpp), each with its link.
  for (megamem::Suggestion& s : suggest_valid_configs(shared.config, 8)) {
    std::string query = encode_share_query(SharedConfig{s.config, shared.model_id, shared.gpu_id});
    const Expected<Estimate> estimated = estimate(s.config);
    out.push_back(Suggestion{
        .field = std::move(s.field),
        .label = std::move(s.label),
        .query = std::move(query),
        .config = std::move(s.config),
        .verdict = estimated ? std::optional<Verdict>(estimated->verdict) : std::nullopt});
  }
  return out;
}

}  // namespace megamem::web
