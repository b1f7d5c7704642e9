// The options that say which configuration a command is about, shared by `megamem estimate`
// and `megamem url encode`:
//
//   where it starts (at most one):  --recipe ID | --url LINK | --megatron-args "FLAGS"
//   the model:                      --preset ID | --hf-config FILE   (replace the model)
//   the hardware:                   --gpu ID, --gpus N (alias --world-size N)
//   changes, as share-link keys:    --tp --pp --vpp --cp --ep --etp --mbs --gbs --seq
//                                   --recompute --recompute-method --recompute-layers
//                                   --dtype --fp8 --dist-opt/--no-dist-opt --sp/--no-sp
//                                   --set "key=value&key=value" (any docs/share-links.md key)
//   --vocab-size V                  the tokenizer's vocabulary (Megatron flags naming a
//                                   tokenizer file, or any model)
//
// Without a starting point the configuration is share_link_defaults(). Files are read here;
// everything else is the core's share-link and import code.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "megamem/expected.hpp"
#include "megamem/share_link.hpp"

namespace megamem::cli {

// Option names (value-taking and switches) that config_from_options() reads.
const std::set<std::string>& config_value_options();
const std::set<std::string>& config_switch_options();

struct ConfigFromOptions {
  SharedConfig shared;
  std::vector<std::string> warnings;  // unknown/unmodeled Megatron flags, import notes
};

// Builds the configuration the options describe. Errors name the option (or, for a link's
// own parameters, the parameter).
Expected<ConfigFromOptions> config_from_options(const ParsedOptions& options);

// An error when the options name no model (estimate and plan need one; url encode does not).
std::optional<Error> missing_model(const ParsedOptions& options);

// Prints what config_from_options() said: its error, or its warnings. Returns kExitOk when
// the configuration is usable, kExitUsage for a missing or malformed option value, and
// kExitError for anything else wrong with the configuration.
int report_config(const Expected<ConfigFromOptions>& built);

// The page share links point at: --base-url, else $MEGAMEM_BASE_URL, else the address
// scripts/serve.sh serves (http://localhost:8080/).
std::string base_url(const ParsedOptions& options);

}  // namespace megamem::cli
