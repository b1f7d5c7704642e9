// Megatron-Bridge run_config.yaml through yaml-cpp (bridge_yaml.hpp): a real dump reads back to
// the run, and hostile YAML (aliases, tabs, repeated keys, deep nesting) is a message naming
// the line. Native only: the wasm build does not link yaml-cpp.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "megamem/bridge_config.hpp"
#include "megamem/bridge_yaml.hpp"
#include "megamem/estimate.hpp"

using namespace megamem;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(MEGAMEM_CLI_FIXTURES) + "/" + name);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Error yaml_error(const std::string& text) {
  const Expected<BridgeNode> tree = parse_bridge_yaml(text);
  REQUIRE_FALSE(tree.has_value());
  return tree.error();
}

}  // namespace

TEST_CASE("a real Megatron-Bridge run_config.yaml reads back to its run") {
  // Source named in the fixture: a Llama-3.2-1B run on 8 GPUs whose log reports
  // 1235814400 parameters on (tensor, pipeline) rank (0, 0).
  const Expected<BridgeNode> tree = parse_bridge_yaml(fixture("bridge/llama32-1b-run-config.yaml"));
  REQUIRE(tree.has_value());
  const Expected<BridgeImport> imported = import_bridge_config(*tree, 8);
  if (!imported) FAIL(imported.error().field + ": " + imported.error().message);
  CHECK(imported->warnings.empty());
  const Config& c = imported->args.config;
  CHECK(c.model.num_layers == 16);
  CHECK(c.model.hidden_size == 2048);
  CHECK(c.model.num_query_groups == 8);
  CHECK(c.model.activation == Activation::swiglu);
  CHECK(c.model.vocab_size == 128256);
  CHECK(c.training.global_batch_size == 512);
  CHECK(c.training.seq_length == 1024);
  CHECK(c.optimizer.use_distributed_optimizer);
  const Expected<Estimate> from_yaml = estimate(c);
  REQUIRE(from_yaml.has_value());
  CHECK(from_yaml->ranks[0].dense_params == 1235814400);
  // The Megatron flags the import names give the same estimate.
  const Expected<MegatronArgs> flags = parse_megatron_args(imported->megatron_flags, 8);
  REQUIRE(flags.has_value());
  const Expected<Estimate> from_flags = estimate(flags->config);
  REQUIRE(from_flags.has_value());
  CHECK(from_flags->ranks[0].peak_total_bytes == from_yaml->ranks[0].peak_total_bytes);
  CHECK(from_flags->ranks[0].static_bytes == from_yaml->ranks[0].static_bytes);
}

TEST_CASE("YAML aliases are refused with the line") {
  const Error error = yaml_error("model:\n  num_layers: &n 4\n  hidden_size: *n\n");
  CHECK(error.message.rfind("line 3:", 0) == 0);
  CHECK(error.message.find("alias") != std::string::npos);
}

TEST_CASE("a tab used for indentation is a YAML error naming the line") {
  const Error error = yaml_error("model:\n\tnum_layers: 4\n");
  CHECK(error.message.rfind("line 2:", 0) == 0);
}

TEST_CASE("a key repeated in one mapping names the key and both lines") {
  const Error error = yaml_error("model:\n  num_layers: 4\n  num_layers: 8\n");
  CHECK(error.field == "num_layers");
  CHECK(error.message.find("first on line 2") != std::string::npos);
}

TEST_CASE("nesting deeper than 64 levels is refused, not recursed into") {
  const Error error = yaml_error(std::string(100, '[') + std::string(100, ']'));
  CHECK(error.message.find("deeper than 64") != std::string::npos);
  // yaml-cpp's own guard stops far deeper input before any recursion runs away.
  const Error deeper = yaml_error(std::string(100000, '[') + std::string(100000, ']'));
  CHECK(deeper.message.rfind("line 1:", 0) == 0);
}

TEST_CASE("a YAML over the size limit is refused") {
  const Error error = yaml_error(std::string(kMaxBridgeYamlBytes + 1, '#'));
  CHECK(error.message.find("MiB") != std::string::npos);
}
