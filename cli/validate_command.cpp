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

// A default cases file: $MEGAMEM_SHARED/validation/<name>, else
// ../shared/validation/<name> beside the repository that contains the current directory (the
// first parent holding core/include/megamem); one kept in the repository is its
// validation/<name>.
Expected<CasesFile> find_cases_file(const std::string& name, bool in_repository = false) {
  std::vector<std::string> tried;
  if (const char* shared = std::getenv("MEGAMEM_SHARED"); shared && *shared && !in_repository) {
    for (const fs::path& candidate :
         {fs::path(shared) / "validation" / name, fs::path(shared) / name}) {
      if (fs::is_regular_file(candidate)) return CasesFile{candidate, candidate.string()};
      tried.push_back(candidate.string());
    }
  }
  std::error_code error;
  for (fs::path dir = fs::current_path(error); !error && !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_directory(dir / "core" / "include" / "megamem")) {
      const fs::path candidate = in_repository ? dir / "validation" / name
                                               : dir.parent_path() / "shared" / "validation" / name;
      if (fs::is_regular_file(candidate)) {
        return CasesFile{candidate,
                         (in_repository ? "validation/" : "../shared/validation/") + name};
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

// Reads and scores one cases file against its targets.
Expected<ValidationReport> score_file(const CasesFile& cases, const ValidationTargets& targets) {
  const std::optional<std::string> text = read_file(cases.path);
  if (!text) return Error{"--cases", "cannot read " + cases.path.string()};
  Expected<ValidationReport> report = run_validation(*text, targets);
  if (!report) return Error{"--cases", cases.path.string() + ": " + report.error().message};
  return report;
}

bool targets_pass(const ValidationReport& report) {
  if (!report.targets_gate) return true;
  return !report.targets.empty() && std::all_of(report.targets.begin(), report.targets.end(),
                                                [](const TargetResult& t) { return t.pass; });
}

// The scored files: --cases PATH alone, or by default Megatron's CI cases and, beside them,
// each outside file (community runs, Megatron-Bridge recipes) that is present.
struct ScoredFiles {
  CasesFile ci;
  ValidationReport ci_report;
  std::vector<OutsideReport> outside;
};

Expected<ScoredFiles> score_files(const ParsedOptions& options) {
  ScoredFiles scored;
  const auto given = options.values.find("--cases");
  if (given != options.values.end()) {
    scored.ci = {given->second, given->second};
  } else {
    Expected<CasesFile> found = find_cases_file("megatron-ci.json");
    if (!found) return found.error();
    scored.ci = *found;
  }
  Expected<ValidationReport> ci = score_file(scored.ci, kMegatronCiTargets);
  if (!ci) return ci.error();
  scored.ci_report = std::move(*ci);
  if (given != options.values.end()) return scored;
  for (const OutsideCasesFile& file : outside_cases_files()) {
    Expected<CasesFile> found = find_cases_file(file.file_name, file.in_repository);
    if (!found) continue;
    Expected<ValidationReport> report = score_file(*found, file.targets);
    if (!report) return report.error();
    scored.outside.push_back({&file, found->display, std::move(*report)});
  }
  return scored;
}

std::string report_markdown(const ScoredFiles& s) {
  if (s.outside.empty()) return validation_report_markdown(s.ci_report, s.ci.display);
  return validation_reports_markdown(s.ci_report, s.ci.display, s.outside);
}

void print_scores(const ScoredFiles& scored, bool json) {
  if (json && !scored.outside.empty()) {
    std::cout << "{\"megatron_ci\": " << validation_report_json(scored.ci_report);
    for (const OutsideReport& other : scored.outside) {
      std::cout << ",\n\"" << other.file->json_key
                << "\": " << validation_report_json(other.report);
    }
    std::cout << "}\n";
  } else if (json) {
    std::cout << validation_report_json(scored.ci_report) << "\n";
  } else {
    std::cout << validation_summary_text(scored.ci_report);
    for (const OutsideReport& other : scored.outside) {
      std::cout << "\n" << other.path << ":\n" << validation_summary_text(other.report);
    }
  }
}

}  // namespace

int run_validate(const std::vector<std::string>& args) {
  Expected<ParsedOptions> options =
      parse_options(args, {"--cases", "--report", "--bands"}, {"--json", "--strict"});
  if (!options) return fail(options.error(), kExitUsage);
  const Expected<ScoredFiles> scored = score_files(*options);
  if (!scored) return fail(scored.error(), kExitError);
  if (const auto path = options->values.find("--report"); path != options->values.end()) {
    std::ofstream out(path->second, std::ios::binary);
    out << report_markdown(*scored);
    if (!out) return fail({"--report", "cannot write " + path->second}, kExitError);
  }
  if (const auto path = options->values.find("--bands"); path != options->values.end()) {
    std::vector<const ValidationReport*> reports = {&scored->ci_report};
    for (const OutsideReport& other : scored->outside) reports.push_back(&other.report);
    std::ofstream out(path->second, std::ios::binary);
    out << error_bands_source(reports);
    if (!out) return fail({"--bands", "cannot write " + path->second}, kExitError);
  }
  print_scores(*scored, options->switches.count("--json") > 0);
  bool all_pass = targets_pass(scored->ci_report);
  for (const OutsideReport& other : scored->outside) {
    all_pass = all_pass && targets_pass(other.report);
  }
  if (options->switches.count("--strict") && !all_pass) return kExitTargetsFail;
  return kExitOk;
}

}  // namespace megamem::cli
