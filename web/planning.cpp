// The planner search in time slices, and its staleness; see planning.hpp.
#include "planning.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "megamem/share_link.hpp"
#include "platform.hpp"

namespace megamem::web {
namespace {

std::string query_of(const AppState& state, const Config& config) {
  return encode_share_query(SharedConfig{config, state.shared.model_id, state.shared.gpu_id});
}

std::string inputs_query(const AppState& state, const Config& config, const PlanRequest& request) {
  return query_of(state, plan_inputs(config, request.space));
}

// A frame's share of the search, and the work between two looks at the clock (one layout, or
// a few hundred fits of the ranking).
constexpr double kSliceS = 0.008;
constexpr std::int64_t kStepCandidates = 256;

// What a search searches: its inputs, options and search space. A search under way whose key
// changes is restarted.
std::string search_key(const AppState& state, const PlanRequest& request) {
  const PlannerSearchSpace& s = request.space;
  std::string key = inputs_query(state, state.shared.config, request);
  char options[64];
  std::snprintf(options, sizeof options, "|%.17g|%d%d%d|%d-%d", request.margin_gib,
                s.search_recompute, s.search_offload, s.search_expert_tensor_parallel,
                s.min_virtual_stages, s.max_virtual_stages);
  key += options;
  for (const std::vector<int>* axis :
       {&s.tensor_parallel, &s.pipeline_parallel, &s.context_parallel, &s.expert_parallel,
        &s.micro_batch_sizes}) {
    key += '|';
    for (const int value : *axis) key += std::to_string(value) + ',';
  }
  return key;
}

// The ended search's result (or error) becomes the panel's, with the link queries of its rows.
void take_plan(AppState& state) {
  PlannerState& planner = state.planner;
  Expected<PlanResult> result = planner.search->take_result();
  planner.search.reset();
  planner.request = std::move(planner.search_request);
  planner.search_request.reset();
  planner.search_ms = planner.search_work_ms;
  planner.search_wall_ms = (now_seconds() - planner.search_started_s) * 1000.0;
  planner.search_frames_taken = planner.search_frames;
  planner.inputs_queries = {inputs_query(state, state.shared.config, *planner.request)};
  planner.top_queries.clear();
  planner.pareto_queries.clear();
  if (!result) {
    planner.error = result.error();
    planner.result.reset();
  } else {
    planner.error.reset();
    planner.result = std::move(result).value();
    const auto add_inputs = [&](const Config& config) {
      std::string query = inputs_query(state, config, *planner.request);
      if (std::find(planner.inputs_queries.begin(), planner.inputs_queries.end(), query) ==
          planner.inputs_queries.end()) {
        planner.inputs_queries.push_back(std::move(query));
      }
    };
    for (const PlanCandidate& c : planner.result->top) {
      planner.top_queries.push_back(query_of(state, c.config));
      add_inputs(c.config);
    }
    for (const PlanCandidate& c : planner.result->pareto) {
      planner.pareto_queries.push_back(query_of(state, c.config));
      add_inputs(c.config);
    }
  }
  planner.inputs_changed = false;
  planner.stale = false;
  planner.stale_checked_query = state.query;
}

}  // namespace

PlanRequest planner_request(const AppState& state) {
  PlanRequest request = plan_request_for(state.shared.config);
  request.margin_gib = state.planner.margin_gib;
  request.space.search_recompute = state.planner.search_recompute;
  request.space.search_offload = state.planner.search_offload;
  keep_layout_fields(request.space, state.shared.config, state.planner.keep);
  return request;
}

void request_plan(AppState& state) {
  PlannerState& planner = state.planner;
  PlanRequest request = planner_request(state);
  planner.search_key = search_key(state, request);
  planner.search.emplace(request);
  planner.progress = planner.search->progress();
  planner.search_request = std::move(request);
  planner.search_started_s = now_seconds();
  planner.search_work_ms = 0.0;
  planner.search_frames = 0;
  planner.search_slices_ms.clear();
  planner.cancelled = false;
}

void cancel_plan(AppState& state) {
  PlannerState& planner = state.planner;
  if (!planner.search) return;
  planner.search.reset();
  planner.search_request.reset();
  planner.cancelled = true;
}

void advance_plan(AppState& state, bool editing, bool holding) {
  PlannerState& planner = state.planner;
  if (!planner.search) return;
  const double started_s = now_seconds();
  if (search_key(state, planner_request(state)) != planner.search_key) {
    if (editing) return;
    request_plan(state);
  }
  if (!planner.progress.finished) {
    bool finished = false;
    do {
      finished = planner.search->advance(kStepCandidates);
    } while (!finished && now_seconds() - started_s < kSliceS);
    planner.progress = planner.search->progress();
    const double slice_ms = (now_seconds() - started_s) * 1000.0;
    planner.search_work_ms += slice_ms;
    planner.search_slices_ms.push_back(static_cast<float>(slice_ms));
    ++planner.search_frames;
  }
  if (planner.progress.finished && !holding) take_plan(state);
}

void update_plan_staleness(AppState& state) {
  PlannerState& planner = state.planner;
  if (!planner.request) return;
  if (planner.stale_checked_query != state.query) {
    planner.stale_checked_query = state.query;
    const std::string query = inputs_query(state, state.shared.config, *planner.request);
    planner.inputs_changed = std::find(planner.inputs_queries.begin(), planner.inputs_queries.end(),
                                       query) == planner.inputs_queries.end();
  }
  const PlanRequest& searched = *planner.request;
  const PlannerSearchSpace asked = planner_request(state).space;
  const PlannerSearchSpace& space = searched.space;
  const bool same_layout_axes =
      asked.tensor_parallel == space.tensor_parallel &&
      asked.pipeline_parallel == space.pipeline_parallel &&
      asked.context_parallel == space.context_parallel &&
      asked.expert_parallel == space.expert_parallel &&
      asked.micro_batch_sizes == space.micro_batch_sizes &&
      asked.min_virtual_stages == space.min_virtual_stages &&
      asked.max_virtual_stages == space.max_virtual_stages &&
      asked.search_expert_tensor_parallel == space.search_expert_tensor_parallel;
  planner.stale = planner.inputs_changed || !same_layout_axes ||
                  searched.margin_gib != planner.margin_gib ||
                  space.search_recompute != planner.search_recompute ||
                  space.search_offload != planner.search_offload;
}

void update_plan_reference(AppState& state) {
  PlannerState& planner = state.planner;
  if (!planner.request) return;
  const std::string key = state.query + '|' + std::to_string(state.result_version) + '|' +
                          (state.error ? state.error->message : std::string());
  if (planner.reference && planner.reference_key == key) return;
  planner.reference_key = key;
  if (state.error) {
    planner.reference = plan_reference(state.shared.config, *state.error);
  } else if (state.last_estimate) {
    planner.reference =
        plan_reference(state.shared.config, *state.last_estimate, planner.request->step_time);
  } else {
    planner.reference.reset();
  }
}

}  // namespace megamem::web
