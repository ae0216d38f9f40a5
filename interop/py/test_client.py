"""Interop suite: the official Python MCP SDK (``mcp``, pinned in requirements.txt) against
the mcp-rs ``calculator`` example server over stdio.

    .venv/bin/python -m pytest test_client.py        (from interop/py; see scripts/test-interop.sh)

Which server to launch:
    MCP_SERVER_CMD    the calculator binary (default: <repo>/target/debug/calculator)
    MCP_SERVER_ARGS   JSON array of its arguments (default: ["--extra-tools", "120"])

Every test runs against a fresh server in both protocol eras the SDK speaks:
``handshake`` (``ClientSession.initialize()``, the latest dated handshake version,
2025-11-25 in mcp 2.3.0) and ``modern`` (``ClientSession.discover()``: stateless 2026-07-28,
every request carrying its version and capabilities in ``_meta``). The SDK validates each
result against the negotiated version's schema and each ``structuredContent`` against the
tool's ``outputSchema`` (jsonschema). The transport streams are only observed (a copy of each
message in each direction) to check wire-level promises the API hides, such as "no response
arrives for a cancelled request".
"""

from __future__ import annotations

import json
import logging
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND, REQUEST_TIMEOUT
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from wire import RecordingReadStream, RecordingWriteStream, Wire

REPO = Path(__file__).resolve().parents[2]
SERVER_CMD = os.environ.get("MCP_SERVER_CMD") or str(REPO / "target" / "debug" / "calculator")
SERVER_ARGS: list[str] = json.loads(os.environ.get("MCP_SERVER_ARGS") or '["--extra-tools", "120"]')

EXTRA_TOOLS = 120
SEED_TOOLS = ["add_numbers", "calculate", "roll_dice", "tell_fortune"]
SLOW = "slow_count"  # being added by the lead; the progress/cancel tests need it

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# ---- the connection fixture ------------------------------------------------------------------


@dataclass
class Conn:
    era: str
    session: ClientSession
    wire: Wire
    notifications: list[Any]
    init: types.InitializeResult | None = None
    discover: types.DiscoverResult | None = None


@pytest.fixture(params=["handshake", "modern"])
async def conn(request: pytest.FixtureRequest, tmp_path: Path, caplog: pytest.LogCaptureFixture):
    era: str = request.param
    caplog.set_level(logging.WARNING, logger="mcp")
    wire = Wire()
    notifications: list[Any] = []

    async def on_message(message: Any) -> None:
        notifications.append(message)

    params = StdioServerParameters(command=SERVER_CMD, args=SERVER_ARGS)
    log_path = tmp_path / "calculator.stderr"
    with log_path.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(
                RecordingReadStream(read, wire),
                RecordingWriteStream(write, wire),
                read_timeout_seconds=30,
                message_handler=on_message,
                client_info=types.Implementation(name="mcp-rs-interop-py", version="0.1.0"),
            ) as session:
                c = Conn(era=era, session=session, wire=wire, notifications=notifications)
                if era == "handshake":
                    c.init = await session.initialize()
                else:
                    c.discover = await session.discover()
                yield c
    print(log_path.read_text())  # shown by pytest only when the test failed
    # The SDK logs (rather than raises) what it drops: a notification that failed to validate
    # against the negotiated schema, a raising callback, a dropped tool. None is acceptable.
    problems = [r.getMessage() for r in caplog.records if r.name.startswith("mcp") and r.levelno >= logging.WARNING]
    assert problems == [], f"the SDK logged warnings: {problems}"


# ---- helpers ---------------------------------------------------------------------------------


def texts(result: types.CallToolResult) -> list[str]:
    out = []
    for block in result.content:
        assert isinstance(block, types.TextContent), block
        out.append(block.text)
    return out


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """A successful structured result whose JSON is mirrored in a text block (spec 2025-06-18+,
    "Structured Content": a tool returning structured content SHOULD also return the
    serialized JSON in a TextContent block)."""
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict), result
    mirrored = []
    for t in texts(result):
        try:
            mirrored.append(json.loads(t) == result.structured_content)
        except ValueError:
            pass
    assert any(mirrored), f"no text block mirrors structuredContent: {result}"
    return result.structured_content


def tool_error(result: types.CallToolResult) -> str:
    assert result.is_error is True, result
    assert result.structured_content is None
    text = "\n".join(texts(result))
    assert text
    return text


async def list_all_tools(session: ClientSession) -> tuple[list[types.ListToolsResult], list[types.Tool]]:
    pages: list[types.ListToolsResult] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        )
        pages.append(page)
        assert page.tools, f"page {len(pages)} is not empty"
        cursor = page.next_cursor
        assert len(pages) <= 50, "pagination terminates"
        if cursor is None:
            break
    return pages, [t for p in pages for t in p.tools]


async def require_slow(c: Conn) -> None:
    # Fail (not skip) while the tool is missing: the suite's contract includes it.
    _, tools = await list_all_tools(c.session)
    assert SLOW in {t.name for t in tools}, f"{SLOW} is not listed by the server (not implemented yet)"


async def wait_for(cond, seconds: float = 5.0) -> bool:
    with anyio.move_on_after(seconds):
        while not cond():
            await anyio.sleep(0.01)
    return cond()


def call_ids(c: Conn, name: str) -> list[Any]:
    return [m["id"] for _, m in c.wire.sent if m.get("method") == "tools/call" and m["params"]["name"] == name]


# ---- lifecycle -------------------------------------------------------------------------------


async def test_connect(conn: Conn) -> None:
    s = conn.session
    if conn.era == "handshake":
        assert conn.init is not None
        assert conn.init.protocol_version == LATEST_HANDSHAKE_VERSION
        assert s.protocol_version == LATEST_HANDSHAKE_VERSION
        assert [m["method"] for _, m in conn.wire.sent[:2]] == ["initialize", "notifications/initialized"]
    else:
        assert conn.discover is not None
        assert LATEST_MODERN_VERSION in conn.discover.supported_versions
        assert s.protocol_version == LATEST_MODERN_VERSION
        assert conn.wire.sent[0][1]["method"] == "server/discover"
        assert not any(m.get("method") == "initialize" for _, m in conn.wire.sent)
    assert s.server_info is not None and s.server_info.name == "mcp-rs-calculator"
    assert s.server_capabilities is not None and s.server_capabilities.tools is not None
    assert "add_numbers" in (s.instructions or "")


async def test_ping_and_logging(conn: Conn) -> None:
    if conn.era == "modern":
        # 2026-07-28 drops ping and logging/setLevel (the SDK's own method table has neither
        # at that version): the server refuses them as unknown methods.
        with pytest.raises(MCPError) as err:
            await conn.session.send_ping()
        assert err.value.code == METHOD_NOT_FOUND
        return
    await conn.session.send_ping()
    assert conn.session.server_capabilities.logging is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)  # deprecated as of 2026-07-28
        await conn.session.set_logging_level("warning")


# ---- tools/list ------------------------------------------------------------------------------


async def test_list_tools_paginates(conn: Conn) -> None:
    pages, tools = await list_all_tools(conn.session)
    names = [t.name for t in tools]
    unique = set(names)
    assert len(unique) == len(names), "no tool is listed twice across pages"
    expected = len(SEED_TOOLS) + EXTRA_TOOLS + (1 if SLOW in unique else 0)
    assert len(unique) == expected
    assert len(pages) >= 3, f"at least 3 pages, got {len(pages)}"
    for name in SEED_TOOLS + [f"extra_tool_{i:03}" for i in range(1, EXTRA_TOOLS + 1)]:
        assert name in unique, name
    for tool in tools:
        assert tool.input_schema["type"] == "object", tool.name
    for name in SEED_TOOLS:
        tool = next(t for t in tools if t.name == name)
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
    # A cursor the server never issued is a protocol error, not an empty page.
    with pytest.raises(MCPError) as err:
        await conn.session.list_tools(params=types.PaginatedRequestParams(cursor="not-a-cursor-we-were-given"))
    assert err.value.code == INVALID_PARAMS


# ---- seed tools --------------------------------------------------------------------------------


async def test_output_schemas_are_enforced_by_the_sdk(conn: Conn) -> None:
    """The SDK compiles our outputSchemas (check_schema against the draft they declare) and
    rejects a result that breaks one: a control proving the validation below is live."""
    s = conn.session
    await list_all_tools(s)
    for name in SEED_TOOLS:
        good = await {
            "add_numbers": lambda: s.call_tool("add_numbers", {"number1": 1, "number2": 2}),
            "calculate": lambda: s.call_tool("calculate", {"operation": "add", "a": 1, "b": 2}),
            "roll_dice": lambda: s.call_tool("roll_dice", {"notation": "d6"}),
            "tell_fortune": lambda: s.call_tool("tell_fortune", {"category": "general"}),
        }[name]()
        await s.validate_tool_result(name, good)
        bad = good.model_copy(update={"structured_content": {"unexpected": "field"}})
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await s.validate_tool_result(name, bad)


async def test_add_numbers(conn: Conn) -> None:
    s = conn.session
    r = await s.call_tool("add_numbers", {"number1": 2, "number2": 40})
    assert structured(r) == {"sum": 42}
    assert "42" in texts(r)[0]
    assert structured(await s.call_tool("add_numbers", {"number1": 0.1, "number2": 0.2}))["sum"] == 0.1 + 0.2
    assert structured(await s.call_tool("add_numbers", {"number1": -1.5, "number2": 1e300}))["sum"] == -1.5 + 1e300


@pytest.mark.parametrize(
    ("operation", "a", "b"), [("add", 40, 2), ("subtract", 50, 8), ("multiply", 6, 7), ("divide", 84, 2)]
)
async def test_calculate(conn: Conn, operation: str, a: float, b: float) -> None:
    r = await conn.session.call_tool("calculate", {"operation": operation, "a": a, "b": b})
    assert structured(r) == {"result": 42}


async def test_calculate_divide_by_zero_is_a_tool_error(conn: Conn) -> None:
    r = await conn.session.call_tool("calculate", {"operation": "divide", "a": 1, "b": 0})
    assert "zero" in tool_error(r).lower()
    third = await conn.session.call_tool("calculate", {"operation": "divide", "a": 1, "b": 3})
    assert structured(third)["result"] == 1 / 3


@pytest.mark.parametrize(
    ("notation", "count", "sides", "modifier"),
    [("2d6+3", 2, 6, 3), ("d20", 1, 20, 0), ("4d8-1", 4, 8, -1), ("100d1000+1000", 100, 1000, 1000)],
)
async def test_roll_dice(conn: Conn, notation: str, count: int, sides: int, modifier: int) -> None:
    for _ in range(5):
        s = structured(await conn.session.call_tool("roll_dice", {"notation": notation}))
        assert len(s["rolls"]) == count
        assert all(isinstance(r, int) and 1 <= r <= sides for r in s["rolls"]), s
        assert s["modifier"] == modifier
        assert s["total"] == sum(s["rolls"]) + modifier
        assert count + modifier <= s["total"] <= count * sides + modifier


async def test_roll_dice_invalid_notation(conn: Conn) -> None:
    for notation in ["xx", "0d6", "2d1", "2d6+"]:
        r = await conn.session.call_tool("roll_dice", {"notation": notation})
        assert "notation" in tool_error(r).lower(), notation


async def test_tell_fortune(conn: Conn) -> None:
    for category in ["love", "career", "health", "wealth", "general"]:
        s = structured(await conn.session.call_tool("tell_fortune", {"category": category}))
        assert s["category"] == category
        assert s["mood"] == "mysterious"
        assert s["fortune"]
    for mood in ["optimistic", "mysterious", "cautious"]:
        s = structured(await conn.session.call_tool("tell_fortune", {"category": "career", "mood": mood}))
        assert (s["category"], s["mood"]) == ("career", mood)


async def test_bad_arguments_and_unknown_tool(conn: Conn) -> None:
    s = conn.session
    tool_error(await s.call_tool("add_numbers", {"number1": "two", "number2": 40}))
    tool_error(await s.call_tool("tell_fortune", {}))
    with pytest.raises(MCPError) as err:
        await s.call_tool("no_such_tool", {})
    assert err.value.code == INVALID_PARAMS


async def test_extra_tools_echo(conn: Conn) -> None:
    value = 'héllo "wörld"\n\\ ✓ 🦀'
    for name in ["extra_tool_001", "extra_tool_060", f"extra_tool_{EXTRA_TOOLS:03}"]:
        r = await conn.session.call_tool(name, {"value": value})
        assert not r.is_error
        assert texts(r) == [value], name


# ---- slow_count: progress and cancellation ---------------------------------------------------


async def test_progress(conn: Conn) -> None:
    await require_slow(conn)
    n = 5
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    r = await conn.session.call_tool(SLOW, {"n": n, "delay_ms": 20}, progress_callback=on_progress)
    assert structured(r) == {"count": n}
    assert f"Counted to {n}" in texts(r)
    # Callbacks run as tasks spawned in arrival order; the last may still be pending.
    assert await wait_for(lambda: len(updates) >= n, 2.0), updates
    assert updates == [(float(i), float(n), f"{i}/{n}") for i in range(1, n + 1)]
    # On the wire: the request's own token, every notification before the response.
    req_id = call_ids(conn, SLOW)[-1]
    request = next(m for _, m in conn.wire.sent if m.get("id") == req_id and "method" in m)
    token = request["params"]["_meta"]["progressToken"]
    received = [m for _, m in conn.wire.received]
    progress_at = [i for i, m in enumerate(received) if m.get("method") == "notifications/progress"
                   and m["params"]["progressToken"] == token]
    response_at = next(i for i, m in enumerate(received) if m.get("id") == req_id and "method" not in m)
    assert len(progress_at) == n
    assert max(progress_at) < response_at


async def test_no_progress_without_token(conn: Conn) -> None:
    await require_slow(conn)
    before = len(conn.wire.received)
    r = await conn.session.call_tool(SLOW, {"n": 3, "delay_ms": 5})
    assert structured(r) == {"count": 3}
    assert [m for _, m in conn.wire.received[before:] if m.get("method") == "notifications/progress"] == []


async def test_concurrent_calls(conn: Conn) -> None:
    """Calls in flight together complete out of order, each with its own result and progress."""
    await require_slow(conn)
    progress: dict[str, list[float]] = {"long": [], "short": []}
    results: dict[str, types.CallToolResult] = {}
    order: list[str] = []

    def recorder(name: str):
        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress[name].append(p)

        return on_progress

    async def run(name: str, tool: str, args: dict[str, Any], track: bool) -> None:
        cb = recorder(name) if track else None
        results[name] = await conn.session.call_tool(tool, args, progress_callback=cb)
        order.append(name)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, "long", SLOW, {"n": 4, "delay_ms": 150}, True)
        tg.start_soon(run, "short", SLOW, {"n": 2, "delay_ms": 10}, True)
        tg.start_soon(run, "quick", "add_numbers", {"number1": 40, "number2": 2}, False)
    assert structured(results["long"]) == {"count": 4}
    assert structured(results["short"]) == {"count": 2}
    assert structured(results["quick"]) == {"sum": 42}
    assert order[-1] == "long", order
    assert await wait_for(lambda: len(progress["long"]) == 4 and len(progress["short"]) == 2, 2.0), progress
    assert progress == {"long": [1.0, 2.0, 3.0, 4.0], "short": [1.0, 2.0]}


async def _assert_cancel_honoured(conn: Conn, req_id: Any, cancelled_at: float) -> None:
    """After a cancel: the SDK sent notifications/cancelled, the server keeps serving promptly,
    never answers the cancelled id (spec basic/utilities/cancellation: receivers SHOULD NOT
    send a response for a cancelled request) and stops its progress for it."""
    cancels = [m for _, m in conn.wire.sent if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels][-1:] == [req_id], cancels
    t0 = time.monotonic()
    r = await conn.session.call_tool("add_numbers", {"number1": 40, "number2": 2})
    assert structured(r) == {"sum": 42}
    assert time.monotonic() - t0 < 2.0, "the follow-up call was answered promptly"
    assert structured(await conn.session.call_tool(SLOW, {"n": 2, "delay_ms": 10})) == {"count": 2}
    await anyio.sleep(1.0)
    late = [m for at, m in conn.wire.received if at > cancelled_at and m.get("id") == req_id]
    assert late == [], "no response for the cancelled request"
    token = next(m for _, m in conn.wire.sent if m.get("id") == req_id)["params"].get("_meta", {}).get("progressToken")
    stray = [m for at, m in conn.wire.received if at > cancelled_at + 0.5
             and m.get("method") == "notifications/progress" and m["params"]["progressToken"] == token]
    assert stray == [], "progress for the cancelled call stops"


async def test_cancel_scope_cancels_the_call(conn: Conn) -> None:
    await require_slow(conn)
    updates: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            async def watcher() -> None:
                await wait_for(lambda: len(updates) >= 2, 5.0)
                scope.cancel()

            tg.start_soon(watcher)
            await conn.session.call_tool(SLOW, {"n": 1000, "delay_ms": 50}, progress_callback=on_progress)
            pytest.fail("slow_count(1000 x 50 ms) returned before it was cancelled")
    cancelled_at = time.monotonic()
    assert scope.cancelled_caught
    assert len(updates) >= 2, "the call made progress before it was cancelled"
    await _assert_cancel_honoured(conn, call_ids(conn, SLOW)[-1], cancelled_at)


async def test_read_timeout_cancels_the_call(conn: Conn) -> None:
    await require_slow(conn)
    with pytest.raises(MCPError) as err:
        await conn.session.call_tool(SLOW, {"n": 1000, "delay_ms": 50}, read_timeout_seconds=0.3)
    cancelled_at = time.monotonic()
    assert err.value.code == REQUEST_TIMEOUT
    await _assert_cancel_honoured(conn, call_ids(conn, SLOW)[-1], cancelled_at)


async def test_every_message_is_jsonrpc(conn: Conn) -> None:
    await conn.session.call_tool("add_numbers", {"number1": 1, "number2": 1})
    assert conn.wire.received
    assert all(m.get("jsonrpc") == "2.0" for _, m in conn.wire.received)
