// Estimates, the deferred what-if table and the nearest valid values; see calculation.hpp.
#include "calculation.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "megamem/estimate.hpp"
#include "megamem/what_if.hpp"
#include "platform.hpp"

namespace megamem::web {
namespace {

// A whole-number knob the suggestions may change, by its share-link key.
struct Knob {
  const char* key;
  const char* label;
  std::int64_t (*get)(const Config&);
  void (*set)(Config&, std::int64_t);
  std::int64_t min;
};

#define MM_KNOB(key, label, path, min)                                                    \
  Knob {                                                                                  \
    key, label, [](const Config& c) -> std::int64_t { return c.path; },                   \
        [](Config& c, std::int64_t v) { c.path = static_cast<decltype(c.path)>(v); }, min \
  }

const std::vector<Knob>& knobs() {
  static const std::vector<Knob> table = {
      MM_KNOB("tp", "TP", parallel.tensor_parallel, 1),
      MM_KNOB("pp", "PP", parallel.pipeline_parallel, 1),
      MM_KNOB("vpp", "VPP", parallel.virtual_stages_per_pipeline_rank, 1),
      MM_KNOB("cp", "CP", parallel.context_parallel, 1),
      MM_KNOB("ep", "EP", parallel.expert_parallel, 1),
      MM_KNOB("etp", "ETP", parallel.expert_tensor_parallel, 1),
      MM_KNOB("gpus", "GPUs", parallel.world_size, 1),
      MM_KNOB("mbs", "micro-batch", training.micro_batch_size, 1),
      MM_KNOB("gbs", "global batch", training.global_batch_size, 1),
      MM_KNOB("seq", "sequence", training.seq_length, 1),
      MM_KNOB("m.layers", "layers", model.num_layers, 1),
      MM_KNOB("m.heads", "heads", model.num_attention_heads, 1),
      MM_KNOB("m.groups", "query groups", model.num_query_groups, 1),
      MM_KNOB("pp-first", "first-stage layers", parallel.decoder_first_pipeline_num_layers, 0),
      MM_KNOB("pp-last", "last-stage layers", parallel.decoder_last_pipeline_num_layers, 0),
      MM_KNOB("recompute-layers", "recompute layers", training.recompute.num_layers, 1),
      MM_KNOB("cpu-offload-layers", "offloaded layers", training.offload.cpu_offloading_num_layers,
              0),
      MM_KNOB("dist-opt-instances", "optimizer instances",
              parallel.num_distributed_optimizer_instances, 1),
  };
  return table;
}
#undef MM_KNOB

const Knob* find_knob(const std::string& key) {
  for (const Knob& knob : knobs()) {
    if (key == knob.key) return &knob;
  }
  return nullptr;
}

// The knobs that can resolve an error naming `field` (the core's field names).
std::vector<std::string> knobs_for_field(const std::string& field) {
  if (field == "num_attention_heads" || field == "num_query_groups" || field == "ffn_hidden_size" ||
      field == "tensor_model_parallel_size") {
    return {"tp"};
  }
  if (field == "world_size") return {"gpus", "tp", "pp", "cp"};
  if (field == "pipeline_model_parallel_size") return {"pp"};
  if (field == "context_parallel_size") return {"cp"};
  if (field == "expert_model_parallel_size" || field == "num_experts") return {"ep", "etp"};
  if (field == "expert_tensor_parallel_size") return {"etp"};
  if (field == "num_layers" || field == "decoder_first_pipeline_num_layers") {
    return {"pp", "m.layers", "pp-first", "pp-last"};
  }
  if (field == "virtual_stages_per_pipeline_rank") return {"vpp", "gbs"};
  if (field == "global_batch_size" || field == "microbatch_group_size_per_vp_stage") {
    return {"gbs", "mbs"};
  }
  if (field == "micro_batch_size") return {"mbs"};
  if (field == "seq_length") return {"seq", "cp"};
  if (field == "cpu_offloading_num_layers") return {"cpu-offload-layers"};
  if (field == "num_distributed_optimizer_instances") return {"dist-opt-instances"};
  return {};
}

// How far to search from the current value: whole-GPU counts and batch sizes move in large
// steps, so they get a wider window (normalize() is cheap: no estimate is made).
std::int64_t search_window(const Knob& knob, std::int64_t current) {
  const std::string key = knob.key;
  if (key == "gpus" || key == "gbs") return std::max<std::int64_t>(4096, current);
  return std::max<std::int64_t>(256, current);
}

}  // namespace

void recompute(AppState& state, double now_s) {
  ++state.estimates_computed;
  state.changed_at_s = now_s;
  // What-if is its own call, deferred: finish_what_if().
  Expected<Estimate> result = estimate(state.shared.config);
  state.estimate_ms = (now_seconds() - now_s) * 1000.0;
  if (result) {
    state.last_estimate = std::move(result).value();
    state.estimated = state.shared;
    state.what_if.clear();
    state.what_if_pending = true;
    state.error.reset();
    state.suggestions.clear();
    ++state.result_version;
  } else {
    state.error = result.error();
    state.suggestions = nearest_valid_values(state.shared.config, *state.error, state.edited_key);
  }
}

void finish_what_if(AppState& state) {
  if (!state.what_if_pending || !state.last_estimate) return;
  state.what_if_pending = false;
  const double started_s = now_seconds();
  state.what_if = what_if_options(state.estimated.config);
  state.last_estimate->what_if.assign(state.what_if.begin(), state.what_if.end());
  state.what_if_ms = (now_seconds() - started_s) * 1000.0;
  ++state.result_version;
}

std::vector<Suggestion> nearest_valid_values(const Config& config, const Error& error,
                                             const std::string& edited_key) {
  std::vector<std::string> keys;
  if (find_knob(edited_key)) keys.push_back(edited_key);
  for (const std::string& key : knobs_for_field(error.field)) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::vector<Suggestion> out;
  for (const std::string& key : keys) {
    const Knob* knob = find_knob(key);
    if (!knob) continue;
    const std::int64_t current = knob->get(config);
    const std::int64_t window = search_window(*knob, current);
    Config candidate = config;
    // A value resolves the error when the core accepts the layout, or objects to something
    // else (which is then explained in turn, with its own suggestions).
    const auto try_value = [&](std::int64_t value) {
      knob->set(candidate, value);
      const Expected<NormalizedConfig> normalized = normalize(candidate);
      return normalized.has_value() || normalized.error().field != error.field;
    };
    std::vector<std::int64_t> found;
    for (std::int64_t d = 1; d <= window && current - d >= knob->min; ++d) {
      if (try_value(current - d)) {
        found.push_back(current - d);
        break;
      }
    }
    for (std::int64_t d = 1; d <= window; ++d) {
      if (try_value(current + d)) {
        found.push_back(current + d);
        break;
      }
    }
    for (const std::int64_t value : found) {
      Suggestion suggestion;
      suggestion.key = key;
      suggestion.label = std::string(knob->label) + " " + std::to_string(value);
      suggestion.config = config;
      knob->set(suggestion.config, value);
      out.push_back(std::move(suggestion));
    }
    if (out.size() >= 6) break;
  }
  return out;
}

}  // namespace megamem::web
