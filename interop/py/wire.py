"""The transport recorder shared by the interop suites: wraps an SDK transport's streams and
keeps one copy of every JSON-RPC message in each direction, to check what the SDK API hides
(which requests went out, what came back, in what order)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from mcp import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


@dataclass
class Wire:
    """Every JSON-RPC message in each direction, as dicts, with a monotonic timestamp."""

    sent: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    received: list[tuple[float, dict[str, Any]]] = field(default_factory=list)

    @staticmethod
    def dump(item: Any) -> dict[str, Any] | None:
        message = getattr(item, "message", None)
        if message is None:
            return None  # a transport-level Exception item
        return message.model_dump(by_alias=True, mode="json", exclude_none=True)

    def server_requests(self) -> list[dict[str, Any]]:
        return [m for _, m in self.received if "method" in m and "id" in m]

    def exchanges(self, method: str, name: str | None = None) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """(request, response) pairs of client requests, in send order; response None if none arrived."""
        out = []
        for _, m in self.sent:
            if m.get("method") != method or "id" not in m:
                continue
            if name is not None and (m.get("params") or {}).get("name") != name:
                continue
            response = next(
                (r for _, r in self.received if "method" not in r and r.get("id") == m["id"]),
                None,
            )
            out.append((m, response))
        return out

    def notifications_between(self, request_id: Any, method: str) -> list[dict[str, Any]]:
        """Notifications of `method` received after the request went out and before its response."""
        sent_at = next(at for at, m in self.sent if m.get("id") == request_id and "method" in m)
        answered_at = next(
            (at for at, m in self.received if "method" not in m and m.get("id") == request_id), float("inf")
        )
        return [m for at, m in self.received if sent_at <= at <= answered_at and m.get("method") == method]


class _Proxy:
    """Forwards everything but what a subclass records to the wrapped stream."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Any:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class RecordingReadStream(_Proxy):

    def _record(self, item: Any) -> Any:
        if (d := Wire.dump(item)) is not None:
            self._wire.received.append((time.monotonic(), d))
        return item

    async def receive(self) -> Any:
        return self._record(await self._inner.receive())

    def __aiter__(self) -> RecordingReadStream:
        return self

    async def __anext__(self) -> Any:
        return self._record(await self._inner.__anext__())


class RecordingWriteStream(_Proxy):
    async def send(self, item: Any, /) -> None:
        if (d := Wire.dump(item)) is not None:
            self._wire.sent.append((time.monotonic(), d))
        await self._inner.send(item)


class Recording:
    """A `mcp.client` Transport: one of the SDK's own transports, with both streams recorded."""

    def __init__(self, transport: Any, wire: Wire) -> None:
        self._cm = transport
        self._wire = wire

    async def __aenter__(self) -> tuple[RecordingReadStream, RecordingWriteStream]:
        read, write = await self._cm.__aenter__()
        return RecordingReadStream(read, self._wire), RecordingWriteStream(write, self._wire)

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._cm.__aexit__(*exc)


class RecordingStdio(Recording):
    """The SDK's `stdio_client`, recorded."""

    def __init__(self, params: StdioServerParameters, errlog: Any, wire: Wire) -> None:
        super().__init__(stdio_client(params, errlog=errlog), wire)


class RecordingHttp(Recording):
    """The SDK's `streamable_http_client` on `url`, recorded."""

    def __init__(self, url: str, wire: Wire) -> None:
        super().__init__(streamable_http_client(url), wire)
