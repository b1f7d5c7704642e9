// PlanResult -> JSON; see json_output.hpp.
#include <nlohmann/json.hpp>
#include <utility>

#include "megamem/json_output.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/verdict.hpp"

namespace megamem {
namespace {

using nlohmann::json;

json candidate_json(const PlanCandidate& c) {
  const ParallelConfig& p = c.config.parallel;
  const StepTimeBreakdown& b = c.time.breakdown;
  return {{"label", c.label},
          {"tensor_parallel", p.tensor_parallel},
          {"pipeline_parallel", p.pipeline_parallel},
          {"virtual_stages_per_pipeline_rank", p.virtual_stages_per_pipeline_rank},
          {"pipeline_layout", p.pipeline_layout},
          {"context_parallel", p.context_parallel},
          {"expert_parallel", p.expert_parallel},
          {"expert_tensor_parallel",
           p.expert_tensor_parallel > 0 ? p.expert_tensor_parallel : p.tensor_parallel},
          {"micro_batch_size", c.config.training.micro_batch_size},
          {"recompute", c.recompute},
          {"offload", c.offload},
          {"peak_total_bytes", c.peak_total_bytes},
          {"limiting_pp_rank", c.limiting_pp_rank},
          {"step_time_s", c.time.step_time_s},
          {"tokens_per_s", c.time.tokens_per_s},
          {"tokens_per_s_per_gpu", c.time.tokens_per_s_per_gpu},
          {"model_tflops_per_gpu", c.time.model_tflops_per_gpu},
          {"hardware_tflops_per_gpu", c.time.hardware_tflops_per_gpu},
          {"mfu", c.time.mfu},
          {"bottleneck_pp_rank", c.time.bottleneck_pp_rank},
          {"breakdown",
           {{"compute_s", b.compute_s},
            {"recompute_s", b.recompute_s},
            {"tp_comm_s", b.tp_comm_s},
            {"cp_comm_s", b.cp_comm_s},
            {"ep_comm_s", b.ep_comm_s},
            {"pp_comm_s", b.pp_comm_s},
            {"offload_s", b.offload_s},
            {"pipeline_bubble_s", b.pipeline_bubble_s},
            {"dp_comm_s", b.dp_comm_s},
            {"optimizer_s", b.optimizer_s}}},
          {"layout_args", layout_megatron_args(c.config)},
          {"megatron_args", to_megatron_args(c.config)}};
}

json candidates_json(const std::vector<PlanCandidate>& candidates) {
  json out = json::array();
  for (const PlanCandidate& c : candidates) out.push_back(candidate_json(c));
  return out;
}

// Each candidate's change from the reference, beside its other figures.
void add_changes(json& candidates, const std::vector<PlanCandidate>& from,
                 const PlanReference& reference) {
  for (std::size_t i = 0; i < from.size(); ++i) {
    const PlanChange change = plan_change(from[i], reference);
    candidates[i]["change_from_current"] = {
        {"peak_bytes", change.peak_known ? json(change.peak_bytes) : json()},
        {"step_time_fraction", change.time_known ? json(change.step_time) : json()}};
  }
}

json reference_json(const PlanReference& r) {
  json out = {{"layout", r.layout}, {"runs", !r.error.has_value()}};
  if (r.error) {
    out["error"] = {{"field", r.error->field}, {"message", r.error->message}};
    return out;
  }
  out["peak_total_bytes"] = r.peak_total_bytes;
  out["limiting_pp_rank"] = r.limiting_pp_rank;
  out["fit_status"] = fit_status_name(r.status);
  out["step_time_s"] = r.step_time_s > 0 ? json(r.step_time_s) : json();
  return out;
}

}  // namespace

json plan_json(const PlanRequest& request, const PlanResult& result, double search_seconds) {
  const Config& base = request.base;
  const PlanStats& s = result.stats;
  json document;
  document["model"] = base.model.name;
  document["gpus"] = base.parallel.world_size;
  document["gpu"] = base.device.name;
  document["global_batch_size"] = base.training.global_batch_size;
  document["seq_length"] = base.training.seq_length;
  document["capacity_gib"] = base.device.capacity_gib;
  document["margin_gib"] = request.margin_gib;
  document["search_seconds"] = search_seconds;
  document["stats"] = {{"candidates", s.candidates},
                       {"valid", s.valid},
                       {"fitting", s.fitting},
                       {"out_of_memory", s.out_of_memory},
                       {"invalid", s.invalid},
                       {"layouts", s.layouts},
                       {"static_bound_layouts", s.static_bound_layouts},
                       {"memory_evaluations", s.memory_evaluations},
                       {"inferred", s.inferred},
                       {"estimates", s.estimates},
                       {"step_time_evaluations", s.step_time_evaluations}};
  document["top"] = candidates_json(result.top);
  document["pareto"] = candidates_json(result.pareto);
  document["rejections"] = json::array();
  for (const PlanRejection& r : result.rejections) {
    document["rejections"].push_back({{"reason", r.reason},
                                      {"field", r.field},
                                      {"rule", r.rule},
                                      {"example", r.example},
                                      {"count", r.count}});
  }
  return document;
}

std::string plan_to_json(const PlanRequest& request, const PlanResult& result,
                         double search_seconds, const PlanReference& reference, int indent) {
  json document = plan_json(request, result, search_seconds);
  document["current"] = reference_json(reference);
  add_changes(document["top"], result.top, reference);
  add_changes(document["pareto"], result.pareto, reference);
  return document.dump(indent);
}

}  // namespace megamem
