// Share links: a whole configuration as a readable, versioned URL query.
//
//   ?v=1&model=deepseek-v3&gpu=h100-80gb&gpus=256&pp=8&ep=32&recompute=full
//
// docs/share-links.md is the specification. In short: `model=` and `gpu=` name presets
// (presets.hpp); every other parameter is one Config field under a short key (`tp`, `seq`,
// `m.hidden`, `g.mem`, `rt.frag`, ...) and is written only when it differs from the
// version's defaults, which are frozen per version (v=1: a bf16 Megatron-Core run with the
// distributed optimizer, sequence parallelism, the alltoall dispatcher with grouped GEMM,
// seq 4096, mbs 1; Megatron's defaults for everything else). A model that is not a preset
// is spelt out with `m.` parameters relative to Megatron's defaults; a preset with changes is
// `model=<id>` followed by the changed `m.` fields.
//
// Decoding never trusts the text: an unknown parameter, a repeated key, a malformed or
// out-of-range value, bad percent-encoding or a link from a newer version is an Error naming
// the parameter; nothing is silently ignored. Recipes (presets/recipes) are link parameters
// too, so a recipe and its link give the same Config.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "megamem/config.hpp"
#include "megamem/expected.hpp"
#include "megamem/presets.hpp"

namespace megamem {

// The link format version this build writes (and the newest it reads).
inline constexpr int kShareLinkVersion = 1;

// A configuration and the presets it came from ("" = spelt out in full).
struct SharedConfig {
  Config config;
  std::string model_id;
  std::string gpu_id;
};

using LinkParameters = std::vector<std::pair<std::string, std::string>>;

// The defaults of link version 1: the base every link's parameters change (an empty model:
// a link that names no preset spells out the model it describes).
Config share_link_defaults();

// The configuration a front end shows when it is given none, and what a link that sets no
// configuration parameter (only `v=1`, `lang=zh`) opens: Megatron-Bridge's Llama-3-70B
// pre-training recipe on 64 H100 (llama-3-70b-h100-64), a published run most people know.
SharedConfig default_configuration();

// The query without the leading '?': "v=1&model=...&...", keys in the documented order.
std::string encode_share_query(const SharedConfig& shared);

// base_url + "?" + query (base_url "" gives just "?...").
std::string share_link(const SharedConfig& shared, std::string_view base_url);

// A full link ("https://host/page?v=1&..."), a query with or without '?', or a fragment
// ("#v=1&...") -> the configuration. Errors name the parameter.
Expected<SharedConfig> decode_share_link(std::string_view link);

// The same, applying what it can read: each parameter that cannot be read (a value that does
// not parse, an unknown key or model, a key twice, broken percent-encoding) is left out and
// its error listed, in link order; an unknown model leaves default_configuration()'s model
// under the rest, and a GPU count that does not parse its GPU count. A link that sets nothing
// readable of the configuration, or is a newer version, gives default_configuration().
// decode_share_link() is this with the first error.
struct PartialLink {
  SharedConfig shared;
  std::vector<Error> errors;
};
PartialLink decode_share_link_partially(std::string_view link);

// Applies decoded parameters on top of `shared` (model= and gpu= first, then the rest).
// Used for links, recipes and command-line overrides alike. Errors name the parameter.
Expected<SharedConfig> apply_share_parameters(SharedConfig shared,
                                              const LinkParameters& parameters);

// Splits and percent-decodes a query ("a=1&b=2"); rejects repeated keys and malformed text.
Expected<LinkParameters> parse_share_query(std::string_view query);

// The table of every configuration key, as docs/share-links.md lists it and `megamem url keys`
// prints it: one Markdown row per field with a link key, in link order, with its Config field,
// version 1's default and the values it accepts, all read from the field registry.
std::string share_link_keys_markdown();

// A link's parameters, percent-decoded (a full link, a query or a fragment, as
// decode_share_link takes), for readers of the view settings.
Expected<LinkParameters> link_parameters(std::string_view link);

// A parameter's value as links write it: readable characters kept, the rest %XX.
std::string percent_encode_value(std::string_view text);

// Every parameter's value for this configuration, defaults included (for `url decode`).
LinkParameters share_parameters(const SharedConfig& shared, bool include_defaults);

// The recipe as a configuration (its model, GPU, GPU count and settings).
Expected<SharedConfig> recipe_config(const RecipePreset& recipe);

// Fills model_id / gpu_id when the configuration's architecture (is_architecture_field: not
// its dropout, padding or position count) or device equals a preset's, so links stay short
// for imported configs; a model preset found names the model. Every import names its model
// through this (HF config, flags, launch scripts, Bridge configs, logs).
SharedConfig with_detected_presets(const Config& config);

// Link keys whose values differ between a and b (display names excluded): empty when the two
// configurations estimate the same.
std::vector<std::string> share_link_differences(const Config& a, const Config& b);

// Every link key, in the documented order (for docs and tests).
std::vector<std::string> share_link_keys();

// View settings a link may carry beside the configuration (docs/share-links.md, "View
// settings"): they change how the page shows it, never what is estimated, so links without
// them open as before and the CLI reads and ignores them. `lang=en|zh`: the page's language.
struct LinkView {
  std::string language;  // "en", "zh", or "" when the link does not say
};

// The view settings of a link (the configuration's parameters are left to decode_share_link,
// which checks the view settings' values too). Errors name the parameter.
Expected<LinkView> decode_link_view(std::string_view link);

// "lang=zh", or "" when the view has no setting; appended to encode_share_query()'s query.
std::string encode_link_view(const LinkView& view);

}  // namespace megamem
