#include "cli_options.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "megamem/estimate.hpp"
#include "megamem/units.hpp"

namespace megamem::cli {

Expected<ParsedOptions> parse_options(const std::vector<std::string>& args,
                                      const std::set<std::string>& value_options,
                                      const std::set<std::string>& switch_options) {
  ParsedOptions parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (const std::size_t equals = name.find('=');
        name.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
    }
    if (value_options.count(name)) {
      if (!value) {
        if (i + 1 >= args.size()) return Error{name, "needs a value"};
        value = args[++i];
      }
      parsed.values[name] = *value;
    } else if (switch_options.count(name)) {
      if (value) return Error{name, "takes no value"};
      parsed.switches.insert(name);
    } else if (name.rfind("-", 0) == 0) {
      return Error{name, "unknown option"};
    } else {
      return Error{name, "unexpected argument"};
    }
  }
  return parsed;
}

Expected<std::int64_t> positive_integer(const std::string& option, const std::string& text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return Error{option, "expects a positive integer, got '" + text + "'"};
  }
  return value;
}

void print_error(const Error& error) {
  std::cerr << "megamem: error: " << error.field << ": " << error.message << "\n";
}

int fail(const Error& error, int exit_code) {
  print_error(error);
  return exit_code;
}

std::string one_decimal_gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", std::abs(bytes) / kBytesPerGiB);
  return text;
}

// "does not fit: rank 3 peaks at 95.1 of 79.6 GiB, 15.5 GiB over (likely 92.0 .. 101.2 GiB)":
// the estimate, and the range the validated error band puts the real peak in.
std::string verdict_text(const Estimate& estimate) {
  const Verdict& verdict = estimate.verdict;
  const RankMemory& rank = estimate.ranks[static_cast<std::size_t>(verdict.limiting_pp_rank)];
  const RankVerdict& limiting = verdict.ranks[static_cast<std::size_t>(verdict.limiting_pp_rank)];
  const double headroom = static_cast<double>(verdict.headroom_bytes);
  const std::string status = verdict.status == FitStatus::fits         ? "fits"
                             : verdict.status == FitStatus::borderline ? "borderline"
                                                                       : "does not fit";
  return status + ": rank " + std::to_string(verdict.limiting_pp_rank) + " peaks at " +
         one_decimal_gib(static_cast<double>(rank.peak_total_bytes)) + " of " +
         one_decimal_gib(static_cast<double>(verdict.capacity_bytes)) + " GiB, " +
         one_decimal_gib(headroom) + " GiB " + (headroom >= 0 ? "free" : "over") + " (likely " +
         one_decimal_gib(static_cast<double>(limiting.low_total_bytes)) + " .. " +
         one_decimal_gib(static_cast<double>(limiting.high_total_bytes)) + " GiB)";
}

}  // namespace megamem::cli
