// Layout planner: every parallel layout of a model on a cluster, the ones that fit, ranked by
// step time (docs/planner.md).
//
// plan() enumerates TP x CP x PP x VPP x EP x ETP x micro-batch size x recompute x offload
// over the request's search space, keeps the combinations Megatron-Core accepts, estimates
// the memory of each (megamem::estimate, fast path) and keeps those whose limiting rank's
// peak_total_bytes plus the margin fit the card, then ranks them by the step-time model
// (step_time.hpp). It reports the fastest layouts, the Pareto front of memory against step
// time, and why the rest fail (out of memory, or Megatron's rule, grouped by field).
//
// Not every candidate is priced in full. Static memory is computed once per layout (and
// rules whole layouts out on its own); the schedule part once per micro-batch size, recompute
// and activation-offload setting. Within one layout, memory grows with the micro-batch size
// and shrinks with more recompute and offload, so the planner evaluates along the boundary
// between what fits and what does not and infers the rest; an inference is made only when
// the evaluated neighbour is more than `inference_slack_bytes` away from the limit. Every
// candidate it reports (top and Pareto front) is re-estimated with estimate() and carries
// the bytes estimate() returns for its config.
//
// Left out of the search: uneven first/last stages other than the balanced layout string the
// planner writes, account-for-embedding/loss splits, full recompute by blocks or groups of
// more than one layer, distributed-optimizer instances, FSDP, and dispatcher choices (the
// request's dispatcher is kept).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/estimate_types.hpp"
#include "megamem/expected.hpp"
#include "megamem/step_time.hpp"

namespace megamem {

// What to enumerate; empty lists take the defaults named on each field.
struct PlannerSearchSpace {
  std::vector<int> tensor_parallel;    // default 1, 2, 4, ... up to DeviceConfig::gpus_per_node
  std::vector<int> context_parallel;   // default 1, 2, 4, 8
  std::vector<int> pipeline_parallel;  // default every size up to min(layers, 64)
  int max_virtual_stages = 8;          // VPP min_virtual_stages..this (layers per chunk >= 1)
  int min_virtual_stages = 1;
  std::vector<int> expert_parallel;           // default every divisor of num_experts
  std::vector<int> micro_batch_sizes;         // default 1, 2, 4, 8
  bool search_expert_tensor_parallel = true;  // ETP 1 and TP (else ETP = TP)
  bool search_recompute = true;  // none, Megatron's selective module sets, full uniform
  bool search_offload = true;    // activation offload, optimizer CPU offload, both
};

// Layout fields a search keeps at a configuration's values (the rest are searched).
struct PlanKeep {
  bool tensor_parallel = false;
  bool pipeline_parallel = false;  // the virtual stages per rank are still searched
  bool context_parallel = false;
  bool expert_parallel = false;  // ETP is still searched (1 or TP)
  bool micro_batch_size = false;
};

// Narrows `space` to `config`'s value of every field `keep` names.
void keep_layout_fields(PlannerSearchSpace& space, const Config& config, const PlanKeep& keep);

struct PlanRequest {
  // The model, the training settings (global batch, sequence length, dtype, optimizer,
  // dispatcher, ...) and the device; parallel.world_size is the number of GPUs. The layout
  // fields of `base` are replaced by the search.
  Config base;
  double margin_gib = 2.0;  // headroom kept under DeviceConfig::capacity_gib
  PlannerSearchSpace space;
  StepTimeConfig step_time;
  int top = 10;                                      // fastest candidates to report
  std::uint64_t inference_slack_bytes = 1ull << 30;  // see above
  bool record_cells = false;  // fill PlanResult::cells (every candidate; for tests and tools)
  // plan_request_for() set base's global batch (the configuration had none): front ends say
  // so, with where the batch comes from (nullptr: the configuration gave one).
  const char* global_batch_proposed = nullptr;
};

// One layout with its memory and time.
struct PlanCandidate {
  Config config;          // the full configuration (Megatron flags: to_megatron_args)
  std::string label;      // "TP8 PP2 VPP1 CP1 EP1 ETP1 · mbs 1 · recompute none · offload none"
  std::string recompute;  // "none", "selective: core_attn, mlp", "full"
  std::string offload;    // "none", "activations", "optimizer", "activations + optimizer"
  std::uint64_t peak_total_bytes = 0;  // the limiting rank's, as estimate() returns it
  int limiting_pp_rank = 0;
  StepTime time;
};

// Candidates that failed for one reason: "out_of_memory", or Megatron's rule (the Error's
// field and its message with numbers replaced by N, one example message kept).
struct PlanRejection {
  std::string reason;   // "out_of_memory" or "invalid"
  std::string field;    // the Error's field (empty for out_of_memory)
  std::string rule;     // message with numbers as N
  std::string example;  // one full message
  std::int64_t count = 0;
};

struct PlanStats {
  std::int64_t candidates = 0;  // enumerated
  std::int64_t valid = 0;       // accepted by Megatron's rules
  std::int64_t fitting = 0;
  std::int64_t out_of_memory = 0;
  std::int64_t invalid = 0;
  std::int64_t layouts = 0;               // distinct TP/CP/PP/VPP/EP/ETP layouts
  std::int64_t static_bound_layouts = 0;  // ruled out by static memory alone
  std::int64_t memory_evaluations = 0;    // schedule simulations of the fast path
  std::int64_t inferred = 0;              // candidates classified without their own evaluation
  std::int64_t estimates = 0;             // estimate() calls (reported candidates)
  std::int64_t step_time_evaluations = 0;
};

// One enumerated candidate and how the planner classified it (PlanRequest::record_cells).
struct PlanCell {
  enum class Status { fits, out_of_memory, invalid };
  Config config;
  Status status = Status::invalid;
  bool evaluated = false;              // its memory was computed, not inferred
  std::uint64_t peak_total_bytes = 0;  // when evaluated
  double step_time_s = 0;              // when it fits
};

struct PlanResult {
  std::vector<PlanCandidate> top;         // fastest first
  std::vector<PlanCandidate> pareto;      // least memory at each step time, fastest first
  std::vector<PlanRejection> rejections;  // most frequent first
  PlanStats stats;
  std::vector<PlanCell> cells;  // only with PlanRequest::record_cells
};

// The request for planning `config` as it stands (a page's or a command line's
// configuration): Megatron's performance defaults for large runs are assumed — gradient
// reduce-scatter overlapped with the backward (--overlap-grad-reduce; the step-time model
// also assumes --overlap-param-gather and --tp-comm-overlap). Without a global batch, the
// batch the configuration runs as given, or for a layout that does not run, one micro-batch per
// GPU (global_batch_proposed).
PlanRequest plan_request_for(const Config& config);

// The inputs of a search: `config` with every field the search over `space` writes reset
// (the layout, micro-batch size, and recompute and offload when searched). Two
// configurations with equal plan_inputs give the same plan, so a front end can tell whether
// a plan it shows still belongs to the configuration being edited. A candidate's
// plan_inputs equal its request's, except that a candidate with optimizer CPU offload has
// the precision-aware optimizer on (Megatron requires it).
Config plan_inputs(const Config& config, const PlannerSearchSpace& space);

// The configuration being planned as it stands (the calculator's, the command line's), which
// the front ends show above the candidates and compare each of them with (issue #28 item 3:
// the planner did not say how much faster or smaller a row is than what the user has).
struct PlanReference {
  std::string layout;                  // layout_label() of it
  std::optional<Error> error;          // why Megatron refuses it (then no figures below)
  std::uint64_t peak_total_bytes = 0;  // the limiting rank's, from the front end's estimate
  int limiting_pp_rank = 0;
  FitStatus status = FitStatus::fits;  // that estimate's verdict (the top bar's)
  double step_time_s = 0;              // as the search prices its candidates; 0: not priced
};

// `current` with the estimate the front end already shows for it (no second estimate: the
// reference reads the top bar's numbers), except that a configuration without a global batch
// is estimated again at the batch plan_request_for() proposes, the batch its rows are priced
// at. Its step time is priced as plan() prices a candidate: with plan_request_for()'s
// assumptions (overlapped gradient reduce, the proposed global batch) and `model`, so a
// candidate of the same layout and settings shows no change.
PlanReference plan_reference(const Config& current, const Estimate& estimate,
                             const StepTimeConfig& model = {});
// `current` when estimate() refused it.
PlanReference plan_reference(const Config& current, const Error& error);

// A candidate against the reference (nothing known when the reference does not run).
struct PlanChange {
  bool peak_known = false;
  std::int64_t peak_bytes = 0;  // candidate minus reference (negative: less memory)
  bool time_known = false;
  double step_time = 0;  // relative: -0.12 is 12 % faster than the reference
};
PlanChange plan_change(const PlanCandidate& candidate, const PlanReference& reference);

// Runs the search. Errors only for a request that cannot be searched (no GPUs, a model
// that does not normalize even in its simplest layout, an empty search space). The same
// steps as a PlanSearch advanced until it finishes.
Expected<PlanResult> plan(const PlanRequest& request);

// How far a PlanSearch has got.
struct PlanProgress {
  std::int64_t candidates_done = 0;   // enumerated and classified so far
  std::int64_t candidates_total = 0;  // of the whole search space (known once it starts)
  std::int64_t layouts_done = 0;
  std::int64_t layouts_total = 0;
  bool ranking = false;   // every candidate is classified; the top list and front are built
  bool finished = false;  // result() is ready
};

// plan() in steps, for a caller that must stay responsive between them (the page has one
// thread; core has no clock, so the caller bounds each step by a candidate count and checks
// its own clock between steps). Constructing it checks the request and lists the layouts;
// each advance() classifies and times whole layouts, then ranks; the result equals plan()'s.
class PlanSearch {
 public:
  explicit PlanSearch(const PlanRequest& request);
  ~PlanSearch();
  PlanSearch(PlanSearch&&) noexcept;
  PlanSearch& operator=(PlanSearch&&) noexcept;

  // Works through about `candidates` candidates (at least one layout, or one ranking step of
  // as many reported candidates) and returns whether the search has finished.
  bool advance(std::int64_t candidates);
  PlanProgress progress() const;
  // Once finished: the result, or why the request cannot be searched (moved out; once).
  Expected<PlanResult> take_result();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace megamem
