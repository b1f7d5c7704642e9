// The planner finds layouts for the 2025 MoE presets (GLM-4.5, GLM-4.5-Air,
// Qwen3-Coder-480B-A35B, gpt-oss-120b and -20b) on 64 H100s, and the fastest one's share link opens
// the same configuration again.
#include <catch2/catch.hpp>
#include <string>

#include "megamem/planner.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"

using namespace megamem;

namespace {

// The preset on 64 H100s, gbs 512 at 4096 tokens, link defaults otherwise; a search of
// Megatron-Bridge's usual MoE shapes (TP <= 4, PP 4-8, EP 8) small enough for a unit test.
PlanRequest request_for(const char* model_id) {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  const ModelPreset* model = catalog->find_model(model_id);
  const GpuPreset* gpu = catalog->find_gpu("h100-80gb");
  REQUIRE(model != nullptr);
  REQUIRE(gpu != nullptr);
  PlanRequest r;
  r.base = share_link_defaults();
  r.base.model = model->model;
  r.base.device = gpu->device;
  r.base.parallel.world_size = 64;
  r.base.training.global_batch_size = 512;
  r.base.training.seq_length = 4096;
  r.space.tensor_parallel = {2, 4};
  r.space.context_parallel = {1};
  r.space.pipeline_parallel = {4, 8};
  r.space.max_virtual_stages = 2;
  r.space.expert_parallel = {8};
  r.space.micro_batch_sizes = {1};
  r.top = 3;
  return r;
}

}  // namespace

TEST_CASE("the planner finds layouts for the new MoE presets on 64 H100s") {
  for (const char* id :
       {"glm-4.5", "glm-4.5-air", "qwen3-coder-480b-a35b", "gpt-oss-120b", "gpt-oss-20b"}) {
    INFO(id);
    const PlanRequest request = request_for(id);
    const Expected<PlanResult> result = plan(request);
    INFO((result ? std::string() : result.error().field + ": " + result.error().message));
    REQUIRE(result.has_value());
    REQUIRE_FALSE(result->top.empty());
    const PlanCandidate& best = result->top.front();
    CHECK(static_cast<double>(best.peak_total_bytes) <=
          (request.base.device.capacity_gib - request.margin_gib) * 1024.0 * 1024.0 * 1024.0);
    // The recipe's link names the preset and decodes to the same configuration.
    const SharedConfig shared = with_detected_presets(best.config);
    CHECK(shared.model_id == id);
    const Expected<SharedConfig> decoded = decode_share_link(share_link(shared, ""));
    REQUIRE(decoded.has_value());
    CHECK(share_link_differences(decoded->config, best.config).empty());
  }
}
