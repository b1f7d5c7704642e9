// Nearest valid configurations for one that normalize() refuses.
//
// suggest_valid_configs() changes only how the model is run, never what it is (layers,
// hidden size, heads, experts and every other ModelConfig field stay): parallel sizes, the
// GPU count, the batch, an uneven first/last pipeline stage
// (--decoder-first/last-pipeline-num-layers) or a --pipeline-model-parallel-layout string,
// recompute/offload layer counts. Every suggestion returned normalizes; they come ordered by
// how little they change (the relative change of each knob touched).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/expected.hpp"

namespace megamem {

struct Suggestion {
  std::string label;  // "PP 8", "uneven pipeline: first stage 4 layers, last 3"
  std::string field;  // the Megatron field it changes first ("pipeline_model_parallel_size")
  Config config;      // the whole configuration with the change applied
};

// Empty when config is already valid or nothing near it is.
std::vector<Suggestion> suggest_valid_configs(const Config& config, std::size_t max_count = 8);

// A valid way to run `config` on its GPUs, for a front end whose user just picked a model, a
// GPU or a GPU count: `config` itself when it normalizes; else the cheapest suggestion that
// keeps the model, the device and the GPU count (what still applies stays); else Megatron's
// plainest layout on those GPUs (TP = PP = CP = EP = 1, no VPP, no uneven stages) with the
// batch made to divide. The label says what changed ("" when nothing did). Error when even
// the plainest layout is invalid (then the model cannot run on these GPUs as configured).
// `kept_size`: PP or VPP just set by the user (as Error::field names it), kept where a valid
// placement of the layers keeps it: uneven stages or a layout, and for PP a lower VPP when the
// layers no longer fill this one (the layout step_parallel_size's PP and VPP steps land on).
Expected<Suggestion> valid_layout_for(const Config& config, std::string_view kept_size = {});

// The next value of a parallel size for a front end's -/+ buttons, so that a step never lands
// on a size nothing divides (TP 9): `field` is TP, PP, VPP, CP, EP or ETP as Error::field names
// it ("tensor_model_parallel_size"), `direction` +1 or -1. The nearest value whose layout is
// valid (the global batch, --sequence-parallel, or for Megatron's even pipeline split an uneven
// one, may still want the fix normalize() names);
// when none is, the nearest at which the size's own rules hold (what it must divide, the GPU
// count); nullopt when neither exists within the GPU count (VPP: the layer count) or the field
// is not a parallel size. ETP 0 (= TP) steps from TP's value.
std::optional<std::int64_t> step_parallel_size(const Config& config, std::string_view field,
                                               int direction);

}  // namespace megamem
