// megamem: per-GPU memory of Megatron-Core training, from the command line.
//
//   megamem estimate --megatron-args "<flags>" --world-size N [--vocab-size V] [--json]
//   megamem validate [--cases PATH] [--report PATH] [--json] [--strict]
//
// A thin front end: it reads argv and files, calls the core, and prints text or JSON.
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"

namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  megamem estimate --megatron-args \"<flags>\" --world-size N [--vocab-size V] [--json]\n"
    "      Per-GPU memory of each pipeline rank for a Megatron-LM command line.\n"
    "      --vocab-size gives the tokenizer's vocabulary when the flags name a tokenizer file.\n"
    "  megamem validate [--cases PATH] [--report PATH] [--json] [--strict]\n"
    "      Compare estimates with measured Megatron-LM runs (default cases file:\n"
    "      ../shared/validation/megatron-ci.json next to the repository, or\n"
    "      $MEGAMEM_SHARED/validation/megatron-ci.json). --report writes a Markdown report;\n"
    "      --strict exits with 3 when an accuracy target fails.\n";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << kUsage;
    return args.empty() ? megamem::cli::kExitUsage : megamem::cli::kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "estimate") return megamem::cli::run_estimate(rest);
  if (args[0] == "validate") return megamem::cli::run_validate(rest);
  std::cerr << "megamem: error: command: unknown command '" << args[0] << "'\n" << kUsage;
  return megamem::cli::kExitUsage;
}
