// The planner in steps (PlanSearch, planner.hpp): advanced with any budget it gives what plan()
// gives (the same top list, Pareto front, statistics, rejections and cells), its progress
// counts up to the search's candidates, and a request that cannot be searched ends at once
// with plan()'s error.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/json_output.hpp"
#include "megamem/planner.hpp"
#include "megamem/share_link.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

namespace {

// A preset's model with the link's defaults (H100 80GB) on `gpus` GPUs, over a search space
// small enough for a unit test (every recompute and offload row is searched).
PlanRequest preset_request(std::string_view model_id, std::int64_t gpus, PlannerSearchSpace space) {
  PlanRequest r = plan_request_for(share_link_defaults());
  r.base.model = fixtures::preset_model(model_id);
  r.base.parallel.world_size = gpus;
  r.base.training.global_batch_size = gpus * 4;
  r.space = std::move(space);
  r.record_cells = true;
  return r;
}

std::vector<PlanRequest> requests() {
  PlannerSearchSpace dense;
  dense.pipeline_parallel = {1, 2, 4};
  dense.max_virtual_stages = 2;
  PlannerSearchSpace moe = dense;
  moe.expert_parallel = {1, 8};
  PlannerSearchSpace deepseek;
  deepseek.tensor_parallel = {1, 2};
  deepseek.context_parallel = {1};
  deepseek.pipeline_parallel = {8, 16};
  deepseek.max_virtual_stages = 2;
  deepseek.expert_parallel = {16, 32};
  return {preset_request("llama-3.1-8b", 64, dense), preset_request("qwen3-30b-a3b", 64, moe),
          preset_request("deepseek-v3", 256, deepseek)};
}

// The search advanced `budget` candidates at a time; its progress never goes back.
Expected<PlanResult> in_steps(const PlanRequest& request, std::int64_t budget, int& steps) {
  PlanSearch search(request);
  PlanProgress last = search.progress();
  CHECK(last.candidates_done == 0);
  CHECK_FALSE(last.finished);
  for (steps = 1; !search.advance(budget); ++steps) {
    const PlanProgress now = search.progress();
    CHECK(now.candidates_total == last.candidates_total);
    CHECK(now.candidates_done >= last.candidates_done);
    CHECK(now.candidates_done <= now.candidates_total);
    CHECK(now.layouts_done <= now.layouts_total);
    CHECK_FALSE(now.finished);
    last = now;
  }
  CHECK(search.progress().finished);
  CHECK(search.progress().candidates_done == last.candidates_total);
  return search.take_result();
}

void check_same_cells(const PlanResult& a, const PlanResult& b) {
  REQUIRE(a.cells.size() == b.cells.size());
  for (std::size_t i = 0; i < a.cells.size(); ++i) {
    CHECK(encode_share_query(SharedConfig{a.cells[i].config, "", ""}) ==
          encode_share_query(SharedConfig{b.cells[i].config, "", ""}));
    CHECK(a.cells[i].status == b.cells[i].status);
    CHECK(a.cells[i].peak_total_bytes == b.cells[i].peak_total_bytes);
    CHECK(a.cells[i].step_time_s == b.cells[i].step_time_s);
  }
}

}  // namespace

TEST_CASE("a search advanced in steps gives plan()'s result, whatever the step") {
  for (const PlanRequest& request : requests()) {
    INFO(request.base.model.name);
    const Expected<PlanResult> whole = plan(request);
    REQUIRE(whole.has_value());
    REQUIRE_FALSE(whole->top.empty());
    const std::string expected = plan_json(request, *whole, 0.0).dump();
    for (const std::int64_t budget : {std::int64_t{1}, std::int64_t{37}, std::int64_t{5000}}) {
      INFO("budget " << budget);
      int steps = 0;
      const Expected<PlanResult> stepped = in_steps(request, budget, steps);
      REQUIRE(stepped.has_value());
      CHECK(plan_json(request, *stepped, 0.0).dump() == expected);
      check_same_cells(*stepped, *whole);
      // Each step takes at least one layout and no more than the budget's worth but one.
      if (budget == 1) CHECK(steps > whole->stats.layouts);
    }
  }
}

TEST_CASE("a search's progress counts the candidates plan() reports") {
  const PlanRequest request = requests().front();
  PlanSearch search(request);
  const PlanProgress start = search.progress();
  const Expected<PlanResult> whole = plan(request);
  REQUIRE(whole.has_value());
  CHECK(start.candidates_total == whole->stats.candidates);
  CHECK(start.layouts_total == whole->stats.layouts);
  search.advance(1);
  const PlanProgress one = search.progress();
  CHECK(one.layouts_done == 1);
  CHECK(one.candidates_done == whole->stats.candidates / whole->stats.layouts);
  CHECK_FALSE(one.ranking);
}

TEST_CASE("a search that cannot run ends at once with plan()'s error") {
  PlanRequest request = requests().front();
  request.base.training.global_batch_size = 0;
  PlanSearch search(request);
  CHECK(search.progress().finished);
  CHECK(search.advance(1));
  const Expected<PlanResult> result = search.take_result();
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().field == plan(request).error().field);
}

TEST_CASE("a search's result is not handed out before it finishes") {
  PlanSearch search(requests().front());
  const Expected<PlanResult> early = search.take_result();
  REQUIRE_FALSE(early.has_value());
  CHECK(early.error().field == "plan");
}

TEST_CASE("the fits are ranked as a stable sort by step time ranks them") {
  PlanRequest request = requests().front();
  request.top = 300;
  const Expected<PlanResult> result = plan(request);
  REQUIRE(result.has_value());
  // More fits than two of the sort's first runs, so that merge passes run.
  REQUIRE(result->stats.fitting > 2 * request.top);
  std::vector<const PlanCell*> fits;
  for (const PlanCell& cell : result->cells) {
    if (cell.status == PlanCell::Status::fits) fits.push_back(&cell);
  }
  std::stable_sort(fits.begin(), fits.end(), [](const PlanCell* a, const PlanCell* b) {
    return a->step_time_s < b->step_time_s;
  });
  REQUIRE(result->top.size() == static_cast<std::size_t>(request.top));
  for (std::size_t i = 0; i < result->top.size(); ++i) {
    INFO(i << ": " << result->top[i].label);
    CHECK(encode_share_query(SharedConfig{result->top[i].config, "", ""}) ==
          encode_share_query(SharedConfig{fits[i]->config, "", ""}));
  }
}
