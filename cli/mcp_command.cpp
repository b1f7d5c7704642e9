// megamem mcp: a Model Context Protocol server over stdio, for coding and operations agents.
// JSON-RPC 2.0, one message per line (the stdio transport). It answers initialize (2024-11-05
// .. 2025-11-25 sessions) and server/discover (2026-07-28, where every request carries its
// version in _meta), tools/list and tools/call, ping; a bad message gets a JSON-RPC error and
// the server reads on. Each tool runs the command of the same name with --json, so its result
// is the CLI's JSON (one schema) with a one-line summary beside it.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "commands.hpp"
#include "megamem/fields.hpp"

namespace megamem::cli {
namespace {

using nlohmann::json;

constexpr const char* kLatestVersion = "2026-07-28";  // server/discover, stateless requests
// Sessions that open with initialize; the first is offered when the client asks for another.
const std::vector<std::string> kSessionVersions = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                   "2024-11-05"};
constexpr std::size_t kMaxMessageBytes = 4u << 20;  // a log or config text fits; more is abuse

// JSON-RPC 2.0 error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

// A client's string member, "" when absent or of another type (value() would throw on the
// type).
std::string text_member(const json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

json error_response(const json& id, int code, const std::string& message, json data = nullptr) {
  json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

json result_response(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

// A JSON type for a registry field's link value.
json field_schema(const ConfigField& field) {
  json schema = {{"description", std::string(field.label) + (field.tooltip.empty() ? "" : ": ") +
                                     std::string(field.tooltip)}};
  switch (field.kind) {
    case FieldKind::integer:
      schema["type"] = "integer";
      break;
    case FieldKind::real:
      schema["type"] = "number";
      break;
    case FieldKind::boolean:
      schema["type"] = "boolean";
      break;
    default:
      schema["type"] = "string";
  }
  if (!field.choices.empty()) {
    json names = json::array();
    for (const FieldChoice& choice : field.choices) {
      if (!choice.link.empty()) names.push_back(std::string(choice.link));
    }
    schema["enum"] = std::move(names);
  }
  return schema;
}

// The configuration every tool takes: where it starts, the hardware, and changes as share-link
// keys (the field registry's rows, docs/share-links.md).
json configuration_properties() {
  json set_properties = json::object();
  for (const ConfigField& field : config_fields()) {
    if (!field.link_key.empty()) set_properties[std::string(field.link_key)] = field_schema(field);
  }
  const auto text = [](const char* what) {
    return json{{"type", "string"}, {"description", what}};
  };
  return {{"preset", text("a model preset id (megamem presets)")},
          {"recipe", text("a published recipe id")},
          {"url", text("a megamem share link")},
          {"megatron_args", text("Megatron-LM flags, or @path of a launch script")},
          {"hf_config_json", text("the text of a HuggingFace config.json")},
          {"bridge_config_yaml", text("the text of a Megatron-Bridge run_config.yaml")},
          {"gpu", text("a GPU preset id")},
          {"gpus", {{"type", "integer"}, {"minimum", 1}, {"description", "number of GPUs"}}},
          {"vocab_size",
           {{"type", "integer"}, {"minimum", 1}, {"description", "tokenizer vocabulary"}}},
          {"set",
           {{"type", "object"},
            {"description", "changes as share-link keys (docs/share-links.md)"},
            {"properties", std::move(set_properties)},
            {"additionalProperties", false}}}};
}

json tool(const char* name, const char* description, json extra_properties, json required) {
  json properties = configuration_properties();
  for (auto& [key, value] : extra_properties.items()) properties[key] = value;
  return {{"name", name},
          {"description", description},
          {"inputSchema",
           {{"type", "object"}, {"properties", properties}, {"required", std::move(required)}}}};
}

json tools_list() {
  const json text = {{"type", "string"}};
  return json::array(
      {tool("estimate", "Per-GPU memory of each pipeline rank, with the verdict and a link.",
            json::object(), json::array()),
       tool("check", "Will it fit: the verdict, the limiting rank, headroom and the best fix.",
            {{"nvidia_smi_csv", text}}, json::array()),
       tool("plan", "The fastest parallel layouts that fit the GPUs, with their memory and time.",
            {{"gbs", {{"type", "integer"}, {"minimum", 1}}},
             {"top", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}}}},
            json::array({"gpus"})),
       {{"name", "compare"},
        {"description", "A Megatron-LM training log: measured memory beside the estimate."},
        {"inputSchema",
         {{"type", "object"}, {"properties", {{"log_text", text}}}, {"required", {"log_text"}}}}},
       {{"name", "explain_field"},
        {"description",
         "A configuration field: its meaning, Megatron flag, link key, default and range."},
        {"inputSchema",
         {{"type", "object"},
          {"properties",
           {{"field",
             {{"type", "string"},
              {"description",
               "link key, config "
               "name or flag"}}}}},
          {"required", {"field"}}}}},
       tool("share_link", "The configuration as a megamem share link.", json::object(),
            json::array())});
}

// A text argument handed to a command as a file, removed when done.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/megamem-mcp-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = mkstemp(name.data());
    if (fd < 0) return;
    path_ = name.data();
    const ssize_t written = write(fd, text.data(), text.size());
    close(fd);
    if (written != static_cast<ssize_t>(text.size())) path_.clear();
  }
  ~TempFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs a command with its output captured (stdout carries the protocol).
struct CommandRun {
  int exit_code = 0;
  std::string out;
  std::string err;
};

CommandRun run_captured(int (*command)(const std::vector<std::string>&),
                        const std::vector<std::string>& args) {
  std::ostringstream out, err;
  std::streambuf* saved_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* saved_err = std::cerr.rdbuf(err.rdbuf());
  CommandRun run;
  run.exit_code = command(args);
  std::cout.rdbuf(saved_out);
  std::cerr.rdbuf(saved_err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// A JSON value as the option text the CLI reads.
std::string option_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "1" : "0";
  return value.dump();
}

// The tool arguments as command-line options; text arguments become files.
struct CommandArgs {
  std::vector<std::string> args;
  std::vector<std::unique_ptr<TempFile>> files;
  std::optional<std::string> error;
};

void add_file_option(CommandArgs& out, const std::string& option, const json& text) {
  if (!text.is_string()) {
    out.error = option + " must be text";
    return;
  }
  out.files.push_back(std::make_unique<TempFile>(text.get<std::string>()));
  if (out.files.back()->path().empty()) out.error = "cannot write a temporary file";
  out.args.insert(out.args.end(), {option, out.files.back()->path()});
}

CommandArgs command_args(const json& arguments) {
  CommandArgs out;
  static const std::vector<std::pair<const char*, const char*>> kOptions = {
      {"preset", "--preset"}, {"recipe", "--recipe"}, {"url", "--url"},
      {"gpu", "--gpu"},       {"gpus", "--gpus"},     {"vocab_size", "--vocab-size"},
      {"gbs", "--gbs"},       {"top", "--top"},       {"megatron_args", "--megatron-args"}};
  for (const auto& [key, option] : kOptions) {
    if (arguments.contains(key))
      out.args.insert(out.args.end(), {option, option_text(arguments[key])});
  }
  if (arguments.contains("hf_config_json")) {
    add_file_option(out, "--hf-config", arguments["hf_config_json"]);
  }
  if (arguments.contains("bridge_config_yaml")) {
    add_file_option(out, "--bridge-config", arguments["bridge_config_yaml"]);
  }
  if (arguments.contains("nvidia_smi_csv")) {
    add_file_option(out, "--gpu-from-nvidia-smi", arguments["nvidia_smi_csv"]);
  }
  if (arguments.contains("set")) {
    if (!arguments["set"].is_object()) {
      out.error = "set must be an object of share-link keys";
      return out;
    }
    std::string changes;
    for (const auto& [key, value] : arguments["set"].items()) {
      changes += (changes.empty() ? "" : "&") + key + "=" + option_text(value);
    }
    out.args.insert(out.args.end(), {"--set", changes});
  }
  return out;
}

std::string gib(const json& bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", bytes.get<double>() / (1024.0 * 1024 * 1024));
  return text;
}

// "does_not_fit: rank 3 peaks at 95.1 of 79.6 GiB" from an estimate's or check's verdict.
std::string verdict_summary(const json& verdict, const json* ranks) {
  std::string text = verdict.value("status", "") + ": rank " +
                     std::to_string(verdict.value("limiting_pp_rank", 0));
  const int rank = verdict.value("limiting_pp_rank", 0);
  if (ranks && ranks->is_array() && rank < static_cast<int>(ranks->size())) {
    text += " peaks at " + gib((*ranks)[static_cast<std::size_t>(rank)]["peak_total_bytes"]) +
            " of " + gib(verdict["capacity_bytes"]) + " GiB";
  }
  return text + ", headroom " + gib(verdict["headroom_bytes"]) + " GiB";
}

std::string summary_of(const std::string& name, const json& document) {
  if (name == "share_link") return document.value("link", "");
  if (name == "plan" && document.contains("top") && !document["top"].empty()) {
    const json& best = document["top"][0];
    return "fastest that fits: " + best.value("label", "") + ", " + gib(best["peak_total_bytes"]) +
           " GiB";
  }
  if (name == "plan") return "no layout fits";
  if (document.contains("verdict")) {
    std::string text = verdict_summary(document["verdict"],
                                       document.contains("ranks") ? &document["ranks"] : nullptr);
    if (document.contains("suggestion")) {
      text += "; try " + document["suggestion"].value("label", "");
    }
    return text;
  }
  return name + " done";
}

json tool_result(const std::string& summary, const json& document, bool is_error) {
  json content = json::array({{{"type", "text"}, {"text", summary}}});
  if (!document.is_null()) content.push_back({{"type", "text"}, {"text", document.dump(2)}});
  json result = {{"content", std::move(content)}, {"isError", is_error}};
  if (document.is_object()) result["structuredContent"] = document;
  return result;
}

json explain_field(const json& arguments) {
  const std::string key = text_member(arguments, "field");
  const ConfigField* field = field_by_link_key(key);
  if (!field) field = field_by_name(key);
  for (const ConfigField& candidate : config_fields()) {
    if (!field && !candidate.flag.empty() && candidate.flag == key) field = &candidate;
  }
  if (!field)
    return tool_result("no field '" + key + "' (a link key, config name or flag)", nullptr, true);
  json choices = json::array();
  for (const FieldChoice& choice : field->choices) choices.push_back(std::string(choice.link));
  const json document = {{"name", field->name},
                         {"link_key", field->link_key},
                         {"default", field->link_default},
                         {"megatron_flag", field->flag},
                         {"config_json", std::string(field_group_name(field->group)) + "." +
                                             std::string(field->json_key)},
                         {"label", field->label},
                         {"meaning", field->tooltip},
                         {"flag_help", field->flag_help},
                         {"choices", choices},
                         {"source", field_source(*field)},
                         {"documentation", "docs/memory-model.md, docs/share-links.md"}};
  return tool_result(std::string(field->label) + ": " + std::string(field->tooltip), document,
                     false);
}

using Command = int (*)(const std::vector<std::string>&);

// Runs the tool's command with --json and wraps what it printed.
json run_tool(const std::string& name, Command command, std::vector<std::string> args,
              bool verdict_exit_codes) {
  args.push_back("--json");
  const CommandRun run = run_captured(command, args);
  json document = json::parse(run.out, nullptr, false);
  if (document.is_discarded()) document = nullptr;
  const bool failed = verdict_exit_codes ? run.exit_code == kExitError : run.exit_code != kExitOk;
  std::string summary = failed ? run.err : summary_of(name, document);
  if (summary.empty()) summary = name + " failed";
  return tool_result(summary, document, failed || document.is_null());
}

json call_tool(const std::string& name, const json& arguments) {
  if (name == "explain_field") return explain_field(arguments);
  CommandArgs built = command_args(arguments);
  if (name == "compare") {
    if (!arguments.contains("log_text")) return tool_result("log_text is required", nullptr, true);
    if (!arguments["log_text"].is_string()) {
      return tool_result("log_text must be text", nullptr, true);
    }
    const TempFile log(arguments["log_text"].get<std::string>());
    if (log.path().empty()) return tool_result("cannot write a temporary file", nullptr, true);
    return run_tool(name, run_compare, {log.path()}, false);
  }
  if (built.error) return tool_result(*built.error, nullptr, true);
  if (name == "estimate") return run_tool(name, run_estimate, built.args, false);
  if (name == "check") return run_tool(name, run_check, built.args, true);
  if (name == "plan") return run_tool(name, run_plan, built.args, false);
  std::vector<std::string> encode = {"encode"};
  encode.insert(encode.end(), built.args.begin(), built.args.end());
  return run_tool(name, run_url, encode, false);
}

bool known_tool(const std::string& name) {
  for (const json& entry : tools_list()) {
    if (entry["name"] == name) return true;
  }
  return false;
}

json server_info() { return {{"name", "megamem"}, {"version", "1"}}; }

bool supported_version(const std::string& version) {
  if (version == kLatestVersion) return true;
  for (const std::string& known : kSessionVersions) {
    if (known == version) return true;
  }
  return false;
}

json supported_versions() {
  json out = json::array({kLatestVersion});
  for (const std::string& version : kSessionVersions) out.push_back(version);
  return out;
}

// initialize: the client's version when this server speaks it, else the newest session one.
json initialize_result(const json& params) {
  const std::string asked = text_member(params, "protocolVersion");
  const bool session =
      std::find(kSessionVersions.begin(), kSessionVersions.end(), asked) != kSessionVersions.end();
  return {{"protocolVersion", session ? asked : kSessionVersions.front()},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", server_info()},
          {"instructions",
           "megamem estimates per-GPU memory of Megatron-Core training. Give a configuration as "
           "a preset, recipe, share link, Megatron-LM flags or config text; check says whether "
           "it fits."}};
}

// A request's _meta protocol version (2026-07-28 carries it on every request).
std::optional<json> version_error(const json& id, const json& params) {
  if (!params.is_object() || !params.contains("_meta") || !params["_meta"].is_object()) {
    return std::nullopt;
  }
  const json& meta = params["_meta"];
  const auto it = meta.find("io.modelcontextprotocol/protocolVersion");
  if (it == meta.end() || (it->is_string() && supported_version(it->get<std::string>()))) {
    return std::nullopt;
  }
  return error_response(id, kInvalidParams, "unsupported protocol version",
                        {{"supported", supported_versions()}, {"requested", *it}});
}

json tools_call(const json& id, const json& params) {
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return error_response(id, kInvalidParams, "tools/call needs params.name");
  }
  const std::string name = params["name"].get<std::string>();
  if (!known_tool(name)) return error_response(id, kInvalidParams, "unknown tool: " + name);
  const json arguments = params.value("arguments", json::object());
  if (!arguments.is_object()) {
    return error_response(id, kInvalidParams, "tools/call params.arguments must be an object");
  }
  return result_response(id, call_tool(name, arguments));
}

// One request's response; nullopt for a notification.
std::optional<json> handle_request(const json& message) {
  if (!message.is_object()) {
    return error_response(nullptr, kInvalidRequest, "a JSON-RPC 2.0 request object is expected");
  }
  const json id = message.value("id", json(nullptr));
  if (text_member(message, "jsonrpc") != "2.0" || !message.contains("method") ||
      !message["method"].is_string()) {
    return error_response(id, kInvalidRequest, "expected jsonrpc \"2.0\" and a method");
  }
  if (!message.contains("id")) return std::nullopt;  // notifications (initialized, cancelled)
  const std::string method = message["method"].get<std::string>();
  const json params = message.value("params", json::object());
  if (std::optional<json> error = version_error(id, params)) return error;
  if (method == "initialize") return result_response(id, initialize_result(params));
  if (method == "ping") return result_response(id, json::object());
  if (method == "tools/list") return result_response(id, {{"tools", tools_list()}});
  if (method == "tools/call") return tools_call(id, params);
  if (method == "server/discover") {
    return result_response(id, {{"protocolVersion", kLatestVersion},
                                {"supportedVersions", supported_versions()},
                                {"capabilities", {{"tools", {{"listChanged", false}}}}},
                                {"serverInfo", server_info()},
                                {"tools", tools_list()}});
  }
  return error_response(id, kMethodNotFound, "unknown method: " + method);
}

// Reads one line of at most kMaxMessageBytes; false at the end of input.
bool read_message(std::istream& in, std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  char c = 0;
  bool any = false;
  while (in.get(c)) {
    any = true;
    if (c == '\n') return true;
    if (line.size() < kMaxMessageBytes) {
      line += c;
    } else {
      too_long = true;
    }
  }
  return any;
}

}  // namespace

std::optional<std::string> mcp_respond(std::string_view line) {
  if (line.size() > kMaxMessageBytes) {
    return error_response(nullptr, kInvalidRequest, "message larger than 4 MiB").dump();
  }
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
  const json message = json::parse(line, nullptr, false);
  const std::optional<json> response = message.is_discarded()
                                           ? error_response(nullptr, kParseError, "not valid JSON")
                                           : handle_request(message);
  if (!response) return std::nullopt;
  return response->dump();
}

int run_mcp(const std::vector<std::string>& args) {
  if (!args.empty()) return fail({args.front(), "megamem mcp takes no options"}, kExitUsage);
  std::string line;
  bool too_long = false;
  while (read_message(std::cin, line, too_long)) {
    const std::optional<std::string> response =
        too_long ? mcp_respond(std::string(kMaxMessageBytes + 1, ' ')) : mcp_respond(line);
    if (response) std::cout << *response << "\n" << std::flush;
  }
  return kExitOk;
}

}  // namespace megamem::cli
