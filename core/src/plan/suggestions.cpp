// Nearest valid configurations (suggestions.hpp): each generator proposes changes to how the
// model runs, a repair step fixes the batch the change breaks, normalize() (the rule book)
// decides, and the survivors are ranked by how much they change.
#include "megamem/suggestions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <optional>
#include <string_view>

#include "megamem/estimate.hpp"
#include "plan/memory_choices.hpp"

namespace megamem {
namespace {

// A whole-number setting a suggestion may change (never a ModelConfig field).
struct Knob {
  const char* field;  // Megatron's name, as Error::field uses it
  const char* label;
  std::int64_t (*get)(const Config&);
  void (*set)(Config&, std::int64_t);
  std::int64_t min;
};

#define MM_KNOB(field, label, path, min)                                                  \
  Knob {                                                                                  \
    field, label, [](const Config& c) -> std::int64_t { return c.path; },                 \
        [](Config& c, std::int64_t v) { c.path = static_cast<decltype(c.path)>(v); }, min \
  }

const std::vector<Knob>& knobs() {
  static const std::vector<Knob> table = {
      MM_KNOB("tensor_model_parallel_size", "TP", parallel.tensor_parallel, 1),
      MM_KNOB("pipeline_model_parallel_size", "PP", parallel.pipeline_parallel, 1),
      MM_KNOB("virtual_stages_per_pipeline_rank", "VPP", parallel.virtual_stages_per_pipeline_rank,
              1),
      MM_KNOB("context_parallel_size", "CP", parallel.context_parallel, 1),
      MM_KNOB("expert_model_parallel_size", "EP", parallel.expert_parallel, 1),
      MM_KNOB("expert_tensor_parallel_size", "ETP", parallel.expert_tensor_parallel, 1),
      MM_KNOB("world_size", "GPUs", parallel.world_size, 1),
      MM_KNOB("micro_batch_size", "micro-batch", training.micro_batch_size, 1),
      MM_KNOB("global_batch_size", "global batch", training.global_batch_size, 1),
      MM_KNOB("microbatch_group_size_per_vp_stage", "micro-batch group",
              parallel.microbatch_group_size_per_vp_stage, 1),
      MM_KNOB("recompute_num_layers", "recompute layers", training.recompute.num_layers, 0),
      MM_KNOB("cpu_offloading_num_layers", "offloaded layers",
              training.offload.cpu_offloading_num_layers, 1),
      MM_KNOB("num_distributed_optimizer_instances", "optimizer instances",
              parallel.num_distributed_optimizer_instances, 1),
  };
  return table;
}
#undef MM_KNOB

struct Candidate {
  Suggestion suggestion;
  double cost = 0;
};

std::int64_t data_parallel_of(const Config& c) {
  const std::int64_t group = std::int64_t{c.parallel.tensor_parallel} *
                             c.parallel.context_parallel * c.parallel.pipeline_parallel;
  return c.parallel.world_size % group == 0 ? c.parallel.world_size / group : 0;
}

struct ValidConfig {
  Config config;
  double stage_imbalance = 0;  // (most - fewest decoder layers per pipeline rank) / mean
};

double stage_imbalance(const NormalizedConfig& n) {
  std::vector<int> per_rank(static_cast<std::size_t>(n.config.parallel.pipeline_parallel));
  for (const StagePlacement& stage : n.stages) {
    per_rank[static_cast<std::size_t>(stage.pp_rank)] += stage.num_layers;
  }
  const auto [fewest, most] = std::minmax_element(per_rank.begin(), per_rank.end());
  const double mean =
      static_cast<double>(n.config.model.num_layers) / static_cast<double>(per_rank.size());
  return static_cast<double>(*most - *fewest) / std::max(1.0, mean);
}

std::int64_t gpu_step(const Config& c) {
  const ParallelConfig& p = c.parallel;
  const int etp = p.expert_tensor_parallel > 0 ? p.expert_tensor_parallel : p.tensor_parallel;
  return std::lcm(std::int64_t{p.tensor_parallel} * p.context_parallel * p.pipeline_parallel,
                  std::int64_t{etp} * p.expert_parallel * p.pipeline_parallel);
}

// The batch a layout change breaks (global batch = M x micro-batch x DP, and the interleaved
// schedule wants M a multiple of PP): the next global batch that fits.
bool repair_batch(Config& c) {
  const std::int64_t dp = data_parallel_of(c);
  if (dp == 0) return false;
  const bool interleaved = c.parallel.virtual_stages_per_pipeline_rank > 1;
  const std::int64_t step =
      c.training.micro_batch_size * dp * (interleaved ? c.parallel.pipeline_parallel : 1);
  const std::int64_t current = std::max<std::int64_t>(c.training.global_batch_size, 1);
  const std::int64_t fixed = (current + step - 1) / step * step;
  if (fixed == c.training.global_batch_size && c.parallel.microbatch_group_size_per_vp_stage == 0) {
    return false;
  }
  c.training.global_batch_size = fixed;
  c.parallel.microbatch_group_size_per_vp_stage = 0;  // Megatron's default, PP
  return true;
}

// The knob whose smaller values resolve an error on `field` (a size it must divide).
const char* knob_to_lower(const Config& c, const std::string& field) {
  if (field == "num_attention_heads" || field == "num_query_groups" || field == "ffn_hidden_size" ||
      field == "moe_shared_expert_intermediate_size") {
    return "tensor_model_parallel_size";
  }
  if (field == "seq_length") {
    return c.parallel.context_parallel > 1 ? "context_parallel_size" : "tensor_model_parallel_size";
  }
  if (field == "num_experts") return "expert_model_parallel_size";
  if (field == "moe_ffn_hidden_size") return "expert_tensor_parallel_size";
  if (field == "num_layers") return "pipeline_model_parallel_size";
  if (field == "virtual_stages_per_pipeline_rank" || field == "cpu_offloading_num_layers" ||
      field == "num_distributed_optimizer_instances") {
    return field.c_str();
  }
  return nullptr;
}

// Lowers that knob to the nearest value where normalize() no longer objects to `field`.
bool lower_until_resolved(Config& c, const std::string& field) {
  const char* name = knob_to_lower(c, field);
  if (!name) return false;
  const auto knob = std::find_if(knobs().begin(), knobs().end(),
                                 [&](const Knob& k) { return std::string(k.field) == name; });
  Config candidate = c;
  for (std::int64_t value = knob->get(c) - 1; value >= knob->min; --value) {
    knob->set(candidate, value);
    const Expected<NormalizedConfig> n = normalize(candidate);
    if (n || n.error().field != field) {
      c = candidate;
      return true;
    }
  }
  return false;
}

// Pipeline stages with an uneven first and/or last stage (transformer_block.py,
// get_num_layers_to_build): the middle stages take k layers each.
struct UnevenSplit {
  Config config;
  std::string label;  // "uneven pipeline: first stage 4, last 3 layers"
  double stage_imbalance = 0;
};

std::string uneven_split_label(int first, int last) {
  return "uneven pipeline: first stage " + std::to_string(first) +
         (last > 0 ? ", last " + std::to_string(last) : "") +
         (first == 1 && last <= 1 ? " layer" : " layers");
}

// (most - fewest layers per stage) / mean, for a split into `pp` stages.
double split_imbalance(int layers, int pp, int first, int last, int middle) {
  const int most = std::max({first, last > 0 ? last : middle, middle});
  const int fewest = std::min({first, last > 0 ? last : middle, middle});
  return static_cast<double>(most - fewest) * pp / std::max(1, layers);
}

std::vector<UnevenSplit> uneven_splits(const Config& config) {
  const int layers = config.model.num_layers;
  const int pp = config.parallel.pipeline_parallel;
  const int vpp = config.parallel.virtual_stages_per_pipeline_rank;
  std::vector<UnevenSplit> out;
  if (pp < 2 || !config.parallel.pipeline_layout.empty()) return out;
  const int even = layers / pp;
  for (int k = std::max(0, even - 1); k <= even + 1; ++k) {
    for (const int ends : {2, 1}) {  // both ends uneven, or only the first stage
      if (pp == 2 && ends == 1) continue;
      const int rest = layers - (pp - ends) * k;
      const int first = ends == 2 ? rest / 2 / vpp * vpp : rest;
      const int last = ends == 2 ? rest - first : 0;
      const bool even_split = first == k && (ends == 1 || last == k);
      if (first < 1 || (ends == 2 && last < 1) || even_split) continue;
      UnevenSplit split{config, uneven_split_label(first, last),
                        split_imbalance(layers, pp, first, last, k)};
      ParallelConfig& p = split.config.parallel;
      p.decoder_first_pipeline_num_layers = first;
      p.decoder_last_pipeline_num_layers = last;
      p.account_for_embedding_in_pipeline_split = false;
      p.account_for_loss_in_pipeline_split = false;
      out.push_back(std::move(split));
    }
  }
  return out;
}

// Errors of the layer placement (layer_placement.cpp), which an uneven split can resolve.
bool is_placement_error(const std::string& field) {
  return field == "num_layers" || field == "decoder_first_pipeline_num_layers" ||
         field == "virtual_stages_per_pipeline_rank" || field == "pipeline_model_parallel_layout";
}

// Stage texts joined by '|', a run of three or more equal ones as "(t*2|)*21" (the
// repetition pipeline_parallel_layer_layout.py expands), so that a 40-stage layout reads in a
// line.
std::string joined_stages(const std::vector<std::string>& stages) {
  std::string layout;
  for (std::size_t i = 0; i < stages.size();) {
    std::size_t run = 1;
    while (i + run + 1 < stages.size() && stages[i + run] == stages[i]) ++run;
    if (run >= 3) {
      layout += "(" + stages[i] + "|)*" + std::to_string(run);
    } else {
      for (std::size_t k = 0; k < run; ++k) {
        layout += stages[i + k] + (i + k + 1 < stages.size() ? "|" : "");
      }
    }
    i += run;
  }
  return layout;
}

// A --pipeline-model-parallel-layout spreading the layers as evenly as the stage count
// allows, the spare layers on the middle stages (the first holds the embedding, the last
// the loss): pipeline_parallel_layer_layout.py syntax, "Et*4|t*5|t*5|t*4mL".
std::string even_layout(int layers, int stages, int mtp_layers) {
  const int base = layers / stages;
  int spare = layers % stages;
  std::vector<std::string> texts;
  for (int s = 0; s < stages; ++s) {
    int count = base;
    const bool middle = s > 0 && s < stages - 1;
    if (spare > 0 && (middle || stages <= 2 || spare >= stages - s)) {
      ++count;
      --spare;
    }
    std::string text = s == 0 ? "E" : "";
    if (count > 0) text += count == 1 ? "t" : "t*" + std::to_string(count);
    if (s == stages - 1) text += std::string(static_cast<std::size_t>(mtp_layers), 'm') + "L";
    texts.push_back(std::move(text));
  }
  return joined_stages(texts);
}

// Megatron's even split with the pipeline layout string of even_layout instead.
std::optional<Config> with_even_layout(const Config& config) {
  const ParallelConfig& p = config.parallel;
  const int stages = p.pipeline_parallel * p.virtual_stages_per_pipeline_rank;
  if (p.pipeline_parallel < 2 || !p.pipeline_layout.empty() || stages > config.model.num_layers) {
    return std::nullopt;
  }
  Config out = config;
  ParallelConfig& q = out.parallel;
  q.pipeline_layout = even_layout(config.model.num_layers, stages, config.model.mtp_num_layers);
  q.decoder_first_pipeline_num_layers = 0;
  q.decoder_last_pipeline_num_layers = 0;
  q.account_for_embedding_in_pipeline_split = false;
  q.account_for_loss_in_pipeline_split = false;
  return out;
}

bool resolves_placement(const Config& c) {
  const Expected<NormalizedConfig> n = normalize(c);
  return n || !is_placement_error(n.error().field);
}

// Layers per pipeline rank, (most - fewest) / mean, of a placement normalize() accepts;
// nullopt when it does not place the layers.
std::optional<double> placed_imbalance(const Config& c) {
  const Expected<NormalizedConfig> n = normalize(c);
  if (n) return stage_imbalance(*n);
  if (is_placement_error(n.error().field)) return std::nullopt;
  return 0.0;  // placed; another rule (the batch, ...) objects, which later repairs fix
}

// A layer count the pipeline does not divide, fixed by the most even uneven split the rules
// accept, else by a layout string (keeping PP and VPP, the change the user made), before any
// parallel size is lowered. With VPP the layout also wins where it spreads the layers more
// evenly over the ranks: there an uneven split moves whole chunks (GLM-4.5-Air's 46 layers on
// PP 16 x VPP 2 split as 8 | 2 x 14 | 10 put four times the layers on the first rank); without,
// the split is the familiar flag and within a layer of the layout.
bool repair_placement(Config& c) {
  const UnevenSplit* best = nullptr;
  const std::vector<UnevenSplit> splits = uneven_splits(c);
  for (const UnevenSplit& split : splits) {
    if (!resolves_placement(split.config)) continue;
    if (best == nullptr || split.stage_imbalance < best->stage_imbalance) best = &split;
  }
  const bool interleaved = c.parallel.virtual_stages_per_pipeline_rank > 1;
  if (best != nullptr && !interleaved) {
    c = best->config;
    return true;
  }
  const std::optional<Config> layout = with_even_layout(c);
  const std::optional<double> layout_imbalance = layout ? placed_imbalance(*layout) : std::nullopt;
  if (best != nullptr) {
    const std::optional<double> split_imbalance = placed_imbalance(best->config);
    if (!layout_imbalance || (split_imbalance && *split_imbalance <= *layout_imbalance)) {
      c = best->config;
      return true;
    }
  }
  if (!layout_imbalance) return false;
  c = *layout;
  return true;
}

// A pipeline size set past what the layers fill at this VPP (DeepSeek-V3's 61 layers on PP 16
// x VPP 5: 80 virtual stages) keeps the PP the user chose and takes the largest VPP at which the
// layers place, evenly, unevenly or by a layout (issue #28 item 2: a PP step after a generated
// layout did nothing, since no PP above 8 places 61 layers at VPP 5).
bool place_with_lower_vpp(Config& c) {
  for (int vpp = c.parallel.virtual_stages_per_pipeline_rank - 1; vpp >= 1; --vpp) {
    Config candidate = c;
    candidate.parallel.virtual_stages_per_pipeline_rank = vpp;
    if (!resolves_placement(candidate) && !repair_placement(candidate)) continue;
    c = candidate;
    return true;
  }
  return false;
}

// What a change of one knob often breaks elsewhere, fixed the cheapest way: the batch, the
// GPU count (next multiple of the groups), sequence parallelism for MoE with TP, or a
// parallel size lowered until it divides what it splits.
bool repair_step(Config& c, const std::string& field) {
  if (field == "global_batch_size" || field == "microbatch_group_size_per_vp_stage") {
    return repair_batch(c);
  }
  if (field == "world_size" || field == "expert_model_parallel_size") {
    const std::int64_t step = gpu_step(c);
    const std::int64_t fixed = (c.parallel.world_size + step - 1) / step * step;
    if (fixed == c.parallel.world_size) return false;
    c.parallel.world_size = fixed;
    return true;
  }
  if (field == "sequence_parallel" && !c.parallel.sequence_parallel) {
    c.parallel.sequence_parallel = true;
    return true;
  }
  if (is_placement_error(field) && repair_placement(c)) return true;
  return lower_until_resolved(c, field);
}

std::optional<ValidConfig> repaired(Config c) {
  for (int round = 0; round < 6; ++round) {
    const Expected<NormalizedConfig> n = normalize(c);
    if (n) return ValidConfig{.config = c, .stage_imbalance = stage_imbalance(*n)};
    if (!repair_step(c, n.error().field)) break;
  }
  return std::nullopt;
}

// How much a candidate changes: the relative change of every knob, plus a fixed price for
// moving away from Megatron's even pipeline split.
double change_cost(const Config& from, const Config& to) {
  double cost = 0;
  for (const Knob& knob : knobs()) {
    const std::int64_t a = knob.get(from), b = knob.get(to);
    if (a == b) continue;
    cost += 0.1 + std::abs(std::log(static_cast<double>(b + 1) / static_cast<double>(a + 1)));
  }
  const ParallelConfig &p = from.parallel, &q = to.parallel;
  if (p.decoder_first_pipeline_num_layers != q.decoder_first_pipeline_num_layers ||
      p.decoder_last_pipeline_num_layers != q.decoder_last_pipeline_num_layers) {
    cost += 0.3;
  }
  if (p.pipeline_layout != q.pipeline_layout) cost += 0.4;
  if (p.sequence_parallel != q.sequence_parallel) cost += 0.2;
  // What is recomputed or offloaded trades memory for time; dropping one module costs less
  // than another granularity.
  const RecomputeConfig &r = from.training.recompute, &s = to.training.recompute;
  if (r.granularity != s.granularity) cost += 0.5;
  if (r.granularity == s.granularity && r.modules != s.modules) cost += 0.3;
  if (from.training.offload.offload_modules != to.training.offload.offload_modules) cost += 0.3;
  // Another GPU count is another cluster, which the user chose: every fix that keeps it
  // comes first unless it changes far more (issue #28: DeepSeek-V3 on 256 H800 was offered
  // 384 GPUs before EP 16 or PP 8, which keep 256).
  if (p.world_size != q.world_size) cost += 1.0;
  return cost;
}

// The knobs a candidate changed, as "TP 4, global batch 64".
std::string changed_knobs_label(const Config& from, const Config& to, std::string& field) {
  std::string label;
  for (const Knob& knob : knobs()) {
    if (knob.get(from) == knob.get(to)) continue;
    if (field.empty()) field = knob.field;
    label +=
        (label.empty() ? "" : ", ") + std::string(knob.label) + " " + std::to_string(knob.get(to));
  }
  return label;
}

// The uneven split or layout a repair added, as its label ("" when the placement is the one
// asked for).
std::string repaired_split_label(const Config& asked, const Config& valid) {
  const ParallelConfig &p = asked.parallel, &q = valid.parallel;
  if (p.pipeline_layout != q.pipeline_layout) return "layout " + q.pipeline_layout;
  if (p.decoder_first_pipeline_num_layers == q.decoder_first_pipeline_num_layers &&
      p.decoder_last_pipeline_num_layers == q.decoder_last_pipeline_num_layers) {
    return "";
  }
  return uneven_split_label(q.decoder_first_pipeline_num_layers,
                            q.decoder_last_pipeline_num_layers);
}

// Whether a candidate's own uneven split (one `from` does not have) was replaced by the repair,
// as a layout replaces it at VPP > 1: its label would name a split the link does not carry.
bool split_replaced(const Config& from, const Config& to, const Config& valid) {
  const ParallelConfig &p = from.parallel, &q = to.parallel, &r = valid.parallel;
  const auto same_split = [](const ParallelConfig& a, const ParallelConfig& b) {
    return a.decoder_first_pipeline_num_layers == b.decoder_first_pipeline_num_layers &&
           a.decoder_last_pipeline_num_layers == b.decoder_last_pipeline_num_layers;
  };
  return !same_split(p, q) && !same_split(q, r);
}

void add_candidate(const Config& from, Config to, std::string label, std::string field,
                   std::vector<Candidate>& out) {
  const std::optional<ValidConfig> valid = repaired(to);
  if (!valid || split_replaced(from, to, valid->config)) return;
  std::string knob_field;
  std::string knob_label = changed_knobs_label(from, valid->config, knob_field);
  const std::string split_label = repaired_split_label(to, valid->config);
  if (!split_label.empty()) knob_label += (knob_label.empty() ? "" : ", ") + split_label;
  if (label.empty()) {
    label = knob_label;
    field = knob_field;
  } else if (!knob_label.empty()) {
    label += ", " + knob_label;
  }
  if (label.empty()) return;
  // Lopsided pipeline stages cost time: an uneven split ranks by how even it is.
  out.push_back(Candidate{.suggestion = {.label = label, .field = field, .config = valid->config},
                          .cost = change_cost(from, valid->config) + 0.2 * valid->stage_imbalance});
}

}  // namespace

namespace {

// Nearest values of one knob, below and above, that give a valid configuration. Whole GPU
// counts and batches move in steps of the group they must divide by.
std::int64_t knob_step(const Knob& knob, const Config& c) {
  const std::string field = knob.field;
  if (field == "world_size") return gpu_step(c);
  if (field == "global_batch_size") {
    return std::max<std::int64_t>(1, c.training.micro_batch_size * data_parallel_of(c));
  }
  return 1;
}

void scan_knob(const Config& config, const Knob& knob, std::vector<Candidate>& out) {
  constexpr int kSteps = 48;  // normalize() is cheap; no estimate is made
  const std::int64_t current = knob.get(config);
  const std::int64_t step = knob_step(knob, config);
  for (const int direction : {-1, 1}) {
    std::int64_t value = current / step * step;
    if (direction > 0 || value == current) value += direction * step;
    // The nearest value that works; past one that needs other GPUs, on to the nearest that
    // keeps them (both are offered; the ranking puts the cluster change later).
    bool gpus_changed_offered = false;
    for (int i = 0; i < kSteps && value >= knob.min; ++i, value += direction * step) {
      Config candidate = config;
      knob.set(candidate, value);
      std::vector<Candidate> found;
      add_candidate(config, candidate, "", "", found);
      if (found.empty()) continue;
      const bool keeps_gpus =
          found[0].suggestion.config.parallel.world_size == config.parallel.world_size;
      if (!keeps_gpus && gpus_changed_offered) continue;
      out.push_back(std::move(found[0]));
      if (keeps_gpus || std::string_view(knob.field) == "world_size") break;
      gpus_changed_offered = true;
    }
  }
}

void uneven_pipeline_splits(const Config& config, std::vector<Candidate>& out) {
  for (const UnevenSplit& split : uneven_splits(config)) {
    add_candidate(config, split.config, split.label, "decoder_first_pipeline_num_layers", out);
  }
}

void pipeline_layout_string(const Config& config, std::vector<Candidate>& out) {
  const std::optional<Config> candidate = with_even_layout(config);
  if (!candidate) return;
  add_candidate(config, *candidate, "layout " + candidate->parallel.pipeline_layout,
                "pipeline_model_parallel_layout", out);
}

// MoE with TP needs sequence parallelism (moe_layer.py): switching it on is one click.
void sequence_parallel_switch(const Config& config, std::vector<Candidate>& out) {
  if (config.parallel.sequence_parallel || config.parallel.tensor_parallel < 2) return;
  Config candidate = config;
  candidate.parallel.sequence_parallel = true;
  add_candidate(config, candidate, "sequence parallel on", "sequence_parallel", out);
}

// A module the rules refuse (DeepSeek-V4's attention refuses core_attn recompute and
// qkv_linear offload: deepseek_v4_hybrid_attention.py) goes by dropping one module of the
// list, or (recompute) by no or full recompute instead; labels as the what-if table's rows.
void recompute_module_fixes(const Config& config, std::vector<Candidate>& out) {
  const RecomputeConfig& r = config.training.recompute;
  // transformer_config.py: selective recompute without modules recomputes core_attn.
  const RecomputeModules listed =
      r.modules.empty() ? RecomputeModules{RecomputeModule::core_attn} : r.modules;
  for (const RecomputeModule module : listed.members()) {
    const RecomputeModules rest = listed - RecomputeModules{module};
    if (rest.empty()) continue;
    Config candidate = config;
    candidate.training.recompute.modules = rest;
    add_candidate(config, candidate, "selective: " + join_module_names(rest, ", "),
                  "recompute_modules", out);
  }
  Config none = config;
  none.training.recompute = RecomputeConfig{};
  add_candidate(config, none, "recompute: none", "recompute_modules", out);
  Config full = none;
  full.training.recompute.granularity = RecomputeGranularity::full;  // uniform, 1 layer
  add_candidate(config, full, "full, uniform, 1 layer per group", "recompute_modules", out);
}

void offload_module_fixes(const Config& config, std::vector<Candidate>& out) {
  const OffloadModules listed = config.training.offload.offload_modules;
  for (const OffloadModule module : listed.members()) {
    const OffloadModules rest = listed - OffloadModules{module};
    Config candidate = config;
    candidate.training.offload.offload_modules = rest;
    candidate.training.offload.fine_grained_activation_offloading = !rest.empty();
    add_candidate(config, candidate,
                  rest.empty() ? std::string("activation offload off")
                               : "activation offload: " + join_module_names(rest, ", "),
                  "offload_modules", out);
  }
}

// Whether two suggestions run the same configuration: two fixes the repair made into one.
bool same_configuration(const Config& a, const Config& b) {
  for (const Knob& knob : knobs()) {
    if (knob.get(a) != knob.get(b)) return false;
  }
  const ParallelConfig &p = a.parallel, &q = b.parallel;
  const RecomputeConfig &r = a.training.recompute, &t = b.training.recompute;
  return p.decoder_first_pipeline_num_layers == q.decoder_first_pipeline_num_layers &&
         p.decoder_last_pipeline_num_layers == q.decoder_last_pipeline_num_layers &&
         p.pipeline_layout == q.pipeline_layout && p.sequence_parallel == q.sequence_parallel &&
         r.granularity == t.granularity && r.method == t.method && r.num_layers == t.num_layers &&
         r.modules == t.modules &&
         a.training.offload.offload_modules == b.training.offload.offload_modules;
}

// Whether `more` is `fewer` plus changes of other knobs: "GPUs 512, micro-batch 2" after
// "GPUs 512" (a scanned knob whose value the repair did not need).
bool adds_only_idle_changes(const Config& from, const Config& fewer, const Config& more) {
  bool extra = false;
  for (const Knob& knob : knobs()) {
    const std::int64_t original = knob.get(from), a = knob.get(fewer), b = knob.get(more);
    if (a == b) continue;
    if (a != original) return false;  // `fewer` changed it another way
    extra = true;
  }
  const ParallelConfig &p = fewer.parallel, &q = more.parallel;
  return extra && p.decoder_first_pipeline_num_layers == q.decoder_first_pipeline_num_layers &&
         p.decoder_last_pipeline_num_layers == q.decoder_last_pipeline_num_layers &&
         p.pipeline_layout == q.pipeline_layout && p.sequence_parallel == q.sequence_parallel;
}

}  // namespace

std::vector<Suggestion> suggest_valid_configs(const Config& config, std::size_t max_count) {
  const Expected<NormalizedConfig> normalized = normalize(config);
  if (normalized) return {};
  std::vector<Candidate> candidates;
  for (const Knob& knob : knobs()) scan_knob(config, knob, candidates);
  if (is_placement_error(normalized.error().field)) {
    uneven_pipeline_splits(config, candidates);
    pipeline_layout_string(config, candidates);
  }
  sequence_parallel_switch(config, candidates);
  if (normalized.error().field == "recompute_modules") recompute_module_fixes(config, candidates);
  if (normalized.error().field == "offload_modules") offload_module_fixes(config, candidates);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.cost < b.cost; });
  // At most three per field, so one kind of fix does not crowd out the others.
  constexpr std::ptrdiff_t kPerField = 3;
  std::vector<Suggestion> out;
  for (Candidate& candidate : candidates) {
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Suggestion& s) {
      return s.label == candidate.suggestion.label ||
             same_configuration(s.config, candidate.suggestion.config) ||
             adds_only_idle_changes(config, s.config, candidate.suggestion.config);
    });
    const std::ptrdiff_t same_field =
        std::count_if(out.begin(), out.end(),
                      [&](const Suggestion& s) { return s.field == candidate.suggestion.field; });
    if (seen || same_field >= kPerField) continue;
    out.push_back(std::move(candidate.suggestion));
    if (out.size() == max_count) break;
  }
  return out;
}

namespace {

// The first suggestion that runs on the same GPUs.
std::optional<Suggestion> same_gpus_suggestion(const Config& config) {
  constexpr std::size_t kEnough = 32;  // every kind of fix, before the GPU-count ones are dropped
  for (Suggestion& s : suggest_valid_configs(config, kEnough)) {
    if (s.config.parallel.world_size == config.parallel.world_size) return std::move(s);
  }
  return std::nullopt;
}

// After a PP or VPP edit whose layers no longer place: the same size, the layers placed
// unevenly or by a layout, or (PP) at a lower VPP: size_fit's repair, so that a -/+ step lands
// where its tooltip said.
std::optional<Suggestion> with_pipeline_size_kept(const Config& config, std::string_view kept,
                                                  const std::string& error_field) {
  const bool pp = kept == "pipeline_model_parallel_size";
  if ((!pp && kept != "virtual_stages_per_pipeline_rank") || !is_placement_error(error_field)) {
    return std::nullopt;
  }
  Config placed = config;
  if (!repair_placement(placed) && !(pp && place_with_lower_vpp(placed))) return std::nullopt;
  const std::optional<ValidConfig> valid = repaired(placed);
  const auto size = [pp](const Config& c) {
    return pp ? c.parallel.pipeline_parallel : c.parallel.virtual_stages_per_pipeline_rank;
  };
  if (!valid || size(valid->config) != size(config)) return std::nullopt;
  Suggestion same{.label = "", .field = "", .config = valid->config};
  same.label = changed_knobs_label(config, same.config, same.field);
  const std::string split = repaired_split_label(config, same.config);
  if (!split.empty()) same.label += (same.label.empty() ? "" : ", ") + split;
  if (same.field.empty()) same.field = "pipeline_model_parallel_layout";
  return same;
}

// Megatron's defaults for the layout (arguments.py): one of every parallel size, Megatron's
// even pipeline split.
Config plainest_layout(const Config& config) {
  Config c = config;
  ParallelConfig& p = c.parallel;
  p.tensor_parallel = p.pipeline_parallel = p.context_parallel = p.expert_parallel = 1;
  p.expert_tensor_parallel = 0;
  p.virtual_stages_per_pipeline_rank = 1;
  p.sequence_parallel = false;
  p.pipeline_layout.clear();
  p.decoder_first_pipeline_num_layers = p.decoder_last_pipeline_num_layers = 0;
  p.account_for_embedding_in_pipeline_split = p.account_for_loss_in_pipeline_split = false;
  p.microbatch_group_size_per_vp_stage = 0;
  return c;
}

}  // namespace

Expected<Suggestion> valid_layout_for(const Config& config, std::string_view kept_size) {
  const Expected<NormalizedConfig> normalized = normalize(config);
  if (normalized) return Suggestion{.label = "", .field = "", .config = config};
  if (std::optional<Suggestion> same =
          with_pipeline_size_kept(config, kept_size, normalized.error().field)) {
    return std::move(*same);
  }
  if (std::optional<Suggestion> near = same_gpus_suggestion(config)) return std::move(*near);
  Config plain = plainest_layout(config);
  repair_batch(plain);
  std::string field;
  const std::string label = changed_knobs_label(config, plain, field);
  if (normalize(plain)) {
    return Suggestion{.label = "plainest layout: " + label, .field = field, .config = plain};
  }
  if (std::optional<Suggestion> near = same_gpus_suggestion(plain)) {
    near->label = "plainest layout: " + changed_knobs_label(config, near->config, field);
    return std::move(*near);
  }
  return normalized.error();
}

namespace {

constexpr const char* kParallelSizes[] = {
    "tensor_model_parallel_size",       "pipeline_model_parallel_size",
    "virtual_stages_per_pipeline_rank", "context_parallel_size",
    "expert_model_parallel_size",       "expert_tensor_parallel_size"};

const Knob* parallel_size_knob(std::string_view field) {
  if (std::find(std::begin(kParallelSizes), std::end(kParallelSizes), field) ==
      std::end(kParallelSizes)) {
    return nullptr;
  }
  const auto knob =
      std::find_if(knobs().begin(), knobs().end(), [&](const Knob& k) { return field == k.field; });
  return knob == knobs().end() ? nullptr : &*knob;
}

enum class SizeFit { valid, rules_hold, broken };

// Whether the size's value is the cause of `error_field`: the size itself, a size it must
// divide (knob_to_lower), a GPU count its group does not divide, or (PP, VPP) a layer
// placement that does not fit the stages.
bool caused_by(const Config& c, const Knob& knob, const std::string& error_field) {
  const std::string_view name = knob.field;
  if (error_field == name) return true;
  if (is_placement_error(error_field) &&
      (name == "pipeline_model_parallel_size" || name == "virtual_stages_per_pipeline_rank")) {
    return true;
  }
  if (error_field == "world_size") {
    return name != "virtual_stages_per_pipeline_rank";
  }
  const char* lowered = knob_to_lower(c, error_field);
  return lowered != nullptr && std::string_view(lowered) == knob.field;
}

// A layout is valid when normalize() accepts it once the batch and --sequence-parallel that
// the new size breaks are fixed (repair_step's cheap fixes, which never touch a size).
SizeFit size_fit(Config c, const Knob& knob) {
  const std::int64_t value = knob.get(c);
  Expected<NormalizedConfig> n = normalize(c);
  const bool rules_hold = n || !caused_by(c, knob, n.error().field);
  // Megatron's even split (no layout, no uneven stage given) that no longer divides is
  // fixed by an uneven one, as front ends do after a PP or VPP step (keep_layout_valid).
  const bool even_split = c.parallel.pipeline_layout.empty() &&
                          c.parallel.decoder_first_pipeline_num_layers == 0 &&
                          c.parallel.decoder_last_pipeline_num_layers == 0;
  const bool pipeline = std::string_view(knob.field) == "pipeline_model_parallel_size";
  for (int round = 0; round < 3 && !n; ++round) {
    const std::string& field = n.error().field;
    const bool placement = even_split && is_placement_error(field);
    const bool cheap = field == "global_batch_size" ||
                       field == "microbatch_group_size_per_vp_stage" ||
                       field == "sequence_parallel" || placement;
    // A PP step keeps its PP: its layers place at a lower VPP, never at a lower PP
    // (valid_layout_for with the PP kept, as the page applies the step).
    const bool repaired = placement && pipeline ? repair_placement(c) || place_with_lower_vpp(c)
                                                : cheap && repair_step(c, field);
    if (!repaired) break;
    n = normalize(c);
  }
  // A repair that moved the stepped size back (a VPP lowered again) is not this step.
  if (n && knob.get(c) == value) return SizeFit::valid;
  return rules_hold ? SizeFit::rules_hold : SizeFit::broken;
}

}  // namespace

std::optional<std::int64_t> step_parallel_size(const Config& config, std::string_view field,
                                               int direction) {
  const Knob* knob = parallel_size_knob(field);
  if (knob == nullptr || direction == 0) return std::nullopt;
  const bool vpp = field == "virtual_stages_per_pipeline_rank";
  const std::int64_t limit = std::max<std::int64_t>(
      1, vpp ? std::int64_t{config.model.num_layers} : config.parallel.world_size);
  std::int64_t value = knob->get(config);
  if (value == 0 && field == "expert_tensor_parallel_size") value = config.parallel.tensor_parallel;
  constexpr int kMaxSteps = 1024;  // normalize() is microseconds; a click waits for no more
  const std::int64_t step = direction > 0 ? 1 : -1;
  std::optional<std::int64_t> rules_hold;
  value += step;
  for (int i = 0; i < kMaxSteps && value >= knob->min && value <= limit; ++i, value += step) {
    Config candidate = config;
    knob->set(candidate, value);
    const SizeFit fit = size_fit(candidate, *knob);
    if (fit == SizeFit::valid) return value;
    if (fit == SizeFit::rules_hold && !rules_hold) rules_hold = value;
  }
  return rules_hold;
}

}  // namespace megamem
