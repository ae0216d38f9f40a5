"""Reference MCP server on the official Python SDK (``mcp`` 2.3.0, pinned in requirements.txt).

It serves one fixed surface (interop/REFERENCE.md) that the TypeScript reference servers
(interop/ts/reference-legacy.mjs, interop/ts/reference-modern.mjs) serve too, so a single
test can drive the mcp-rs client against every one of them. Nothing here is mcp-rs code:
it is the SDK's ``MCPServer`` used the way its own documentation shows, except where MCPServer
has no public hook (each marked below): the low-level server's handlers for resources/subscribe,
resources/unsubscribe and logging/setLevel, its handshake-era tools.listChanged flag, and the
connection a request belongs to (for per-connection subscriptions and log level).

    python reference_server.py stdio    serve one client on stdin/stdout
    python reference_server.py http     Streamable HTTP on 127.0.0.1, a free port; prints exactly
                                        one line `listening on http://127.0.0.1:PORT/mcp` to stdout

Both protocol eras are served by the same process, as the SDK does on its own:
- stdio: the client's first message decides (``initialize`` -> the handshake era up to
  2025-11-25; a request carrying its version in ``_meta`` / ``server/discover`` -> stateless
  2026-07-28), see mcp.server.runner.serve_dual_era_loop.
- http: a POST whose ``MCP-Protocol-Version`` header names a 2026 version goes to the SDK's
  stateless modern entry (mcp/server/_streamable_http_modern.py); everything else is the
  stateful handshake-era Streamable HTTP transport with ``Mcp-Session-Id`` sessions.

Client input (``ask_llm``, ``ask_user``, ``roots``) goes through the SDK's resolver markers
(``Resolve`` + ``Sample`` / ``Elicit`` / ``ListRoots``, mcp/server/mcpserver/resolve.py): on the
handshake era they become server-to-client requests during the call, on 2026-07-28 the SDK answers
``resultType: "input_required"`` with the requests and a sealed ``requestState``, and resumes
when the client retries with ``inputResponses``.

Server logs go to stderr only (stdout is the stdio transport / the one URL line).
"""

from __future__ import annotations

import functools
import json
import logging
import socket
import sys
import warnings
import weakref
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, ConfigDict

from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import (
    Context,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
)
from mcp.shared.exceptions import MCPDeprecationWarning

# The logging, sampling and roots capabilities are deprecated as of 2026-07-28 (SEP-2577), and
# the SDK warns on every use; the reference server uses them on purpose.
warnings.simplefilter("ignore", MCPDeprecationWarning)

MODERN = "2026-07-28"
ITEM_TEMPLATE = "ref://items/{id}"
NAMES = ["alice", "albert", "bob"]
ITEM_IDS = ["1", "2", "3"]
LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def _drop_titles(schema: dict[str, Any]) -> None:
    """pydantic adds a `title` to every schema and property; the reference surface has none."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)


# `add`'s outputSchema: {type: object, properties: {sum: {type: number}}, required: [sum]}.
# (No docstring: pydantic would publish it as the schema's description.)
class AddResult(BaseModel):
    model_config = ConfigDict(json_schema_extra=_drop_titles)
    sum: float


# `ask_user`'s requestedSchema: {type: object, properties: {name: {type: string},
# age: {type: integer, default: 42}}, required: [name]}.
class Person(BaseModel):
    model_config = ConfigDict(json_schema_extra=_drop_titles)
    name: str
    age: int = 42


def _modern(ctx: Context) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, MODERN)


def _json(value: Any) -> str:
    """Compact JSON, the same bytes JavaScript's JSON.stringify writes for these values."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _number(value: float) -> float | int:
    """3.0 -> 3, so a sum of integers is written as an integer (as JavaScript does)."""
    return int(value) if float(value).is_integer() else value


mcp = MCPServer("py-reference", version="1.0.0", warn_on_duplicate_tools=False, log_level="WARNING")
low = mcp._lowlevel_server  # noqa: SLF001 - the handlers MCPServer has no decorator for

# Handshake era: advertise tools.listChanged (add_tool sends it). MCPServer builds its
# InitializationOptions with the default NotificationOptions (all false) on both transports, so
# the low-level server's factory is given the flag. (On 2026-07-28 the SDK derives listChanged
# and resources.subscribe from subscriptions/listen being served, which MCPServer does.)
low.create_initialization_options = functools.partial(  # type: ignore[method-assign]
    low.create_initialization_options, NotificationOptions(tools_changed=True)
)

# Handshake-era per-connection state: resources/subscribe URIs and the logging/setLevel level,
# dropped with the connection.
_subscriptions: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_log_levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _connection_key(session: Any) -> Any:
    # The SDK's ServerSession is built per request around the connection-scoped Connection.
    return session._connection  # noqa: SLF001


# ---- tools ----------------------------------------------------------------------------------


@mcp.tool(description="Echo the text back", structured_output=False)
def echo(text: str) -> str:
    return f"echo: {text}"


@mcp.tool(description="Add two numbers")
def add(a: float, b: float) -> Annotated[types.CallToolResult, AddResult]:
    total = {"sum": _number(a + b)}
    return types.CallToolResult(content=[types.TextContent(type="text", text=_json(total))], structured_content=total)


@mcp.tool(description="Report progress once per step", structured_output=False)
async def slow(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)  # a no-op without a progressToken
        await anyio.sleep(0.01)
    return f"done {steps}"


@mcp.tool(description="Send a log message (level info)", structured_output=False)
async def log(message: str, ctx: Context) -> str:
    # Handshake era: sent unless logging/setLevel asked for a level above info.
    # 2026-07-28: the SDK sends it only when the request's _meta carries the log level
    # (io.modelcontextprotocol/logLevel) at info or below.
    level = _log_levels.get(_connection_key(ctx.session))
    if _modern(ctx) or level is None or LOG_LEVELS.index(level) <= LOG_LEVELS.index("info"):
        await ctx.info(message)
    return "logged"


def _ask_llm_question(prompt: str) -> Sample:
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=50,
    )


@mcp.tool(description="Ask the client's LLM (sampling/createMessage)", structured_output=False)
async def ask_llm(
    prompt: str,
    sampled: Annotated[types.CreateMessageResult, Resolve(_ask_llm_question)],
) -> str:
    content = sampled.content
    text = content.text if isinstance(content, types.TextContent) else _json(content.model_dump(mode="json"))
    return f"sampled: {text}"


def _ask_user_question(question: str) -> Elicit[Person]:
    return Elicit(question, Person)


@mcp.tool(description="Ask the user (elicitation/create, form mode)", structured_output=False)
async def ask_user(
    question: str,
    answer: Annotated[ElicitationResult[Person], Resolve(_ask_user_question)],
) -> str:
    if answer.action == "accept":
        # The validated content, with the fields the client sent (the default age is not added).
        return f"accept {_json(answer.data.model_dump(mode='json', exclude_unset=True))}"
    return f"{answer.action} null"


def _roots_question() -> ListRoots:
    return ListRoots()


@mcp.tool(description="List the client's roots (roots/list)", structured_output=False)
async def roots(listed: Annotated[types.ListRootsResult, Resolve(_roots_question)]) -> str:
    return "roots: " + ",".join(str(root.uri) for root in listed.roots)


@mcp.tool(description="Always fails (isError result)")
def fail() -> types.CallToolResult:
    # Not `raise ToolError(...)`: MCPServer would prefix the text with "Error executing tool fail: ".
    return types.CallToolResult(content=[types.TextContent(type="text", text="failed on purpose")], is_error=True)


def extra() -> str:
    return "extra"


@mcp.tool(description="Add the tool `extra` and announce the tools list change", structured_output=False)
async def add_tool(ctx: Context) -> str:
    mcp.add_tool(extra, name="extra", description="Added by add_tool", structured_output=False)
    if _modern(ctx):
        # 2026-07-28: to subscriptions/listen streams that asked for tools list changes.
        await ctx.notify_tools_changed()
    else:
        # Handshake era: notifications/tools/list_changed, on this call's own stream (over HTTP
        # the POST's SSE response, ahead of the result) so a client sees it before the result.
        await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)
    return "added"


@mcp.tool(description="Announce an update of the resource `uri` to its subscribers", structured_output=False)
async def touch(uri: str, ctx: Context) -> str:
    if _modern(ctx):
        # 2026-07-28: to subscriptions/listen streams whose resourceSubscriptions hold uri.
        await ctx.notify_resource_updated(uri)
    elif uri in _subscriptions.get(_connection_key(ctx.session), set()):
        notification = types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(uri=uri))
        await ctx.session.send_notification(notification, related_request_id=ctx.request_id)
    return "touched"


# ---- resources --------------------------------------------------------------------------------


@mcp.resource("ref://static/text", name="static_text", mime_type="text/plain")
def static_text() -> str:
    return "static text"


@mcp.resource("ref://static/blob", name="static_blob", mime_type="application/octet-stream")
def static_blob() -> bytes:
    return bytes([0, 1, 2, 3])


@mcp.resource(ITEM_TEMPLATE, name="item", mime_type="text/plain")
def item(id: str) -> str:
    return f"item {id}"


async def _subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
    _subscriptions.setdefault(_connection_key(ctx.session), set()).add(str(params.uri))
    return types.EmptyResult()


async def _unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    _subscriptions.get(_connection_key(ctx.session), set()).discard(str(params.uri))
    return types.EmptyResult()


low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, _subscribe)
low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, _unsubscribe)


# ---- prompts ----------------------------------------------------------------------------------


@mcp.prompt(name="greet", description="Greet someone")
def greet(name: str) -> str:
    return f"Hello, {name}!"


@mcp.prompt(name="plain", description="A prompt without arguments")
def plain() -> str:
    return "plain prompt"


# ---- completion and logging -----------------------------------------------------------------


@mcp.completion()
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    if isinstance(ref, types.PromptReference) and ref.name == "greet" and argument.name == "name":
        choices = NAMES
    elif isinstance(ref, types.ResourceTemplateReference) and ref.uri == ITEM_TEMPLATE and argument.name == "id":
        choices = ITEM_IDS
    else:
        return None
    values = [value for value in choices if value.startswith(argument.value)]
    return types.Completion(values=values, total=len(values), has_more=False)


async def _set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    _log_levels[_connection_key(ctx.session)] = params.level
    return types.EmptyResult()


low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)


# ---- transports -------------------------------------------------------------------------------


async def serve_http() -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    app = mcp.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    # The socket already listens: a client that connects at once waits in the backlog until
    # uvicorn (after the app's lifespan startup) accepts it.
    print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)
    await server.serve(sockets=[sock])


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    if mode == "stdio":
        mcp.run("stdio")
    elif mode == "http":
        anyio.run(serve_http)
    else:
        print("usage: reference_server.py stdio|http", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
