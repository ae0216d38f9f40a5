"""The cluster of examples/cluster (three `everything --http` instances behind HAProxy, round
robin, Mcp-Session-Id affinity, retries) driven by the official Python MCP SDK client
(``mcp``, pinned in interop/py/requirements.txt).

    scripts/test-cluster.sh            (installs haproxy and the SDK, builds, runs this file)

Every HTTP response names the instance that produced it (``Mcp-Instance``); an httpx event
hook on the SDK's own HTTP client records it with the request, so each test can say which
instance served which part of a page walk, an ``input_required`` round trip or a session.

The module starts the cluster once (run.sh start, on CLUSTER_PORT) and stops it at the
end; the tests run in file order and the last one kills an instance.

    EVERYTHING        the everything binary (default <repo>/target/debug/everything)
    CLUSTER_PORT      HAProxy's port (run.sh; instances on the next three ports)
    CLUSTER_RUN_DIR   run.sh's pid files, logs and keys (default: a pytest temporary dir)
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

import mcp.types as types
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RUN = HERE / "run.sh"
INSTANCES = {"a", "b", "c"}
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


# ---- the cluster ---------------------------------------------------------------------------


@dataclass
class Cluster:
    port: int
    env: dict[str, str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def instance_url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port + 1 + sorted(INSTANCES).index(name)}/mcp"

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [str(RUN), *args], env=self.env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, f"run.sh {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    def stats(self) -> dict[str, dict[str, str]]:
        """HAProxy's CSV statistics of the backend, by server name (and BACKEND)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port + 9}/;csv", timeout=5) as r:
            text = r.read().decode().lstrip("# ")
        return {row["svname"]: row for row in csv.DictReader(io.StringIO(text)) if row["pxname"] == "everything"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Any:
    port = int(os.environ.get("CLUSTER_PORT", "18080"))
    run_dir = Path(os.environ.get("CLUSTER_RUN_DIR") or tmp_path_factory.mktemp("cluster"))
    env = dict(os.environ)
    env.update(
        CLUSTER_PORT=str(port),
        CLUSTER_RUN_DIR=str(run_dir),
        CLUSTER_PAGE_SIZE="5",
        EVERYTHING=os.environ.get("EVERYTHING") or str(REPO / "target" / "debug" / "everything"),
    )
    c = Cluster(port, env)
    try:
        print(c.run("start"))
        yield c
    finally:
        subprocess.run([str(RUN), "stop"], env=env, timeout=60)
        for log in sorted(run_dir.glob("*.log")):
            print(f"--- {log.name} ---\n{log.read_text()}")  # shown only on failure


# ---- recording which instance answered ----------------------------------------------------


@dataclass
class Hit:
    """One HTTP exchange as the SDK's HTTP client saw it."""

    http_method: str
    mcp_method: str | None
    session: str | None
    status: int
    instance: str | None
    content_type: str
    body: Any  # the request's JSON body, if any

    @property
    def params(self) -> dict[str, Any]:
        if not isinstance(self.body, dict):
            return {}
        return self.body.get("params") or {}


@dataclass
class Recorder:
    hits: list[Hit] = field(default_factory=list)

    async def on_response(self, response: httpx2.Response) -> None:
        request = response.request
        try:
            body = json.loads(request.content) if request.content else None
        except (ValueError, httpx2.RequestNotRead):
            body = None
        mcp_method = request.headers.get("mcp-method")
        if mcp_method is None and isinstance(body, dict):
            mcp_method = body.get("method")  # legacy requests carry no Mcp-Method header
        self.hits.append(
            Hit(
                http_method=request.method,
                mcp_method=mcp_method,
                session=request.headers.get("mcp-session-id"),
                status=response.status_code,
                instance=response.headers.get("mcp-instance"),
                content_type=response.headers.get("content-type", ""),
                body=body,
            )
        )

    def of(self, mcp_method: str) -> list[Hit]:
        return [h for h in self.hits if h.mcp_method == mcp_method]


ELICIT_ANSWERS = {  # the conformance fixtures' questions and the answers they expect
    "Step 1: What is your name?": {"name": "Alice"},
    "Step 2: What is your favorite color?": {"color": "blue"},
    "Please confirm": {"ok": True},
}


async def elicitation(ctx: ClientRequestContext, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=ELICIT_ANSWERS[params.message])


@asynccontextmanager
async def connect(url: str, mode: str, recorder: Recorder) -> AsyncIterator[Client]:
    """The SDK's Client on its own Streamable HTTP transport, over an HTTP client that
    records every exchange."""
    http = httpx2.AsyncClient(
        timeout=httpx2.Timeout(30, read=300), event_hooks={"response": [recorder.on_response]}
    )
    async with http:
        client = Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            read_timeout_seconds=30,
            elicitation_callback=elicitation,
            client_info=types.Implementation(name="mcp-rs-cluster-test", version="0.1.0"),
            cache=None,  # every call reaches the server
        )
        async with client:
            yield client


async def walk(client: Client) -> tuple[list[str], int]:
    """Every tool name, page by page; and the number of pages."""
    names: list[str] = []
    cursor: str | None = None
    for pages in range(1, 101):
        page = await client.list_tools(cursor=cursor)
        names += [t.name for t in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            return names, pages
    raise AssertionError("more than 100 pages")


def raw(url: str, method: str, params: dict[str, Any]) -> httpx2.Response:
    """One 2026-07-28 request, by hand (no SDK): for cursors carried between instances."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    return httpx2.post(
        url,
        json=body,
        headers={
            "Accept": "application/json, text/event-stream",
            "Mcp-Protocol-Version": MODERN,
            "Mcp-Method": method,
        },
        timeout=30,
    )


# ---- the tests, in order -------------------------------------------------------------------


async def test_a_page_walk_spans_instances(cluster: Cluster) -> None:
    """2026-07-28, round robin: the pages of one tools/list walk come from different
    instances, each continuing from a cursor another instance minted."""
    rec = Recorder()
    async with connect(cluster.url, "auto", rec) as client:
        names, pages = await walk(client)
    lists = rec.of("tools/list")
    assert len(lists) == pages >= 3, (pages, lists)
    assert all(h.status == 200 for h in lists), lists
    served = [h.instance for h in lists]
    assert set(served) <= INSTANCES and len(set(served)) >= 2, served
    # A cursor minted on one instance was continued on another.
    continued = [
        (prev.instance, h.instance)
        for prev, h in zip(lists, lists[1:])
        if "cursor" in h.params and prev.instance != h.instance
    ]
    assert continued, served
    # Nothing lost or repeated: the same list as one instance alone gives.
    async with connect(cluster.instance_url("a"), "auto", Recorder()) as direct:
        alone, _ = await walk(direct)
    assert names == alone and len(set(names)) == len(names), names
    assert {"test_simple_text", "test_input_required_result_multi_round"} <= set(names)


async def test_an_input_required_round_trip_spans_instances(cluster: Cluster) -> None:
    """2026-07-28: the SDK answers two input_required rounds by itself (elicitations), each
    retry echoing the requestState sealed by the instance that answered the round before;
    the rounds land on different instances and the call completes."""
    rec = Recorder()
    async with connect(cluster.url, "auto", rec) as client:
        r = await client.call_tool("test_input_required_result_multi_round", {})
    assert r.is_error is not True, r
    assert [c.text for c in r.content if isinstance(c, types.TextContent)] == [
        "Multi-round complete for Alice who likes blue"
    ]
    rounds = rec.of("tools/call")
    assert len(rounds) == 3 and all(h.status == 200 for h in rounds), rounds
    assert "requestState" not in rounds[0].params
    assert all(isinstance(h.params.get("requestState"), str) for h in rounds[1:]), rounds
    served = [h.instance for h in rounds]
    assert len(set(served)) >= 2, served
    # At least one retry was answered by another instance than the one that sealed its state.
    assert any(a != b for a, b in zip(served, served[1:])), served


async def test_a_legacy_session_sticks_to_its_instance(cluster: Cluster) -> None:
    """The initialize handshake (2025-11-25): HAProxy learns Mcp-Session-Id from the
    response and sends every later request of the session (POSTs, the GET stream) to the
    same instance; SSE responses with progress work through it."""
    rec = Recorder()
    updates: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    async with connect(cluster.url, "legacy", rec) as client:
        names, pages = await walk(client)
        assert pages >= 3 and len(set(names)) == len(names)
        r = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        assert r.is_error is not True, r
        r = await client.call_tool("test_simple_text", {})
        assert r.is_error is not True, r
        with anyio.move_on_after(2):
            while len(updates) < 3:
                await anyio.sleep(0.01)
        # The SDK opens the session's GET stream in the background once initialized: on a
        # loaded machine it may come after the calls (bounded wait; asserted below).
        with anyio.move_on_after(10):
            while not any(h.http_method == "GET" for h in rec.hits):
                await anyio.sleep(0.01)
    (init,) = [h for h in rec.of("initialize")]
    session_hits = [h for h in rec.hits if h.session]
    sessions = {h.session for h in session_hits}
    assert len(sessions) == 1, sessions
    assert init.instance in INSTANCES
    assert {h.instance for h in session_hits} == {init.instance}, [(h.http_method, h.mcp_method, h.instance) for h in session_hits]
    assert len(session_hits) >= pages + 3, session_hits
    # The progress call was answered with an SSE stream, and the session's GET stream opened.
    assert any(h.mcp_method == "tools/call" and h.content_type.startswith("text/event-stream") for h in session_hits)
    assert any(h.http_method == "GET" and h.status == 200 for h in session_hits), session_hits
    assert updates == [0.0, 50.0, 100.0]


async def test_key_rotation_keeps_cursors_alive_until_retired(cluster: Cluster) -> None:
    """run.sh rotate: a new current key everywhere, the old one accepted for a grace
    period; a cursor minted before the rotation continues on every instance. run.sh retire:
    it is refused everywhere (-32602, HTTP 400), while cursors of the new key page on."""
    first = raw(cluster.url, "tools/list", {})
    assert first.status_code == 200, first.text
    old = first.json()["result"]["nextCursor"]
    cluster.run("rotate")
    seen = set()
    for _ in range(3):
        r = raw(cluster.url, "tools/list", {"cursor": old})
        assert r.status_code == 200, r.text
        seen.add(r.headers["mcp-instance"])
    assert seen == INSTANCES
    new = r.json()["result"]["nextCursor"]
    cluster.run("retire")
    seen = set()
    for _ in range(3):
        r = raw(cluster.url, "tools/list", {"cursor": old})
        assert r.status_code == 400 and r.json()["error"]["code"] == -32602, r.text
        seen.add(r.headers["mcp-instance"])
    assert seen == INSTANCES
    for _ in range(3):
        assert raw(cluster.url, "tools/list", {"cursor": new}).status_code == 200


def retries(cluster: Cluster) -> int:
    backend = cluster.stats()["BACKEND"]
    return int(backend["wretr"] or 0) + int(backend["wredis"] or 0)


async def test_a_killed_instance_loses_no_retried_request(cluster: Cluster) -> None:
    """An instance is killed (SIGKILL) while a legacy session lives on it and a 2026-07-28
    round trip it started is pending. The round trip's retry completes on a survivor (the
    state is sealed with the shared key), a burst of requests sent before HAProxy marks the
    instance down all succeed (refused connections are retried on the others), and the
    legacy client gets 404 for its session and starts a new one on a survivor."""
    legacy_rec, modern_rec = Recorder(), Recorder()
    async with connect(cluster.url, "legacy", legacy_rec) as legacy:
        (init,) = legacy_rec.of("initialize")
        victim = init.instance
        assert victim in INSTANCES
        survivors = INSTANCES - {victim}
        async with connect(cluster.url, "auto", modern_rec) as modern:
            s = modern.session
            name = "test_input_required_result_request_state"
            # First rounds until the victim answers one (round robin: within three).
            for _ in range(6):
                first = await s.call_tool(name, {}, allow_input_required=True)
                if modern_rec.of("tools/call")[-1].instance == victim:
                    break
            else:
                raise AssertionError(f"{victim} answered no first round: {modern_rec.of('tools/call')}")
            assert isinstance(first, types.InputRequiredResult) and first.request_state
            before = retries(cluster)

            cluster.run("kill", victim)
            yes = {"confirm": types.ElicitResult(action="accept", content={"ok": True})}
            done = await s.call_tool(
                name, {}, input_responses=yes, request_state=first.request_state, allow_input_required=True
            )
            assert isinstance(done, types.CallToolResult), done
            assert [c.text for c in done.content] == ["state-ok: requestState validated"]
            assert modern_rec.of("tools/call")[-1].instance in survivors
            burst = len(modern_rec.hits)
            for _ in range(12):
                r = await modern.call_tool("test_simple_text", {})
                assert r.is_error is not True, r
            after = modern_rec.hits[burst:]
            assert len(after) == 12 and all(h.status == 200 for h in after), after
            assert {h.instance for h in after} <= survivors, after
            # Some of them were sent to the dead instance and retried on another.
            assert retries(cluster) > before, cluster.stats()["BACKEND"]

        # The legacy client's session died with its instance: 404, then a new session.
        with pytest.raises(MCPError):
            await legacy.list_tools()
        lost = [h for h in legacy_rec.hits if h.session == init_session(legacy_rec) and h.status == 404]
        assert lost and all(h.instance in survivors for h in lost), legacy_rec.hits[-5:]

    again_rec = Recorder()
    async with connect(cluster.url, "legacy", again_rec) as again:
        names, _ = await walk(again)
        assert "test_simple_text" in names
    (init,) = again_rec.of("initialize")
    assert init.instance in survivors
    assert {h.instance for h in again_rec.hits if h.session} <= survivors

    status = subprocess.run([str(RUN), "status"], env=cluster.env, capture_output=True, text=True, timeout=30)
    assert status.returncode == 3 and f"{victim}: not running" in status.stdout, status.stdout


def init_session(rec: Recorder) -> str | None:
    """The session id of the first request that carried one (the session initialize made)."""
    return next((h.session for h in rec.hits if h.session), None)
