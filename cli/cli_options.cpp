#include "cli_options.hpp"

#include <charconv>
#include <iostream>

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

}  // namespace megamem::cli
