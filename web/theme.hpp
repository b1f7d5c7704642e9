// Colours, fonts and style shared by every panel (shared design ui.md, "One vocabulary").
#pragma once

#include <cstdint>

#include "fonts.hpp"  // large_font()
#include "imgui.h"
#include "megamem/estimate.hpp"

namespace megamem::web {

// Category colours, sRGB, the same in the CLI legend, the docs and every chart.
inline constexpr ImU32 rgb(unsigned hex) {
  return IM_COL32((hex >> 16) & 0xFF, (hex >> 8) & 0xFF, hex & 0xFF, 0xFF);
}
inline constexpr ImU32 kWeightsColor = rgb(0x4C78A8);
inline constexpr ImU32 kGradientsColor = rgb(0x72B7B2);
inline constexpr ImU32 kOptimizerColor = rgb(0x54A24B);
inline constexpr ImU32 kBuffersColor = rgb(0xB279A2);  // persistent buffers (same palette)
inline constexpr ImU32 kActivationsColor = rgb(0xF58518);
inline constexpr ImU32 kTransientsColor = rgb(0xE45756);
inline constexpr ImU32 kRuntimeColor = rgb(0x9D9DA0);

// Verdict colours: fits, within 5 % of capacity, over.
inline constexpr ImU32 kFitsColor = rgb(0x54A24B);
inline constexpr ImU32 kTightColor = rgb(0xEECA3B);
inline constexpr ImU32 kOverColor = rgb(0xE45756);
inline constexpr ImU32 kErrorColor = rgb(0xE45756);

// One memory category of a rank, in the order every view stacks them (bottom to top).
struct Category {
  const char* name;      // "weights"
  const char* json_key;  // "weight_bytes"
  const char* rule;      // how the core computes it, one line
  ImU32 color;
  std::uint64_t RankMemory::*bytes;
};
inline constexpr Category kCategories[] = {
    {"weights", "weight_bytes",
     "parameters this GPU holds: bf16/fp16 copies (fp32 without --bf16), FP8 GEMM weights with "
     "--fp8-param-gather",
     kWeightsColor, &RankMemory::weight_bytes},
    {"gradients", "gradient_bytes",
     "the DDP main-grad buffer: fp32 per parameter unless reduced in bf16, padded as Megatron "
     "pads its buckets",
     kGradientsColor, &RankMemory::gradient_bytes},
    {"optimizer", "optimizer_bytes",
     "master weights and Adam moments; sharded over data parallel by the distributed "
     "optimizer, less what is offloaded to the CPU",
     kOptimizerColor, &RankMemory::optimizer_bytes},
    {"buffers", "persistent_buffer_bytes",
     "persistent buffers: cuBLAS workspaces, Megatron's global memory buffer, expert-bias "
     "buffers, RNG states",
     kBuffersColor, &RankMemory::persistent_buffer_bytes},
    {"activations", "activation_peak_bytes",
     "tensors saved for backward by every in-flight micro-batch at the step's worst moment",
     kActivationsColor, &RankMemory::activation_peak_bytes},
    {"transients", "transient_bytes",
     "what the worst operation adds on top: logits and loss, dispatch copies, recompute "
     "working set, activation gradients",
     kTransientsColor, &RankMemory::transient_bytes},
    {"runtime", "runtime_overhead_bytes",
     "the caching allocator's reserve above its peak, and memory outside the allocator: CUDA "
     "context, NCCL communicators, DeepEP/HybridEP buffers (settings under RUNTIME OVERHEADS)",
     kRuntimeColor, &RankMemory::runtime_overhead_bytes},
};

// The borderline amber, darker on the light theme so it stays readable on white.
ImU32 tight_color();

// A verdict's colour (green, amber, red) and its word (untranslated; callers tr() it), the same
// in the top bar, the rank bars and the what-if table.
ImU32 fit_status_color(FitStatus status);
const char* fit_status_word(FitStatus status);

// The ring around the control that has the keyboard (tab_order.cpp): bright on the dark
// panel, dark on the light one, and apart from the buttons' blue fill in both.
ImU32 focus_ring_color();

// Text colours of the current theme.
ImU32 muted_text_color();
ImU32 strong_text_color();
ImU32 panel_background_color();

// Builds the style for the theme at a device pixel ratio (sizes scale with it; the fonts
// follow the ratio in update_fonts(), fonts.hpp).
void apply_theme(bool light, float pixel_ratio);

// True when the current theme is light.
bool light_theme();

}  // namespace megamem::web
