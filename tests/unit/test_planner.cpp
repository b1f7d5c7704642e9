// Layout planner (planner.hpp): every candidate classified as estimate() would, reported
// candidates carrying estimate()'s bytes and estimate_step_time()'s time, the fastest first,
// a true Pareto front, and rejections grouped by rule.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "megamem/estimate.hpp"
#include "megamem/planner.hpp"
#include "megamem/share_link.hpp"
#include "megamem/step_time.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Llama-3-70B on 64 H100s, a search small enough to estimate every candidate.
PlanRequest llama_request() {
  PlanRequest r;
  r.base = fixtures::llama3_70b();
  r.base.parallel.world_size = 64;
  r.base.training.global_batch_size = 128;
  r.base.optimizer.overlap_grad_reduce = true;
  r.base.device.capacity_gib = 79.65;
  r.space.tensor_parallel = {2, 4, 8};
  r.space.context_parallel = {1, 2};
  r.space.pipeline_parallel = {2, 4, 8};
  r.space.max_virtual_stages = 2;
  r.space.micro_batch_sizes = {1, 2, 4};
  r.record_cells = true;
  return r;
}

// DeepSeek-V3 on 256 H100s (MLA, MoE, MTP, uneven pipeline layouts).
PlanRequest deepseek_request() {
  PlanRequest r;
  r.base = fixtures::deepseek_v3();
  r.base.parallel.world_size = 256;
  r.base.training.global_batch_size = 1024;
  r.base.training.moe_grouped_gemm = true;
  r.base.optimizer.overlap_grad_reduce = true;
  r.base.device.capacity_gib = 79.65;
  r.space.tensor_parallel = {1, 2};
  r.space.context_parallel = {1};
  r.space.pipeline_parallel = {8, 16};
  r.space.max_virtual_stages = 2;
  r.space.expert_parallel = {16, 32, 64};
  r.space.micro_batch_sizes = {1, 2};
  r.record_cells = true;
  return r;
}

std::uint64_t limit_bytes(const PlanRequest& r) {
  return static_cast<std::uint64_t>((r.base.device.capacity_gib - r.margin_gib) * kGiB);
}

// Whether estimate() says the configuration fits the request: its peak with the margin, and
// every rank's verdict band (verdict.hpp) within the capacity.
bool fits_request(const Config& config, const PlanRequest& r) {
  const Expected<Estimate> e = estimate(config, EstimateOptions{false, false});
  REQUIRE(e.has_value());
  bool fits =
      e->ranks[static_cast<std::size_t>(e->limiting_pp_rank)].peak_total_bytes <= limit_bytes(r);
  for (const RankVerdict& rank : e->verdict.ranks) {
    fits = fits && rank.high_total_bytes <= e->verdict.capacity_bytes;
  }
  return fits;
}

std::uint64_t estimated_peak(const Config& config) {
  const Expected<Estimate> e = estimate(config, EstimateOptions{false, false});
  REQUIRE(e.has_value());
  return e->ranks[static_cast<std::size_t>(e->limiting_pp_rank)].peak_total_bytes;
}

// Estimates every recorded cell and checks the planner's classification and bytes.
void check_against_estimate(const PlanRequest& request) {
  const Expected<PlanResult> result = plan(request);
  if (!result) FAIL(result.error().field << ": " << result.error().message);
  const PlanResult& r = *result;
  REQUIRE(static_cast<std::int64_t>(r.cells.size()) == r.stats.candidates);
  const std::uint64_t limit = limit_bytes(request);
  std::int64_t fits = 0, oom = 0, invalid = 0;
  for (const PlanCell& cell : r.cells) {
    const Expected<Estimate> e = estimate(cell.config, EstimateOptions{false, false});
    if (!e) {
      CHECK(cell.status == PlanCell::Status::invalid);
      ++invalid;
      continue;
    }
    const std::uint64_t peak =
        e->ranks[static_cast<std::size_t>(e->limiting_pp_rank)].peak_total_bytes;
    // The margin or the verdict's band, whichever needs more (verdict.hpp).
    bool within_band = true;
    for (const RankVerdict& rank : e->verdict.ranks) {
      within_band = within_band && rank.high_total_bytes <= e->verdict.capacity_bytes;
    }
    const bool fit = peak <= limit && within_band;
    INFO("TP" + std::to_string(cell.config.parallel.tensor_parallel) + " PP" +
         std::to_string(cell.config.parallel.pipeline_parallel) + " mbs " +
         std::to_string(cell.config.training.micro_batch_size) + " peak " +
         std::to_string(static_cast<double>(peak) / kGiB));
    CHECK((cell.status == PlanCell::Status::fits) == fit);
    CHECK((cell.status == PlanCell::Status::out_of_memory) == !fit);
    // The fast path prices a cell as estimate() does (to a rounding byte).
    if (cell.evaluated) {
      CHECK(cell.peak_total_bytes + 2 >= peak);
      CHECK(cell.peak_total_bytes <= peak + 2);
    }
    (fit ? fits : oom) += 1;
  }
  CHECK(r.stats.fitting == fits);
  CHECK(r.stats.out_of_memory == oom);
  CHECK(r.stats.invalid == invalid);
  CHECK(r.stats.candidates == r.stats.valid + r.stats.invalid);
  CHECK(r.stats.valid == r.stats.fitting + r.stats.out_of_memory);
  // Many candidates are classified without their own evaluation.
  CHECK(r.stats.inferred > r.stats.valid / 5);
}

}  // namespace

TEST_CASE("every candidate is classified as estimate() classifies it (Llama-3-70B)") {
  check_against_estimate(llama_request());
}

TEST_CASE("every candidate is classified as estimate() classifies it (DeepSeek-V3)") {
  check_against_estimate(deepseek_request());
}

// The terms the fast path must price as estimate() does (issue 24): Megatron-FSDP's working
// set and initialization, TE CUDA graphs' phases, the deferred embedding wgrad, the
// optimizer step's fp32 grad copy and the EP overlap's combined steps.
TEST_CASE(
    "the fast path agrees with estimate() on FSDP, CUDA graphs, deferred wgrad, the step, FP8, "
    "the EP overlap, offloading") {
  SECTION("Megatron-FSDP") {
    PlanRequest r = llama_request();
    r.base.parallel.fsdp.impl = FsdpImpl::megatron;
    r.base.optimizer.use_distributed_optimizer = false;
    check_against_estimate(r);
  }
  SECTION("Transformer Engine CUDA graphs") {
    PlanRequest r = llama_request();
    r.base.training.cuda_graph_impl = CudaGraphImpl::transformer_engine;
    check_against_estimate(r);
  }
  SECTION("deferred embedding wgrad") {
    PlanRequest r = llama_request();
    r.base.training.defer_embedding_wgrad_compute = true;
    r.base.training.wgrad_deferral_limit = 4;
    check_against_estimate(r);
  }
  SECTION("the EP A2A overlap's combined forward-backward steps") {
    PlanRequest r = deepseek_request();
    r.base.training.overlap_moe_expert_parallel_comm = true;
    r.base.parallel.expert_parallel = 16;  // the base is checked too: the overlap needs EP
    r.base.training.recompute.granularity = RecomputeGranularity::selective;
    r.base.training.recompute.modules = {RecomputeModule::mla_up_proj, RecomputeModule::mlp};
    check_against_estimate(r);
  }
  SECTION("FP8 with its first and last layers in bf16") {
    // Chunks of one layer kind differ when one holds a bf16 layer: they must not share a walk.
    PlanRequest r = llama_request();
    r.base.training.fp8_recipe = Fp8Recipe::tensorwise;
    r.base.training.fp8_bf16_layers_at_start = 30;
    r.base.training.fp8_bf16_layers_at_end = 1;
    check_against_estimate(r);
  }
  SECTION("fine-grained offloading's kept margins") {
    // A rank whose chunks keep offloading margins is walked, not profiled (planner_memory.cpp).
    PlanRequest r = deepseek_request();
    r.base.training.offload.fine_grained_activation_offloading = true;
    r.base.training.offload.offload_modules = {OffloadModule::core_attn, OffloadModule::expert_fc1};
    check_against_estimate(r);
  }
  SECTION("a 16-bit grad buffer's step copy") {
    PlanRequest r = llama_request();
    r.base.optimizer.grad_reduce_in_bf16 = true;
    r.base.optimizer.use_distributed_optimizer = false;
    check_against_estimate(r);
  }
}

TEST_CASE("reported candidates carry estimate()'s bytes and estimate_step_time()'s time") {
  for (const PlanRequest& request : {llama_request(), deepseek_request()}) {
    const Expected<PlanResult> result = plan(request);
    REQUIRE(result.has_value());
    REQUIRE(!result->top.empty());
    REQUIRE(!result->pareto.empty());
    std::vector<PlanCandidate> reported = result->top;
    reported.insert(reported.end(), result->pareto.begin(), result->pareto.end());
    for (const PlanCandidate& c : reported) {
      INFO(c.label);
      const Expected<Estimate> e = estimate(c.config, EstimateOptions{false, false});
      REQUIRE(e.has_value());
      CHECK(c.peak_total_bytes ==
            e->ranks[static_cast<std::size_t>(e->limiting_pp_rank)].peak_total_bytes);
      CHECK(c.limiting_pp_rank == e->limiting_pp_rank);
      CHECK(c.peak_total_bytes <= limit_bytes(request));
      const Expected<StepTime> t = estimate_step_time(c.config, request.step_time);
      REQUIRE(t.has_value());
      CHECK(c.time.step_time_s == Approx(t->step_time_s).epsilon(1e-12));
      CHECK(c.time.model_tflops_per_gpu == Approx(t->model_tflops_per_gpu).epsilon(1e-12));
    }
  }
}

TEST_CASE("the top list is the fastest fitting candidates, fastest first") {
  const PlanRequest request = llama_request();
  const Expected<PlanResult> result = plan(request);
  REQUIRE(result.has_value());
  std::vector<double> times;
  for (const PlanCell& cell : result->cells) {
    if (!fits_request(cell.config, request)) continue;
    times.push_back(estimate_step_time(cell.config, request.step_time)->step_time_s);
  }
  std::sort(times.begin(), times.end());
  REQUIRE(result->top.size() == static_cast<std::size_t>(request.top));
  for (std::size_t i = 0; i < result->top.size(); ++i) {
    CHECK(result->top[i].time.step_time_s == Approx(times[i]).epsilon(1e-12));
  }
}

TEST_CASE("no fitting candidate is both faster and smaller than a Pareto candidate") {
  const PlanRequest request = deepseek_request();
  const Expected<PlanResult> result = plan(request);
  REQUIRE(result.has_value());
  const auto& front = result->pareto;
  REQUIRE(front.size() >= 2);
  for (std::size_t i = 1; i < front.size(); ++i) {
    CHECK(front[i].time.step_time_s >= front[i - 1].time.step_time_s);
    CHECK(front[i].peak_total_bytes < front[i - 1].peak_total_bytes);
  }
  for (const PlanCell& cell : result->cells) {
    if (cell.status != PlanCell::Status::fits) continue;
    const std::uint64_t peak = estimated_peak(cell.config);
    for (const PlanCandidate& p : front) {
      const bool dominates = cell.step_time_s < p.time.step_time_s && peak < p.peak_total_bytes;
      CHECK_FALSE(dominates);
    }
  }
  // The fastest candidate of all is on the front.
  CHECK(front.front().time.step_time_s == Approx(result->top.front().time.step_time_s));
}

TEST_CASE("rejections count out-of-memory candidates and group Megatron's rules by field") {
  PlanRequest r = llama_request();
  r.base.model.num_attention_heads = 40;  // 40 heads do not split over TP 16
  r.base.training.global_batch_size = 32;
  r.space.tensor_parallel = {2, 16};
  r.space.context_parallel = {1};
  r.space.pipeline_parallel = {2};
  r.space.max_virtual_stages = 2;
  r.space.micro_batch_sizes = {1, 2, 3};  // 3 does not divide the batch; 2 leaves VPP too few
  const Expected<PlanResult> result = plan(r);
  REQUIRE(result.has_value());
  std::int64_t total = 0;
  int heads = 0, batch_rules = 0;
  for (const PlanRejection& j : result->rejections) {
    total += j.count;
    if (j.reason == "out_of_memory") CHECK(j.count == result->stats.out_of_memory);
    if (j.reason != "invalid") continue;
    CHECK(j.rule.find_first_of("0123456789") == std::string::npos);  // numbers as N
    if (j.field == "num_attention_heads") {
      ++heads;
      CHECK(j.rule ==
            "num_attention_heads N is not divisible by tensor_model_parallel_size N "
            "(megatron/core/transformer/transformer_config.py)");
      CHECK(j.example.find("16") != std::string::npos);
    }
    if (j.field == "global_batch_size") ++batch_rules;
  }
  CHECK(heads == 1);
  CHECK(batch_rules == 2);  // divisibility and the interleaved schedule's group rule
  CHECK(total == result->stats.invalid + result->stats.out_of_memory);
  CHECK(result->stats.invalid > 0);
}

TEST_CASE("61 layers and an MTP layer over 32 stages get Megatron's DeepSeek-V3 layout") {
  PlanRequest r = deepseek_request();
  r.base.parallel.world_size = 1024;
  r.base.training.global_batch_size = 8192;
  r.space.tensor_parallel = {2};
  r.space.pipeline_parallel = {8};
  r.space.max_virtual_stages = 4;
  r.space.expert_parallel = {64};
  r.space.micro_batch_sizes = {1};
  r.space.search_recompute = false;
  r.space.search_offload = false;
  const Expected<PlanResult> result = plan(r);
  REQUIRE(result.has_value());
  bool found = false;
  for (const PlanCell& cell : result->cells) {
    if (cell.config.parallel.virtual_stages_per_pipeline_rank != 4) continue;
    CHECK(cell.config.parallel.pipeline_layout == "Et|(tt|)*30mL");
    found = true;
  }
  CHECK(found);
}

TEST_CASE("an even split stays Megatron's default (no layout string)") {
  PlanRequest r = llama_request();
  r.space.pipeline_parallel = {4};
  r.space.max_virtual_stages = 1;
  const Expected<PlanResult> result = plan(r);
  REQUIRE(result.has_value());
  for (const PlanCell& cell : result->cells) CHECK(cell.config.parallel.pipeline_layout.empty());
}

TEST_CASE("a larger margin never admits more layouts") {
  PlanRequest r = llama_request();
  r.record_cells = false;
  const Expected<PlanResult> loose = plan(r);
  r.margin_gib = 20.0;
  const Expected<PlanResult> tight = plan(r);
  REQUIRE(loose.has_value());
  REQUIRE(tight.has_value());
  CHECK(tight->stats.fitting < loose->stats.fitting);
  CHECK(tight->stats.candidates == loose->stats.candidates);
  for (const PlanCandidate& c : tight->top) {
    CHECK(static_cast<double>(c.peak_total_bytes) <= (79.65 - 20.0) * kGiB);
  }
}

TEST_CASE("the planner refuses requests it cannot search, naming the field") {
  PlanRequest r = llama_request();
  r.base.training.global_batch_size = 0;
  CHECK(plan(r).error().field == "global_batch_size");
  r = llama_request();
  r.margin_gib = 100.0;
  CHECK(plan(r).error().field == "margin_gib");
  r = llama_request();
  r.base.model.hidden_size = 0;
  CHECK(plan(r).error().field == "hidden_size");
  r = llama_request();
  r.space.micro_batch_sizes = {};
  r.space.tensor_parallel = {3};  // searchable, but nothing divides 64 GPUs
  const Expected<PlanResult> none = plan(r);
  REQUIRE(none.has_value());
  CHECK(none->stats.candidates == 0);
  CHECK(none->top.empty());
}

TEST_CASE("a plan request overlaps the gradient reduce-scatter with the backward") {
  Config config = fixtures::llama3_70b();
  config.optimizer.overlap_grad_reduce = false;
  CHECK(plan_request_for(config).base.optimizer.overlap_grad_reduce);
}

// Issue #28 item 3: a link without --gbs whose layout does not run (TP 3 on 64 heads) could not
// be planned ("the planner needs a global batch size"); and the current layout's batch (mbs x
// its DP) left most candidates invalid for a batch they do not divide. The proposed batch is
// divisible by every searched micro-batch x data-parallel size, valid layout or not.
TEST_CASE("a configuration without a global batch gets one every candidate divides") {
  Config config = fixtures::llama3_70b();
  config.training.global_batch_size = 0;
  REQUIRE(normalize(config).has_value());
  const PlanRequest valid = plan_request_for(config);
  REQUIRE(valid.global_batch_proposed != nullptr);
  CHECK(valid.base.training.global_batch_size == 8 * config.parallel.world_size);
  config.parallel.tensor_parallel = 3;
  REQUIRE_FALSE(normalize(config).has_value());
  PlanRequest invalid = plan_request_for(config);
  REQUIRE(invalid.global_batch_proposed != nullptr);
  CHECK(invalid.base.training.global_batch_size == 8 * config.parallel.world_size);
  invalid.space.search_recompute = false;
  invalid.space.search_offload = false;
  const Expected<PlanResult> result = plan(invalid);
  REQUIRE(result.has_value());
  CHECK(result->stats.candidates > 0);
  for (const PlanRejection& r : result->rejections) {
    INFO(r.example);
    CHECK(r.field != "global_batch_size");
    CHECK(r.field != "microbatch_group_size_per_vp_stage");
  }
}

TEST_CASE("a candidate's plan inputs are its request's, but for the precision-aware optimizer") {
  PlanRequest r = llama_request();
  r.record_cells = false;
  const Expected<PlanResult> result = plan(r);
  REQUIRE(result.has_value());
  const auto inputs_link = [&](const Config& config) {
    return encode_share_query(SharedConfig{plan_inputs(config, r.space), "", ""});
  };
  const std::string request_inputs = inputs_link(r.base);
  std::vector<PlanCandidate> listed = result->top;
  listed.insert(listed.end(), result->pareto.begin(), result->pareto.end());
  REQUIRE(listed.size() > 10);
  for (const PlanCandidate& c : listed) {
    Config config = c.config;
    // Megatron needs the precision-aware optimizer for optimizer CPU offload.
    if (config.optimizer.optimizer_cpu_offload) {
      CHECK(config.optimizer.use_precision_aware_optimizer);
      config.optimizer.use_precision_aware_optimizer =
          r.base.optimizer.use_precision_aware_optimizer;
    }
    INFO(c.label);
    CHECK(inputs_link(config) == request_inputs);
  }
}

TEST_CASE("plan inputs change with the training settings, not with what the search sets") {
  PlannerSearchSpace space;
  const Config base = fixtures::llama3_70b();
  const auto inputs_link = [&](const Config& config) {
    return encode_share_query(SharedConfig{plan_inputs(config, space), "", ""});
  };
  Config layout = base;
  layout.parallel.tensor_parallel = 8;
  layout.parallel.pipeline_parallel = 4;
  layout.parallel.pipeline_layout = "Et*19|t*20|t*20|t*21L";
  layout.training.micro_batch_size = 2;
  layout.training.recompute.granularity = RecomputeGranularity::full;
  layout.training.offload.fine_grained_activation_offloading = true;
  CHECK(inputs_link(layout) == inputs_link(base));
  Config batch = base;
  batch.training.global_batch_size = 1024;
  CHECK(inputs_link(batch) != inputs_link(base));
  Config gpus = base;
  gpus.parallel.world_size *= 2;
  CHECK(inputs_link(gpus) != inputs_link(base));
  space.search_recompute = false;  // then the recompute setting is an input
  CHECK(inputs_link(layout) != inputs_link(base));
}

TEST_CASE("kept layout fields stay at the configuration's values in every candidate") {
  PlanRequest request = deepseek_request();
  request.record_cells = false;
  Config current = request.base;
  current.parallel.tensor_parallel = 2;
  current.parallel.pipeline_parallel = 8;
  current.parallel.virtual_stages_per_pipeline_rank = 2;
  current.parallel.expert_parallel = 16;
  keep_layout_fields(request.space, current,
                     {.tensor_parallel = true, .pipeline_parallel = true, .expert_parallel = true});
  const Expected<PlanResult> result = plan(request);
  REQUIRE(result.has_value());
  REQUIRE_FALSE(result->top.empty());
  for (const std::vector<PlanCandidate>* list : {&result->top, &result->pareto}) {
    for (const PlanCandidate& c : *list) {
      INFO(c.label);
      CHECK(c.config.parallel.tensor_parallel == 2);
      CHECK(c.config.parallel.pipeline_parallel == 8);
      CHECK(c.config.parallel.expert_parallel == 16);
    }
  }
}

// Keep pins what its label says: "PP 16" is PP 16 at any VPP, as `megamem plan --pp 16`.
TEST_CASE("a kept PP leaves the virtual stages to the search") {
  PlanRequest request = deepseek_request();
  request.record_cells = false;
  Config current = request.base;
  current.parallel.pipeline_parallel = 16;
  current.parallel.virtual_stages_per_pipeline_rank = 5;  // 61 layers: no VPP 5 at PP 16
  keep_layout_fields(request.space, current, {.pipeline_parallel = true});
  const Expected<PlanResult> result = plan(request);
  REQUIRE(result.has_value());
  REQUIRE_FALSE(result->top.empty());
  for (const PlanCandidate& c : result->top) CHECK(c.config.parallel.pipeline_parallel == 16);
}

TEST_CASE("each candidate's change is from the configuration as given, priced as candidates are") {
  const PlanRequest request = llama_request();
  const Expected<PlanResult> result = plan(request);
  REQUIRE(result.has_value());
  REQUIRE(!result->top.empty());
  // The fastest candidate as the configuration being edited: it differs from itself by nothing.
  const PlanCandidate& fastest = result->top.front();
  const Expected<Estimate> e = estimate(fastest.config);
  REQUIRE(e.has_value());
  const PlanReference same = plan_reference(fastest.config, *e, request.step_time);
  CHECK_FALSE(same.error.has_value());
  CHECK(same.peak_total_bytes == fastest.peak_total_bytes);
  CHECK(same.step_time_s == Approx(fastest.time.step_time_s).epsilon(1e-12));
  const PlanChange none = plan_change(fastest, same);
  CHECK((none.peak_known && none.time_known));
  CHECK(none.peak_bytes == 0);
  CHECK(none.step_time == Approx(0.0).margin(1e-12));
  // Against it, a slower candidate is slower by its time's ratio, in its own bytes.
  const PlanCandidate& last = result->top.back();
  const PlanChange change = plan_change(last, same);
  CHECK(change.peak_bytes == static_cast<std::int64_t>(last.peak_total_bytes) -
                                 static_cast<std::int64_t>(fastest.peak_total_bytes));
  CHECK(change.step_time ==
        Approx(last.time.step_time_s / fastest.time.step_time_s - 1.0).epsilon(1e-12));
}

// Issue #28: a link without a global batch has one micro-batch per data-parallel rank in the
// calculator, but its rows are priced at the proposed batch, with the pipeline full: the row
// of its own layout read 7.73 GiB more than the reference (Llama-3-70B, TP8 PP4 on 64 GPUs).
TEST_CASE("without a global batch the reference is priced at the batch the rows are") {
  Config current = fixtures::llama3_70b();
  current.parallel.world_size = 64;
  current.parallel.tensor_parallel = 8;
  current.parallel.pipeline_parallel = 4;
  current.training.global_batch_size = 0;
  const Expected<Estimate> shown = estimate(current);
  REQUIRE(shown.has_value());
  const PlanRequest request = plan_request_for(current);
  const Expected<Estimate> proposed = estimate(request.base);
  REQUIRE(proposed.has_value());
  const auto peak = [](const Estimate& e) {
    return e.ranks.at(static_cast<std::size_t>(e.limiting_pp_rank)).peak_total_bytes;
  };
  REQUIRE(peak(*proposed) > peak(*shown));
  const PlanReference reference = plan_reference(current, *shown, request.step_time);
  CHECK(reference.peak_total_bytes == peak(*proposed));
  CHECK(reference.limiting_pp_rank == proposed->limiting_pp_rank);
}

TEST_CASE("a configuration Megatron refuses is a reference without figures") {
  Config current = fixtures::llama3_70b();
  current.parallel.world_size = 64;
  current.parallel.tensor_parallel = 7;
  const Expected<Estimate> e = estimate(current);
  REQUIRE_FALSE(e.has_value());
  const PlanReference reference = plan_reference(current, e.error());
  REQUIRE(reference.error.has_value());
  CHECK(reference.layout.rfind("TP7 ", 0) == 0);
  const Expected<PlanResult> result = plan(llama_request());
  REQUIRE(result.has_value());
  const PlanChange change = plan_change(result->top.front(), reference);
  CHECK_FALSE(change.peak_known);
  CHECK_FALSE(change.time_known);
}
