#!/usr/bin/env python3
"""A scripted MCP client: drives `megamem mcp` through a whole session over stdio and checks
every answer (initialize and server/discover, tools/list, each tool, and bad requests that
must get JSON-RPC errors without ending the server). Usage: mcp_session.py MEGAMEM"""
import json
import subprocess
import sys

MEGAMEM = sys.argv[1]
failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)


class Server:
    def __init__(self):
        self.process = subprocess.Popen([MEGAMEM, "mcp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def send_line(self, text):
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()  # blocks until the answer: no sleeps
        expect(line, f"no answer to {text[:80]!r}")
        return json.loads(line) if line else {}

    def request(self, ident, method, params=None):
        message = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        return self.send_line(json.dumps(message))

    def call(self, ident, tool, arguments):
        answer = self.request(ident, "tools/call", {"name": tool, "arguments": arguments})
        expect("result" in answer, f"{tool}: no result: {answer}")
        return answer.get("result", {})

    def close(self):
        self.process.stdin.close()
        code = self.process.wait(timeout=120)
        expect(code == 0, f"server exit code {code}")
        expect(self.process.stderr.read() == b"", "the server wrote to stderr")


def cli_json(*args):
    out = subprocess.run([MEGAMEM, *args, "--json"], capture_output=True, check=False)
    return json.loads(out.stdout)


server = Server()
init = server.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "test", "version": "1"}})
expect(init["result"]["protocolVersion"] == "2025-11-25", f"initialize: {init}")
expect("tools" in init["result"]["capabilities"], "initialize: no tools capability")
old = server.request(2, "initialize", {"protocolVersion": "2023-01-01"})
expect(old["result"]["protocolVersion"] == "2025-11-25", "an unknown version gets the newest")
server.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
discover = server.request(3, "server/discover")
expect(discover["result"]["protocolVersion"] == "2026-07-28", f"discover: {discover}")
tools = server.request(4, "tools/list")["result"]["tools"]
names = [t["name"] for t in tools]
expect(names == ["estimate", "check", "plan", "compare", "explain_field", "share_link"], names)
estimate_schema = tools[0]["inputSchema"]["properties"]
expect("tp" in estimate_schema["set"]["properties"], "the set schema lists the registry's keys")
expect(estimate_schema["set"]["properties"]["tp"]["type"] == "integer", "tp is an integer")

config = {"preset": "llama-3.1-8b", "gpu": "h100", "gpus": 8, "set": {"recompute": "full"}}
result = server.call(5, "estimate", config)
expect(not result["isError"], f"estimate: {result}")
cli = cli_json("estimate", "--preset", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--set",
               "recompute=full")
expect(result["structuredContent"] == cli, "estimate: the tool's JSON is the CLI's --json")
expect(result["content"][0]["text"].startswith("fits: rank 0"), result["content"][0]["text"])

result = server.call(6, "check", {**config, "set": {"recompute": "full", "g.mem": 60}})
expect(result["structuredContent"]["verdict"]["status"] == "does_not_fit", "check verdict")
expect("suggestion" in result["structuredContent"], "check suggests a fix")
smi = "name, memory.total [MiB]\nNVIDIA H100 80GB HBM3, 81559 MiB\n"
result = server.call(7, "check", {**config, "nvidia_smi_csv": smi})
expect(result["structuredContent"]["verdict"]["status"] == "fits", "check with nvidia-smi text")

result = server.call(8, "plan", {"preset": "llama-3.1-8b", "gpu": "h100", "gpus": 8, "gbs": 64,
                                 "top": 3})
expect(not result["isError"] and len(result["structuredContent"]["top"]) == 3, "plan top 3")

result = server.call(9, "share_link", config)
expect(result["content"][0]["text"].startswith("http") and "recompute=full" in
       result["content"][0]["text"], f"share_link: {result['content'][0]['text']}")
result = server.call(10, "explain_field", {"field": "tp"})
expect(result["structuredContent"]["megatron_flag"] == "--tensor-model-parallel-size", "tp flag")
expect("parallel_state.py" in result["structuredContent"]["source"], "tp's rule source")
result = server.call(21, "explain_field", {"field": "m.dsa-heads"})
expect(result["structuredContent"]["source"].endswith("dsa.py"), "the DSA indexer's source")
result = server.call(11, "explain_field", {"field": "--no-such-flag"})
expect(result["isError"], "explain_field of an unknown field is a tool error")
result = server.call(12, "compare", {"log_text": "this is not a training log\n"})
expect(result["isError"] and "content" in result, "compare of a non-log is a tool error")
result = server.call(13, "estimate", {"megatron_args": "--num-layers 2", "gpus": 1})
expect(result["isError"] and "hidden-size" in result["content"][0]["text"], "bad flags")

# Bad requests: each gets a JSON-RPC error and the server reads on.
answer = server.send_line("{not json")
expect(answer.get("error", {}).get("code") == -32700, f"parse error: {answer}")
answer = server.send_line("[1, 2]")
expect(answer.get("error", {}).get("code") == -32600, f"batch/invalid: {answer}")
answer = server.request(14, "no/such/method")
expect(answer.get("error", {}).get("code") == -32601, f"unknown method: {answer}")
answer = server.request(15, "tools/call", {"name": "rm -rf"})
expect(answer.get("error", {}).get("code") == -32602, f"unknown tool: {answer}")
answer = server.request(16, "tools/call", {"name": "estimate", "arguments": [1]})
expect(answer.get("error", {}).get("code") == -32602, f"arguments not an object: {answer}")
answer = server.request(17, "tools/list",
                        {"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}})
expect(answer.get("error", {}).get("code") == -32602, f"unsupported version: {answer}")
answer = server.send_line('{"jsonrpc":"2.0","id":18,"method":"ping","params":{"x":"' +
                          "a" * (5 << 20) + '"}}')
expect(answer.get("error", {}).get("code") == -32600, "oversized message")
answer = server.send_line('{"jsonrpc": {"name": "explain_field"}}')
expect(answer.get("error", {}).get("code") == -32600, f"jsonrpc not a string: {answer}")
result = server.call(20, "explain_field", {"field": 7})
expect(result["isError"], "a field name that is not text is a tool error")
answer = server.request(19, "ping")
expect(answer.get("result") == {}, f"the server still answers after bad requests: {answer}")
server.close()

for failure in failures:
    print("FAIL:", failure)
print(f"{'FAILED' if failures else 'passed'}: mcp session")
sys.exit(1 if failures else 0)
