#!/usr/bin/env python3
"""Writes the hand-made seed files of fuzz/corpus/json_scan/: realistic MCP traffic of every
revision (client requests, server results, notifications, errors, batches) plus JSON edge
cases. The other targets take `Arbitrary`-encoded input; their corpora come from short
fuzzing runs minimised with `cargo fuzz cmin` (see scripts/test-fuzz.sh).

Run from the repository root: python3 fuzz/seeds.py"""
import hashlib
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "json_scan")
LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}

seeds = []


def add(obj, raw=False):
    seeds.append(obj.encode('utf-8', 'surrogatepass') if raw else json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())


def req(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    return m


def note(method, params=None):
    m = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    return m


def modern(i, method, params=None, **meta):
    p = dict(params or {})
    p["_meta"] = dict(META, **meta)
    return req(i, method, p)


TOOL = {
    "name": "add",
    "title": "Add",
    "description": "Adds two numbers",
    "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
    "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}},
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
    "icons": [{"src": "data:image/png;base64,AA==", "mimeType": "image/png", "sizes": ["1x1"]}],
    "_meta": {"example.com/kind": "math"},
}
CONTENT = [
    {"type": "text", "text": "hello \u00e9\u4e16\U0001F600 \"quoted\"\n"},
    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain", "size": 3},
    {"type": "resource", "resource": {"uri": "test://text", "mimeType": "text/plain", "text": "embedded"}},
    {"type": "resource", "resource": {"uri": "test://blob", "blob": "AAEC"}},
    {"type": "text", "text": "annotated", "annotations": {"audience": ["user", "assistant"], "priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"}},
]

for n, v in enumerate(LEGACY):
    add(req(1, "initialize", {"protocolVersion": v, "capabilities": {"sampling": {}, "roots": {"listChanged": True}}, "clientInfo": {"name": "client", "version": "1.0"}}))
    add(req({"s": 1} if n == 0 else f"init-{n}", "initialize", {"protocolVersion": v}))
    add({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": v, "capabilities": {"tools": {"listChanged": True}, "logging": {}}, "serverInfo": {"name": "s", "version": "1"}, "instructions": "Use the tools."}})
    add(req(n + 2, "tools/call", {"name": "echo", "arguments": {"text": f"hi {v}"}, "_meta": {"progressToken": f"p{n}"}}))
    add({"jsonrpc": "2.0", "id": n + 2, "result": {"content": CONTENT[: 2 + n * 2], "isError": n == 3}})
add(note("notifications/initialized"))
add(req(2, "ping"))
add(req("ping-1", "ping", {}))
add({"jsonrpc": "2.0", "id": 2, "result": {}})
add(req(3, "tools/list"))
add(req(4, "tools/list", {"cursor": "AQAAAAAyAAAAo3c1V9Hk5Qw"}))
add(req(4, "tools/list", {"cursor": None}))
add({"jsonrpc": "2.0", "id": 3, "result": {"tools": [TOOL, {"name": "echo", "inputSchema": {"type": "object"}}], "nextCursor": "AQAAAAACAAAAaGVsbG8td29y"}})
add(req(5, "tools/call", {"name": "add", "arguments": {"a": 1.5, "b": -2e3}}))
add({"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": "{\"sum\":-1998.5}"}], "structuredContent": {"sum": -1998.5}}})
add(req(6, "tools/call", {"name": "slow", "_meta": {"progressToken": 17}}))
add(note("notifications/progress", {"progressToken": 17, "progress": 0.25, "total": 1.0, "message": "a quarter"}))
add(note("notifications/cancelled", {"requestId": 6, "reason": "user pressed stop"}))
add(note("notifications/cancelled", {"requestId": "abc"}))
add(req(7, "logging/setLevel", {"level": "debug"}))
add(note("notifications/message", {"level": "warning", "logger": "core", "data": "disk almost full"}))
add(note("notifications/tools/list_changed", {}))
add([req(10, "tools/list"), req(11, "ping"), note("notifications/cancelled", {"requestId": 9})])
add([{"jsonrpc": "2.0", "id": 10, "result": {"tools": []}}, {"jsonrpc": "2.0", "id": 11, "result": {}}])
add([])
# 2026-07-28: stateless requests with per-request _meta.
add(modern(20, "server/discover"))
add(req(20, "server/discover"))
add(modern(21, "tools/list", {"cursor": None}))
add(modern(22, "tools/call", {"name": "echo", "arguments": {"x": [1, 2, {"y": None}]}}, **{"io.modelcontextprotocol/logLevel": "info", "progressToken": "t-22"}))
add(modern(23, "tools/call", {"name": "needs_sampling"}, **{"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}))
add(modern(24, "ping"))
add(req(25, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}))
add({"jsonrpc": "2.0", "id": 20, "result": {"supportedVersions": [MODERN] + LEGACY[::-1], "capabilities": {"tools": {}, "logging": {}}, "resultType": "complete", "ttlMs": 0, "cacheScope": "public", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}})
add({"jsonrpc": "2.0", "id": 22, "result": {"content": CONTENT, "resultType": "complete"}})
# Errors.
for code, msg in [(-32700, "Parse error"), (-32600, "Invalid Request"), (-32601, "Method not found: x"), (-32602, "Unknown tool: nope"), (-32603, "Internal error")]:
    add({"jsonrpc": "2.0", "id": None if code == -32700 else 9, "error": {"code": code, "message": msg}})
add({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Message exceeds the maximum frame length", "data": {"limit": 65536}}})
add({"jsonrpc": "2.0", "id": 25, "error": {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": [MODERN], "requested": "2099-01-01"}}})
add({"jsonrpc": "2.0", "id": 23, "error": {"code": -32021, "message": "Missing required client capability", "data": {"requiredCapabilities": {"sampling": {}}}}})
# Broken requests.
for raw in [
    '{"jsonrpc":"1.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":"x"}}',
    '{"jsonrpc":"2.0","id":"\\u0072x","method":"tools\\/list"}',
    '{"jsonrpc":"2.0","id":1,"method":"ping"',
    '{"jsonrpc":"2.0","id":1,"method":"ping",}',
    '\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '  {"jsonrpc" : "2.0" ,\t"id" : 1 , "method" : "ping"}\r\n',
    '[{"jsonrpc":"2.0","id":1,"method":"ping"},]',
]:
    add(raw, raw=True)
# JSON edge cases.
for raw in [
    '"\\ud83d\\ude00\\u00e9\\n\\t\\"\\\\\\/\\b\\f\\r"', '"\\ud800"', '"\\udc00\\ud800"', '"\\u12"', '"\x01"',
    '[0,-0,-0.0,1e308,1e309,-1e-400,5e-324,123456789012345678901234567890,18446744073709551615,-9223372036854775808,0.1,1E+2]',
    '[01]', '[1.]', '[.5]', '[-]', '[+1]', '[NaN]', '[Infinity]', 'true', 'false', 'null', 'nul', '{"a":1,"a":2}',
    '{"":{"":[]}}', '[' * 127 + ']' * 127, '[' * 128 + ']' * 128, '[' * 129 + ']' * 129,
    '{"a":' * 40 + '1' + '}' * 40, '  ', '', '[1] [2]', '"\xc3\xa9\xe4\xb8\x96"',
]:
    add(raw, raw=True)
seeds.append(b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}')
seeds.append(b'"\xed\xa0\x80"')

os.makedirs(OUT, exist_ok=True)
for s in seeds:
    with open(os.path.join(OUT, "seed-" + hashlib.sha1(s).hexdigest()[:16]), "wb") as f:
        f.write(s)
print(f"{len(seeds)} seeds in {OUT}")
