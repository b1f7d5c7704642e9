// Estimate -> JSON (the CLI's --json and the web page's state() share it).
#include "megamem/json_output.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "megamem/fields.hpp"

namespace megamem {
namespace {

using nlohmann::json;

json module_json(const ModuleMemory& module) {
  json node = {{"name", module.name},
               {"params", module.params},
               {"weight_bytes", module.weight_bytes},
               {"gradient_bytes", module.gradient_bytes},
               {"optimizer_bytes", module.optimizer_bytes},
               {"activation_bytes", module.activation_bytes}};
  if (module.expert) node["expert"] = true;
  if (!module.children.empty()) {
    json children = json::array();
    for (const ModuleMemory& child : module.children) children.push_back(module_json(child));
    node["children"] = std::move(children);
  }
  return node;
}

json chunk_json(const ChunkMemory& chunk) {
  json node = {{"vpp_chunk", chunk.vpp_chunk},         {"first_layer", chunk.first_layer},
               {"num_layers", chunk.num_layers},       {"num_mtp_layers", chunk.num_mtp_layers},
               {"has_embedding", chunk.has_embedding}, {"has_output_layer", chunk.has_output_layer},
               {"dense_params", chunk.dense_params},   {"expert_params", chunk.expert_params}};
  if (!chunk.modules.name.empty()) node["modules"] = module_json(chunk.modules);
  return node;
}

json timeline_json(const std::vector<TimelineEvent>& timeline) {
  json events = json::array();
  for (const TimelineEvent& event : timeline) {
    events.push_back({{"kind", timeline_event_name(event.kind)},
                      {"microbatch", event.microbatch},
                      {"vpp_chunk", event.vpp_chunk},
                      {"allocated_after_bytes", event.allocated_after_bytes},
                      {"peak_during_bytes", event.peak_during_bytes}});
  }
  return events;
}

// Memory outside the caching allocator, one entry per term with its source.
json device_overheads_json(const std::vector<DeviceOverhead>& overheads) {
  json items = json::array();
  for (const DeviceOverhead& o : overheads) {
    items.push_back({{"name", o.name}, {"bytes", o.bytes}, {"source", o.source}});
  }
  return items;
}

json rank_json(const RankMemory& rank, bool include_timeline) {
  json chunks = json::array();
  for (const ChunkMemory& chunk : rank.chunks) chunks.push_back(chunk_json(chunk));
  json node = {{"pp_rank", rank.pp_rank},
               {"dense_params", rank.dense_params},
               {"expert_params", rank.expert_params},
               {"weight_bytes", rank.weight_bytes},
               {"gradient_bytes", rank.gradient_bytes},
               {"optimizer_bytes", rank.optimizer_bytes},
               {"persistent_buffer_bytes", rank.persistent_buffer_bytes},
               {"cuda_graph_bytes", rank.cuda_graph_bytes},
               {"static_bytes", rank.static_bytes},
               {"host_optimizer_bytes", rank.host_optimizer_bytes},
               {"optimizer_step_bytes", rank.optimizer_step_bytes},
               {"fp8_master_cast_bytes", rank.fp8_master_casts.all_bytes},
               {"fp8_master_cast_expert_bytes", rank.fp8_master_casts.expert_bytes},
               {"fp8_master_cast_first_chunk_bytes", rank.fp8_master_casts.first_chunk_dense_bytes},
               {"lazy_optimizer_bytes", rank.lazy_optimizer_bytes},
               {"activation_peak_bytes", rank.activation_peak_bytes},
               {"transient_bytes", rank.transient_bytes},
               {"peak_allocated_bytes", rank.peak_allocated_bytes},
               {"first_iteration_peak_allocated_bytes", rank.first_iteration_peak_allocated_bytes},
               {"resume_load_peak_bytes", rank.resume_load_peak_bytes},
               {"resume_load_single_copy_bytes", rank.resume_load_single_copy_bytes},
               {"peak_reserved_bytes", rank.peak_reserved_bytes},
               {"device_overheads", device_overheads_json(rank.device_overheads)},
               {"runtime_overhead_bytes", rank.runtime_overhead_bytes},
               {"peak_total_bytes", rank.peak_total_bytes},
               {"activation_bytes_per_microbatch", rank.activation_bytes_per_microbatch},
               {"host_activation_bytes", rank.host_activation_bytes},
               {"max_inflight_microbatches", rank.max_inflight_microbatches},
               {"chunks", std::move(chunks)}};
  if (include_timeline && !rank.timeline.empty()) node["timeline"] = timeline_json(rank.timeline);
  return node;
}

// One field's value: numbers, booleans, strings, enum spellings (fields.hpp), name lists as
// arrays, and a 0/1 layer pattern as its share-link runs ("0*3,1*58").
json field_json(const ConfigField& field, const Config& config) {
  Config& c = const_cast<Config&>(config);  // accessors are shared with parsing; read only here
  switch (field.kind) {
    case FieldKind::integer:
      return field.get_int(config);
    case FieldKind::real:
      return field.get_real(config);
    case FieldKind::boolean:
      return field.get_int(config) != 0;
    case FieldKind::choice: {
      const auto index = static_cast<std::size_t>(field.get_int(config));
      return index < field.choices.size() ? json(field.choices[index].json) : json(nullptr);
    }
    case FieldKind::text:
      return *field.text(c);
    case FieldKind::module_list:
      return field.get_list(config);
    case FieldKind::pattern:
      return field_link_text(field, config);
  }
  return nullptr;
}

// Every field the registry gives a JSON key, grouped by its Config struct.
json config_json_value(const Config& c) {
  json out = json::object();
  for (const ConfigField& field : config_fields()) {
    if (field.json_key.empty()) continue;
    out[std::string(field_group_name(field.group))][std::string(field.json_key)] =
        field_json(field, c);
  }
  return out;
}

json what_if_row_json(const WhatIfRow& row) {
  json node = {{"label", row.label},
               {"megatron_flags", row.megatron_flags},
               {"current", row.current},
               {"valid", row.valid}};
  if (row.valid) {
    node["peak_allocated_bytes"] = row.peak_allocated_bytes;
    node["peak_total_bytes"] = row.peak_total_bytes;
    node["saving_bytes"] = row.saving_bytes;
    node["limiting_pp_rank"] = row.limiting_pp_rank;
    node["status"] = fit_status_name(row.status);
    node["step_time_s"] = row.step_time_s;
    node["step_time_change"] = row.step_time_change;
    if (!row.note.empty()) node["note"] = row.note;
  } else {
    node["error"] = row.error;
  }
  return node;
}

std::string dump(const json& value, int indent) { return value.dump(indent < 0 ? -1 : indent); }

}  // namespace

json rank_verdict_json(const RankVerdict& rank) {
  return {{"pp_rank", rank.pp_rank},
          {"status", fit_status_name(rank.status)},
          {"headroom_bytes", rank.headroom_bytes},
          {"low_total_bytes", rank.low_total_bytes},
          {"high_total_bytes", rank.high_total_bytes}};
}

json verdict_json(const Verdict& verdict) {
  json ranks = json::array();
  for (const RankVerdict& rank : verdict.ranks) ranks.push_back(rank_verdict_json(rank));
  const ErrorBand& band = verdict.band;
  return {{"status", fit_status_name(verdict.status)},
          {"limiting_pp_rank", verdict.limiting_pp_rank},
          {"headroom_bytes", verdict.headroom_bytes},
          {"capacity_bytes", verdict.capacity_bytes},
          {"band",
           {{"low_percent", band.low_percent},
            {"high_percent", band.high_percent},
            {"thinnest_feature", band.thinnest_feature},
            {"runs", band.runs},
            {"features", band.features},
            {"few_runs_features", band.few_runs_features}}},
          {"ranks", std::move(ranks)}};
}

json estimate_json(const Estimate& estimate, bool include_timeline) {
  const NormalizedConfig& n = estimate.normalized;
  json ranks = json::array();
  for (std::size_t i = 0; i < estimate.ranks.size(); ++i) {
    json rank = rank_json(estimate.ranks[i], include_timeline);
    if (i < estimate.verdict.ranks.size()) {
      rank["verdict"] = rank_verdict_json(estimate.verdict.ranks[i]);
    }
    ranks.push_back(std::move(rank));
  }
  json result = {
      {"config", config_json_value(n.config)},
      {"derived",
       {{"data_parallel_size", n.data_parallel},
        {"expert_data_parallel_size", n.expert_data_parallel},
        {"padded_vocab_size", n.padded_vocab_size},
        {"num_microbatches", n.num_microbatches},
        {"sequence_parallel", n.sequence_parallel}}},
      {"totals",
       {{"params", estimate.totals.params},
        {"mtp_params", estimate.totals.mtp_params},
        {"active_params", estimate.totals.active_params},
        {"padded_params", estimate.totals.padded_params}}},
      {"limiting_pp_rank", estimate.limiting_pp_rank},
      {"verdict", verdict_json(estimate.verdict)},
      {"assumptions", estimate.assumptions},
      {"warnings", estimate.warnings},
      {"ranks", std::move(ranks)},
  };
  if (!estimate.what_if.empty()) {
    json rows = json::array();
    for (const WhatIfRow& row : estimate.what_if) rows.push_back(what_if_row_json(row));
    result["what_if"] = std::move(rows);
  }
  return result;
}

json what_if_json(const std::vector<WhatIfOption>& options) {
  json rows = json::array();
  for (const WhatIfOption& option : options) rows.push_back(what_if_row_json(option));
  return rows;
}

json config_json(const Config& config) { return config_json_value(config); }

std::string estimate_to_json(const Estimate& estimate, int indent, bool include_timeline) {
  return dump(estimate_json(estimate, include_timeline), indent);
}

std::string what_if_to_json(const std::vector<WhatIfOption>& options, int indent) {
  return dump(what_if_json(options), indent);
}

std::string config_to_json(const Config& config, int indent) {
  return dump(config_json(config), indent);
}

namespace {

json rank_comparison_json(const RankComparison& row) {
  const LogMemoryReport& m = row.measured;
  return {{"pp_rank", row.pp_rank},
          {"global_rank", row.global_rank},
          {"iteration", m.iteration},
          {"line", m.line},
          {"measured",
           {{"allocated_bytes", m.allocated_bytes},
            {"max_allocated_bytes", m.max_allocated_bytes},
            {"reserved_bytes", m.reserved_bytes},
            {"max_reserved_bytes", m.max_reserved_bytes}}},
          {"estimate",
           {{"static_bytes", row.estimated->static_bytes},
            {"allocated_after_step_bytes", allocated_after_step_bytes(*row.estimated)},
            {"peak_allocated_bytes", row.estimated->peak_allocated_bytes},
            {"max_allocated_after_bytes", max_allocated_after_bytes(*row.estimated, m.iteration)},
            {"peak_reserved_bytes", row.estimated->peak_reserved_bytes},
            {"peak_total_bytes", row.estimated->peak_total_bytes}}},
          {"params", {{"logged", row.logged_params}, {"estimated", row.estimated_params}}}};
}

}  // namespace

json log_comparison_json(const LogComparison& c, const std::string& link) {
  json ranks = json::array();
  for (const RankComparison& row : c.ranks) ranks.push_back(rank_comparison_json(row));
  json lines = json::array();
  for (const LogLineRead& read : c.log.lines_read) {
    lines.push_back({{"line", read.line}, {"what", read.what}});
  }
  return {{"ranks", ranks},
          {"lines_read", lines},
          {"skipped", c.log.notes},
          {"link", link},
          {"megatron_args", c.config.megatron_flags},
          {"unused_arguments", c.config.unused_arguments},
          {"warnings", log_comparison_warnings(c)},
          {"notes", log_comparison_notes(c)}};
}

namespace {

json optional_bytes(const std::optional<std::uint64_t>& bytes) {
  return bytes ? json(*bytes) : json(nullptr);
}

json anchor_term_json(const AnchorTerm& term) {
  return {{"measured", term.measured},
          {"anchor_difference_bytes", std::llround(term.anchor_difference_bytes)},
          {"carried_bytes", [&] {
             json carried = json::array();
             for (const double bytes : term.carried_bytes) carried.push_back(std::llround(bytes));
             return carried;
           }()}};
}

json anchor_identity_json(const AnchoredEstimate& a) {
  const AnchorMeasurement& m = a.anchor;
  return {{"source", m.source},
          {"world_size", m.world_size},
          {"global_rank", m.global_rank >= 0 ? json(m.global_rank) : json(nullptr)},
          {"pp_rank", m.pp_rank},
          {"measured",
           {{"peak_allocated_bytes", m.peak_allocated_bytes},
            {"static_bytes", optional_bytes(m.static_bytes)},
            {"max_reserved_bytes", optional_bytes(m.max_reserved_bytes)}}},
          {"estimated",
           {{"peak_allocated_bytes", a.anchor_estimated_peak_allocated_bytes},
            {"static_bytes", a.anchor_estimated_static_bytes},
            {"peak_reserved_bytes", a.anchor_estimated_peak_reserved_bytes}}},
          {"notes", m.notes}};
}

}  // namespace

json anchored_json(const AnchoredEstimate& a) {
  json ranks = json::array();
  for (const AnchoredRank& r : a.ranks) {
    ranks.push_back({{"pp_rank", r.pp_rank},
                     {"raw_peak_allocated_bytes", r.raw_peak_allocated_bytes},
                     {"anchored_peak_allocated_bytes", r.anchored_peak_allocated_bytes},
                     {"raw_peak_reserved_bytes", r.raw_peak_reserved_bytes},
                     {"anchored_peak_reserved_bytes", r.anchored_peak_reserved_bytes},
                     {"raw_peak_total_bytes", r.raw_peak_total_bytes},
                     {"anchored_peak_total_bytes", r.anchored_peak_total_bytes}});
  }
  return {{"anchor", anchor_identity_json(a)},
          {"terms",
           {{"static", anchor_term_json(a.static_term)},
            {"activation", anchor_term_json(a.activation_term)},
            {"device", anchor_term_json(a.device_term)}}},
          {"ranks", ranks},
          {"warnings", a.warnings}};
}

}  // namespace megamem
