// megamem url encode|decode: share links (docs/share-links.md) from and back to configurations.
//
//   megamem url encode <configuration options> [--base-url URL] [--json]
//   megamem url decode LINK [--base-url URL] [--json]
#include <iostream>
#include <nlohmann/json.hpp>
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
  if (!options) {
    print_error(options.error());
    return kExitUsage;
  }
  const Expected<ConfigFromOptions> built = config_from_options(*options);
  if (!built) {
    print_error(built.error());
    return kExitError;
  }
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

int run_decode(std::vector<std::string> args) {
  // The link may come as the first word or as --link.
  std::string link;
  bool have_link = false;
  if (!args.empty() && args[0].rfind("--", 0) != 0) {
    link = args[0];
    have_link = true;
    args.erase(args.begin());
  }
  const Expected<ParsedOptions> options = parse_options(args, {"--link", "--base-url"}, {"--json"});
  if (!options) {
    print_error(options.error());
    return kExitUsage;
  }
  if (const auto given = options->values.find("--link"); given != options->values.end()) {
    if (have_link) {
      print_error({"--link", "the link is given twice"});
      return kExitUsage;
    }
    link = given->second;
    have_link = true;
  }
  if (!have_link) {
    print_error({"link", "is required: megamem url decode 'https://...?v=1&model=...'"});
    return kExitUsage;
  }
  const Expected<SharedConfig> shared = decode_share_link(link);
  if (!shared) {
    print_error(shared.error());
    return kExitError;
  }
  const Config& c = shared->config;
  const std::string canonical = share_link(*shared, base_url(*options));
  const std::string flags = to_megatron_args(c);
  const LinkParameters parameters = share_parameters(*shared, true);
  if (options->switches.count("--json")) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [key, value] : parameters) values[key] = value;
    const nlohmann::json document = {{"link", canonical},
                                     {"model", shared->model_id},
                                     {"gpu", shared->gpu_id},
                                     {"world_size", c.parallel.world_size},
                                     {"parameters", std::move(values)},
                                     {"config", config_json(c)},
                                     {"megatron_args", flags}};
    std::cout << document.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "model: " << (shared->model_id.empty() ? "custom" : shared->model_id) << " ("
            << c.model.name << ")\n"
            << "gpu: " << (shared->gpu_id.empty() ? "custom" : shared->gpu_id) << " ("
            << (c.device.name.empty() ? "unnamed" : c.device.name) << ", " << c.device.capacity_gib
            << " GiB)\n"
            << "gpus: " << c.parallel.world_size << "\n"
            << "link: " << canonical << "\n"
            << "parameters (defaults included):\n";
  for (const auto& [key, value] : parameters) std::cout << "  " << key << "=" << value << "\n";
  std::cout << "config:\n" << config_to_json(c) << "\n";
  std::cout << "megatron args (--world-size " << c.parallel.world_size << "):\n" << flags << "\n";
  return kExitOk;
}

}  // namespace

int run_url(const std::vector<std::string>& args) {
  if (args.empty() || (args[0] != "encode" && args[0] != "decode")) {
    print_error({"url", args.empty() ? std::string("needs 'encode' or 'decode'")
                                     : "unknown subcommand '" + args[0] + "' (encode, decode)"});
    return kExitUsage;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  return args[0] == "encode" ? run_encode(rest) : run_decode(rest);
}

}  // namespace megamem::cli
