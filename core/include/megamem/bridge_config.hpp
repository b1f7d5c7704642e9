// Megatron-Bridge configurations <-> Config.
//
// Megatron-Bridge (NVIDIA-NeMo/Megatron-Bridge) trains from a ConfigContainer
// (src/megatron/bridge/training/config.py) whose to_yaml() is saved as run_config.yaml beside
// each checkpoint and printed in the log ("------- Task Configuration -------"). Its sections
// that change memory are read:
//   model            the model provider (models/gpt_provider.py GPTModelProvider: Megatron-Core's
//                    TransformerConfig fields, parallel sizes, recompute and offload fields)
//   train            micro_batch_size, global_batch_size
//   ddp, optimizer   the distributed optimizer, gradient buffers, optimizer state precision
//   dataset          sequence_length
//   mixed_precision  a recipe name (training/mixed_precision.py: bf16_mixed,
//                    bf16_with_fp8_current_scaling_mixed, ...) or its fields; they override the
//                    model's, optimizer's and DDP's fields of the same name, as setup() does
//   comm_overlap     tp_comm_overlap (not modeled: a warning)
// The other sections (checkpoint, logger, scheduler, tokenizer, rng, ...) do not change memory.
// Fields are mapped to Megatron-LM arguments and read by parse_megatron_args(), so a Bridge
// configuration and the Megatron flags of the same run give the same Config. The world size is
// not part of a ConfigContainer (the launcher sets it) and is passed in.
//
// The YAML text itself is parsed by bridge_yaml.hpp (yaml-cpp) into a BridgeNode tree; Bridge's
// command-line overrides ("model.tensor_model_parallel_size=4 train.micro_batch_size=2", Hydra
// style, what recipes take) are parsed here into the same tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/expected.hpp"
#include "megamem/megatron_args.hpp"

namespace megamem {

// A YAML value: null, a scalar (its text; `quoted` when it was a quoted string), a sequence
// or a mapping (in file order).
struct BridgeEntry;

struct BridgeNode {
  enum class Kind { null, scalar, sequence, map };
  Kind kind = Kind::null;
  std::string scalar;
  bool quoted = false;
  std::vector<BridgeNode> items;
  std::vector<BridgeEntry> entries;  // a mapping's keys and values, in file order
  std::size_t line = 0;              // 1-based, 0 = not from a file
};

struct BridgeEntry {
  std::string key;
  BridgeNode value;
};

inline BridgeNode bridge_node(BridgeNode::Kind kind, std::size_t line = 0) {
  BridgeNode node;
  node.kind = kind;
  node.line = line;
  return node;
}

inline BridgeNode bridge_scalar(std::string text, bool quoted, std::size_t line = 0) {
  BridgeNode node = bridge_node(BridgeNode::Kind::scalar, line);
  node.scalar = std::move(text);
  node.quoted = quoted;
  return node;
}

struct BridgeImport {
  MegatronArgs args;                  // the Config, and the flags it was read as
  std::string megatron_flags;         // the equivalent Megatron-LM flags
  std::vector<std::string> warnings;  // unknown keys, fields megamem does not model
};

// A ConfigContainer (as a BridgeNode map) -> Config. Errors name the key ("model.num_layers")
// and its line.
Expected<BridgeImport> import_bridge_config(const BridgeNode& root, std::int64_t world_size);

// "model.tensor_model_parallel_size=4 train.micro_batch_size=2 mixed_precision=bf16_mixed"
// (whitespace-separated key=value; values as YAML scalars, [a,b] lists) -> the same tree.
Expected<BridgeNode> parse_bridge_overrides(std::string_view overrides);

// The configuration as Bridge overrides that reproduce its memory-relevant fields on any GPT
// recipe (every field written, defaults included, so the recipe's own values do not leak in).
std::string to_bridge_overrides(const Config& config);

}  // namespace megamem
