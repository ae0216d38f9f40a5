"""Interop suite: authorization of ``everything --http`` (mcp-tokio's OAuth 2.1 resource server)
seen by the official Python MCP SDK (``mcp``, pinned in requirements.txt).

    .venv/bin/python -m pytest test_auth.py        (from interop/py; see scripts/test-interop.sh)

Each test generates an RSA key pair (``cryptography``), writes its public half as a JWK set,
starts ``everything --http 127.0.0.1:0 --auth-issuer ... --auth-keys <jwks> --auth-scope mcp
--auth-tool-scope test_simple_text=mcp:text`` and signs RS256 access tokens with ``pyjwt``
for the server's resource URI (``aud``), as an authorization server would. What is checked:

* without a token the server answers 401, and the SDK's own helpers read the challenge
  (``resource_metadata``, ``scope``), find the Protected Resource Metadata document there,
  parse it with the SDK's RFC 9728 model and accept its ``resource`` for the server URL;
* the SDK ``Client`` with a bearer token works in both eras (``legacy``: the initialize
  handshake and a session; ``auto``: stateless 2026-07-28), and the ``auth_whoami`` tool sees
  the token's subject and scopes;
* the same client without a token, or with an expired one, fails with the 401; a token
  lacking a tool's scope gets the 403 ``insufficient_scope`` on that call only.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from mcp import Client
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    handle_protected_resource_response,
)
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth_utils import check_resource_allowed

REPO = Path(__file__).resolve().parents[2]
SERVER_CMD = os.environ.get("MCP_EVERYTHING_CMD") or str(REPO / "target" / "debug" / "everything")
ISSUER = "https://auth.example.test"
KID = "interop-1"

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Idp:
    """A stand-in authorization server: one RSA key, published as a JWK set file."""

    def __init__(self, directory: Path) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update(kid=KID, use="sig", alg="RS256")
        self.jwks = directory / "jwks.json"
        self.jwks.write_text(json.dumps({"keys": [jwk]}))

    def token(self, audience: str, *, scope: str = "mcp", subject: str = "alice", expires_in: int = 300) -> str:
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": audience,
            "sub": subject,
            "scope": scope,
            "client_id": "mcp-rs-interop-py",
            "iat": now,
            "exp": now + expires_in,
        }
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": KID})


@contextmanager
def server(idp: Idp, log: Path) -> Iterator[str]:
    """`everything --http` with JWT authorization on a free loopback port: its /mcp URL."""
    args = [
        SERVER_CMD, "--http", "127.0.0.1:0",
        "--auth-issuer", ISSUER, "--auth-keys", str(idp.jwks),
        "--auth-scope", "mcp", "--auth-tool-scope", "test_simple_text=mcp:text",
    ]
    with log.open("w") as errlog:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=errlog, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            assert line.startswith("listening on "), line
            threading.Thread(target=lambda: errlog.writelines(proc.stderr), daemon=True).start()
            yield f"http://{line.split()[-1]}/mcp"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture
def idp(tmp_path: Path) -> Idp:
    return Idp(tmp_path)


@pytest.fixture
def url(idp: Idp, tmp_path: Path) -> Iterator[str]:
    log = tmp_path / "everything.stderr"
    try:
        with server(idp, log) as u:
            yield u
    finally:
        print(f"--- server stderr ---\n{log.read_text() if log.exists() else ''}")  # shown on failure


@asynccontextmanager
async def connect(
    url: str, token: str | None, mode: str, seen: list[httpx2.Response] | None = None
) -> AsyncIterator[Client]:
    """An SDK client with `Authorization: Bearer <token>` (none without a token); every HTTP
    response it gets goes to `seen` (the SDK reports a refused request as -32603 without the
    status)."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        if seen is not None:

            async def record(response: httpx2.Response) -> None:
                seen.append(response)

            http.event_hooks["response"].append(record)
        client = Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            read_timeout_seconds=30,
            cache=None,
        )
        async with client:
            yield client


def refusals(seen: list[httpx2.Response]) -> list[tuple[int, str]]:
    """Status and WWW-Authenticate of the refused requests."""
    return [(r.status_code, r.headers.get("www-authenticate", "")) for r in seen if r.status_code >= 400]


def initialize_body() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "interop", "version": "0"}},
    }


async def test_discovery_from_the_401(url: str) -> None:
    """The SDK's discovery steps, run by hand on the server's answers."""
    async with httpx2.AsyncClient() as http:
        r = await http.post(url, json=initialize_body(), headers={"Accept": "application/json, text/event-stream"})
        assert r.status_code == 401, r.text
        metadata_url = extract_resource_metadata_from_www_auth(r)
        assert metadata_url == url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        assert extract_scope_from_www_auth(r) == "mcp"
        urls = build_protected_resource_metadata_discovery_urls(metadata_url, url)
        assert urls[0] == metadata_url
        prm = await handle_protected_resource_response(await http.get(urls[0]))
        assert prm is not None, "the SDK's RFC 9728 model accepts the document"
        assert check_resource_allowed(url, str(prm.resource))
        assert [str(s).rstrip("/") for s in prm.authorization_servers] == [ISSUER]
        assert prm.scopes_supported == ["mcp"]
        assert prm.bearer_methods_supported == ["header"]
        # The SDK's fallback order ends at the root document, which is served too.
        root = await handle_protected_resource_response(await http.get(urls[-1]))
        assert root is not None and str(root.resource) == str(prm.resource)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_client_with_a_bearer_token(url: str, idp: Idp, mode: str) -> None:
    token = idp.token(url, scope="mcp mcp:text")
    async with connect(url, token, mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "auth_whoami" in names and "test_simple_text" in names
        result = await client.call_tool("auth_whoami", {})
        who = json.loads(result.content[0].text)
        assert who == {"subject": "alice", "issuer": ISSUER, "scopes": ["mcp", "mcp:text"],
                       "clientId": "mcp-rs-interop-py"}
        result = await client.call_tool("test_simple_text", {})
        assert not result.is_error, result


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tool_scope_refused_with_403(url: str, idp: Idp, mode: str) -> None:
    seen: list[httpx2.Response] = []
    async with connect(url, idp.token(url, scope="mcp"), mode, seen) as client:
        with pytest.raises(Exception):
            await client.call_tool("test_simple_text", {})
        [(status, challenge)] = refusals(seen)
        assert status == 403
        assert 'error="insufficient_scope"' in challenge and 'scope="mcp mcp:text"' in challenge, challenge
        # The refusal is per call: the session (or the stateless client) goes on.
        who = json.loads((await client.call_tool("auth_whoami", {})).content[0].text)
        assert who["scopes"] == ["mcp"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("case", ["none", "expired", "other audience"])
async def test_client_refused_without_a_valid_token(url: str, idp: Idp, mode: str, case: str) -> None:
    token = {
        "none": None,
        "expired": idp.token(url, expires_in=-600),
        "other audience": idp.token("https://elsewhere.example/mcp"),
    }[case]
    seen: list[httpx2.Response] = []
    with pytest.raises(BaseException):
        async with connect(url, token, mode, seen) as client:
            await client.list_tools()
    [(status, challenge)] = refusals(seen)[:1]
    assert status == 401
    assert "resource_metadata=" in challenge, challenge
    assert ('error="invalid_token"' in challenge) == (token is not None), challenge
