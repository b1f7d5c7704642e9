// Layout planner; see planner.hpp and docs/planner.md.
//
// [1] search options (recompute, offload) and their memory order
// [2] pipeline layer splits        [3] layouts and their columns (micro-batch sizes)
// [4] memory: estimates along the fit boundary, inference elsewhere
// [5] step times, top list, Pareto front, rejections
#include "megamem/planner.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "megamem/estimate.hpp"
#include "megamem/units.hpp"
#include "megamem/verdict.hpp"
#include "memory/activations.hpp"
#include "plan/memory_choices.hpp"
#include "plan/planner_memory.hpp"
#include "plan/step_time_model.hpp"
#include "schedule/timeline.hpp"

namespace megamem {
namespace {

// [1] ------------------------------------------------------------------------------------------

struct RecomputeOption {
  std::string label;
  RecomputeConfig config;
  RecomputeModules active;          // the modules selective recompute re-runs
  bool core_attn_can_grow = false;  // selective core_attn, core_attn_recompute_can_grow()
};

struct OffloadOption {
  std::string label;
  bool activations = false;
  bool optimizer = false;
  bool as_given = false;  // search_offload off: the request's own settings
};

// Megatron's recompute choices that apply to the model (memory_choices.hpp, shared with
// what-if).
std::vector<RecomputeOption> recompute_options(const Config& base, bool search) {
  auto option = [](std::string label, RecomputeGranularity granularity) {
    RecomputeOption out;
    out.label = std::move(label);
    out.config.granularity = granularity;
    return out;
  };
  if (!search) {
    const RecomputeConfig& r = base.training.recompute;
    RecomputeOption given = option(r.granularity == RecomputeGranularity::none ? "none"
                                   : r.granularity == RecomputeGranularity::selective
                                       ? "selective: " + join_module_names(r.modules, ", ")
                                       : "full",
                                   r.granularity);
    given.config = r;
    return {given};
  }
  std::vector<RecomputeOption> out = {option("none", RecomputeGranularity::none)};
  for (RecomputeModules modules : selective_recompute_choices(base)) {
    out.push_back(
        option("selective: " + join_module_names(modules, ", "), RecomputeGranularity::selective));
    out.back().config.modules = modules;
  }
  out.push_back(option("full", RecomputeGranularity::full));
  out.back().config.method = RecomputeMethod::uniform;
  out.back().config.num_layers = 1;
  return out;
}

std::vector<OffloadOption> offload_options(bool search) {
  if (!search) return {{"as given", false, false, true}};
  return {{"none", false, false, false},
          {"activations", true, false, false},
          {"optimizer", false, true, false},
          {"activations + optimizer", true, true, false}};
}

// a needs at most the memory of b (memory-model order; see planner.hpp), except that a choice
// adding core_attn where its checkpoint can keep more than it frees is not below one without
// it (core_attn_recompute_can_grow).
bool recompute_le(const RecomputeOption& a, const RecomputeOption& b) {
  const auto ga = a.config.granularity, gb = b.config.granularity;
  if (&a == &b || ga == RecomputeGranularity::full) return true;
  if (a.core_attn_can_grow && !b.core_attn_can_grow) return false;
  if (gb == RecomputeGranularity::none) return true;
  if (ga == RecomputeGranularity::selective && gb == RecomputeGranularity::selective) {
    return a.active.contains(b.active);  // a recomputes every module b does
  }
  return false;
}

bool offload_le(const OffloadOption& a, const OffloadOption& b) {
  return (a.activations || !b.activations) && (a.optimizer || !b.optimizer);
}

// [2] ------------------------------------------------------------------------------------------

// The loss (logits, and each MTP depth's projections, layer and logits) in decoder layers of
// forward FLOPs, to balance pipeline stages: the module specs' FLOPs per token, as
// step_time.cpp counts them, over the model's average decoder layer.
double layer_units_of_loss(const NormalizedConfig& n) {
  const ModuleFlops f = model_module_flops(n);
  double decoder = 0;
  for (const LayerKind kind : n.layer_kinds) decoder += layer_forward_flops(f, kind);
  const double layer = decoder / static_cast<double>(n.layer_kinds.size());
  const double mtp = n.config.model.mtp_num_layers;
  // A GPT MTP depth counts as one decoder layer; a hybrid one as its '/' part's layers.
  double mtp_layer_units = 1;
  if (!n.config.model.hybrid_layer_pattern.empty()) {
    mtp_layer_units = 0;
    for (const LayerKind kind : n.mtp_layer_kinds)
      mtp_layer_units += layer_forward_flops(f, kind) / layer;
  }
  return ((1.0 + mtp) * f.logits + mtp * f.mtp_extra) / layer + mtp * mtp_layer_units;
}

// The pipeline layout string for pp x vpp stages: Megatron's even split when it balances as
// well, else decoder layers spread so that the last stage's loss (and MTP) counts as layers
// and the first stage takes the remainder's shortfall ("Et|(tt|)*30mL" for DeepSeek-V3).
// Empty string: the even split (no --pipeline-model-parallel-layout). nullopt: no split.
std::optional<std::string> pipeline_split(int layers, int mtp_layers, int pp, int vpp,
                                          double loss_units) {
  const int stages = pp * vpp;
  if (stages == 1) return std::string();
  if (layers < stages - 1) return std::nullopt;
  const int extra = static_cast<int>(std::lround(loss_units));
  const int per_stage = (layers + extra + stages - 1) / stages;
  std::vector<int> counts(static_cast<std::size_t>(stages), 0);
  const int last = std::max(0, std::min(layers, per_stage - extra));
  counts.back() = last;
  const int rest = layers - last;
  const int others = stages - 1;
  const int base = rest / others, remainder = rest % others;
  if (base < 1) return std::nullopt;  // every stage but the last holds a layer
  // The shorter stages come first (the embedding's stage), the longer ones after.
  for (int s = 0; s < others; ++s) {
    counts[static_cast<std::size_t>(s)] = base + (s >= others - remainder ? 1 : 0);
  }
  if (mtp_layers == 0 && layers % stages == 0 &&
      std::all_of(counts.begin(), counts.end(), [&](int n) { return n == layers / stages; })) {
    return std::string();
  }
  if (mtp_layers == 0 && layers % stages == 0 && extra == 0) return std::string();
  auto stage_text = [](int n) {
    return n <= 2 ? std::string(static_cast<std::size_t>(n), 't') : "t*" + std::to_string(n);
  };
  // Runs of equal stages as "(t*n|)*k", which Megatron's parser expands.
  std::string text = "E" + stage_text(counts.front()) + "|";
  std::size_t s = 1;
  while (s + 1 < counts.size()) {
    std::size_t run = s;
    while (run + 1 < counts.size() - 1 && counts[run + 1] == counts[s]) ++run;
    const std::size_t length = run - s + 1;
    const std::string one = stage_text(counts[s]) + "|";
    text += length > 1 ? "(" + one + ")*" + std::to_string(length) : one;
    s = run + 1;
  }
  text += stage_text(counts.back()) + std::string(static_cast<std::size_t>(mtp_layers), 'm') + "L";
  return text;
}

// [3] ------------------------------------------------------------------------------------------

struct Layout {
  int tp = 1, cp = 1, pp = 1, vpp = 1, ep = 1, etp = 1;
  std::string pipeline_layout;
};

// The fields a candidate's layout sets (plan_inputs() resets them the same way).
void write_layout(Config& c, const Layout& layout, int mbs) {
  ParallelConfig& p = c.parallel;
  p.tensor_parallel = layout.tp;
  p.context_parallel = layout.cp;
  p.pipeline_parallel = layout.pp;
  p.virtual_stages_per_pipeline_rank = layout.vpp;
  p.expert_parallel = layout.ep;
  p.expert_tensor_parallel = c.model.num_experts > 0 ? layout.etp : 0;
  p.sequence_parallel = layout.tp > 1;
  p.decoder_first_pipeline_num_layers = 0;
  p.decoder_last_pipeline_num_layers = 0;
  p.account_for_embedding_in_pipeline_split = false;
  p.account_for_loss_in_pipeline_split = false;
  p.pipeline_layout = layout.pipeline_layout;
  p.microbatch_group_size_per_vp_stage = 0;
  c.training.micro_batch_size = mbs;
}

// The fields an offload row sets (plan_inputs() resets them the same way).
void write_offload(Config& c, const OffloadOption& offload) {
  OffloadConfig& o = c.training.offload;
  o = OffloadConfig{};
  if (offload.activations) {
    o.fine_grained_activation_offloading = true;
    o.offload_modules = activation_offload_choice(c);
  }
  c.optimizer.optimizer_cpu_offload = offload.optimizer;
  c.optimizer.optimizer_offload_fraction = 1.0;
  // Megatron needs the precision-aware optimizer for optimizer CPU offload.
  if (offload.optimizer) c.optimizer.use_precision_aware_optimizer = true;
}

enum class Cell : std::uint8_t { unknown, fits, out_of_memory, invalid };

// One layout: its valid micro-batch sizes (columns) and the rows x columns grid of cells.
struct LayoutState {
  Layout layout;
  std::vector<int> columns;                  // valid micro-batch sizes, ascending
  std::vector<NormalizedConfig> normalized;  // per column, least-memory-hungry row
  std::vector<StagePlacement> stages;
  int loss_rank = 0;                              // the pipeline rank that computes the loss
  std::vector<double> row_band_low;               // per row: the verdict band's low edge, %
  std::vector<std::uint64_t> fixed;               // per column: workspaces, global buffer
  std::vector<std::uint64_t> overheads;           // per column: device overheads, summed
  std::vector<RankParameterBytes> parameters[2];  // per rank, without / with optimizer offload
  std::vector<std::vector<double>> activation;    // per (column, recompute, act offload): per rank
  std::vector<std::vector<const ScheduleProfile*>> schedules;  // per column: per rank
  std::vector<std::pair<double, double>> offloaded;  // per (column, recompute): dense, MoE
  std::vector<Cell> cells;                           // rows x columns
  std::vector<std::uint64_t> peak;       // peak_total_bytes of evaluated cells (0 = none)
  std::vector<int> limiting;             // limiting PP rank of evaluated cells
  std::vector<std::uint32_t> evaluated;  // indices of evaluated cells
  std::vector<std::uint8_t> exact;       // estimate() itself was called
};

std::string rule_of(const std::string& message) {
  std::string out;
  for (std::size_t i = 0; i < message.size();) {
    if (std::isdigit(static_cast<unsigned char>(message[i]))) {
      while (i < message.size() &&
             (std::isdigit(static_cast<unsigned char>(message[i])) || message[i] == '.')) {
        ++i;
      }
      out += 'N';
    } else {
      out += message[i++];
    }
  }
  return out;
}

// splitmix64 over the key's words (hash-table keys of small integers).
std::size_t hash_key(const std::int64_t* words, std::size_t count) {
  std::uint64_t hash = 0x9e3779b97f4a7c15ull;
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t z = hash + static_cast<std::uint64_t>(words[i]) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    hash = z ^ (z >> 31);
  }
  return static_cast<std::size_t>(hash);
}

std::vector<int> powers_of_two_up_to(int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

std::string layout_label(const Layout& l, int mbs) {
  return "TP" + std::to_string(l.tp) + " PP" + std::to_string(l.pp) + " VPP" +
         std::to_string(l.vpp) + " CP" + std::to_string(l.cp) + " EP" + std::to_string(l.ep) +
         " ETP" + std::to_string(l.etp) + " · mbs " + std::to_string(mbs);
}

// The search in steps (PlanSearch): start() checks the request and lists the layouts, then
// each advance() [classify]s and [time]s whole layouts, and at the end [rank]s.
class Planner {
 public:
  explicit Planner(const PlanRequest& request) : req_(request), base_(request.base) {}

  std::optional<Error> start();
  bool advance(std::int64_t budget);
  PlanProgress progress() const;
  PlanResult take_result() { return std::move(result_); }

 private:
  std::size_t recompute_of(std::size_t row) const { return row / offload_.size(); }
  const OffloadOption& offload_of(std::size_t row) const { return offload_[row % offload_.size()]; }
  bool activation_offload(std::size_t row) const {
    const OffloadOption& o = offload_of(row);
    return o.as_given ? base_.training.offload.fine_grained_activation_offloading : o.activations;
  }
  bool optimizer_offload(std::size_t row) const { return offload_of(row).optimizer; }
  bool row_le(std::size_t a, std::size_t b) const { return row_order_[a * rows_ + b] != 0; }

  Config config_for(const Layout& layout, int mbs, std::size_t row) const;
  void apply_row(std::size_t row, Config& config) const;
  double row_band_low(const Layout& layout, std::size_t row);
  bool prepare(LayoutState& state);
  void evaluate_cell(LayoutState& state, std::size_t row, std::size_t column);
  void activation_peaks(LayoutState& state, std::size_t row, std::size_t column,
                        std::vector<double>& peaks);
  // A cell's limiting peak_total_bytes, and what it needs of the card: its peak with the
  // margin or the top of its error band (verdict.hpp), whichever is more, over its ranks.
  struct CellPeak {
    std::uint64_t total_bytes = 0;
    std::uint64_t required_bytes = 0;
  };
  std::uint64_t required_bytes(const RankTotals& totals, double band_low_percent) const;
  CellPeak estimated_peak(const Estimate& estimate) const;
  void record_peak(LayoutState& state, std::size_t row, std::size_t column, CellPeak peak,
                   int limiting);
  void estimate_cell(LayoutState& state, std::size_t row, std::size_t column);
  void evaluate_cell_exactly(LayoutState& state, std::size_t row, std::size_t column);
  void infer(LayoutState& state, std::size_t row, std::size_t column, std::uint64_t required);
  void classify(LayoutState& state);
  void reject(const Error& error, std::int64_t count);
  void recount(Cell before, Cell after);
  StepVariant variant_for(LayoutState& state, std::size_t row, std::size_t column);
  const ScheduleProfile* schedule(const NormalizedConfig& normalized, int rank);
  const ScheduleProfile* margin_schedule(const ScheduleProfile& base,
                                         const std::vector<char>& grouped);
  void select_profiles(const LayoutState& state, std::size_t column, std::size_t vpp);
  std::optional<PlanCandidate> candidate(LayoutState& state, std::size_t row, std::size_t column);

  struct Axes {
    std::vector<int> tps, cps, pps, eps, mbss;
  };
  struct Fit {
    std::uint32_t layout;
    std::uint16_t row;
    std::uint16_t column;
    double time;
  };
  enum class Phase { layouts, sort, top, pareto, done };
  Expected<NormalizedConfig> check_request();
  bool row_below(std::size_t a, std::size_t b) const;
  void setup_rows();
  Expected<Axes> axes(const ModelConfig& model) const;
  void enumerate(const NormalizedConfig& model, const Axes& axes);
  void visit_layouts(std::int64_t budget);
  bool add_columns(LayoutState& state, const std::vector<int>& mbss);
  void reject_invalid_rows(LayoutState& state);
  void visit_layout(const Layout& layout, const std::vector<int>& mbss);
  void time_fits(LayoutState& state, std::uint32_t layout_index);
  void record_cells(PlanResult& result);
  bool sort_fits(std::int64_t budget);
  bool rank_top(PlanResult& result, std::int64_t budget);
  bool rank_pareto(PlanResult& result, std::int64_t budget);
  void rejections(PlanResult& result) const;

  const PlanRequest req_;
  Config base_;
  Phase phase_ = Phase::layouts;
  std::vector<Layout> pending_;  // every layout of the search space, in enumeration order
  std::size_t next_layout_ = 0;  // pending_[next_layout_] is visited next
  std::vector<int> mbss_;        // the micro-batch sizes searched (each layout's columns)
  // sort_fits(): runs of sort_width_ fits are sorted (0: none yet); the pass has merged the
  // runs before fits_[sort_next_] into sorted_.
  std::size_t sort_width_ = 0;
  std::size_t sort_next_ = 0;
  std::vector<Fit> sorted_;
  std::size_t next_top_ = 0;                       // rank_top() walks fits_ from here
  std::size_t next_fit_ = 0;                       // rank_pareto() walks fits_ from here
  std::uint64_t pareto_best_ = ~std::uint64_t{0};  // least memory on the front so far
  PlanResult result_;
  Config plain_;  // the base in its plainest layout (no parallelism, recompute or offload)
  std::vector<LayoutState> layouts_;
  std::vector<Fit> fits_;
  std::vector<PlanCell> recorded_;
  std::vector<RecomputeOption> recompute_;
  std::vector<OffloadOption> offload_;
  std::size_t rows_ = 0;
  std::vector<std::uint8_t> row_order_;    // rows_ x rows_: row a needs at most row b's memory
  std::vector<std::size_t> row_sequence_;  // least memory first
  std::map<std::pair<std::string, std::string>, PlanRejection> invalid_;
  // Recompute/offload rules depend on the layout only through sequence parallelism.
  std::optional<std::vector<std::optional<Error>>> row_errors_[2];
  std::uint64_t limit_bytes_ = 0;  // capacity minus margin
  std::uint64_t capacity_bytes_ = 0;
  std::uint64_t margin_bytes_ = 0;
  // Megatron-FSDP's working set and TE CUDA graphs' phases are priced by estimate() itself:
  // every evaluated cell is estimated (planner_memory.hpp prices the rest).
  bool estimate_every_cell_ = false;
  std::unordered_map<std::size_t, double> band_low_;  // row_band_low() by (axes, row)
  // Schedule profiles by (PP, VPP, rank, micro-batches, group, EP overlap).
  struct KeyHash {
    template <std::size_t N>
    std::size_t operator()(const std::array<std::int64_t, N>& key) const {
      return hash_key(key.data(), key.size());
    }
  };
  std::unordered_map<std::array<std::int64_t, 6>, ScheduleProfile, KeyHash> schedules_;
  NormalizedConfig scratch_;                     // a cell's normalized config, reusing its buffers
  std::vector<const ChunkActivations*> chunks_;  // scratch, pp_rank * VPP + vpp_chunk
  // The same with offloading margins, by that key and the chunks that keep one as bits (few:
  // offload rows of layouts with a chunk that has offload groups).
  std::unordered_map<std::array<std::int64_t, 7>, ScheduleProfile, KeyHash> margin_schedules_;
  std::deque<ScheduleProfile> uncached_margin_schedules_;  // a cell's, beyond 63 chunks
  std::vector<const ScheduleProfile*> rank_profiles_;      // scratch: a cell's profile per rank
  std::vector<char> grouped_;                              // scratch: a rank's chunks with margins
  ChunkActivationsMemo walks_;                             // a cell's chunk walks, into chunks_
  bool counted_ = false;  // stats taken; later estimates correct them
  PlanStats stats_;
};

void Planner::apply_row(std::size_t row, Config& c) const {
  c.training.recompute = recompute_[recompute_of(row)].config;
  const OffloadOption& offload = offload_of(row);
  if (!offload.as_given) write_offload(c, offload);
}

Config Planner::config_for(const Layout& layout, int mbs, std::size_t row) const {
  Config c = base_;
  write_layout(c, layout, mbs);
  apply_row(row, c);
  return c;
}

// The band depends on the layout only through which axes exceed 1 (verdict.cpp features),
// so layouts share it: computed once per (axes, row).
double Planner::row_band_low(const Layout& layout, std::size_t row) {
  const std::size_t axes = (layout.tp > 1 ? 1u : 0u) | (layout.pp > 1 ? 2u : 0u) |
                           (layout.vpp > 1 ? 4u : 0u) | (layout.cp > 1 ? 8u : 0u) |
                           (layout.ep > 1 ? 16u : 0u);
  const std::size_t key = axes * rows_ + row;
  if (const auto found = band_low_.find(key); found != band_low_.end()) return found->second;
  const Config c = config_for(layout, base_.training.micro_batch_size, row);
  const double low = error_band(configuration_features(c)).low_percent;
  band_low_.emplace(key, low);
  return low;
}

void Planner::reject(const Error& error, std::int64_t count) {
  if (count <= 0) return;
  const std::string rule = rule_of(error.message);
  PlanRejection& r = invalid_[{error.field, rule}];
  if (r.count == 0) {
    r.reason = "invalid";
    r.field = error.field;
    r.rule = rule;
    r.example = error.message;
  }
  r.count += count;
}

// After the counts are taken, a cell whose classification an estimate corrects moves over.
void Planner::recount(Cell before, Cell after) {
  if (!counted_ || before == after) return;
  auto count = [&](Cell cell) -> std::int64_t* {
    switch (cell) {
      case Cell::fits:
        return &stats_.fitting;
      case Cell::out_of_memory:
        return &stats_.out_of_memory;
      case Cell::invalid:
        return &stats_.invalid;
      default:
        return nullptr;
    }
  };
  if (auto* c = count(before)) --*c;
  if (auto* c = count(after)) ++*c;
  if (after == Cell::invalid) --stats_.valid;
}

// [4] ------------------------------------------------------------------------------------------

// Memoized parts of a layout: stage placement, static bytes per rank (with and without the
// optimizer offload rows), fixed buffers per column. False if a static bound already rules
// the whole layout out (then every valid cell is out of memory).
bool Planner::prepare(LayoutState& state) {
  const NormalizedConfig& first = state.normalized.front();
  state.stages = first.stages;  // placed once, by normalize()
  for (const StagePlacement& stage : state.stages) {
    if (stage.has_loss) state.loss_rank = stage.pp_rank;
  }
  // The verdict's band per row (verdict.hpp): features follow the layout and the row's
  // recompute and offload, not the micro-batch size.
  for (std::size_t row = 0; row < rows_; ++row) {
    state.row_band_low.push_back(row_band_low(state.layout, row));
  }
  const bool optimizer_rows = std::any_of(offload_.begin(), offload_.end(),
                                          [](const OffloadOption& o) { return o.optimizer; });
  if (optimizer_rows) {
    NormalizedConfig n = first;
    for (std::size_t row = 0; row < rows_; ++row) {
      if (optimizer_offload(row)) {
        apply_row(row, n.config);
        break;
      }
    }
    state.parameters[1] = rank_parameter_bytes(n, state.stages);
  }
  for (const NormalizedConfig& n : state.normalized) {
    state.fixed.push_back(rank_fixed_bytes(n));
    state.overheads.push_back(rank_overhead_bytes(n));
  }

  // Static bound: with no activations at all, the least static memory already over the
  // limit (by more than the slack) rules out every cell.
  if (!optimizer_rows) state.parameters[0] = rank_parameter_bytes(first, state.stages);
  const std::vector<RankParameterBytes>& least = state.parameters[optimizer_rows ? 1 : 0];
  std::uint64_t bound = 0;
  for (const RankParameterBytes& bytes : least) {
    bound = std::max(bound, rank_peak_totals(first, bytes.static_bytes + state.fixed.front(),
                                             static_cast<double>(bytes.step_peak_bytes),
                                             state.overheads.front())
                                .total_bytes);
  }
  if (bound + margin_bytes_ > capacity_bytes_ + req_.inference_slack_bytes) return false;

  if (optimizer_rows) state.parameters[0] = rank_parameter_bytes(first, state.stages);
  for (const NormalizedConfig& n : state.normalized) {
    std::vector<const ScheduleProfile*> ranks;
    for (int r = 0; r < n.config.parallel.pipeline_parallel; ++r) ranks.push_back(schedule(n, r));
    state.schedules.push_back(std::move(ranks));
  }
  state.activation.assign(state.columns.size() * recompute_.size() * 2, {});
  state.offloaded.assign(state.columns.size() * recompute_.size(), {-1.0, -1.0});
  return true;
}

namespace {
std::array<std::int64_t, 6> schedule_key(const ScheduleShape& shape) {
  return {
      shape.pipeline_parallel, shape.virtual_stages,        shape.pp_rank,
      shape.num_microbatches,  shape.microbatch_group_size, shape.overlap_moe_expert_parallel_comm};
}
}  // namespace

const ScheduleProfile* Planner::schedule(const NormalizedConfig& n, int rank) {
  const ScheduleShape shape = rank_schedule_shape(n, rank, /*shortened=*/true);
  const std::array<std::int64_t, 6> key = schedule_key(shape);
  auto found = schedules_.find(key);
  if (found == schedules_.end()) found = schedules_.emplace(key, schedule_profile(shape)).first;
  return &found->second;
}

const ScheduleProfile* Planner::margin_schedule(const ScheduleProfile& base,
                                                const std::vector<char>& grouped) {
  const ScheduleShape& shape = base.shape;
  std::int64_t bits = 0;  // the chunks that keep a margin; schedules of up to 63 chunks
  for (std::size_t j = 0; j < grouped.size() && j < 63; ++j) {
    if (grouped[j] != 0) bits |= std::int64_t{1} << j;
  }
  const std::array<std::int64_t, 6> shape_key = schedule_key(shape);
  std::array<std::int64_t, 7> key;
  std::copy(shape_key.begin(), shape_key.end(), key.begin());
  key[6] = bits;
  if (grouped.size() > 63) {  // a key cannot tell such chunks apart: profiled for this cell
    return &uncached_margin_schedules_.emplace_back(schedule_profile(shape, grouped));
  }
  auto found = margin_schedules_.find(key);
  if (found == margin_schedules_.end()) {
    found = margin_schedules_.emplace(key, schedule_profile(shape, grouped)).first;
  }
  return &found->second;
}

// Each rank's profile for the cell in chunks_: the layout's, or where a chunk keeps an
// offloading margin the one that counts those micro-batches apart (mark_offload_margins).
void Planner::select_profiles(const LayoutState& state, std::size_t column, std::size_t vpp) {
  uncached_margin_schedules_.clear();
  rank_profiles_ = state.schedules[column];
  for (std::size_t r = 0; r < rank_profiles_.size(); ++r) {
    grouped_.assign(vpp, 0);
    bool any = false;
    for (std::size_t j = 0; j < vpp; ++j) {
      grouped_[j] = has_offload_margin(*chunks_[r * vpp + j]) ? 1 : 0;
      any = any || grouped_[j] != 0;
    }
    if (any) rank_profiles_[r] = margin_schedule(*rank_profiles_[r], grouped_);
  }
}

// Marks what an evaluated cell implies: a cell with room to spare makes every cell that
// needs no more memory fit; one over the limit by more than the slack makes every cell
// that needs at least as much not fit.
void Planner::infer(LayoutState& state, std::size_t row, std::size_t column,
                    std::uint64_t required) {
  const std::size_t columns = state.columns.size();
  const std::uint64_t slack = req_.inference_slack_bytes;
  // Rows with another band (another recompute feature) need their own evaluation.
  auto same_band = [&](std::size_t r) { return state.row_band_low[r] == state.row_band_low[row]; };
  if (required + slack <= capacity_bytes_) {
    for (std::size_t r = 0; r < rows_; ++r) {
      if (!row_le(r, row) || !same_band(r)) continue;
      for (std::size_t c = 0; c <= column; ++c) {
        Cell& cell = state.cells[r * columns + c];
        if (cell == Cell::unknown) cell = Cell::fits;
      }
    }
  } else if (required > capacity_bytes_ + slack) {
    for (std::size_t r = 0; r < rows_; ++r) {
      if (!row_le(row, r) || !same_band(r)) continue;
      for (std::size_t c = column; c < columns; ++c) {
        Cell& cell = state.cells[r * columns + c];
        if (cell == Cell::unknown) cell = Cell::out_of_memory;
      }
    }
  }
}

// Activation peaks per rank of one (column, recompute, activation offload) through the fast
// path (planner_memory.hpp): stages alike share one chunk_activations().
void Planner::activation_peaks(LayoutState& state, std::size_t row, std::size_t column,
                               std::vector<double>& peaks) {
  ++stats_.memory_evaluations;
  const NormalizedConfig& n = state.normalized[column];
  scratch_ = n;
  apply_row(row, scratch_.config);
  const auto vpp =
      static_cast<std::size_t>(std::max(1, n.config.parallel.virtual_stages_per_pipeline_rank));
  chunks_.assign(static_cast<std::size_t>(state.layout.pp) * vpp, nullptr);
  const LayerProfiles layers = layer_profiles(scratch_);
  // The step time's offloaded bytes come from the same layers (variant_for).
  if (activation_offload(row)) {
    auto& bytes = state.offloaded[column * recompute_.size() + recompute_of(row)];
    if (bytes.first < 0) offloaded_layer_bytes(scratch_, layers, bytes.first, bytes.second);
  }
  // Stages that walk alike (the same layers' profiles and offloading, embedding, loss and
  // MTP: estimate()'s test) share one walk.
  walks_.restart(scratch_, layers, state.stages.size());
  for (const StagePlacement& stage : state.stages) {
    chunks_[static_cast<std::size_t>(stage.pp_rank) * vpp +
            static_cast<std::size_t>(stage.vpp_chunk)] = &walks_.of(stage);
  }
  select_profiles(state, column, vpp);
  rank_activation_peaks(chunks_, static_cast<int>(vpp), rank_profiles_, peaks);
}

// The memory of one cell; the rows that differ only in optimizer offload share the
// activation part and are filled alongside.
void Planner::evaluate_cell(LayoutState& state, std::size_t row, std::size_t column) {
  const std::size_t columns = state.columns.size();
  if (state.peak[row * columns + column] != 0) return;
  if (state.cells[row * columns + column] == Cell::invalid) return;
  if (estimate_every_cell_) {
    evaluate_cell_exactly(state, row, column);
    return;
  }
  const std::size_t recompute = recompute_of(row);
  const bool activations = activation_offload(row);
  std::vector<double>& peaks =
      state.activation[(column * recompute_.size() + recompute) * 2 + (activations ? 1 : 0)];
  if (peaks.empty()) activation_peaks(state, row, column, peaks);
  for (std::size_t r = 0; r < rows_; ++r) {
    if (recompute_of(r) != recompute || activation_offload(r) != activations) continue;
    const std::size_t index = r * columns + column;
    if (state.peak[index] != 0 || state.cells[index] == Cell::invalid) continue;
    const std::vector<RankParameterBytes>& parameters =
        state.parameters[optimizer_offload(r) && !state.parameters[1].empty() ? 1 : 0];
    std::uint64_t worst = 0, required = 0;
    int limiting = 0;
    for (std::size_t rank = 0; rank < peaks.size(); ++rank) {
      const double above_static =
          rank_above_static(state.normalized[column], peaks[rank], parameters[rank],
                            static_cast<int>(rank) == state.loss_rank);
      const RankTotals totals = rank_peak_totals(
          state.normalized[column], parameters[rank].static_bytes + state.fixed[column],
          above_static, state.overheads[column]);
      required = std::max(required, required_bytes(totals, state.row_band_low[r]));
      if (totals.total_bytes > worst) {
        worst = totals.total_bytes;
        limiting = static_cast<int>(rank);
      }
    }
    record_peak(state, r, column, {worst, required}, limiting);
  }
}

// A cell's evaluated peak: its classification, and (before the counts are taken) what it
// implies for the cells around it.
void Planner::record_peak(LayoutState& state, std::size_t row, std::size_t column, CellPeak peak,
                          int limiting) {
  const std::size_t index = row * state.columns.size() + column;
  const Cell before = state.cells[index];
  state.peak[index] = std::max<std::uint64_t>(1, peak.total_bytes);
  state.limiting[index] = limiting;
  state.evaluated.push_back(static_cast<std::uint32_t>(index));
  state.cells[index] = peak.required_bytes <= capacity_bytes_ ? Cell::fits : Cell::out_of_memory;
  if (counted_) {
    if (before != Cell::unknown) --stats_.inferred;
    recount(before, state.cells[index]);
  } else {
    infer(state, row, column, peak.required_bytes);
  }
}

std::uint64_t Planner::required_bytes(const RankTotals& totals, double band_low_percent) const {
  // The top of the band's range (verdict.hpp total_range: its high bytes).
  const std::uint64_t high =
      total_at_error(band_low_percent, totals.reserved_bytes, totals.total_bytes);
  return std::max(totals.total_bytes + margin_bytes_, high);
}

// The same from estimate()'s own ranks and verdict.
Planner::CellPeak Planner::estimated_peak(const Estimate& estimate) const {
  CellPeak peak;
  for (std::size_t r = 0; r < estimate.ranks.size(); ++r) {
    const RankMemory& rank = estimate.ranks[r];
    peak.total_bytes = std::max(peak.total_bytes, rank.peak_total_bytes);
    peak.required_bytes = std::max({peak.required_bytes, rank.peak_total_bytes + margin_bytes_,
                                    estimate.verdict.ranks[r].high_total_bytes});
  }
  return peak;
}

// With estimate_every_cell_: the cell's peak from estimate() itself, recorded as a fast-path
// one is (and so inferring its neighbours).
void Planner::evaluate_cell_exactly(LayoutState& state, std::size_t row, std::size_t column) {
  const std::size_t index = row * state.columns.size() + column;
  ++stats_.memory_evaluations;
  const Expected<Estimate> result =
      estimate(config_for(state.layout, state.columns[column], row), EstimateOptions{false, false});
  if (!result) {
    const Cell before = state.cells[index];
    reject(result.error(), 1);
    state.cells[index] = Cell::invalid;
    recount(before, Cell::invalid);
    return;
  }
  state.exact[index] = 1;
  record_peak(state, row, column, estimated_peak(*result), result->limiting_pp_rank);
}

// estimate() itself, for a cell that is reported: its bytes replace the fast path's.
void Planner::estimate_cell(LayoutState& state, std::size_t row, std::size_t column) {
  const std::size_t index = row * state.columns.size() + column;
  if (state.exact[index] || state.cells[index] == Cell::invalid) return;
  evaluate_cell(state, row, column);
  if (state.exact[index] || state.cells[index] == Cell::invalid) return;
  state.exact[index] = 1;
  ++stats_.estimates;
  const Cell before = state.cells[index];
  const Expected<Estimate> result =
      estimate(config_for(state.layout, state.columns[column], row), EstimateOptions{false, false});
  if (!result) {
    // A combination rule the per-row check did not see.
    reject(result.error(), 1);
    state.cells[index] = Cell::invalid;
    recount(before, Cell::invalid);
    return;
  }
  const CellPeak peak = estimated_peak(*result);
  state.peak[index] = std::max<std::uint64_t>(1, peak.total_bytes);
  state.limiting[index] = result->limiting_pp_rank;
  state.cells[index] = peak.required_bytes <= capacity_bytes_ ? Cell::fits : Cell::out_of_memory;
  recount(before, state.cells[index]);
}

// Evaluates along the fit boundary: first the least-memory cell (if it does not fit, nothing
// in the layout does), the most-memory cell (if it fits, everything does), then each row
// from the least-memory one, bisecting its unknown columns.
void Planner::classify(LayoutState& state) {
  const std::size_t columns = state.columns.size();
  std::vector<std::size_t> unknown;
  auto unknown_columns = [&](std::size_t row) {
    unknown.clear();
    for (std::size_t c = 0; c < columns; ++c) {
      if (state.cells[row * columns + c] == Cell::unknown) unknown.push_back(c);
    }
    return !unknown.empty();
  };
  const std::size_t bottom = row_sequence_.front(), top = row_sequence_.back();
  evaluate_cell(state, bottom, 0);
  evaluate_cell(state, top, columns - 1);
  for (std::size_t row : row_sequence_) {
    // Each evaluation resolves at least its own cell, so this ends.
    while (unknown_columns(row)) evaluate_cell(state, row, unknown[unknown.size() / 2]);
  }
}

// [5] ------------------------------------------------------------------------------------------

// What step_variant() gives for the cell's normalized config, from cached parts.
StepVariant Planner::variant_for(LayoutState& state, std::size_t row, std::size_t column) {
  const RecomputeOption& recompute = recompute_[recompute_of(row)];
  const OffloadOption& offload = offload_of(row);
  const NormalizedConfig& n = state.normalized[column];
  StepVariant v;
  v.micro_batch_size = state.columns[column];
  v.num_microbatches = n.num_microbatches;
  v.recompute = recompute.config.granularity;
  v.recompute_modules = recompute.active;
  v.recompute_method = recompute.config.method;
  v.recompute_num_layers = recompute.config.num_layers;
  v.distribute_saved_activations = recompute.config.distribute_saved_activations;
  if (activation_offload(row)) {
    auto& bytes = state.offloaded[column * recompute_.size() + recompute_of(row)];
    if (bytes.first < 0) {
      scratch_ = n;
      apply_row(row, scratch_.config);
      offloaded_layer_bytes(scratch_, bytes.first, bytes.second);
    }
    v.offloaded_bytes_dense = bytes.first;
    v.offloaded_bytes_moe = bytes.second;
  }
  const OptimizerConfig& o = base_.optimizer;
  v.optimizer_offload_fraction =
      offload.as_given ? (o.optimizer_cpu_offload ? o.optimizer_offload_fraction : 0.0)
                       : (offload.optimizer ? 1.0 : 0.0);
  return v;
}

// A reported candidate: estimated with estimate() itself, and fitting.
std::optional<PlanCandidate> Planner::candidate(LayoutState& state, std::size_t row,
                                                std::size_t column) {
  const std::size_t index = row * state.columns.size() + column;
  estimate_cell(state, row, column);
  if (state.cells[index] != Cell::fits) return std::nullopt;
  PlanCandidate out;
  out.config = config_for(state.layout, state.columns[column], row);
  out.recompute = recompute_[recompute_of(row)].label;
  out.offload = offload_of(row).label;
  out.label = layout_label(state.layout, state.columns[column]) + " · recompute " + out.recompute +
              " · offload " + out.offload;
  out.peak_total_bytes = state.peak[index];
  out.limiting_pp_rank = state.limiting[index];
  const StepTimeModel model(state.normalized.front(), state.stages, req_.step_time);
  out.time = model.evaluate(variant_for(state, row, column));
  return out;
}

// The request's own checks and the model in its plainest layout (it must be valid).
Expected<NormalizedConfig> Planner::check_request() {
  if (base_.parallel.world_size < 1) {
    return Error{"world_size", "the planner needs at least one GPU"};
  }
  if (base_.training.global_batch_size < 1) {
    return Error{"global_batch_size", "the planner needs a global batch size (--gbs)"};
  }
  if (!(req_.margin_gib >= 0)) {
    return Error{"margin_gib", "the memory margin must not be negative"};
  }
  const double limit = (base_.device.capacity_gib - req_.margin_gib) * kBytesPerGiB;
  if (!(limit > 0)) return Error{"margin_gib", "the margin leaves no memory on the card"};
  limit_bytes_ = static_cast<std::uint64_t>(limit);
  capacity_bytes_ = static_cast<std::uint64_t>(base_.device.capacity_gib * kBytesPerGiB);
  margin_bytes_ = capacity_bytes_ - std::min(capacity_bytes_, limit_bytes_);
  estimate_every_cell_ = base_.parallel.fsdp.impl != FsdpImpl::none ||
                         base_.training.cuda_graph_impl == CudaGraphImpl::transformer_engine;
  plain_ = base_;
  plain_.parallel = ParallelConfig{};
  plain_.parallel.world_size = 1;
  plain_.training.global_batch_size = 0;
  plain_.training.micro_batch_size = 1;
  plain_.training.recompute = RecomputeConfig{};
  plain_.training.offload = OffloadConfig{};
  plain_.optimizer.optimizer_cpu_offload = false;
  // The EP overlap needs EP (rules/pipeline_layout.cpp) and changes the schedule, not the
  // layers this model-only configuration describes; candidates keep it.
  plain_.training.overlap_moe_expert_parallel_comm = false;
  return normalize(plain_);
}

// a needs at most the memory of b. Full recompute keeps each layer's input, which activation
// offloading does not move: it is below a lighter recompute only when that row keeps its
// activations on the GPU (with offloading, selective rows can go below full).
bool Planner::row_below(std::size_t a, std::size_t b) const {
  const RecomputeOption& ra = recompute_[recompute_of(a)];
  const RecomputeOption& rb = recompute_[recompute_of(b)];
  if (!recompute_le(ra, rb) || !offload_le(offload_of(a), offload_of(b))) return false;
  const bool a_full = ra.config.granularity == RecomputeGranularity::full;
  const bool b_full = rb.config.granularity == RecomputeGranularity::full;
  return !(a_full && !b_full && activation_offload(b));
}

// The rows (recompute x offload options), their memory order, least memory first.
void Planner::setup_rows() {
  recompute_ = recompute_options(base_, req_.space.search_recompute);
  for (RecomputeOption& option : recompute_) {
    Config c = plain_;
    c.training.recompute = option.config;
    const Expected<NormalizedConfig> n = normalize(c);
    option.active = n ? active_recompute_modules(*n) : RecomputeModules{};
    option.core_attn_can_grow = option.config.granularity == RecomputeGranularity::selective &&
                                option.active.has(RecomputeModule::core_attn) &&
                                core_attn_recompute_can_grow(c);
  }
  offload_ = offload_options(req_.space.search_offload);
  rows_ = recompute_.size() * offload_.size();
  row_order_.assign(rows_ * rows_, 0);
  for (std::size_t a = 0; a < rows_; ++a) {
    for (std::size_t b = 0; b < rows_; ++b) row_order_[a * rows_ + b] = row_below(a, b);
  }
  // Least memory first: rows below more rows come first.
  row_sequence_.resize(rows_);
  std::iota(row_sequence_.begin(), row_sequence_.end(), std::size_t{0});
  std::vector<int> above(rows_, 0);
  for (std::size_t a = 0; a < rows_; ++a) {
    for (std::size_t b = 0; b < rows_; ++b) above[a] += row_le(a, b) ? 1 : 0;
  }
  std::stable_sort(row_sequence_.begin(), row_sequence_.end(),
                   [&](std::size_t a, std::size_t b) { return above[a] > above[b]; });
}

// The search space's axes, defaulted from the model and the cluster.
Expected<Planner::Axes> Planner::axes(const ModelConfig& m) const {
  const PlannerSearchSpace& space = req_.space;
  const int node = std::max(1, base_.device.gpus_per_node);
  const auto w = static_cast<int>(std::min<std::int64_t>(base_.parallel.world_size, 1 << 20));
  Axes a;
  a.tps = space.tensor_parallel.empty() ? powers_of_two_up_to(std::min(node, w))
                                        : space.tensor_parallel;
  a.cps =
      space.context_parallel.empty() ? powers_of_two_up_to(std::min(8, w)) : space.context_parallel;
  a.pps = space.pipeline_parallel;
  if (a.pps.empty()) {
    for (int p = 1; p <= std::min({m.num_layers, 64, w}); ++p) a.pps.push_back(p);
  }
  a.eps = space.expert_parallel;
  if (m.num_experts == 0) {
    a.eps = {1};
  } else if (a.eps.empty()) {
    for (int e = 1; e <= std::min(m.num_experts, w); ++e) {
      if (m.num_experts % e == 0) a.eps.push_back(e);
    }
  }
  a.mbss = space.micro_batch_sizes.empty() ? std::vector<int>{1, 2, 4, 8} : space.micro_batch_sizes;
  std::sort(a.mbss.begin(), a.mbss.end());
  a.mbss.erase(std::unique(a.mbss.begin(), a.mbss.end()), a.mbss.end());
  if (a.tps.empty() || a.cps.empty() || a.pps.empty() || a.eps.empty() || a.mbss.empty()) {
    return Error{"search_space", "the search space is empty"};
  }
  return a;
}

// [enumerate] Every layout of the search space, in the order visit_layouts() takes them.
void Planner::enumerate(const NormalizedConfig& model, const Axes& a) {
  const ModelConfig& m = model.config.model;
  const std::int64_t world = base_.parallel.world_size;
  const double loss_units = layer_units_of_loss(model);
  for (int tp : a.tps) {
    for (int cp : a.cps) {
      for (int pp : a.pps) {
        if (tp < 1 || cp < 1 || pp < 1 || world % (std::int64_t{tp} * cp * pp) != 0) continue;
        const int max_vpp = pp > 1 ? std::max(1, req_.space.max_virtual_stages) : 1;
        const int min_vpp = pp > 1 ? std::max(1, req_.space.min_virtual_stages) : 1;
        for (int vpp = min_vpp; vpp <= max_vpp; ++vpp) {
          const std::optional<std::string> split =
              pipeline_split(m.num_layers, m.mtp_num_layers, pp, vpp, loss_units);
          if (!split) continue;
          std::vector<int> etps = {tp};
          if (m.num_experts > 0 && req_.space.search_expert_tensor_parallel && tp > 1) {
            etps = {1, tp};
          }
          for (int ep : a.eps) {
            for (int etp : etps) {
              if (ep < 1 || etp < 1 || world % (std::int64_t{etp} * ep * pp) != 0) continue;
              pending_.push_back(Layout{tp, cp, pp, vpp, ep, etp, *split});
            }
          }
        }
      }
    }
  }
}

// Columns: the micro-batch sizes Megatron accepts for this layout (its own rules, checked
// with the least-memory-hungry row's settings cleared). False: none.
bool Planner::add_columns(LayoutState& state, const std::vector<int>& mbss) {
  // A NormalizedConfig is over a kilobyte: one allocation, not a copy per growth step.
  state.normalized.reserve(mbss.size());
  for (int mbs : mbss) {
    stats_.candidates += static_cast<std::int64_t>(rows_);
    Expected<NormalizedConfig> n = normalize(config_for(state.layout, mbs, row_sequence_.back()));
    if (!n) {
      reject(n.error(), static_cast<std::int64_t>(rows_));
      stats_.invalid += static_cast<std::int64_t>(rows_);
      if (req_.record_cells) {
        for (std::size_t row = 0; row < rows_; ++row) {
          recorded_.push_back(
              {config_for(state.layout, mbs, row), PlanCell::Status::invalid, false, 0, 0.0});
        }
      }
      continue;
    }
    state.columns.push_back(mbs);
    state.normalized.push_back(std::move(n).value());
  }
  return !state.columns.empty();
}

// Rows a recompute/offload rule rules out (the same for every layout of one SP setting).
void Planner::reject_invalid_rows(LayoutState& state) {
  const std::size_t columns = state.columns.size();
  auto& errors = row_errors_[state.layout.tp > 1 ? 1 : 0];
  if (!errors) {
    errors.emplace(rows_);
    for (std::size_t row = 0; row < rows_; ++row) {
      const Expected<NormalizedConfig> n =
          normalize(config_for(state.layout, state.columns.front(), row));
      if (!n) (*errors)[row] = n.error();
    }
  }
  for (std::size_t row = 0; row < rows_; ++row) {
    if (!(*errors)[row]) continue;
    reject(*(*errors)[row], static_cast<std::int64_t>(columns));
    for (std::size_t col = 0; col < columns; ++col)
      state.cells[row * columns + col] = Cell::invalid;
  }
}

// One layout: its columns, [classify] its cells, [time] what fits.
void Planner::visit_layout(const Layout& layout, const std::vector<int>& mbss) {
  LayoutState state;
  state.layout = layout;
  ++stats_.layouts;
  if (!add_columns(state, mbss)) return;
  const std::size_t cells = rows_ * state.columns.size();
  state.cells.assign(cells, Cell::unknown);
  state.peak.assign(cells, 0);
  state.limiting.assign(cells, 0);
  state.exact.assign(cells, 0);
  reject_invalid_rows(state);
  if (prepare(state)) {
    classify(state);
  } else {
    ++stats_.static_bound_layouts;
    for (Cell& cell : state.cells) {
      if (cell == Cell::unknown) cell = Cell::out_of_memory;
    }
  }
  time_fits(state, static_cast<std::uint32_t>(layouts_.size()));
  layouts_.push_back(std::move(state));
}

// [time] Counts the layout's cells and times the fitting ones.
void Planner::time_fits(LayoutState& state, std::uint32_t layout_index) {
  const std::size_t columns = state.columns.size();
  // Columns outside: the time model keeps one micro-batch size's layer costs.
  std::optional<StepTimeModel> time_model;
  for (std::size_t col = 0; col < columns; ++col) {
    for (std::size_t row = 0; row < rows_; ++row) {
      const std::size_t index = row * columns + col;
      const Cell cell = state.cells[index];
      if (cell == Cell::invalid) {
        ++stats_.invalid;
        continue;
      }
      ++stats_.valid;
      if (state.peak[index] == 0) ++stats_.inferred;
      if (cell == Cell::out_of_memory) {
        ++stats_.out_of_memory;
        continue;
      }
      ++stats_.fitting;
      if (!time_model) time_model.emplace(state.normalized.front(), state.stages, req_.step_time);
      const StepTime t = time_model->evaluate(variant_for(state, row, col));
      ++stats_.step_time_evaluations;
      fits_.push_back({layout_index, static_cast<std::uint16_t>(row),
                       static_cast<std::uint16_t>(col), t.step_time_s});
    }
  }
}

// Every cell of every layout, with its status (PlanRequest::record_cells).
void Planner::record_cells(PlanResult& result) {
  for (LayoutState& state : layouts_) {
    const std::size_t columns = state.columns.size();
    for (std::size_t col = 0; col < columns; ++col) {
      for (std::size_t row = 0; row < rows_; ++row) {
        const std::size_t index = row * columns + col;
        PlanCell cell;
        cell.config = config_for(state.layout, state.columns[col], row);
        cell.status = state.cells[index] == Cell::fits            ? PlanCell::Status::fits
                      : state.cells[index] == Cell::out_of_memory ? PlanCell::Status::out_of_memory
                                                                  : PlanCell::Status::invalid;
        cell.evaluated = state.peak[index] != 0;
        cell.peak_total_bytes = state.peak[index];
        if (cell.status == PlanCell::Status::fits) {
          const StepTimeModel time_model(state.normalized.front(), state.stages, req_.step_time);
          cell.step_time_s = time_model.evaluate(variant_for(state, row, col)).step_time_s;
        }
        recorded_.push_back(std::move(cell));
      }
    }
  }
  result.cells = std::move(recorded_);
}

// [rank] fits_ by step time, equal times in enumeration order (std::stable_sort's order), in
// steps of about `budget` fits: runs of kRun sorted in place, then merge passes of doubling
// width, whole pairs of runs at a time (std::merge keeps the first run's fit first on a tie).
// True once sorted.
bool Planner::sort_fits(std::int64_t budget) {
  constexpr std::size_t kRun = 64;
  const std::size_t n = fits_.size();
  const auto by_time = [](const Fit& a, const Fit& b) { return a.time < b.time; };
  std::int64_t done = 0;
  while (done < budget) {
    const std::size_t from = sort_next_;
    const std::size_t width = sort_width_ == 0 ? kRun : sort_width_;
    if (width >= n && sort_width_ != 0) return true;
    const std::size_t to = std::min(n, from + (sort_width_ == 0 ? kRun : 2 * width));
    if (sort_width_ == 0) {
      std::stable_sort(fits_.begin() + static_cast<std::ptrdiff_t>(from),
                       fits_.begin() + static_cast<std::ptrdiff_t>(to), by_time);
    } else {
      sorted_.resize(n);
      const auto at = [&](std::size_t i) { return fits_.begin() + static_cast<std::ptrdiff_t>(i); };
      std::merge(at(from), at(std::min(to, from + width)), at(std::min(to, from + width)), at(to),
                 sorted_.begin() + static_cast<std::ptrdiff_t>(from), by_time);
    }
    done += static_cast<std::int64_t>(to - from) + 1;
    sort_next_ = to;
    if (sort_next_ < n) continue;
    if (sort_width_ != 0) fits_.swap(sorted_);
    sort_width_ = sort_width_ == 0 ? kRun : 2 * width;
    sort_next_ = 0;
  }
  return sort_width_ >= n && sort_width_ != 0;
}

// [rank] The top list: the fastest fitting candidates, walking the sorted fits `budget` at a
// time. True once it is complete.
bool Planner::rank_top(PlanResult& result, std::int64_t budget) {
  const auto top = static_cast<std::size_t>(std::max(0, req_.top));
  for (std::int64_t walked = 0; walked < budget; ++walked) {
    if (next_top_ >= fits_.size() || result.top.size() >= top) return true;
    const Fit& f = fits_[next_top_++];
    if (auto c = candidate(layouts_[f.layout], f.row, f.column)) {
      result.top.push_back(std::move(*c));
    }
  }
  return next_top_ >= fits_.size() || result.top.size() >= top;
}

// [rank] Pareto front: walking from the fastest, a candidate joins when it needs less memory
// than every faster one. Evaluated cells below it in its layout's order bound its memory
// from below (less the slack), which spares most evaluations. Walks `budget` candidates on
// from where the last call stopped; true once every one is walked.
bool Planner::rank_pareto(PlanResult& result, std::int64_t budget) {
  std::uint64_t& best = pareto_best_;
  const std::uint64_t slack = req_.inference_slack_bytes;
  for (std::int64_t walked = 0; next_fit_ < fits_.size() && walked < budget; ++walked) {
    const Fit& f = fits_[next_fit_++];
    LayoutState& state = layouts_[f.layout];
    const std::size_t columns = state.columns.size();
    const std::size_t index = static_cast<std::size_t>(f.row) * columns + f.column;
    // The layout's least-memory cell bounds all of its cells.
    const std::uint64_t least = state.peak[row_sequence_.front() * columns];
    if (least > slack && least - slack >= best) continue;
    std::uint64_t lower = 0;
    for (std::uint32_t e : state.evaluated) {
      if (row_le(e / columns, f.row) && e % columns <= f.column) {
        lower = std::max(lower, state.peak[e]);
      }
    }
    if (lower > slack && lower - slack >= best) continue;
    evaluate_cell(state, f.row, f.column);
    if (state.cells[index] != Cell::fits || state.peak[index] >= best) continue;
    if (auto c = candidate(state, f.row, f.column)) {
      best = c->peak_total_bytes;
      result.pareto.push_back(std::move(*c));
    }
  }
  return next_fit_ == fits_.size();
}

// Why the rest fail: out of memory, and Megatron's rules by field, most frequent first.
void Planner::rejections(PlanResult& result) const {
  if (stats_.out_of_memory > 0) {
    PlanRejection oom;
    oom.reason = "out_of_memory";
    oom.rule =
        "peak_total_bytes + margin, or the top of the verdict's error band, above capacity_gib";
    char text[96];
    std::snprintf(text, sizeof(text), "%.2f GiB capacity - %.2f GiB margin or the band",
                  base_.device.capacity_gib, req_.margin_gib);
    oom.example = text;
    oom.count = stats_.out_of_memory;
    result.rejections.push_back(oom);
  }
  for (const auto& entry : invalid_) result.rejections.push_back(entry.second);
  std::stable_sort(
      result.rejections.begin(), result.rejections.end(),
      [](const PlanRejection& a, const PlanRejection& b) { return a.count > b.count; });
}

// The request's checks and the search space's layouts (enumerate); an error ends the search.
std::optional<Error> Planner::start() {
  const Expected<NormalizedConfig> model = check_request();
  if (!model) return model.error();
  setup_rows();
  const Expected<Axes> search = axes(model->config.model);
  if (!search) return search.error();
  enumerate(*model, *search);
  mbss_ = search->mbss;
  return std::nullopt;
}

// [classify] and [time] the next layouts, `budget` candidates' worth (at least one layout).
void Planner::visit_layouts(std::int64_t budget) {
  const std::int64_t from = stats_.candidates;
  while (next_layout_ < pending_.size() && stats_.candidates - from < budget) {
    visit_layout(pending_[next_layout_++], mbss_);
  }
}

// One step: layouts until all are visited, then sorting what fits, the top list and the
// Pareto front, each `budget` candidates at a time, and the rejections. True once the result
// is complete.
bool Planner::advance(std::int64_t budget) {
  budget = std::max<std::int64_t>(budget, 1);
  if (phase_ == Phase::layouts) {
    visit_layouts(budget);
    if (next_layout_ < pending_.size()) return false;
    counted_ = true;
    phase_ = Phase::sort;
    if (req_.record_cells) record_cells(result_);
  } else if (phase_ == Phase::sort) {
    if (sort_fits(budget)) phase_ = Phase::top;
  } else if (phase_ == Phase::top) {
    if (rank_top(result_, budget)) phase_ = Phase::pareto;
  } else if (phase_ == Phase::pareto && rank_pareto(result_, budget)) {
    rejections(result_);
    result_.stats = stats_;
    phase_ = Phase::done;
  }
  return phase_ == Phase::done;
}

PlanProgress Planner::progress() const {
  const auto per_layout = static_cast<std::int64_t>(rows_ * mbss_.size());
  PlanProgress p;
  p.layouts_total = static_cast<std::int64_t>(pending_.size());
  p.layouts_done = static_cast<std::int64_t>(next_layout_);
  p.candidates_total = p.layouts_total * per_layout;
  p.candidates_done = p.layouts_done * per_layout;
  p.ranking = phase_ != Phase::layouts;
  p.finished = phase_ == Phase::done;
  return p;
}

}  // namespace

struct PlanSearch::Impl {
  explicit Impl(const PlanRequest& request) : planner(request), error(planner.start()) {}
  Planner planner;
  std::optional<Error> error;  // the request cannot be searched
};

PlanSearch::PlanSearch(const PlanRequest& request) : impl_(std::make_unique<Impl>(request)) {}
PlanSearch::~PlanSearch() = default;
PlanSearch::PlanSearch(PlanSearch&&) noexcept = default;
PlanSearch& PlanSearch::operator=(PlanSearch&&) noexcept = default;

bool PlanSearch::advance(std::int64_t candidates) {
  return impl_->error || impl_->planner.advance(candidates);
}

PlanProgress PlanSearch::progress() const {
  if (!impl_->error) return impl_->planner.progress();
  PlanProgress p;
  p.finished = true;
  return p;
}

Expected<PlanResult> PlanSearch::take_result() {
  if (impl_->error) return *impl_->error;
  if (!impl_->planner.progress().finished) {
    return Error{"plan", "the search has not finished (advance() it until it returns true)"};
  }
  return impl_->planner.take_result();
}

Expected<PlanResult> plan(const PlanRequest& request) {
  PlanSearch search(request);
  while (!search.advance(std::numeric_limits<std::int64_t>::max())) {
  }
  return search.take_result();
}

PlanRequest plan_request_for(const Config& config) {
  PlanRequest request;
  request.base = config;
  request.base.optimizer.overlap_grad_reduce = true;
  // A configuration without a global batch gets one every searched layout divides: each
  // layout's data-parallel size divides the GPU count, and each searched micro-batch (1, 2, 4,
  // 8 and the configuration's own) divides their least common multiple. Megatron's default
  // (micro-batch x the current layout's data-parallel size, arguments.py) left most candidates
  // invalid for a batch they do not divide (issue #28), and a layout that does not run has no
  // data-parallel size at all.
  if (config.training.global_batch_size < 1) {
    const std::int64_t micro_batches =
        std::lcm(std::int64_t{8}, std::max<std::int64_t>(1, config.training.micro_batch_size));
    request.base.training.global_batch_size = micro_batches * config.parallel.world_size;
    request.global_batch_proposed =
        "divisible by every searched layout's micro-batch x data-parallel size";
  }
  return request;
}

Config plan_inputs(const Config& config, const PlannerSearchSpace& space) {
  // As plan_request_for() sets the base, without the global batch it proposes (it follows the
  // layout, which is not an input).
  Config inputs = config;
  inputs.optimizer.overlap_grad_reduce = true;
  Layout unset;
  unset.etp = ParallelConfig{}.expert_tensor_parallel;  // 0: ETP follows TP
  write_layout(inputs, unset, TrainingConfig{}.micro_batch_size);
  if (space.search_recompute) inputs.training.recompute = RecomputeConfig{};  // the "none" row
  if (space.search_offload) write_offload(inputs, OffloadOption{});           // the "none" row
  return inputs;
}

void keep_layout_fields(PlannerSearchSpace& space, const Config& config, const PlanKeep& keep) {
  const ParallelConfig& p = config.parallel;
  if (keep.tensor_parallel) space.tensor_parallel = {p.tensor_parallel};
  // PP only, as `megamem plan --pp` does: the virtual stages are still searched (issue #28:
  // a kept PP 16 with the default's VPP 5 left 0 candidates where --pp 16 finds 45,120).
  if (keep.pipeline_parallel) space.pipeline_parallel = {p.pipeline_parallel};
  if (keep.context_parallel) space.context_parallel = {p.context_parallel};
  if (keep.expert_parallel) space.expert_parallel = {p.expert_parallel};  // ETP: 1 or TP
  if (keep.micro_batch_size) space.micro_batch_sizes = {config.training.micro_batch_size};
}

}  // namespace megamem
