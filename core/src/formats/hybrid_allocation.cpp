// A hybrid layer pattern from ratios; see hybrid_allocation.hpp.
#include "formats/hybrid_allocation.hpp"

#include <cmath>
#include <cstddef>

namespace megamem::formats {
namespace {

// Turns `count` of the Mamba layers into `symbol`, evenly spaced among the `mamba` Mamba
// layers there are (the allocators' shared loop: x starts at the gap, a layer is taken when
// x < 0.5). Python's round() rounds halves to even, as nearbyint does.
void spread(std::string& pattern, double mamba, double count, char symbol) {
  const double ratio = (mamba - count) / count;
  double x = ratio;
  for (char& layer : pattern) {
    if (layer != 'M') continue;
    if (x < 0.5) {
      layer = symbol;
      x += ratio;
    } else {
      x -= 1;
    }
  }
}

}  // namespace

std::string pattern_from_ratios(int layers, double attention_ratio, double mlp_ratio,
                                double parallel_ratio) {
  std::string out(static_cast<std::size_t>(layers), 'M');
  const double attention = std::nearbyint(layers * attention_ratio);
  const double mamba = layers - attention;
  // Attention: mamba / (attention + 1) Mamba layers between two attention layers.
  const double section = mamba / (attention + 1);
  double x = section;
  for (char& symbol : out) {
    if (x < 0.5) {
      symbol = '*';
      x += section;
    } else {
      x -= 1;
    }
  }
  const double mlp = std::nearbyint(layers * mlp_ratio);
  if (mlp > 0) spread(out, mamba, mlp, '-');
  // mamba_hybrid_layer_allocation.py _allocate_auto: the parallel layers take the remaining
  // Mamba layers, all of them when there are no more than it asks for.
  const double parallel = std::nearbyint(layers * parallel_ratio);
  double remaining = 0;
  for (const char symbol : out) remaining += symbol == 'M' ? 1 : 0;
  if (parallel <= 0 || remaining <= 0) return out;
  if (parallel >= remaining) {
    for (char& symbol : out) symbol = symbol == 'M' ? 'P' : symbol;
    return out;
  }
  spread(out, remaining, parallel, 'P');
  return out;
}

}  // namespace megamem::formats
