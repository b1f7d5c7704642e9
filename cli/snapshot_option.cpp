#include "snapshot_option.hpp"

#include <fstream>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "megamem/memory_snapshot.hpp"

namespace megamem::cli {

int write_snapshot_option(const ParsedOptions& options, const Estimate& estimate) {
  const auto path = options.values.find("--snapshot");
  if (path == options.values.end()) {
    if (options.values.count("--rank")) {
      print_error({"--rank", "only applies with --snapshot FILE"});
      return kExitUsage;
    }
    return kExitOk;
  }
  int rank = estimate.limiting_pp_rank;
  if (const auto given = options.values.find("--rank"); given != options.values.end()) {
    const std::string& text = given->second;
    if (text.empty() || text.size() > 6 ||
        text.find_first_not_of("0123456789") != std::string::npos) {
      print_error({"--rank", "expects a pipeline rank (0, 1, ...), got '" + text + "'"});
      return kExitUsage;
    }
    rank = std::stoi(text);
  }
  const Expected<std::string> pickle = memory_snapshot_pickle(estimate, rank);
  if (!pickle) {
    print_error({"--rank", pickle.error().message});
    return kExitError;
  }
  std::ofstream out(path->second, std::ios::binary);
  out << *pickle;
  if (!out) {
    print_error({"--snapshot", "cannot write '" + path->second + "'"});
    return kExitError;
  }
  std::cerr << "megamem: wrote the memory snapshot of pipeline rank " << rank << " to "
            << path->second << " (open it at pytorch.org/memory_viz)\n";
  return kExitOk;
}

}  // namespace megamem::cli
