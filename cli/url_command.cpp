// megamem url encode|decode|keys: share links (docs/share-links.md) from and back to
// configurations, and the table of their keys.
//
//   megamem url encode <configuration options> [--base-url URL] [--json]
//   megamem url decode LINK [--base-url URL] [--json]
//   megamem url keys
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "commands.hpp"
#include "config_options.hpp"
#include "megamem/json_output.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/share_link.hpp"

namespace megamem::cli {
namespace {

int run_encode(const std::vector<std::string>& args) {
  std::set<std::string> switches = config_switch_options();
  switches.insert("--json");
  const Expected<ParsedOptions> options = parse_options(args, config_value_options(), switches);
  if (!options) return fail(options.error(), kExitUsage);
  const Expected<ConfigFromOptions> built = config_from_options(*options);
  if (!built) return fail(built.error(), kExitError);
  for (const std::string& warning : built->warnings) {
    std::cerr << "megamem: warning: " << warning << "\n";
  }
  const std::string link = share_link(built->shared, base_url(*options));
  if (options->switches.count("--json")) {
    const nlohmann::json document = {{"link", link},
                                     {"query", encode_share_query(built->shared)},
                                     {"model", built->shared.model_id},
                                     {"gpu", built->shared.gpu_id}};
    std::cout << document.dump(2) << "\n";
  } else {
    std::cout << link << "\n";
  }
  return kExitOk;
}

// The link, given as the first word or as --link (not both); a usage Error otherwise.
Expected<std::string> link_argument(std::vector<std::string>& args, ParsedOptions& options) {
  std::optional<std::string> link;
  if (!args.empty() && args[0].rfind("--", 0) != 0) {
    link = args[0];
    args.erase(args.begin());
  }
  Expected<ParsedOptions> parsed = parse_options(args, {"--link", "--base-url"}, {"--json"});
  if (!parsed) return parsed.error();
  options = std::move(*parsed);
  if (const auto given = options.values.find("--link"); given != options.values.end()) {
    if (link) return Error{"--link", "the link is given twice"};
    link = given->second;
  }
  if (!link) return Error{"link", "is required: megamem url decode 'https://...?v=1&model=...'"};
  return *link;
}

void print_decoded_json(const SharedConfig& shared, const std::string& canonical) {
  const Config& c = shared.config;
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [key, value] : share_parameters(shared, true)) values[key] = value;
  const nlohmann::json document = {{"link", canonical},
                                   {"model", shared.model_id},
                                   {"gpu", shared.gpu_id},
                                   {"world_size", c.parallel.world_size},
                                   {"parameters", std::move(values)},
                                   {"config", config_json(c)},
                                   {"megatron_args", to_megatron_args(c)}};
  std::cout << document.dump(2) << "\n";
}

void print_decoded_text(const SharedConfig& shared, const std::string& canonical) {
  const Config& c = shared.config;
  std::cout << "model: " << (shared.model_id.empty() ? "custom" : shared.model_id) << " ("
            << c.model.name << ")\n"
            << "gpu: " << (shared.gpu_id.empty() ? "custom" : shared.gpu_id) << " ("
            << (c.device.name.empty() ? "unnamed" : c.device.name) << ", " << c.device.capacity_gib
            << " GiB)\n"
            << "gpus: " << c.parallel.world_size << "\n"
            << "link: " << canonical << "\n"
            << "parameters (defaults included):\n";
  for (const auto& [key, value] : share_parameters(shared, true)) {
    std::cout << "  " << key << "=" << value << "\n";
  }
  std::cout << "config:\n" << config_to_json(c) << "\n";
  std::cout << "megatron args (--world-size " << c.parallel.world_size << "):\n"
            << to_megatron_args(c) << "\n";
}

int run_decode(std::vector<std::string> args) {
  ParsedOptions options;
  const Expected<std::string> link = link_argument(args, options);
  if (!link) return fail(link.error(), kExitUsage);
  const Expected<SharedConfig> shared = decode_share_link(*link);
  if (!shared) return fail(shared.error(), kExitError);
  const std::string canonical = share_link(*shared, base_url(options));
  if (options.switches.count("--json")) {
    print_decoded_json(*shared, canonical);
  } else {
    print_decoded_text(*shared, canonical);
  }
  return kExitOk;
}

int run_keys(const std::vector<std::string>& args) {
  if (!args.empty()) return fail({args[0], "url keys takes no options"}, kExitUsage);
  std::cout << share_link_keys_markdown();
  return kExitOk;
}

}  // namespace

int run_url(const std::vector<std::string>& args) {
  if (args.empty() || (args[0] != "encode" && args[0] != "decode" && args[0] != "keys"))
    return fail(
        {"url", args.empty() ? std::string("needs 'encode', 'decode' or 'keys'")
                             : "unknown subcommand '" + args[0] + "' (encode, decode, keys)"},
        kExitUsage);
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "keys") return run_keys(rest);
  return args[0] == "encode" ? run_encode(rest) : run_decode(rest);
}

}  // namespace megamem::cli
