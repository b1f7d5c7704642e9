// Colours and style shared by every panel (docs: shared design ui.md, "One vocabulary").
#pragma once

#include "imgui.h"

namespace megamem::web {

// Category colours, sRGB, the same in the CLI legend, the docs and every chart.
inline constexpr ImU32 rgb(unsigned hex) {
  return IM_COL32((hex >> 16) & 0xFF, (hex >> 8) & 0xFF, hex & 0xFF, 0xFF);
}
inline constexpr ImU32 kWeightsColor = rgb(0x4C78A8);
inline constexpr ImU32 kGradientsColor = rgb(0x72B7B2);
inline constexpr ImU32 kOptimizerColor = rgb(0x54A24B);
inline constexpr ImU32 kErrorColor = rgb(0xE45756);
inline constexpr ImU32 kMutedTextColor = rgb(0x9D9DA0);

// Dark theme, sizes scaled for the device pixel ratio.
void apply_theme(float content_scale);

}  // namespace megamem::web
