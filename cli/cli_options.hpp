// A tiny option reader for the CLI's own flags ("--name value", "--name=value", switches).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "megamem/expected.hpp"

namespace megamem {
struct Estimate;
}

namespace megamem::cli {

struct ParsedOptions {
  std::map<std::string, std::string> values;  // options that take a value
  std::set<std::string> switches;             // options without a value
};

// Reads args against the allowed names; an unknown option, a missing value or a stray word is
// an Error naming it.
Expected<ParsedOptions> parse_options(const std::vector<std::string>& args,
                                      const std::set<std::string>& value_options,
                                      const std::set<std::string>& switch_options);

// A positive integer option value, or an Error naming the option.
Expected<std::int64_t> positive_integer(const std::string& option, const std::string& text);

// Prints "megamem: error: <field>: <message>" to stderr.
void print_error(const Error& error);

// Prints the error (as print_error does) and returns `exit_code`: `return fail(e, kExitUsage);`.
int fail(const Error& error, int exit_code);

// |bytes| in GiB with one decimal ("15.5").
std::string one_decimal_gib(double bytes);

// The core's verdict of an estimate in words: "does not fit: rank 3 peaks at 95.1 of 79.6 GiB,
// 15.5 GiB over (likely 92.0 .. 101.2 GiB)".
std::string verdict_text(const Estimate& estimate);

}  // namespace megamem::cli
