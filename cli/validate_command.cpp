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
// first parent holding core/include/megamem).
Expected<CasesFile> find_cases_file(const std::string& name) {
  std::vector<std::string> tried;
  if (const char* shared = std::getenv("MEGAMEM_SHARED"); shared && *shared) {
    for (const fs::path& candidate :
         {fs::path(shared) / "validation" / name, fs::path(shared) / name}) {
      if (fs::is_regular_file(candidate)) return CasesFile{candidate, candidate.string()};
      tried.push_back(candidate.string());
    }
  }
  std::error_code error;
  for (fs::path dir = fs::current_path(error); !error && !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_directory(dir / "core" / "include" / "megamem")) {
      const fs::path candidate = dir.parent_path() / "shared" / "validation" / name;
      if (fs::is_regular_file(candidate)) {
        return CasesFile{candidate, "../shared/validation/" + name};
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
// the community runs (community.json) when present.
struct ScoredFiles {
  CasesFile ci;
  ValidationReport ci_report;
  std::optional<CasesFile> community;
  std::optional<ValidationReport> community_report;
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
    if (Expected<CasesFile> community = find_cases_file("community.json")) {
      scored.community = *community;
    }
  }
  Expected<ValidationReport> ci = score_file(scored.ci, kMegatronCiTargets);
  if (!ci) return ci.error();
  scored.ci_report = std::move(*ci);
  if (scored.community) {
    Expected<ValidationReport> community = score_file(*scored.community, kCommunityTargets);
    if (!community) return community.error();
    scored.community_report = std::move(*community);
  }
  return scored;
}

std::string report_markdown(const ScoredFiles& s) {
  if (!s.community_report) return validation_report_markdown(s.ci_report, s.ci.display);
  return validation_reports_markdown(s.ci_report, s.ci.display, *s.community_report,
                                     s.community->display);
}

}  // namespace

int run_validate(const std::vector<std::string>& args) {
  Expected<ParsedOptions> options =
      parse_options(args, {"--cases", "--report"}, {"--json", "--strict"});
  if (!options) return fail(options.error(), kExitUsage);
  const Expected<ScoredFiles> scored = score_files(*options);
  if (!scored) return fail(scored.error(), kExitError);
  if (const auto path = options->values.find("--report"); path != options->values.end()) {
    std::ofstream out(path->second, std::ios::binary);
    out << report_markdown(*scored);
    if (!out) return fail({"--report", "cannot write " + path->second}, kExitError);
  }
  const bool json = options->switches.count("--json") > 0;
  if (json && scored->community_report) {
    std::cout << "{\"megatron_ci\": " << validation_report_json(scored->ci_report)
              << ",\n\"community\": " << validation_report_json(*scored->community_report) << "}\n";
  } else if (json) {
    std::cout << validation_report_json(scored->ci_report) << "\n";
  } else {
    std::cout << validation_summary_text(scored->ci_report);
    if (scored->community_report) {
      std::cout << "\n"
                << scored->community->display << ":\n"
                << validation_summary_text(*scored->community_report);
    }
  }
  const bool all_pass = targets_pass(scored->ci_report) &&
                        (!scored->community_report || targets_pass(*scored->community_report));
  if (options->switches.count("--strict") && !all_pass) return kExitTargetsFail;
  return kExitOk;
}

}  // namespace megamem::cli
