// The layer module specs, in Megatron's registration order within a transformer layer
// (transformer_layer.py: input norm and attention, then pre-MLP norm and MLP or MoE). A new
// module is one file in core/src/modules/ plus one line here.
#include "module_spec.hpp"

#define MEGAMEM_LAYER_MODULES(X)   \
  X(kFalconH1LayerSpec)            \
  X(kGqaAttentionSpec)             \
  X(kMlaAttentionSpec)             \
  X(kDsaAttentionSpec)             \
  X(kDsv4AttentionSpec)            \
  X(kAttentionSinksSpec)           \
  X(kPostAttentionNormSpec)        \
  X(kDenseMlpSpec)                 \
  X(kPostMlpNormSpec)              \
  X(kTorchRmsNormAttentionSpec)    \
  X(kTorchRmsNormMlpSpec)          \
  X(kPerLayerInputSpec)            \
  X(kMoeRouterSpec)                \
  X(kRoutedExpertsSpec)            \
  X(kSharedExpertsSpec)            \
  X(kGemma4VNormSpec)              \
  X(kGemma4MoeSpec)                \
  X(kAttentionHyperConnectionSpec) \
  X(kMlpHyperConnectionSpec)       \
  X(kMambaMixerSpec)               \
  X(kGatedDeltaNetSpec)            \
  X(kKimiDeltaAttentionSpec)       \
  X(kAttentionResidualsSpec)

namespace megamem {

#define MEGAMEM_DECLARE(spec) extern const LayerModuleSpec spec;
MEGAMEM_LAYER_MODULES(MEGAMEM_DECLARE)
#undef MEGAMEM_DECLARE

std::span<const LayerModuleSpec* const> layer_module_specs() {
#define MEGAMEM_ENTRY(spec) &spec,
  static constexpr const LayerModuleSpec* kSpecs[] = {MEGAMEM_LAYER_MODULES(MEGAMEM_ENTRY)};
#undef MEGAMEM_ENTRY
  return kSpecs;
}

}  // namespace megamem
