// megamem: per-GPU memory of Megatron-Core training, from the command line.
//
//   megamem estimate <configuration options> [--json] [--print-megatron-args]
//   megamem check <configuration options> [--gpu-from-nvidia-smi FILE|-] [--json]
//   megamem mcp
//   megamem url encode <configuration options> | megamem url decode LINK
//   megamem plan <configuration options> --gpus N --gbs B [--top K] [--margin-gib G] [--json]
//   megamem presets [--json]
//   megamem validate [--cases PATH] [--report PATH] [--bands PATH] [--json] [--strict]
//   megamem compare LOG [--json] [--vocab-size V] [--gpu ID]
//   megamem estimate ... --anchor LOG | --anchor-args "<flags>" --anchor-world-size N ...
//
// A thin front end: it reads argv and files, calls the core, and prints text or JSON.
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"

namespace {

// Each command's usage, in the order `megamem --help` lists them.
struct CommandUsage {
  const char* command;
  const char* text;
};
constexpr CommandUsage kCommandUsage[] = {
    {"estimate",
     "  megamem estimate <configuration> [--json [--timeline]] [--print-megatron-args]\n"
     "                   [--base-url URL]\n"
     "      Per-GPU memory of each pipeline rank, with a share link to the configuration.\n"
     "      The configuration starts from one of\n"
     "        --preset MODEL (with --gpu GPU --gpus N), --hf-config config.json,\n"
     "        --recipe RECIPE, --url LINK, --megatron-args \"<flags>\" --world-size N\n"
     "        (--megatron-args @train.sh reads a launch script: comments, variables, bash\n"
     "        arrays; --world-size defaults to its torchrun --nproc_per_node x --nnodes)\n"
     "      and takes changes as --tp --pp --vpp --cp --ep --etp --mbs --gbs --seq\n"
     "        --recompute none|selective|full --recompute-method --recompute-layers --dtype\n"
     "        --fp8 --dist-opt/--no-dist-opt --sp/--no-sp --vocab-size V\n"
     "        --set \"key=value&...\" (any share-link key, docs/share-links.md).\n"
     "      --print-megatron-args prints the Megatron-LM flags of the configuration,\n"
     "      --print-bridge-overrides its Megatron-Bridge recipe overrides;\n"
     "      --bridge-config run_config.yaml --world-size N starts from a Megatron-Bridge run;\n"
     "      --snapshot FILE [--rank P] writes rank P's step as a PyTorch memory snapshot;\n"
     "      --timeline adds each rank's memory after every forward/backward to --json;\n"
     "      --anchor LOG anchors it on a measured run of the same model (a Megatron-LM log,\n"
     "      Megatron-LM or Megatron-Bridge memory reports), or typed in: --anchor-args\n"
     "      \"<flags>\" --anchor-world-size N --anchor-peak-bytes B [--anchor-static-bytes B]\n"
     "      [--anchor-reserved-bytes B] [--anchor-rank R] (sizes as 80GiB, 79.6GB or bytes).\n"},
    {"check",
     "  megamem check <configuration> [--gpu-from-nvidia-smi FILE|-] [--json]\n"
     "      The pre-flight for a launch script: one line with the verdict (fits, borderline,\n"
     "      does not fit), the limiting rank and its headroom, and when it does not fit the\n"
     "      cheapest recompute/offload change or layout on the same GPUs that fits, with its\n"
     "      link. The configuration is given as for estimate; --megatron-args may take the\n"
     "      flags as separate words (--megatron-args \"$@\"), up to check's own next option.\n"
     "      --gpu-from-nvidia-smi reads `nvidia-smi --query-gpu=name,memory.total\n"
     "      --format=csv` output from a file or stdin (-) as the GPU.\n"
     "      Exit status: 0 fits, 2 borderline, 3 does not fit, 1 bad input.\n"},
    {"mcp",
     "  megamem mcp\n"
     "      A Model Context Protocol server on stdin/stdout for agents (docs/agents.md): the\n"
     "      tools estimate, check, plan, compare, explain_field and share_link, each returning\n"
     "      the JSON its command prints with --json and a one-line summary.\n"},
    {"url",
     "  megamem url encode <configuration> [--json] [--base-url URL]\n"
     "  megamem url decode LINK [--json] [--base-url URL]\n"
     "  megamem url keys\n"
     "      A configuration as a share link, and a link back as its settings, config JSON and\n"
     "      Megatron-LM flags. Links point at --base-url, $MEGAMEM_BASE_URL or\n"
     "      http://localhost:8080/ (scripts/serve.sh). `url keys` lists every key a link (and\n"
     "      --set) takes, with its Config field, default and values, as a Markdown table.\n"},
    {"plan",
     "  megamem plan <configuration> --gpus N --gbs B [--seq S] [--margin-gib 2] [--top 10]\n"
     "               [--gpu-memory-gib G --gpus-per-node K --intra-node-gb-s X\n"
     "                --inter-node-gb-s Y --peak-tflops T] [--tp 1,2,4 --pp .. --cp .. --ep ..\n"
     "                --mbs ..] [--vpp-max 8] [--no-recompute-search] [--no-offload-search]\n"
     "               [--no-etp-search] [--json]\n"
     "      The fastest parallel layouts (TP, PP, VPP, CP, EP, ETP, micro-batch, recompute,\n"
     "      offload) that fit the GPUs, with memory, step time, tokens/s and TFLOP/s per GPU,\n"
     "      their Megatron-LM flags, the Pareto front of memory against time and why the rest\n"
     "      fail. The configuration is given as for estimate; --tp/--pp/... restrict the "
     "search.\n"},
    {"presets",
     "  megamem presets [--json]\n"
     "      The model, GPU and recipe presets (ids, names, sources: docs/presets.md).\n"},
    {"validate",
     "  megamem validate [--cases PATH] [--report PATH] [--bands PATH] [--json] [--strict]\n"
     "      Compare estimates with measured Megatron-LM runs (default cases file:\n"
     "      ../shared/validation/megatron-ci.json next to the repository, or\n"
     "      $MEGAMEM_SHARED/validation/megatron-ci.json; community.json and\n"
     "      bridge-recipes.json beside it are scored too). --report writes a Markdown report,\n"
     "      --bands the verdict's error-band table (core/src/error_bands.inc);\n"
     "      --strict exits with 3 when a gating accuracy target fails.\n"},
    {"compare",
     "  megamem compare LOG [--json] [--vocab-size V] [--gpu ID] [--base-url URL]\n"
     "      A Megatron-LM training log: the configuration of its argument dump estimated\n"
     "      beside each printed rank's measured memory, and which lines were read.\n"},
};

std::string usage() {
  std::string text = "usage:\n";
  for (const CommandUsage& usage : kCommandUsage) text += usage.text;
  return text;
}

// `megamem <command> --help` (or -h): that command's usage.
const char* command_usage(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] != "--help" && args[i] != "-h") continue;
    for (const CommandUsage& usage : kCommandUsage) {
      if (args[0] == usage.command) return usage.text;
    }
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << usage();
    return args.empty() ? megamem::cli::kExitUsage : megamem::cli::kExitOk;
  }
  if (const char* text = command_usage(args)) {
    std::cout << "usage:\n" << text;
    return megamem::cli::kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "estimate") return megamem::cli::run_estimate(rest);
  if (args[0] == "check") return megamem::cli::run_check(rest);
  if (args[0] == "mcp") return megamem::cli::run_mcp(rest);
  if (args[0] == "url") return megamem::cli::run_url(rest);
  if (args[0] == "plan") return megamem::cli::run_plan(rest);
  if (args[0] == "presets") return megamem::cli::run_presets(rest);
  if (args[0] == "validate") return megamem::cli::run_validate(rest);
  if (args[0] == "compare") return megamem::cli::run_compare(rest);
  std::cerr << "megamem: error: command: unknown command '" << args[0] << "'\n" << usage();
  return megamem::cli::kExitUsage;
}
