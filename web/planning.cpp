// The planner search and its staleness; see planning.hpp.
#include "planning.hpp"

#include <algorithm>
#include <utility>

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
  state.planner.pending = true;
  state.planner.frames_since_request = 0;
}

void run_pending_plan(AppState& state) {
  PlannerState& planner = state.planner;
  // Called as a frame starts: the frame after the click draws "searching" first.
  if (!planner.pending || planner.frames_since_request++ < 1) return;
  planner.pending = false;
  PlanRequest request = planner_request(state);
  const double started_s = now_seconds();
  Expected<PlanResult> result = plan(request);
  planner.search_ms = (now_seconds() - started_s) * 1000.0;
  planner.inputs_queries = {inputs_query(state, state.shared.config, request)};
  planner.request = std::move(request);
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

}  // namespace megamem::web
