// megamem validate: run the estimator over measured Megatron-LM cases and report the errors.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "commands.hpp"
#include "megamem/validation.hpp"

namespace megamem::cli {
namespace {

namespace fs = std::filesystem;

// Where the cases file was found and how the report should name it.
struct CasesFile {
  fs::path path;
  std::string display;
};

// The default cases file: $MEGAMEM_SHARED/validation/megatron-ci.json, else
// ../shared/validation/megatron-ci.json beside the repository that contains the current
// directory (the first parent holding core/include/megamem).
Expected<CasesFile> find_cases_file() {
  std::vector<std::string> tried;
  if (const char* shared = std::getenv("MEGAMEM_SHARED"); shared && *shared) {
    for (const fs::path& candidate : {fs::path(shared) / "validation" / "megatron-ci.json",
                                      fs::path(shared) / "megatron-ci.json"}) {
      if (fs::is_regular_file(candidate)) return CasesFile{candidate, candidate.string()};
      tried.push_back(candidate.string());
    }
  }
  std::error_code error;
  for (fs::path dir = fs::current_path(error); !error && !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_directory(dir / "core" / "include" / "megamem")) {
      const fs::path candidate = dir.parent_path() / "shared" / "validation" / "megatron-ci.json";
      if (fs::is_regular_file(candidate)) {
        return CasesFile{candidate, "../shared/validation/megatron-ci.json"};
      }
      tried.push_back(candidate.string());
      break;
    }
    if (dir == dir.parent_path()) break;
  }
  std::string message = "no cases file found";
  if (!tried.empty()) {
    message += " (looked for";
    for (const std::string& path : tried) message += " " + path;
    message += ")";
  } else {
    message += " (not inside the megamem repository and MEGAMEM_SHARED is unset)";
  }
  return Error{"--cases", message + "; pass --cases PATH or set MEGAMEM_SHARED"};
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int run_validate(const std::vector<std::string>& args) {
  Expected<ParsedOptions> options =
      parse_options(args, {"--cases", "--report"}, {"--json", "--strict"});
  if (!options) {
    print_error(options.error());
    return kExitUsage;
  }
  CasesFile cases;
  if (const auto given = options->values.find("--cases"); given != options->values.end()) {
    cases = {given->second, given->second};
  } else {
    Expected<CasesFile> found = find_cases_file();
    if (!found) {
      print_error(found.error());
      return kExitError;
    }
    cases = *found;
  }
  const std::optional<std::string> text = read_file(cases.path);
  if (!text) {
    print_error({"--cases", "cannot read " + cases.path.string()});
    return kExitError;
  }
  const Expected<ValidationReport> report = run_validation(*text);
  if (!report) {
    print_error({"--cases", cases.path.string() + ": " + report.error().message});
    return kExitError;
  }
  if (const auto path = options->values.find("--report"); path != options->values.end()) {
    std::ofstream out(path->second, std::ios::binary);
    out << validation_report_markdown(*report, cases.display);
    if (!out) {
      print_error({"--report", "cannot write " + path->second});
      return kExitError;
    }
  }
  if (options->switches.count("--json")) {
    std::cout << validation_report_json(*report) << "\n";
  } else {
    std::cout << validation_summary_text(*report);
  }
  const bool all_pass =
      !report->targets.empty() && std::all_of(report->targets.begin(), report->targets.end(),
                                              [](const TargetResult& t) { return t.pass; });
  if (options->switches.count("--strict") && !all_pass) return kExitTargetsFail;
  return kExitOk;
}

}  // namespace megamem::cli
