// The `megamem` subcommands. Each takes the words after its name and returns the exit code;
// output goes to stdout, warnings and errors (naming the offending field) to stderr.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace megamem::cli {

// megamem estimate <configuration options (config_options.hpp)> [--json]
//                  [--print-megatron-args] [--base-url URL]
int run_estimate(const std::vector<std::string>& args);

// megamem url encode <configuration options> | url decode LINK  [--json] [--base-url URL]
int run_url(const std::vector<std::string>& args);

// megamem plan <configuration options> --gpus N --gbs B [--margin-gib G] [--top K]
//              [--tp/--pp/--cp/--ep/--mbs lists] [--json]
int run_plan(const std::vector<std::string>& args);

// megamem presets [--json]
int run_presets(const std::vector<std::string>& args);

// megamem validate [--cases PATH] [--report PATH] [--bands PATH] [--json] [--strict]
int run_validate(const std::vector<std::string>& args);

// megamem compare LOG [--json] [--vocab-size V] [--gpu ID] [--base-url URL]
int run_compare(const std::vector<std::string>& args);

// megamem check <configuration options> [--gpu-from-nvidia-smi FILE|-] [--json]
int run_check(const std::vector<std::string>& args);

// megamem mcp: a Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one message per
// line) with the tools estimate, check, plan, compare, explain_field and share_link.
int run_mcp(const std::vector<std::string>& args);
// One message line in, its response line out (nullopt for a notification or a blank line):
// what run_mcp does per line, and what the MCP fuzz harness drives.
std::optional<std::string> mcp_respond(std::string_view line);

// Exit codes shared by the subcommands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;        // the input is valid CLI syntax but fails
inline constexpr int kExitUsage = 2;        // malformed command line
inline constexpr int kExitTargetsFail = 3;  // validate --strict: an accuracy target fails
// megamem check: the verdict (any bad input is kExitError there).
inline constexpr int kExitCheckBorderline = 2;
inline constexpr int kExitCheckDoesNotFit = 3;

}  // namespace megamem::cli
