// What an imported configuration sets and what it keeps: the one merge policy of the CLI and
// the page, per import kind. Which fields an import owns comes from the field registry
// (fields.hpp): a row's group and its Megatron spelling.
#pragma once

#include <string_view>

#include "megamem/config.hpp"
#include "megamem/fields.hpp"
#include "megamem/share_link.hpp"

namespace megamem {

// A Hugging Face config.json describes the architecture only: every model field comes from
// it, and the layout, training, optimizer, runtime and GPU stay as they are. Presets are
// re-detected as for flags; an unnamed model that matches no preset is called `fallback_name`.
SharedConfig merge_hf_model(const SharedConfig& current, const ModelConfig& imported,
                            std::string_view fallback_name);

// Megatron flags set everything they can say (model, layout, training, optimizer; an absent
// flag means Megatron's default) and the world size they were parsed for. They keep what no
// flag says: the GPU, the runtime overheads and the environment (megatron_flags_cannot_say),
// and for a dense model the MoE-only settings, which its flags leave out (ConfigField::moe_only).
// Both presets are re-detected (the GPU keeps its preset, if it had one: the device stays).
SharedConfig merge_megatron_flags(const SharedConfig& current, const Config& parsed);

// True for a field a Megatron command line cannot say: the device and runtime groups, whether
// flash-attn is installed (the environment) and the MoE imbalance factor (megamem's knob).
bool megatron_flags_cannot_say(const ConfigField& field);

}  // namespace megamem
