"""Interop suite: the official Python MCP SDK (``mcp``, pinned in requirements.txt) against the
``axum`` example (examples/src/bin/axum.rs): an axum app with routes of its own and the mcp-rs
Streamable HTTP service nested at ``/api/mcp``.

    .venv/bin/python -m pytest test_axum.py        (from interop/py; see scripts/test-interop.sh)

Which server to launch:
    MCP_AXUM_CMD   the axum binary (default: <repo>/target/debug/axum), run with
                   ``--listen 127.0.0.1:0``, one server per test

Both eras the SDK speaks: ``handshake`` (``Client(mode="legacy")``: ``initialize`` at
2025-11-25 and a session id) and ``modern`` (``Client(mode="auto")``: ``server/discover``,
then stateless 2026-07-28 requests). In each: list the tools, call one, and check on the
wire that every request went to the mounted URL and was answered. Plain HTTP checks show the
host's own route untouched, the MCP URL only under its prefix, and a graceful exit (status 0)
on SIGTERM.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import mcp.types as types
from mcp import Client
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from wire import RecordingHttp, Wire

REPO = Path(__file__).resolve().parents[2]
SERVER_CMD = os.environ.get("MCP_AXUM_CMD") or str(REPO / "target" / "debug" / "axum")

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def axum_server(tmp_path: Path) -> Iterator[str]:
    """A fresh `axum --listen 127.0.0.1:0`: its base URL (``http://127.0.0.1:PORT``). On exit
    it is sent SIGTERM and must exit with status 0 within 10 s."""
    log = (tmp_path / "axum.stderr").open("w")
    proc = subprocess.Popen(
        [SERVER_CMD, "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL, stdout=log,
        stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("listening on "), line
        threading.Thread(target=lambda: log.writelines(proc.stderr), daemon=True).start()
        yield f"http://{line.split()[-1]}"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=10)
        log.close()
        print(f"--- axum stderr ---\n{(tmp_path / 'axum.stderr').read_text()}")
        assert code == 0, f"axum exited with status {code} after SIGTERM"


@pytest.fixture(params=["handshake", "modern"])
def era(request: pytest.FixtureRequest) -> str:
    return request.param


async def test_tools_in_both_eras(era: str, tmp_path: Path) -> None:
    wire = Wire()
    with axum_server(tmp_path) as base:
        client = Client(
            RecordingHttp(f"{base}/api/mcp", wire),
            mode="legacy" if era == "handshake" else "auto",
            read_timeout_seconds=30,
            client_info=types.Implementation(name="mcp-rs-interop-axum", version="0.1.0"),
            cache=None,
        )
        async with client:
            if era == "modern":
                assert client.protocol_version == LATEST_MODERN_VERSION
                assert wire.sent[0][1]["method"] == "server/discover"
                assert not any(m.get("method") == "initialize" for _, m in wire.sent)
            else:
                assert client.protocol_version == LATEST_HANDSHAKE_VERSION
                methods = [m["method"] for _, m in wire.sent[:2]]
                assert methods == ["initialize", "notifications/initialized"]
            assert client.server_info is not None
            assert client.server_info.name == "mcp-rs-calculator"

            tools = await client.list_tools()
            names = [t.name for t in tools.tools]
            assert "add_numbers" in names and "roll_dice" in names, names

            result = await client.call_tool("add_numbers", {"number1": 2, "number2": 40})
            assert result.is_error is not True, result
            assert result.structured_content == {"sum": 42.0}, result
            block = result.content[0]
            assert isinstance(block, types.TextContent) and "42" in block.text, block

            # A tool error is a result, not a transport failure.
            bad = await client.call_tool("roll_dice", {"notation": "not dice"})
            assert bad.is_error is True, bad
        # Every request was answered (nothing lost between axum and the service).
        requests = [m for _, m in wire.sent if "id" in m and "method" in m]
        answered = {m.get("id") for _, m in wire.received if "result" in m or "error" in m}
        assert requests and all(m["id"] in answered for m in requests), (requests, answered)
        if era == "modern":
            for _, m in wire.received:
                if "result" in m:
                    assert m["result"].get("resultType") == "complete", m


def request(base: str, method: str, path: str, body: object = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """A plain HTTP/1.1 exchange (the standard library's client): status, headers (lowercase
    names), body."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        payload = None if body is None else json.dumps(body)
        sent = dict(headers or {})
        if payload is not None:
            sent["content-type"] = "application/json"
        conn.request(method, path, payload, headers=sent)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    finally:
        conn.close()


async def test_host_routes_and_the_mount(tmp_path: Path) -> None:
    with axum_server(tmp_path) as base:
        assert request(base, "GET", "/health")[::2] == (200, "ok")
        init = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}},
        }
        accept = {"accept": "application/json, text/event-stream"}
        status, headers, text = request(base, "POST", "/api/mcp", init, accept)
        assert status == 200, text
        assert headers.get("mcp-session-id"), headers
        assert json.loads(text)["result"]["protocolVersion"] == LATEST_HANDSHAKE_VERSION, text
        # The MCP service is mounted at /api/mcp only.
        status, _, text = request(base, "POST", "/mcp", init, accept)
        assert status == 404, text
        # DNS-rebinding protection holds when mounted.
        status, _, text = request(base, "POST", "/api/mcp", init, {**accept, "host": "evil.example"})
        assert status == 403, text
