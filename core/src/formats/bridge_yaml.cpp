// YAML -> BridgeNode with yaml-cpp's event parser (see bridge_yaml.hpp).
#include "megamem/bridge_yaml.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace megamem {
namespace {

constexpr std::size_t kMaxDepth = 64;

std::size_t line_of(const YAML::Mark& mark) { return static_cast<std::size_t>(mark.line) + 1; }

// Builds the tree from parser events; the first problem is kept in `error`.
class TreeBuilder : public YAML::EventHandler {
 public:
  std::optional<BridgeNode> root;
  std::optional<Error> error;

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) fail(mark, "a second YAML document; a run_config.yaml holds one");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    add(bridge_node(BridgeNode::Kind::null, line_of(mark)));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    fail(mark, "a YAML alias (*name); ConfigContainer.to_yaml() writes none: write the value out");
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                const std::string& value) override {
    // yaml-cpp tags quoted scalars "!", plain ones "?".
    add(bridge_scalar(value, tag == "!", line_of(mark)));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(mark, BridgeNode::Kind::sequence);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(mark, BridgeNode::Kind::map);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    BridgeNode node;
    std::optional<std::string> key;  // a map's key waiting for its value
  };

  void fail(const YAML::Mark& mark, const std::string& message) {
    if (!error) error = Error{"yaml", "line " + std::to_string(line_of(mark)) + ": " + message};
  }

  void open(const YAML::Mark& mark, BridgeNode::Kind kind) {
    if (stack_.size() >= kMaxDepth) {
      fail(mark, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
      ++ignored_;
      return;
    }
    stack_.push_back(Frame{bridge_node(kind, line_of(mark)), std::nullopt});
  }

  void close() {
    if (ignored_ > 0) {
      --ignored_;
      return;
    }
    BridgeNode node = std::move(stack_.back().node);
    stack_.pop_back();
    add(std::move(node));
  }

  void add(BridgeNode node) {
    if (ignored_ > 0 || error) return;
    if (stack_.empty()) {
      root = std::move(node);
      return;
    }
    Frame& parent = stack_.back();
    if (parent.node.kind == BridgeNode::Kind::sequence) {
      parent.node.items.push_back(std::move(node));
    } else if (!parent.key) {
      add_key(parent, node);
    } else {
      parent.node.entries.push_back(BridgeEntry{std::move(*parent.key), std::move(node)});
      parent.key.reset();
    }
  }

  void add_key(Frame& parent, const BridgeNode& key) {
    if (key.kind != BridgeNode::Kind::scalar) {
      error = Error{"yaml", "line " + std::to_string(key.line) + ": a key that is not a name"};
      return;
    }
    for (const auto& [name, value] : parent.node.entries) {
      if (name == key.scalar) {
        error = Error{key.scalar, "line " + std::to_string(key.line) + ": '" + key.scalar +
                                      "' appears twice in one mapping (first on line " +
                                      std::to_string(value.line) + ")"};
        return;
      }
    }
    parent.key = key.scalar;
  }

  std::vector<Frame> stack_;
  std::size_t ignored_ = 0;
  int documents_ = 0;
};

}  // namespace

Expected<BridgeNode> parse_bridge_yaml(std::string_view text) {
  if (text.size() > kMaxBridgeYamlBytes) {
    return Error{"yaml", "is " + std::to_string(text.size() >> 20) +
                             " MiB; a run_config.yaml is a few hundred KiB (limit " +
                             std::to_string(kMaxBridgeYamlBytes >> 20) + " MiB)"};
  }
  std::istringstream stream{std::string(text)};
  TreeBuilder builder;
  try {
    YAML::Parser parser(stream);
    while (!builder.error && parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::Exception& e) {
    return Error{"yaml", "line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
  if (builder.error) return *builder.error;
  if (!builder.root) return Error{"yaml", "is empty"};
  return std::move(*builder.root);
}

Expected<BridgeImport> import_bridge_yaml(std::string_view text, std::int64_t world_size) {
  const Expected<BridgeNode> tree = parse_bridge_yaml(text);
  if (!tree) return tree.error();
  return import_bridge_config(*tree, world_size);
}

}  // namespace megamem
