"""Smoke check of a reference server (interop/REFERENCE.md) with the official Python SDK client.

    interop/py/.venv/bin/python interop/reference/smoke_py.py ERA TRANSPORT -- SERVER COMMAND...

ERA is `handshake` (Client(mode="legacy"): initialize at 2025-11-25) or `modern` (Client(mode=
"auto"): server/discover, then stateless 2026-07-28). TRANSPORT is `stdio` (the command is run
with `stdio` appended) or `http` (run with `http` appended; the URL is read from the single
`listening on URL` line). Exercises the whole surface, prints one line per check and a closing
`N passed, N failed` line; exits non-zero on a failure. Not part of any suite: a tool for
whoever changes a reference server.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
import traceback
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

import anyio

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)

ERA, TRANSPORT = sys.argv[1], sys.argv[2]
assert sys.argv[3] == "--"
COMMAND = sys.argv[4:]
MODERN = ERA == "modern"

ROOTS = [types.Root(uri="file:///tmp/one", name="one"), types.Root(uri="file:///tmp/two")]
PERSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "default": 42}},
    "required": ["name"],
}
asked: list[tuple[str, Any]] = []
notes: list[Any] = []
logs: list[types.LoggingMessageNotificationParams] = []
elicit_answer: dict[str, Any] = {"action": "accept", "content": {"name": "Ada", "age": 36}}


async def sampling(ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    asked.append(("sampling", params))
    prompt = params.messages[0].content.text  # type: ignore[union-attr]
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"answer to {prompt}"), model="m",
        stop_reason="endTurn",
    )


async def elicitation(ctx: Any, params: Any) -> types.ElicitResult:
    asked.append(("elicitation", params))
    return types.ElicitResult(**elicit_answer)


async def list_roots(ctx: Any) -> types.ListRootsResult:
    asked.append(("roots", None))
    return types.ListRootsResult(roots=ROOTS)


async def on_message(message: Any) -> None:
    notes.append(message)


async def on_log(params: types.LoggingMessageNotificationParams) -> None:
    logs.append(params)


@contextmanager
def server() -> Iterator[Any]:
    if TRANSPORT == "stdio":
        yield StdioServerParameters(command=COMMAND[0], args=[*COMMAND[1:], "stdio"])
        return
    proc = subprocess.Popen([*COMMAND, "http"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("listening on http://127.0.0.1:") and line.endswith("/mcp\n"), repr(line)
        threading.Thread(target=lambda: proc.stdout.read(), daemon=True).start()  # type: ignore[union-attr]
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def text(result: types.CallToolResult) -> str:
    assert len(result.content) == 1, result.content
    assert isinstance(result.content[0], types.TextContent), result.content
    return result.content[0].text


passed = failed = 0


async def check(name: str, fn: Any) -> None:
    global passed, failed
    try:
        await fn()
        passed += 1
        print(f"ok   {name}")
    except BaseException:  # noqa: BLE001
        failed += 1
        print(f"FAIL {name}\n{traceback.format_exc()}")


async def main() -> None:
    with server() as target:
        client = Client(
            target,
            mode=("auto" if MODERN else "legacy"),
            read_timeout_seconds=20,
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            list_roots_callback=list_roots,
            logging_callback=on_log,
            message_handler=on_message,
            log_level="info" if MODERN else None,
            cache=None,
        )
        async with client as c:
            print(f"server {c.server_info} protocol {c.protocol_version} caps {c.server_capabilities}")
            assert c.protocol_version == ("2026-07-28" if MODERN else "2025-11-25"), c.protocol_version

            async def lists() -> None:
                tools = {t.name: t for t in (await c.list_tools()).tools}
                assert sorted(tools) == sorted(
                    ["echo", "add", "slow", "log", "ask_llm", "ask_user", "roots", "fail", "add_tool", "touch"]
                ), sorted(tools)
                # The TypeScript SDKs derive schemas from zod, adding `$schema` and `additionalProperties`.
                out = {k: v for k, v in (tools["add"].output_schema or {}).items() if k in ("type", "properties", "required")}
                assert out == {
                    "type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]
                }, tools["add"].output_schema
                assert tools["echo"].input_schema["required"] == ["text"], tools["echo"].input_schema
                assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
                assert tools["slow"].input_schema["properties"]["steps"]["type"] == "integer"
                resources = {r.uri: r for r in (await c.list_resources()).resources}
                assert set(map(str, resources)) == {"ref://static/text", "ref://static/blob"}, resources
                templates = (await c.list_resource_templates()).resource_templates
                assert [t.uri_template for t in templates] == ["ref://items/{id}"], templates
                prompts = {p.name: p for p in (await c.list_prompts()).prompts}
                assert sorted(prompts) == ["greet", "plain"]
                assert [(a.name, a.required) for a in prompts["greet"].arguments or []] == [("name", True)]
                assert not prompts["plain"].arguments

            async def echo() -> None:
                assert text(await c.call_tool("echo", {"text": "hi"})) == "echo: hi"

            async def add() -> None:
                r = await c.call_tool("add", {"a": 2, "b": 3.5})
                assert r.structured_content == {"sum": 5.5}, r
                assert json.loads(text(r)) == {"sum": 5.5}
                r = await c.call_tool("add", {"a": 1, "b": 2})
                assert text(r) == '{"sum":3}', text(r)

            async def slow() -> None:
                seen: list[tuple[float, float | None]] = []

                async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                    seen.append((progress, total))

                r = await c.call_tool("slow", {"steps": 3}, progress_callback=on_progress)
                assert text(r) == "done 3"
                assert seen == [(1, 3), (2, 3), (3, 3)], seen
                assert text(await c.call_tool("slow", {"steps": 2})) == "done 2"

            async def log() -> None:
                if not MODERN:
                    await c.set_logging_level("debug")
                logs.clear()
                assert text(await c.call_tool("log", {"message": "hello log"})) == "logged"
                await anyio.sleep(0.2)
                assert [(l.level, l.data) for l in logs] == [("info", "hello log")], logs
                if not MODERN:
                    await c.set_logging_level("error")
                    logs.clear()
                    assert text(await c.call_tool("log", {"message": "quiet"})) == "logged"
                    await anyio.sleep(0.2)
                    assert logs == [], logs
                    await c.set_logging_level("info")

            async def ask_llm() -> None:
                asked.clear()
                assert text(await c.call_tool("ask_llm", {"prompt": "why?"})) == "sampled: answer to why?"
                kind, params = asked[0]
                assert kind == "sampling" and params.max_tokens == 50, asked
                assert [(m.role, m.content.text) for m in params.messages] == [("user", "why?")]

            async def ask_user() -> None:
                asked.clear()
                elicit_answer.update(action="accept", content={"name": "Ada", "age": 36})
                assert text(await c.call_tool("ask_user", {"question": "who?"})) == 'accept {"name":"Ada","age":36}'
                kind, params = asked[0]
                assert kind == "elicitation" and params.message == "who?", asked
                assert params.requested_schema == PERSON_SCHEMA, params.requested_schema
                assert getattr(params, "mode", "form") in (None, "form"), params
                # Content is echoed as the client sent it: the schema's default age is not filled in.
                elicit_answer.update(action="accept", content={"name": "Bob"})
                assert text(await c.call_tool("ask_user", {"question": "who?"})) == 'accept {"name":"Bob"}'
                elicit_answer.update(action="decline", content=None)
                assert text(await c.call_tool("ask_user", {"question": "who?"})) == "decline null"
                elicit_answer.update(action="cancel", content=None)
                assert text(await c.call_tool("ask_user", {"question": "who?"})) == "cancel null"

            async def roots() -> None:
                assert text(await c.call_tool("roots", {})) == "roots: file:///tmp/one,file:///tmp/two"

            async def fail() -> None:
                r = await c.call_tool("fail", {})
                assert r.is_error is True and text(r) == "failed on purpose", r

            async def add_tool() -> None:
                if MODERN:
                    async with c.listen(tools_list_changed=True) as sub:
                        assert text(await c.call_tool("add_tool", {})) == "added"
                        with anyio.fail_after(5):
                            event = await sub.__anext__()
                        assert type(event).__name__ == "ToolsListChanged", event
                else:
                    notes.clear()
                    assert text(await c.call_tool("add_tool", {})) == "added"
                    await anyio.sleep(0.3)
                    kinds = [type(n).__name__ for n in notes]
                    assert "ToolListChangedNotification" in kinds, kinds
                assert "extra" in [t.name for t in (await c.list_tools()).tools]
                assert text(await c.call_tool("extra", {})) == "extra"

            async def touch() -> None:
                uri = "ref://static/text"
                if MODERN:
                    async with c.listen(resource_subscriptions=[uri]) as sub:
                        assert text(await c.call_tool("touch", {"uri": uri})) == "touched"
                        with anyio.fail_after(5):
                            event = await sub.__anext__()
                        assert type(event).__name__ == "ResourceUpdated" and event.uri == uri, event
                else:
                    notes.clear()
                    assert text(await c.call_tool("touch", {"uri": uri})) == "touched"
                    await anyio.sleep(0.3)
                    assert not [n for n in notes if "ResourceUpdated" in type(n).__name__], notes
                    await c.subscribe_resource(uri)
                    assert text(await c.call_tool("touch", {"uri": uri})) == "touched"
                    await anyio.sleep(0.3)
                    updated = [n for n in notes if "ResourceUpdated" in type(n).__name__]
                    assert len(updated) == 1 and str(updated[0].params.uri) == uri, notes
                    await c.unsubscribe_resource(uri)
                    notes.clear()
                    assert text(await c.call_tool("touch", {"uri": uri})) == "touched"
                    await anyio.sleep(0.3)
                    assert not [n for n in notes if "ResourceUpdated" in type(n).__name__], notes

            async def resources() -> None:
                r = await c.read_resource("ref://static/text")
                assert len(r.contents) == 1 and r.contents[0].text == "static text", r  # type: ignore[union-attr]
                assert r.contents[0].mime_type == "text/plain", r
                r = await c.read_resource("ref://static/blob")
                assert r.contents[0].mime_type == "application/octet-stream", r
                assert base64.b64decode(r.contents[0].blob) == bytes([0, 1, 2, 3]), r  # type: ignore[union-attr]
                r = await c.read_resource("ref://items/7")
                assert r.contents[0].text == "item 7" and str(r.contents[0].uri) == "ref://items/7", r  # type: ignore[union-attr]

            async def prompts() -> None:
                r = await c.get_prompt("greet", {"name": "Ada"})
                assert [(m.role, m.content.text) for m in r.messages] == [("user", "Hello, Ada!")], r  # type: ignore[union-attr]
                r = await c.get_prompt("plain")
                assert [(m.role, m.content.text) for m in r.messages] == [("user", "plain prompt")], r  # type: ignore[union-attr]

            async def complete() -> None:
                r = await c.complete(types.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": "al"})
                assert r.completion.values == ["alice", "albert"], r
                r = await c.complete(types.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": ""})
                assert r.completion.values == ["alice", "albert", "bob"], r
                ref = types.ResourceTemplateReference(type="ref/resource", uri="ref://items/{id}")
                r = await c.complete(ref, {"name": "id", "value": "2"})
                assert r.completion.values == ["2"], r

            for name, fn in [
                ("lists", lists), ("echo", echo), ("add", add), ("slow", slow), ("log", log),
                ("ask_llm", ask_llm), ("ask_user", ask_user), ("roots", roots), ("fail", fail),
                ("add_tool", add_tool), ("touch", touch), ("resources", resources), ("prompts", prompts),
                ("complete", complete),
            ]:
                await check(name, fn)
    print(f"smoke {ERA} {TRANSPORT}: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


anyio.run(main)
