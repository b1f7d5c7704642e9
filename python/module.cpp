// The native half of the Python module `megamem` (python/megamem/__init__.py is the other):
// runs a CLI command in process with its output captured, and lists the field registry's
// names, so the Python functions return exactly the JSON the CLI prints (one schema).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "commands.hpp"
#include "megamem/fields.hpp"

namespace py = pybind11;

namespace {

using Command = int (*)(const std::vector<std::string>&);

Command command_named(const std::string& name) {
  using namespace megamem::cli;
  if (name == "estimate") return run_estimate;
  if (name == "check") return run_check;
  if (name == "plan") return run_plan;
  if (name == "compare") return run_compare;
  if (name == "url") return run_url;
  if (name == "presets") return run_presets;
  throw py::value_error("unknown megamem command: " + name);
}

// (exit code, stdout, stderr) of `megamem <command> <args>`, run in this process. The GIL is
// released: an estimate holds no Python object.
std::tuple<int, std::string, std::string> run(const std::string& command,
                                              const std::vector<std::string>& args) {
  const Command function = command_named(command);
  std::ostringstream out, err;
  int code = 0;
  {
    py::gil_scoped_release release;
    std::streambuf* saved_out = std::cout.rdbuf(out.rdbuf());
    std::streambuf* saved_err = std::cerr.rdbuf(err.rdbuf());
    code = function(args);
    std::cout.rdbuf(saved_out);
    std::cerr.rdbuf(saved_err);
  }
  return {code, out.str(), err.str()};
}

// Each registry field: (config path, JSON group, JSON key, share-link key).
std::vector<std::tuple<std::string, std::string, std::string, std::string>> fields() {
  std::vector<std::tuple<std::string, std::string, std::string, std::string>> out;
  for (const megamem::ConfigField& field : megamem::config_fields()) {
    out.emplace_back(std::string(field.name), std::string(megamem::field_group_name(field.group)),
                     std::string(field.json_key), std::string(field.link_key));
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_megamem, m) {
  m.doc() = "megamem's commands in process (use the megamem package, not this module)";
  m.def("run", &run, py::arg("command"), py::arg("args"),
        "Runs `megamem <command> <args>`: (exit code, stdout, stderr).");
  m.def("fields", &fields, "The field registry: (name, group, json key, link key) per field.");
}
