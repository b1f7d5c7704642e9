// Estimate -> JSON, the contract `megamem estimate --json` and window.megamem.state() share.
//
// Each document comes as a JSON value (estimate_json, ...) for front ends that compose it into
// a larger document, and as text (estimate_to_json, ...: the value, dumped).
//
// Keys follow docs/ui vocabulary: bytes as integers, one entry per pipeline rank in "ranks"
// with pp_rank, weight_bytes, gradient_bytes, optimizer_bytes, static_bytes, ...
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "megamem/anchor.hpp"
#include "megamem/estimate_types.hpp"
#include "megamem/megatron_log.hpp"
#include "megamem/planner.hpp"
#include "megamem/what_if.hpp"

namespace megamem {

// The estimate as one JSON object (pretty-printed when indent >= 0). Timelines (one event
// per forward/backward of every micro-batch, per rank) only when asked for: they can hold
// thousands of events per rank.
nlohmann::json estimate_json(const Estimate& estimate, bool include_timeline = false);
std::string estimate_to_json(const Estimate& estimate, int indent = 2,
                             bool include_timeline = false);

// The what-if table as a JSON array (label, flags, peaks, saving, validity).
// The core's verdict (verdict.hpp) as estimate --json's "verdict" object.
nlohmann::json verdict_json(const Verdict& verdict);

nlohmann::json what_if_json(const std::vector<WhatIfOption>& options);
std::string what_if_to_json(const std::vector<WhatIfOption>& options, int indent = 2);

// A config as JSON (the inputs, resolved), for state() hooks and reports.
nlohmann::json config_json(const Config& config);
std::string config_to_json(const Config& config, int indent = 2);

// A planner search as `megamem plan --json` prints it and the page's state() reports it:
// the request's model, cluster and margin, the search statistics, the top layouts and the
// Pareto front (each with its layout, memory, step time and breakdown, and Megatron flags),
// and the rejections. search_seconds is how long plan() took (the caller measures it).
nlohmann::json plan_json(const PlanRequest& request, const PlanResult& result,
                         double search_seconds);
// The same as text, with "current" holding `reference`'s figures (plan_reference) and each
// candidate its "change_from_current" (plan_change). The page shows its reference apart
// (state().planner.shown_reference), which keeps this code out of its bundle.
std::string plan_to_json(const PlanRequest& request, const PlanResult& result,
                         double search_seconds, const PlanReference& reference, int indent = 2);

// A training log beside its estimate, as `megamem compare --json` prints it and the page's
// state() reports a pasted log: ranks[] (pp_rank, global_rank, iteration, line, measured
// {allocated, max_allocated, reserved, max_reserved}_bytes, estimate {static,
// peak_allocated, peak_reserved, peak_total}_bytes, params {logged, estimated}), the lines
// read, the lines skipped, the configuration's link and Megatron flags, the unused arguments.
nlohmann::json log_comparison_json(const LogComparison& comparison, const std::string& link);

// The estimate anchored on a measured run, as `megamem estimate --anchor ... --json` prints it
// beside "ranks": anchor {source, world_size, global_rank (null: not known), pp_rank, measured
// {peak_allocated, static, max_reserved}_bytes (null: not given), estimated {...}_bytes, notes},
// terms {static, activation, device: {measured, anchor_difference_bytes, carried_bytes[] per
// rank}}, ranks[] {pp_rank, raw_ and anchored_ peak_allocated, peak_reserved, peak_total
// _bytes}, warnings.
nlohmann::json anchored_json(const AnchoredEstimate& anchored);

}  // namespace megamem
