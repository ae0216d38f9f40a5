"""Interop suite: the official Python MCP SDK (``mcp``, pinned in requirements.txt) against
the mcp-rs ``everything`` example server over stdio. That server serves the conformance
suite's fixtures (``@modelcontextprotocol/conformance``); the fixture contract is written
out in the project notes (everything-contract.md). Comments below cite its sections as §N.

    .venv/bin/python -m pytest test_everything.py        (from interop/py; see scripts/test-interop.sh)

Which server to launch:
    MCP_EVERYTHING_CMD   the everything binary (default: <repo>/target/debug/everything)
    MCP_TRANSPORT        stdio (default: the binary run with no arguments) or http (run with
                         `--http 127.0.0.1:0`, one server per test, the SDK's Streamable HTTP
                         client on its /mcp URL)
    MCP_EXPECT_SERVER_NAME  the serverInfo.name to expect (default: mcp-rs-everything; the
                         script sets it for embedded-http, which serves the same fixtures)

Each test starts a fresh server. Tests taking the ``conn`` fixture run in both protocol
eras the SDK speaks: ``handshake`` (``Client(mode="legacy")``, the ``initialize`` handshake
at 2025-11-25) and ``modern`` (``Client(mode="auto")``, which sends ``server/discover`` and
then stays stateless at 2026-07-28, every request carrying its version and capabilities in
``_meta``). ``legacy`` and ``modern`` fixtures pin one era.

Client input goes through the SDK's public callbacks (``sampling_callback``,
``elicitation_callback``, ``list_roots_callback``). In the handshake era the server sends
them as JSON-RPC requests during a call. In the modern era it answers with
``resultType: "input_required"``, and ``mcp.Client`` itself drives the retry: it runs the
embedded requests through the same callbacks and resends the call with ``inputResponses``
and the echoed ``requestState`` (mcp/client/_input_required.py). Tests that must see a
single round use ``client.session.call_tool(..., allow_input_required=True)``.

The SDK checks every result against the negotiated version's schema. In the modern era
that means ``resultType`` on every result, and ``ttlMs``/``cacheScope`` where 2026-07-28
requires them. The transport is also recorded, one copy of each message in each
direction, to check promises the API hides (which requests went out, what came back).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import TypeAdapter

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.subscriptions import PromptsListChanged, ToolsListChanged
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import (
    INVALID_PARAMS,
    LOG_LEVEL_META_KEY,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
)
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from wire import RecordingHttp, RecordingStdio, Wire

REPO = Path(__file__).resolve().parents[2]
SERVER_CMD = os.environ.get("MCP_EVERYTHING_CMD") or str(REPO / "target" / "debug" / "everything")
TRANSPORT = os.environ.get("MCP_TRANSPORT", "stdio")
assert TRANSPORT in ("stdio", "http"), TRANSPORT

RESOURCE_NOT_FOUND = -32002  # 2024-11-05 .. 2025-11-25; 2026-07-28 uses -32602 instead
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# ---- the fixture contract ------------------------------------------------------------------

SERVER_NAME = os.environ.get("MCP_EXPECT_SERVER_NAME") or "mcp-rs-everything"

TOOLS = [  # §2: one page, this order, in both eras
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_reconnection",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_custom_header",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
]
# The tasks extension's fixtures (SEP-2663), listed by everything after the others
# (embedded-http serves no tasks).
TASK_TOOLS = [
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
]


def assert_tool_names(names):
    """The fixtures in order, then, from everything only, the tasks fixtures."""
    assert names[: len(TOOLS)] == TOOLS
    assert names[len(TOOLS) :] in ([], TASK_TOOLS), names[len(TOOLS) :]
PROMPTS = [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
]
RESOURCES = [
    ("test://static-text", "static-text", "text/plain"),
    ("test://static-binary", "static-binary", "image/png"),
    ("test://watched-resource", "watched-resource", "text/plain"),
]
TEMPLATE = "test://template/{id}/data"
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_RESOURCE = ("skill://everything/greeting/SKILL.md", "greeting", "text/markdown")

# §10: the conformance suite's own constant (json-schema-2020-12 scenario), which must come
# back from tools/list unchanged.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

# §7.2 (the tools-call-elicitation scenario's request)
ELICITATION_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}
# §7.3 (SEP-1034): every primitive type with a default
SEP1034_MESSAGE = "Please review and update the form fields with defaults"
SEP1034_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}
# §7.4 (SEP-1330): the five enum forms
SEP1330_MESSAGE = "Please select options from the enum fields"
SEP1330_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


def one_field(name: str, type_: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": type_}}, "required": [name]}


# §8: the MRTR elicitations, by message (every one the test client sees is checked)
NAME_SCHEMA = one_field("name", "string")
MRTR_ELICITATIONS = {
    "What is your name?": NAME_SCHEMA,
    "Step 1: What is your name?": NAME_SCHEMA,
    "Step 2: What is your favorite color?": one_field("color", "string"),
    "Please confirm": one_field("ok", "boolean"),
    "What context should the prompt use?": one_field("context", "string"),
    "Elicitation input": one_field("value", "string"),
    "Streaming elicitation: please provide a value": one_field("value", "string"),
}

# What the test client answers, by elicitation message (the conformance suite's answers).
ELICIT_ANSWERS: dict[str, dict[str, Any]] = {
    "Please provide your information": {"username": "testuser", "email": "test@example.com"},
    SEP1034_MESSAGE: {"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": False},
    SEP1330_MESSAGE: {
        "untitledSingle": "option1",
        "titledSingle": "value1",
        "legacyEnum": "opt1",
        "untitledMulti": ["option1", "option2"],
        "titledMulti": ["value1", "value2"],
    },
    "What is your name?": {"name": "Alice"},
    "Step 1: What is your name?": {"name": "Alice"},
    "Step 2: What is your favorite color?": {"color": "blue"},
    "Please confirm": {"ok": True},
    "What context should the prompt use?": {"context": "test context"},
    "Elicitation input": {"value": "typed"},
    "Streaming elicitation: please provide a value": {"value": "streamed"},
}
SAMPLING_ANSWERS = {
    "What is the capital of France?": "The capital of France is Paris.",
    "Generate a greeting": "Hello there!",
}
DEFAULT_SAMPLING_ANSWER = "This is a test response from the client"
ROOT = types.Root(uri="file:///test/root", name="Test Root")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# ---- the client side: callbacks that answer like the conformance suite -----------------------


@dataclass
class Asked:
    kind: str  # "sampling" | "elicitation" | "roots"
    key: Any  # the JSON-RPC request id (handshake era) or the inputRequests key (modern era)
    params: Any


@dataclass
class Responder:
    asked: list[Asked] = field(default_factory=list)
    roots: list[types.Root] = field(default_factory=lambda: [ROOT])
    # Overrides for a test; return None to fall back to the default answer.
    elicit: Callable[[Any], types.ElicitResult | types.ErrorData | None] | None = None
    unexpected: list[str] = field(default_factory=list)

    async def sampling(
        self, ctx: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        self.asked.append(Asked("sampling", ctx.request_id, params))
        content = params.messages[0].content if params.messages else None
        prompt = content.text if isinstance(content, types.TextContent) else None
        answer = SAMPLING_ANSWERS.get(prompt or "", DEFAULT_SAMPLING_ANSWER)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=answer),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(
        self, ctx: ClientRequestContext, params: Any
    ) -> types.ElicitResult | types.ErrorData:
        self.asked.append(Asked("elicitation", ctx.request_id, params))
        if self.elicit is not None and (override := self.elicit(params)) is not None:
            return override
        message = getattr(params, "message", "")
        expected = MRTR_ELICITATIONS.get(message)
        if expected is not None and params.requested_schema != expected:
            self.unexpected.append(f"elicitation {message!r} asked for {params.requested_schema!r}, not {expected!r}")
        answer = ELICIT_ANSWERS.get(message)
        if answer is None:
            self.unexpected.append(f"elicitation with an unexpected message: {params!r}")
            return types.ErrorData(code=INVALID_PARAMS, message="unexpected elicitation")
        return types.ElicitResult(action="accept", content=answer)

    async def list_roots(self, ctx: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        self.asked.append(Asked("roots", ctx.request_id, None))
        return types.ListRootsResult(roots=self.roots)

    def of(self, kind: str) -> list[Asked]:
        return [a for a in self.asked if a.kind == kind]


# ---- connections -------------------------------------------------------------------------------


@dataclass
class Conn:
    era: str
    client: Client
    wire: Wire
    responder: Responder
    notifications: list[Any]
    logs: list[types.LoggingMessageNotificationParams]

    @property
    def session(self):  # the ClientSession under the Client
        return self.client.session

    @property
    def modern(self) -> bool:
        return self.era == "modern"


_connections = 0


@contextmanager
def http_server(errlog: Any) -> Iterator[str | None]:
    """With MCP_TRANSPORT=http: a fresh `everything --http` on a free loopback port, its URL;
    otherwise None (the stdio transport starts the server itself)."""
    if TRANSPORT != "http":
        yield None
        return
    proc = subprocess.Popen(
        [SERVER_CMD, "--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL, stdout=errlog,
        stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("listening on "), line
        # Keep draining stderr into the log so the server never blocks on a full pipe.
        threading.Thread(target=lambda: errlog.writelines(proc.stderr), daemon=True).start()
        yield f"http://{line.split()[-1]}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@asynccontextmanager
async def connect(
    era: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    *,
    sampling: bool = True,
    elicitation: bool = True,
    roots: bool = True,
) -> AsyncIterator[Conn]:
    """A fresh `everything` server and an SDK `Client` on it, in `era`.

    The callbacks passed decide the client capabilities the SDK declares (sampling,
    elicitation {form, url}, roots {listChanged}). On exit it checks the invariants that
    hold for every exchange.
    """
    global _connections
    _connections += 1
    caplog.set_level(logging.WARNING)
    wire = Wire()
    responder = Responder()
    notifications: list[Any] = []
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_message(message: Any) -> None:
        notifications.append(message)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    log_path = tmp_path / f"everything-{_connections}.stderr"
    with log_path.open("w") as errlog, http_server(errlog) as url:
        transport = (
            RecordingHttp(url, wire)
            if url
            else RecordingStdio(StdioServerParameters(command=SERVER_CMD, args=[]), errlog, wire)
        )
        client = Client(
            transport,
            mode="legacy" if era == "handshake" else "auto",
            read_timeout_seconds=30,
            sampling_callback=responder.sampling if sampling else None,
            elicitation_callback=responder.elicitation if elicitation else None,
            list_roots_callback=responder.list_roots if roots else None,
            logging_callback=on_log,
            message_handler=on_message,
            client_info=types.Implementation(name="mcp-rs-interop-py", version="0.1.0"),
            cache=None,  # every call reaches the server
        )
        try:
            async with client:
                yield Conn(era, client, wire, responder, notifications, logs)
        finally:
            print(f"--- server stderr ({era}) ---\n{log_path.read_text()}")  # shown only on failure
    assert responder.unexpected == []
    # The SDK logs (rather than raises) what it drops: a notification that failed to validate
    # against the negotiated schema, a raising callback, a late response. None is acceptable.
    problems = [
        r.getMessage()
        for r in caplog.records
        if (r.name.startswith("mcp") or r.name == "client") and r.levelno >= logging.WARNING
    ]
    assert problems == [], f"the SDK logged warnings: {problems}"
    assert all(m.get("jsonrpc") == "2.0" for _, m in wire.received)
    if era == "modern":
        # 2026-07-28: the server never sends requests (MRTR instead), and every result says what
        # it is.
        assert wire.server_requests() == [], "a stateless server sent a JSON-RPC request"
        for _, m in wire.received:
            if "result" in m:
                assert m["result"].get("resultType") in ("complete", "input_required"), m
    else:
        for m in wire.server_requests():
            assert m["method"] in ("sampling/createMessage", "elicitation/create", "roots/list", "ping"), m


@pytest.fixture(params=["handshake", "modern"])
def era(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def conn(era: str, tmp_path: Path, caplog: pytest.LogCaptureFixture):
    async with connect(era, tmp_path, caplog) as c:
        yield c


@pytest.fixture
async def legacy(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    async with connect("handshake", tmp_path, caplog) as c:
        yield c


@pytest.fixture
async def modern(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    async with connect("modern", tmp_path, caplog) as c:
        yield c


# ---- helpers ---------------------------------------------------------------------------------


def text_of(result: types.CallToolResult) -> str:
    assert result.is_error is not True, result
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error is True, result
    text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
    assert text, result
    return text


def json_after(text: str, prefix: str) -> Any:
    assert text.startswith(prefix), text
    return json.loads(text[len(prefix) :])


async def expect_error(code: int, awaitable: Any) -> MCPError:
    with pytest.raises(MCPError) as err:
        await awaitable
    assert err.value.code == code, (err.value.code, err.value.message, err.value.data)
    return err.value


@contextmanager
def deprecated_ok() -> Iterator[None]:
    """The handshake-era utilities are deprecated as of 2026-07-28; the SDK warns on every use."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


async def wait_for(cond: Callable[[], bool], seconds: float = 5.0) -> bool:
    with anyio.move_on_after(seconds):
        while not cond():
            await anyio.sleep(0.01)
    return cond()


class RawRequest(types.Request[dict[str, Any], str]):
    """A request whose params the SDK does not model (for malformed-input probes). It still goes
    through the session, so the modern era stamps its `_meta` as usual."""

    method: str
    params: dict[str, Any]


RAW_RESULT: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


def mrtr_rounds(c: Conn, name: str, method: str = "tools/call") -> list[tuple[dict[str, Any], dict[str, Any]]]:
    rounds = c.wire.exchanges(method, name)
    assert rounds and all(r is not None for _, r in rounds), rounds
    return [(q, r) for q, r in rounds if r is not None]


def assert_single_round_trip(c: Conn, name: str) -> None:
    """Handshake era: the call itself carries no MRTR fields and its answer is complete."""
    rounds = mrtr_rounds(c, name)
    assert len(rounds) == 1, rounds
    request, response = rounds[0]
    assert "inputResponses" not in request["params"] and "requestState" not in request["params"]
    assert "result" in response and response["result"].get("resultType") != "input_required"


# ---- lifecycle ---------------------------------------------------------------------------------


async def test_connect(conn: Conn) -> None:
    c = conn.client
    first = conn.wire.sent[0][1]
    if conn.modern:
        assert c.protocol_version == LATEST_MODERN_VERSION
        assert first["method"] == "server/discover"
        assert not any(m.get("method") == "initialize" for _, m in conn.wire.sent)
        discover = conn.session.discover_result
        assert discover is not None and LATEST_MODERN_VERSION in discover.supported_versions
        assert discover.ttl_ms >= 0 and discover.cache_scope in ("public", "private")
    else:
        assert c.protocol_version == LATEST_HANDSHAKE_VERSION
        assert [m["method"] for _, m in conn.wire.sent[:2]] == ["initialize", "notifications/initialized"]
    assert c.server_info is not None and c.server_info.name == SERVER_NAME
    caps = c.server_capabilities
    assert caps.tools is not None and caps.tools.list_changed is True
    assert caps.prompts is not None and caps.prompts.list_changed is True
    assert caps.resources is not None and caps.resources.list_changed is True
    # resources/subscribe is a handshake-era method; 2026-07-28 moves resource subscriptions
    # into subscriptions/listen, whose resourceSubscriptions this server honours for its
    # subscribable resources, so it declares subscribe in both eras.
    assert caps.resources.subscribe is True
    assert caps.completions is not None
    assert caps.logging is not None


async def test_removed_methods_and_legacy_utilities(conn: Conn) -> None:
    """ping, logging/setLevel and resources/(un)subscribe exist only in the handshake era;
    2026-07-28 removed them, so a modern request for them is an unknown method (-32601)."""
    c = conn.client
    with deprecated_ok():
        if conn.modern:
            await expect_error(METHOD_NOT_FOUND, c.send_ping())
            await expect_error(METHOD_NOT_FOUND, c.set_logging_level("info"))
            await expect_error(METHOD_NOT_FOUND, c.subscribe_resource("test://watched-resource"))
            await expect_error(METHOD_NOT_FOUND, c.unsubscribe_resource("test://watched-resource"))
        else:
            await c.send_ping()
            await c.set_logging_level("info")
            await expect_error(INVALID_PARAMS, conn.session.send_request(
                RawRequest(method="logging/setLevel", params={"level": "loud"}), RAW_RESULT))
    # The connection keeps serving either way.
    assert text_of(await c.call_tool("test_simple_text")) == "This is a simple text response for testing."


# ---- tools/list --------------------------------------------------------------------------------


async def test_list_tools(conn: Conn) -> None:
    pages: list[types.ListToolsResult] = []
    cursor: str | None = None
    while True:
        page = await conn.client.list_tools(cursor=cursor)
        pages.append(page)
        cursor = page.next_cursor
        assert len(pages) <= 10
        if cursor is None:
            break
    # The conformance suite never follows nextCursor (json-schema-2020-12, header validation and
    # server-stateless read page one only), so every fixture is on the first page.
    assert len(pages) == 1, f"{len(pages)} pages"
    tools = pages[0].tools
    assert_tool_names([t.name for t in tools])
    for t in tools:
        assert t.description, t.name
        assert t.input_schema.get("type") == "object", t.name
    by_name = {t.name: t for t in tools}
    assert by_name["test_sampling"].input_schema["required"] == ["prompt"]
    assert by_name["test_sampling"].input_schema["properties"]["prompt"]["type"] == "string"
    assert by_name["test_elicitation"].input_schema["required"] == ["message"]
    if conn.modern:
        assert pages[0].ttl_ms >= 0 and pages[0].cache_scope in ("public", "private")
        # Same tools, same order, every time (2026-07-28 tools: deterministic order).
        again = await conn.client.list_tools()
        assert_tool_names([t.name for t in again.tools])
    await expect_error(INVALID_PARAMS, conn.client.list_tools(cursor="not-a-cursor-we-were-given"))


async def test_json_schema_2020_12_tool(conn: Conn) -> None:
    tools = (await conn.client.list_tools()).tools
    tool = next(t for t in tools if t.name == "json_schema_2020_12_tool")
    assert tool.input_schema == JSON_SCHEMA_2020_12, "inputSchema must come back unchanged"
    args = {"name": "Ada", "contactMethod": "email", "email": "ada@example.com", "address": {"city": "London"}}
    text = text_of(await conn.client.call_tool("json_schema_2020_12_tool", args))
    assert json_after(text, "JSON Schema 2020-12 tool called with: ") == args


async def test_custom_header_tool(conn: Conn) -> None:
    """A string parameter mirrored into an HTTP header (2026-07-28 x-mcp-header). The SDK drops
    tools whose annotation is invalid, so being listed in the modern era means it is valid."""
    tools = (await conn.client.list_tools()).tools
    tool = next(t for t in tools if t.name == "test_custom_header")
    region = tool.input_schema["properties"]["region"]
    assert region["type"] == "string" and region["x-mcp-header"] == "Region"
    assert tool.input_schema["required"] == ["region"]
    for value in ["eu-west-1", "Hello", "=?base64?SGVsbG8=?=", "héllo wörld"]:
        assert text_of(await conn.client.call_tool("test_custom_header", {"region": value})) == f"Region: {value}"


# ---- content tools -------------------------------------------------------------------------


async def test_simple_text_without_arguments(conn: Conn) -> None:
    # The suite calls this one with no `arguments` at all; the SDK omits the key for None.
    r = await conn.client.call_tool("test_simple_text")
    assert text_of(r) == "This is a simple text response for testing."
    request, _ = conn.wire.exchanges("tools/call", "test_simple_text")[-1]
    assert "arguments" not in request["params"]
    r = await conn.client.call_tool("test_simple_text", {})
    assert text_of(r) == "This is a simple text response for testing."


async def test_image_and_audio_content(conn: Conn) -> None:
    image = await conn.client.call_tool("test_image_content", {})
    assert image.is_error is not True and len(image.content) == 1
    block = image.content[0]
    assert isinstance(block, types.ImageContent) and block.mime_type == "image/png"
    assert base64.b64decode(block.data, validate=True).startswith(PNG_MAGIC)

    audio = await conn.client.call_tool("test_audio_content", {})
    assert audio.is_error is not True and len(audio.content) == 1
    block = audio.content[0]
    assert isinstance(block, types.AudioContent) and block.mime_type == "audio/wav"
    wav = base64.b64decode(block.data, validate=True)
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"


async def test_embedded_resource_and_mixed_content(conn: Conn) -> None:
    r = await conn.client.call_tool("test_embedded_resource", {})
    assert r.is_error is not True and len(r.content) == 1
    block = r.content[0]
    assert isinstance(block, types.EmbeddedResource)
    assert isinstance(block.resource, types.TextResourceContents)
    assert (str(block.resource.uri), block.resource.mime_type, block.resource.text) == (
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )

    r = await conn.client.call_tool("test_multiple_content_types", {})
    assert r.is_error is not True
    assert [b.type for b in r.content] == ["text", "image", "resource"]
    text, image, resource = r.content
    assert isinstance(text, types.TextContent) and text.text == "Multiple content types test:"
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data, validate=True).startswith(PNG_MAGIC)
    assert isinstance(resource, types.EmbeddedResource)
    assert isinstance(resource.resource, types.TextResourceContents)
    assert str(resource.resource.uri) == "test://mixed-content-resource"
    assert resource.resource.mime_type == "application/json"
    assert json.loads(resource.resource.text) == {"test": "data", "value": 123}


async def test_error_handling_is_a_tool_error(conn: Conn) -> None:
    r = await conn.client.call_tool("test_error_handling", {})
    assert error_text(r) == "This tool intentionally returns an error for testing"
    assert r.structured_content is None
    _, response = conn.wire.exchanges("tools/call", "test_error_handling")[-1]
    assert response is not None and "result" in response and "error" not in response


async def test_reconnection_over_stdio(conn: Conn) -> None:
    r = await conn.client.call_tool("test_reconnection", {})
    assert text_of(r) == (
        "Reconnection test completed successfully. If you received this, "
        "the client properly reconnected after stream closure."
    )


async def test_unknown_tool(conn: Conn) -> None:
    await expect_error(INVALID_PARAMS, conn.client.call_tool("no_such_tool", {}))


# ---- progress ----------------------------------------------------------------------------------


async def test_progress(conn: Conn) -> None:
    updates: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total))

    r = await conn.client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    assert r.is_error is not True and r.content and isinstance(r.content[0], types.TextContent)
    request, response = conn.wire.exchanges("tools/call", "test_tool_with_progress")[-1]
    token = request["params"]["_meta"]["progressToken"]
    wire = [
        m["params"]
        for m in conn.wire.notifications_between(request["id"], "notifications/progress")
        if m["params"]["progressToken"] == token
    ]
    assert [(p["progress"], p.get("total")) for p in wire] == [(0, 100), (50, 100), (100, 100)]
    # Callbacks run as tasks spawned in arrival order; the last may still be pending.
    with anyio.move_on_after(2):
        while len(updates) < 3:
            await anyio.sleep(0.01)
    assert updates == [(0.0, 100.0), (50.0, 100.0), (100.0, 100.0)]

    # Without a progressToken: no progress at all.
    before = len(conn.wire.received)
    r = await conn.client.call_tool("test_tool_with_progress", {})
    assert r.is_error is not True
    assert [m for _, m in conn.wire.received[before:] if m.get("method") == "notifications/progress"] == []


# ---- logging -----------------------------------------------------------------------------------

TOOL_LOGS = ["Tool execution started", "Tool processing data", "Tool execution completed"]


async def test_logging_handshake_era(legacy: Conn) -> None:
    """logging/setLevel sets the session's threshold (RFC 5424 order); the tool logs 3 info messages."""

    async def logged_call(name: str) -> list[dict[str, Any]]:
        r = await legacy.client.call_tool(name, {})
        request, _ = legacy.wire.exchanges("tools/call", name)[-1]
        assert r.is_error is not True
        return [m["params"] for m in legacy.wire.notifications_between(request["id"], "notifications/message")]

    with deprecated_ok():
        await legacy.client.set_logging_level("debug")
        logs = await logged_call("test_tool_with_logging")
        assert [(p["level"], p["data"]) for p in logs] == [("info", t) for t in TOOL_LOGS]
        # Through the SDK's logging_callback as well.
        with anyio.move_on_after(2):
            while len([p for p in legacy.logs if p.data in TOOL_LOGS]) < 3:
                await anyio.sleep(0.01)
        assert [p.data for p in legacy.logs if p.data in TOOL_LOGS] == TOOL_LOGS

        await legacy.client.set_logging_level("warning")
        assert await logged_call("test_tool_with_logging") == []
        assert await logged_call("test_logging_tool") == []

        await legacy.client.set_logging_level("info")
        logs = await logged_call("test_tool_with_logging")
        assert [p["data"] for p in logs] == TOOL_LOGS
        logs = await logged_call("test_logging_tool")
        assert [(p["level"], p["data"]) for p in logs] == [("info", "Diagnostic trace logging activated")]
    r = await legacy.client.call_tool("test_tool_with_logging", {})
    assert text_of(r) == "Tool with logging executed successfully"


async def test_logging_modern_era(modern: Conn) -> None:
    """2026-07-28: a request gets log messages only if its _meta names a level, and only at or
    above it; nothing carries over from one request to the next."""

    async def logged_call(name: str, level: str | None) -> tuple[types.CallToolResult, list[dict[str, Any]]]:
        meta = {LOG_LEVEL_META_KEY: level} if level is not None else None
        r = await modern.client.call_tool(name, {}, meta=meta)
        request, _ = modern.wire.exchanges("tools/call", name)[-1]
        if level is None:
            assert LOG_LEVEL_META_KEY not in request["params"]["_meta"]
        else:
            assert request["params"]["_meta"][LOG_LEVEL_META_KEY] == level
        return r, [m["params"] for m in modern.wire.notifications_between(request["id"], "notifications/message")]

    r, logs = await logged_call("test_logging_tool", None)
    assert text_of(r) == "Logging evaluated" and logs == []
    r, logs = await logged_call("test_tool_with_logging", None)
    assert text_of(r) == "Tool with logging executed successfully" and logs == []

    _, logs = await logged_call("test_logging_tool", "debug")
    assert [(p["level"], p["data"]) for p in logs] == [("info", "Diagnostic trace logging activated")]
    _, logs = await logged_call("test_tool_with_logging", "info")
    assert [(p["level"], p["data"]) for p in logs] == [("info", t) for t in TOOL_LOGS]
    _, logs = await logged_call("test_tool_with_logging", "warning")
    assert logs == []
    # The opt-in does not stick.
    _, logs = await logged_call("test_tool_with_logging", None)
    assert logs == []
    assert not any(m.get("method") == "notifications/message" for m in _unsolicited(modern))


def _unsolicited(c: Conn) -> list[dict[str, Any]]:
    """Notifications that arrived while no request was in flight."""
    out = []
    open_ids: set[Any] = set()
    events = sorted(
        [(at, "sent", m) for at, m in c.wire.sent] + [(at, "received", m) for at, m in c.wire.received],
        key=lambda e: e[0],
    )
    for _, direction, m in events:
        if direction == "sent" and "method" in m and "id" in m:
            open_ids.add(m["id"])
        elif direction == "received" and "method" not in m:
            open_ids.discard(m.get("id"))
        elif direction == "received" and "id" not in m and not open_ids:
            out.append(m)
    return out


# ---- resources ---------------------------------------------------------------------------------


async def test_list_resources_and_templates(conn: Conn) -> None:
    listed = await conn.client.list_resources()
    assert listed.next_cursor is None
    # A server declaring the skills extension (everything; not embedded-http) also lists its
    # skill's SKILL.md, after the fixtures.
    caps = conn.client.server_capabilities
    skills = caps is not None and SKILLS_EXTENSION in (caps.extensions or {})
    assert [(str(r.uri), r.name, r.mime_type) for r in listed.resources] == RESOURCES + (
        [SKILL_RESOURCE] if skills else []
    )
    for r in listed.resources:
        assert r.description, r.uri
    templates = await conn.client.list_resource_templates()
    assert templates.next_cursor is None
    assert [(t.uri_template, t.name, t.mime_type) for t in templates.resource_templates] == [
        (TEMPLATE, "template", "application/json")
    ]
    assert templates.resource_templates[0].description
    if conn.modern:
        for result in (listed, templates):
            assert result.ttl_ms >= 0 and result.cache_scope in ("public", "private")


async def test_read_static_resources(conn: Conn) -> None:
    text = await conn.client.read_resource("test://static-text")
    assert len(text.contents) == 1
    c = text.contents[0]
    assert isinstance(c, types.TextResourceContents)
    assert (str(c.uri), c.mime_type, c.text) == (
        "test://static-text",
        "text/plain",
        "This is the content of the static text resource.",
    )
    if conn.modern:
        assert text.ttl_ms >= 0 and text.cache_scope in ("public", "private")

    binary = await conn.client.read_resource("test://static-binary")
    assert len(binary.contents) == 1
    b = binary.contents[0]
    assert isinstance(b, types.BlobResourceContents)
    assert (str(b.uri), b.mime_type) == ("test://static-binary", "image/png")
    assert base64.b64decode(b.blob, validate=True).startswith(PNG_MAGIC)

    watched = await conn.client.read_resource("test://watched-resource")
    w = watched.contents[0]
    assert isinstance(w, types.TextResourceContents)
    assert (str(w.uri), w.mime_type, w.text) == ("test://watched-resource", "text/plain", "Watched resource content")


@pytest.mark.parametrize("id_", ["123", "abc-42"])
async def test_read_templated_resource(conn: Conn, id_: str) -> None:
    uri = f"test://template/{id_}/data"
    result = await conn.client.read_resource(uri)
    assert len(result.contents) == 1
    c = result.contents[0]
    assert isinstance(c, types.TextResourceContents)
    assert (str(c.uri), c.mime_type) == (uri, "application/json")
    assert json.loads(c.text) == {"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"}


async def test_read_unknown_resource(conn: Conn) -> None:
    uri = "test://nonexistent-resource-for-conformance-testing"
    # 2026-07-28 (SEP-2164): -32602 with the uri in data; before it: -32002 Resource not found.
    err = await expect_error(INVALID_PARAMS if conn.modern else RESOURCE_NOT_FOUND, conn.client.read_resource(uri))
    assert isinstance(err.data, dict) and err.data.get("uri") == uri, err.data
    # A URI the template does not match is unknown too.
    await expect_error(INVALID_PARAMS if conn.modern else RESOURCE_NOT_FOUND,
                       conn.client.read_resource("test://template/123/other"))


async def test_subscribe_and_unsubscribe(legacy: Conn) -> None:
    with deprecated_ok():
        await legacy.client.subscribe_resource("test://watched-resource")
        await legacy.client.unsubscribe_resource("test://watched-resource")
    for method in ("resources/subscribe", "resources/unsubscribe"):
        (_, response), = legacy.wire.exchanges(method)
        assert response is not None and response.get("result") == {}, response


# ---- prompts -----------------------------------------------------------------------------------


async def test_list_prompts(conn: Conn) -> None:
    listed = await conn.client.list_prompts()
    assert listed.next_cursor is None
    assert [p.name for p in listed.prompts] == PROMPTS
    for p in listed.prompts:
        assert p.description, p.name
    by_name = {p.name: p for p in listed.prompts}
    assert not by_name["test_simple_prompt"].arguments
    assert not by_name["test_prompt_with_image"].arguments
    assert [(a.name, a.required) for a in by_name["test_prompt_with_arguments"].arguments or []] == [
        ("arg1", True),
        ("arg2", True),
    ]
    assert [(a.name, a.required) for a in by_name["test_prompt_with_embedded_resource"].arguments or []] == [
        ("resourceUri", True)
    ]


def only_text(message: types.PromptMessage) -> str:
    assert isinstance(message.content, types.TextContent), message
    return message.content.text


async def test_get_prompts(conn: Conn) -> None:
    simple = await conn.client.get_prompt("test_simple_prompt")
    assert [(m.role, only_text(m)) for m in simple.messages] == [("user", "This is a simple prompt for testing.")]
    request, _ = conn.wire.exchanges("prompts/get", "test_simple_prompt")[-1]
    assert "arguments" not in request["params"]

    args = await conn.client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
    assert [(m.role, only_text(m)) for m in args.messages] == [
        ("user", "Prompt with arguments: arg1='hello', arg2='world'")
    ]

    embedded = await conn.client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"})
    first, second = embedded.messages
    assert first.role == "user" and isinstance(first.content, types.EmbeddedResource)
    res = first.content.resource
    assert isinstance(res, types.TextResourceContents)
    assert (str(res.uri), res.mime_type, res.text) == (
        "test://example-resource",
        "text/plain",
        "Embedded resource content for testing.",
    )
    assert (second.role, only_text(second)) == ("user", "Please process the embedded resource above.")

    image = await conn.client.get_prompt("test_prompt_with_image")
    first, second = image.messages
    assert first.role == "user" and isinstance(first.content, types.ImageContent)
    assert first.content.mime_type == "image/png"
    assert base64.b64decode(first.content.data, validate=True).startswith(PNG_MAGIC)
    assert (second.role, only_text(second)) == ("user", "Please analyze the image above.")


async def test_prompt_errors(conn: Conn) -> None:
    await expect_error(INVALID_PARAMS, conn.client.get_prompt("test_prompt_with_arguments", {"arg1": "only one"}))
    await expect_error(INVALID_PARAMS, conn.client.get_prompt("test_prompt_with_embedded_resource"))
    await expect_error(INVALID_PARAMS, conn.client.get_prompt("no_such_prompt"))


# ---- completion --------------------------------------------------------------------------------


async def complete_values(c: Conn, ref: Any, name: str, value: str) -> list[str]:
    r = await c.client.complete(ref, {"name": name, "value": value})
    assert r.completion.has_more in (None, False)
    if r.completion.total is not None:
        assert r.completion.total == len(r.completion.values)
    return r.completion.values


async def test_complete_prompt_argument(conn: Conn) -> None:
    ref = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
    assert await complete_values(conn, ref, "arg1", "pa") == ["paris", "park", "party"]
    assert await complete_values(conn, ref, "arg1", "pari") == ["paris"]
    assert await complete_values(conn, ref, "arg1", "") == ["paris", "park", "party"]
    assert await complete_values(conn, ref, "arg1", "test") == []  # the conformance request
    assert await complete_values(conn, ref, "arg2", "gr") == ["green"]


async def test_complete_template_variable(conn: Conn) -> None:
    ref = types.ResourceTemplateReference(type="ref/resource", uri=TEMPLATE)
    assert await complete_values(conn, ref, "id", "") == ["123", "456", "789"]
    assert await complete_values(conn, ref, "id", "4") == ["456"]
    assert await complete_values(conn, ref, "id", "x") == []


# ---- client input: the legacy-suite tools, in both eras -------------------------------------


def assert_input_path(c: Conn, name: str, keys: list[str]) -> None:
    """How the input was obtained: server requests (handshake) or input_required rounds (modern)."""
    if c.modern:
        rounds = mrtr_rounds(c, name)
        assert len(rounds) == 2, [r for _, r in rounds]
        (first_q, first_r), (retry_q, retry_r) = rounds
        assert first_r["result"]["resultType"] == "input_required"
        assert sorted(first_r["result"]["inputRequests"]) == sorted(keys)
        assert "content" not in first_r["result"] and "ttlMs" not in first_r["result"]
        assert sorted(retry_q["params"]["inputResponses"]) == sorted(keys)
        assert retry_q["params"].get("arguments") == first_q["params"].get("arguments")
        assert retry_r["result"]["resultType"] == "complete"
    else:
        assert_single_round_trip(c, name)


async def test_sampling(conn: Conn) -> None:
    r = await conn.client.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
    assert text_of(r) == "LLM response: This is a test response from the client"
    (asked,) = conn.responder.of("sampling")
    p: types.CreateMessageRequestParams = asked.params
    assert p.max_tokens == 100
    assert len(p.messages) == 1 and p.messages[0].role == "user"
    assert isinstance(p.messages[0].content, types.TextContent)
    assert p.messages[0].content.text == "Test prompt for sampling"
    if conn.modern:
        assert asked.key == "sampling"
    assert_input_path(conn, "test_sampling", ["sampling"])


async def test_elicitation(conn: Conn) -> None:
    r = await conn.client.call_tool("test_elicitation", {"message": "Please provide your information"})
    content = json_after(text_of(r), "User response: action=accept, content=")
    assert content == {"username": "testuser", "email": "test@example.com"}
    (asked,) = conn.responder.of("elicitation")
    assert asked.params.message == "Please provide your information"
    assert asked.params.requested_schema == ELICITATION_SCHEMA
    if conn.modern:
        assert asked.key == "elicitation"
    assert_input_path(conn, "test_elicitation", ["elicitation"])


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_elicitation_declined(conn: Conn, action: str) -> None:
    conn.responder.elicit = lambda params: types.ElicitResult(action=action)
    r = await conn.client.call_tool("test_elicitation", {"message": "Please provide your information"})
    assert text_of(r) == f"User response: action={action}, content={{}}"


async def test_elicitation_sep1034_defaults(conn: Conn) -> None:
    r = await conn.client.call_tool("test_elicitation_sep1034_defaults", {})
    content = json_after(text_of(r), "Elicitation completed: action=accept, content=")
    assert content == ELICIT_ANSWERS[SEP1034_MESSAGE]
    (asked,) = conn.responder.of("elicitation")
    assert asked.params.message == SEP1034_MESSAGE
    assert asked.params.requested_schema == SEP1034_SCHEMA
    # Integer 30 and float 95.5 stay what they are on the wire.
    props = asked.params.requested_schema["properties"]
    assert type(props["age"]["default"]) is int and type(props["score"]["default"]) is float
    assert_input_path(conn, "test_elicitation_sep1034_defaults", ["elicitation"])


async def test_elicitation_sep1330_enums(conn: Conn) -> None:
    r = await conn.client.call_tool("test_elicitation_sep1330_enums", {})
    content = json_after(text_of(r), "Elicitation completed: action=accept, content=")
    assert content == ELICIT_ANSWERS[SEP1330_MESSAGE]
    (asked,) = conn.responder.of("elicitation")
    assert asked.params.message == SEP1330_MESSAGE
    assert asked.params.requested_schema == SEP1330_SCHEMA
    assert_input_path(conn, "test_elicitation_sep1330_enums", ["elicitation"])


async def test_input_needs_declared_capabilities(era: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A client without sampling/elicitation/roots: the server asks for nothing. Handshake era:
    the tool reports an error result; modern era: -32021 naming the missing capability."""
    async with connect(era, tmp_path, caplog, sampling=False, elicitation=False, roots=False) as c:
        cases = [
            ("test_sampling", {"prompt": "hi"}, "sampling"),
            ("test_elicitation", {"message": "hi"}, "elicitation"),
            ("test_elicitation_sep1034_defaults", {}, "elicitation"),
            ("test_input_required_result_elicitation", {}, "elicitation"),
            ("test_input_required_result_list_roots", {}, "roots"),
            ("test_missing_capability", {}, "sampling"),
        ]
        for name, args, cap in cases:
            if c.modern:
                err = await expect_error(MISSING_REQUIRED_CLIENT_CAPABILITY, c.client.call_tool(name, args))
                assert err.data == {"requiredCapabilities": {cap: {}}}, (name, err.data)
            else:
                text = error_text(await c.client.call_tool(name, args))
                assert cap in text.lower(), (name, text)
        assert c.responder.asked == []
        assert c.wire.server_requests() == []
        # The capability filter of test_input_required_result_capabilities: nothing to ask for.
        r = await c.client.call_tool("test_input_required_result_capabilities", {})
        assert text_of(r) == "No supported capabilities declared"


async def test_missing_capability_with_sampling_declared(conn: Conn) -> None:
    assert text_of(await conn.client.call_tool("test_missing_capability", {})) == "Success"
    assert conn.responder.asked == []


async def test_client_refusal_is_a_tool_error(legacy: Conn) -> None:
    """Handshake era: the client answers elicitation/create with a JSON-RPC error; the tool
    reports it as an error result carrying the client's message."""
    legacy.responder.elicit = lambda params: types.ErrorData(code=-1, message="the user closed the dialog")
    r = await legacy.client.call_tool("test_elicitation", {"message": "Please provide your information"})
    assert "the user closed the dialog" in error_text(r)
    (request,) = [m for m in legacy.wire.server_requests() if m["method"] == "elicitation/create"]
    reply = next(m for _, m in legacy.wire.sent if m.get("id") == request["id"] and "method" not in m)
    assert reply["error"]["message"] == "the user closed the dialog"


# ---- MRTR fixtures (input_required in the modern era; server requests in the handshake era) ----


async def test_mrtr_elicitation(conn: Conn) -> None:
    r = await conn.client.call_tool("test_input_required_result_elicitation", {})
    assert text_of(r) == "Hello, Alice!"
    (asked,) = conn.responder.of("elicitation")
    assert asked.params.message == "What is your name?"
    assert asked.params.requested_schema == NAME_SCHEMA
    if conn.modern:
        assert asked.key == "user_name"
        (_, first), (retry, _) = mrtr_rounds(conn, "test_input_required_result_elicitation")
        # The exact round-1 shape (input-required-result-basic-elicitation / -result-type).
        ir = first["result"]["inputRequests"]["user_name"]
        assert ir["method"] == "elicitation/create"
        assert {k: v for k, v in ir["params"].items() if k != "_meta"} == {
            "message": "What is your name?",
            "requestedSchema": NAME_SCHEMA,
        }
        assert retry["params"]["inputResponses"]["user_name"] == {"action": "accept", "content": {"name": "Alice"}}
    assert_input_path(conn, "test_input_required_result_elicitation", ["user_name"])


async def test_mrtr_sampling(conn: Conn) -> None:
    r = await conn.client.call_tool("test_input_required_result_sampling", {})
    assert text_of(r) == "Sampling result: The capital of France is Paris."
    (asked,) = conn.responder.of("sampling")
    assert asked.params.max_tokens == 100
    assert [(m.role, m.content.text) for m in asked.params.messages] == [("user", "What is the capital of France?")]
    if conn.modern:
        assert asked.key == "capital_question"
    assert_input_path(conn, "test_input_required_result_sampling", ["capital_question"])


async def test_mrtr_list_roots(conn: Conn) -> None:
    r = await conn.client.call_tool("test_input_required_result_list_roots", {})
    assert text_of(r) == "Found 1 root(s): file:///test/root"
    (asked,) = conn.responder.of("roots")
    if conn.modern:
        assert asked.key == "client_roots"
    assert_input_path(conn, "test_input_required_result_list_roots", ["client_roots"])

    conn.responder.roots = [types.Root(uri="file:///a"), types.Root(uri="file:///b/c", name="C")]
    r = await conn.client.call_tool("test_input_required_result_list_roots", {})
    assert text_of(r) == "Found 2 root(s): file:///a, file:///b/c"
    conn.responder.roots = []
    r = await conn.client.call_tool("test_input_required_result_list_roots", {})
    assert text_of(r) == "Found 0 root(s)"


async def test_mrtr_request_state(conn: Conn) -> None:
    r = await conn.client.call_tool("test_input_required_result_request_state", {})
    assert text_of(r) == "state-ok: requestState validated"
    (asked,) = conn.responder.of("elicitation")
    assert (asked.params.message, asked.params.requested_schema) == ("Please confirm", one_field("ok", "boolean"))
    if conn.modern:
        assert asked.key == "confirm"
        (_, first), (retry, _) = mrtr_rounds(conn, "test_input_required_result_request_state")
        state = first["result"]["requestState"]
        assert isinstance(state, str) and state
        assert retry["params"]["requestState"] == state  # echoed byte for byte by the SDK
    assert_input_path(conn, "test_input_required_result_request_state", ["confirm"])


async def test_mrtr_request_state_needs_ok(modern: Conn) -> None:
    """Only ok=true completes; ok=false is asked again (input_required, fresh state)."""
    s = modern.session
    name = "test_input_required_result_request_state"
    first = await s.call_tool(name, {}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult) and first.request_state
    no = {"confirm": types.ElicitResult(action="accept", content={"ok": False})}
    again = await s.call_tool(name, {}, input_responses=no, request_state=first.request_state, allow_input_required=True)
    assert isinstance(again, types.InputRequiredResult) and list(again.input_requests or {}) == ["confirm"]
    yes = {"confirm": types.ElicitResult(action="accept", content={"ok": True})}
    done = await s.call_tool(name, {}, input_responses=yes, request_state=again.request_state, allow_input_required=True)
    assert isinstance(done, types.CallToolResult) and text_of(done) == "state-ok: requestState validated"


async def test_mrtr_multiple_inputs(conn: Conn) -> None:
    r = await conn.client.call_tool("test_input_required_result_multiple_inputs", {})
    assert text_of(r) == "Name: Alice; Greeting: Hello there!; Roots: 1"
    (elicit,) = conn.responder.of("elicitation")
    (sample,) = conn.responder.of("sampling")
    (roots,) = conn.responder.of("roots")
    assert (elicit.params.message, elicit.params.requested_schema) == ("What is your name?", NAME_SCHEMA)
    assert sample.params.max_tokens == 50
    assert [(m.role, m.content.text) for m in sample.params.messages] == [("user", "Generate a greeting")]
    if conn.modern:
        assert (elicit.key, sample.key, roots.key) == ("user_name", "greeting", "client_roots")
        (_, first), _ = mrtr_rounds(conn, "test_input_required_result_multiple_inputs")
        assert isinstance(first["result"].get("requestState"), str)
        methods = {k: v["method"] for k, v in first["result"]["inputRequests"].items()}
        assert methods == {
            "user_name": "elicitation/create",
            "greeting": "sampling/createMessage",
            "client_roots": "roots/list",
        }
    assert_input_path(conn, "test_input_required_result_multiple_inputs", ["user_name", "greeting", "client_roots"])


async def test_mrtr_multiple_inputs_partial_answer(modern: Conn) -> None:
    """Answers for only some keys: the server asks again for the rest instead of failing."""
    s = modern.session
    name = "test_input_required_result_multiple_inputs"
    first = await s.call_tool(name, {}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    partial = {"user_name": types.ElicitResult(action="accept", content={"name": "Bob"})}
    again = await s.call_tool(name, {}, input_responses=partial, request_state=first.request_state, allow_input_required=True)
    assert isinstance(again, types.InputRequiredResult)
    assert {"greeting", "client_roots"} <= set(again.input_requests or {})


async def test_mrtr_multi_round(conn: Conn) -> None:
    r = await conn.client.call_tool("test_input_required_result_multi_round", {})
    assert text_of(r) == "Multi-round complete for Alice who likes blue"
    asked = conn.responder.of("elicitation")
    assert [(a.params.message, a.params.requested_schema) for a in asked] == [
        ("Step 1: What is your name?", NAME_SCHEMA),
        ("Step 2: What is your favorite color?", one_field("color", "string")),
    ]
    if conn.modern:
        assert [a.key for a in asked] == ["step1", "step2"]
        rounds = mrtr_rounds(conn, "test_input_required_result_multi_round")
        assert len(rounds) == 3
        (q1, r1), (q2, r2), (q3, r3) = rounds
        assert list(r1["result"]["inputRequests"]) == ["step1"] and list(r2["result"]["inputRequests"]) == ["step2"]
        s1, s2 = r1["result"]["requestState"], r2["result"]["requestState"]
        assert isinstance(s1, str) and isinstance(s2, str) and s1 != s2
        assert "requestState" not in q1["params"]
        assert q2["params"]["requestState"] == s1 and q3["params"]["requestState"] == s2
        assert list(q2["params"]["inputResponses"]) == ["step1"] and list(q3["params"]["inputResponses"]) == ["step2"]
        assert r3["result"]["resultType"] == "complete"
    else:
        assert_single_round_trip(conn, "test_input_required_result_multi_round")


async def test_mrtr_tampered_state(conn: Conn) -> None:
    name = "test_input_required_result_tampered_state"
    r = await conn.client.call_tool(name, {})
    assert text_of(r) == "integrity-ok: state verified"
    if not conn.modern:
        return  # no requestState crosses the wire in the handshake era; the call above is the check
    s = conn.session
    first = await s.call_tool(name, {}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult) and first.request_state
    key = next(iter(first.input_requests or {"confirm": None}))
    ok = {key: types.ElicitResult(action="accept", content={"ok": True})}
    state = first.request_state
    flipped = ("A" if state[0] != "A" else "B") + state[1:]
    for tampered in [state + "-TAMPERED", state[:-1], flipped, "{}"]:
        await expect_error(
            INVALID_PARAMS,
            s.call_tool(name, {}, input_responses=ok, request_state=tampered, allow_input_required=True),
        )
    # The genuine state still works (rejection had no side effect).
    done = await s.call_tool(name, {}, input_responses=ok, request_state=first.request_state, allow_input_required=True)
    assert isinstance(done, types.CallToolResult) and text_of(done) == "integrity-ok: state verified"
    # Another stateful fixture verifies its state too.
    mr = await s.call_tool("test_input_required_result_multi_round", {}, allow_input_required=True)
    assert isinstance(mr, types.InputRequiredResult) and mr.request_state
    step1 = {"step1": types.ElicitResult(action="accept", content={"name": "Mallory"})}
    await expect_error(
        INVALID_PARAMS,
        s.call_tool("test_input_required_result_multi_round", {}, input_responses=step1,
                    request_state=mr.request_state + "-TAMPERED", allow_input_required=True),
    )


async def test_mrtr_missing_and_extra_responses(modern: Conn) -> None:
    s = modern.session
    name = "test_input_required_result_elicitation"
    # input-required-result-missing-input-response: a wrong key is asked again, not an error.
    wrong = {"wrong_key": types.ElicitResult(action="accept", content={"data": "wrong"})}
    again = await s.call_tool(name, {}, input_responses=wrong, allow_input_required=True)
    assert isinstance(again, types.InputRequiredResult)
    assert list(again.input_requests or {}) == ["user_name"]
    # input-required-result-ignore-extra-params: unknown keys are ignored.
    extra = {
        "user_name": types.ElicitResult(action="accept", content={"name": "Alice"}),
        "unknown_extra_key": types.ElicitResult(action="accept", content={"foo": "bar"}),
        "another_unexpected": types.ElicitResult(action="accept", content={"baz": 123}),
    }
    done = await s.call_tool(name, {}, input_responses=extra, allow_input_required=True)
    assert isinstance(done, types.CallToolResult) and text_of(done) == "Hello, Alice!"
    # input-required-result-result-type: the key is on the wire, not inferred.
    first = await s.call_tool(name, {}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    _, response = modern.wire.exchanges("tools/call", name)[-1]
    assert response is not None and response["result"]["resultType"] == "input_required"


@pytest.mark.parametrize("responses", [{"user_name": 12345}, None, "user_name", {"user_name": "Alice"}])
async def test_mrtr_malformed_input_responses(modern: Conn, responses: Any) -> None:
    """input-required-result-validate-input: inputResponses that are not a map of result
    objects are a protocol error (-32602), never a completed call."""
    params = {"name": "test_input_required_result_elicitation", "arguments": {}, "inputResponses": responses}
    await expect_error(INVALID_PARAMS, modern.session.send_request(RawRequest(method="tools/call", params=params), RAW_RESULT))
    request = modern.wire.exchanges("tools/call", "test_input_required_result_elicitation")[-1][0]
    assert request["params"]["_meta"]  # a well-formed modern request apart from inputResponses
    assert "inputResponses" in request["params"] or responses is None


async def test_mrtr_not_on_list_methods(modern: Conn) -> None:
    """input-required-result-unsupported-methods: lists always complete."""
    await modern.client.list_tools()
    await modern.client.list_prompts()
    for method in ("tools/list", "prompts/list"):
        _, response = modern.wire.exchanges(method)[-1]
        assert response is not None and response["result"]["resultType"] == "complete"


async def test_mrtr_capabilities(era: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """input-required-result-capability-check: only ask for what the client declared."""
    name = "test_input_required_result_capabilities"
    async with connect(era, tmp_path, caplog, sampling=True, elicitation=False, roots=False) as c:
        if c.modern:
            first = await c.session.call_tool(name, {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult)
            assert {k: v.method for k, v in (first.input_requests or {}).items()} == {
                "sample_input": "sampling/createMessage"
            }
            assert first.request_state
        r = await c.client.call_tool(name, {})
        assert text_of(r) == "capabilities-ok: received sample_input"
        assert [a.kind for a in c.responder.asked] == ["sampling"]
        (sample,) = c.responder.of("sampling")
        assert sample.params.max_tokens == 50
        assert [(m.role, m.content.text) for m in sample.params.messages] == [("user", "Sample request")]
    async with connect(era, tmp_path, caplog) as c:
        r = await c.client.call_tool(name, {})
        assert text_of(r) == "capabilities-ok: received elicit_input,sample_input"
        (elicit,) = c.responder.of("elicitation")
        assert (elicit.params.message, elicit.params.requested_schema) == (
            "Elicitation input",
            one_field("value", "string"),
        )
        assert c.responder.of("roots") == []


async def test_mrtr_prompt(conn: Conn) -> None:
    """input-required-result-non-tool-request: prompts/get needs input too."""
    prompt = await conn.client.get_prompt("test_input_required_result_prompt")
    assert [(m.role, only_text(m)) for m in prompt.messages] == [("user", "Prompt with context: test context")]
    (asked,) = conn.responder.of("elicitation")
    assert asked.params.message == "What context should the prompt use?"
    assert asked.params.requested_schema == one_field("context", "string")
    rounds = mrtr_rounds(conn, "test_input_required_result_prompt", "prompts/get")
    if conn.modern:
        assert asked.key == "user_context"
        assert len(rounds) == 2
        assert list(rounds[0][1]["result"]["inputRequests"]) == ["user_context"]
        assert list(rounds[1][0]["params"]["inputResponses"]) == ["user_context"]
    else:
        assert len(rounds) == 1


async def test_streaming_elicitation(conn: Conn) -> None:
    r = await conn.client.call_tool("test_streaming_elicitation", {})
    assert text_of(r) == "Streaming elicitation complete: streamed"
    (asked,) = conn.responder.of("elicitation")
    assert asked.params.message == "Streaming elicitation: please provide a value"
    assert asked.params.requested_schema == one_field("value", "string")
    if conn.modern:
        assert asked.key == "user_input"
    assert_input_path(conn, "test_streaming_elicitation", ["user_input"])


# ---- list_changed: subscriptions/listen (modern) and session notifications (handshake) -------


async def next_event(sub: Any, seconds: float = 5.0) -> Any:
    with anyio.fail_after(seconds):
        return await sub.__anext__()


async def no_event(sub: Any, seconds: float = 0.5) -> None:
    with anyio.move_on_after(seconds):
        event = await sub.__anext__()
        pytest.fail(f"unexpected event {event!r}")


async def test_listen_tools_list_changed(modern: Conn) -> None:
    c = modern.client
    async with c.listen(tools_list_changed=True) as sub:
        assert sub.honored.tools_list_changed is True
        assert not sub.honored.prompts_list_changed
        r = await c.call_tool("test_trigger_tool_change", {})
        assert text_of(r) == "Tool list change triggered"
        assert await next_event(sub) == ToolsListChanged()
        # The trigger does not change the list itself.
        assert_tool_names([t.name for t in (await c.list_tools()).tools])
        listen_id = sub.subscription_id
    # On the wire: the ack came first, tagged with the listen request's id (same JSON type),
    # and so did the change notification.
    (listen_request, _), = modern.wire.exchanges("subscriptions/listen")
    assert listen_request["id"] == listen_id
    assert listen_request["params"]["notifications"] == {"toolsListChanged": True}
    tagged = [m for _, m in modern.wire.received if (m.get("params") or {}).get("_meta", {}).get(SUBSCRIPTION_ID) == listen_id]
    assert [m["method"] for m in tagged] == ["notifications/subscriptions/acknowledged", "notifications/tools/list_changed"]
    assert tagged[0]["params"]["notifications"] == {"toolsListChanged": True}
    # Leaving the block cancels the listen (the SDK writes notifications/cancelled from the
    # abandoned request's task, so wait for it); the server stops it and keeps serving.
    def cancels() -> list[Any]:
        return [m["params"]["requestId"] for _, m in modern.wire.sent if m.get("method") == "notifications/cancelled"]

    assert await wait_for(lambda: cancels() == [listen_id], 5), cancels()
    assert text_of(await c.call_tool("test_trigger_tool_change", {})) == "Tool list change triggered"
    await anyio.sleep(0.3)
    late = [m for _, m in modern.wire.received if m.get("id") == listen_id or
            (m.get("params") or {}).get("_meta", {}).get(SUBSCRIPTION_ID) == listen_id]
    assert len(late) == 2, "nothing more for a cancelled listen"


async def test_listen_filters(modern: Conn) -> None:
    c = modern.client
    async with c.listen(prompts_list_changed=True) as prompts, c.listen(tools_list_changed=True) as tools:
        assert prompts.honored.prompts_list_changed is True and not prompts.honored.tools_list_changed
        assert text_of(await c.call_tool("test_trigger_tool_change", {})) == "Tool list change triggered"
        assert await next_event(tools) == ToolsListChanged()
        await no_event(prompts)
        assert text_of(await c.call_tool("test_trigger_prompt_change", {})) == "Prompt list change triggered"
        assert await next_event(prompts) == PromptsListChanged()
        await no_event(tools)
        prompts_id = prompts.subscription_id
    leaked = [
        m for _, m in modern.wire.received
        if m.get("method") == "notifications/tools/list_changed"
        and m["params"]["_meta"].get(SUBSCRIPTION_ID) == prompts_id
    ]
    assert leaked == []


async def test_listen_resources(modern: Conn) -> None:
    """Resource list changes can be listened to, and resource subscriptions on the stream are
    honoured for a subscribable resource the server has; an unknown URI is left out of the ack."""
    c = modern.client
    async with c.listen(
        resources_list_changed=True,
        resource_subscriptions=["test://watched-resource", "test://no-such-resource"],
    ) as sub:
        assert sub.honored.resources_list_changed is True
        assert sub.honored.resource_subscriptions == ["test://watched-resource"]
        assert text_of(await c.call_tool("test_simple_text")) == "This is a simple text response for testing."


async def test_list_changed_handshake_era(legacy: Conn) -> None:
    """Handshake era: the triggers notify the session itself (tools/prompts listChanged)."""
    c = legacy.client
    assert text_of(await c.call_tool("test_trigger_tool_change", {})) == "Tool list change triggered"
    assert text_of(await c.call_tool("test_trigger_prompt_change", {})) == "Prompt list change triggered"
    with anyio.move_on_after(2):
        while len([n for n in legacy.notifications if "ListChanged" in type(n).__name__]) < 2:
            await anyio.sleep(0.01)
    kinds = [type(n).__name__ for n in legacy.notifications if "ListChanged" in type(n).__name__]
    assert kinds == ["ToolListChangedNotification", "PromptListChangedNotification"]
    if TRANSPORT == "http":
        return  # session-wide notifications travel on the session's GET stream, not the call's
    for method, name in [
        ("notifications/tools/list_changed", "test_trigger_tool_change"),
        ("notifications/prompts/list_changed", "test_trigger_prompt_change"),
    ]:
        request, _ = legacy.wire.exchanges("tools/call", name)[-1]
        assert len(legacy.wire.notifications_between(request["id"], method)) == 1, method
