"""`Fenix`, the client, and `AsyncFenix`, its asyncio twin: one authenticated HTTP
connection pool each, and the resources over it."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Optional

import httpx

from ._generated.client import AuthenticatedClient
from ._transport import AsyncRetryTransport, RetryTransport
from .resources import (
    Apps,
    AsyncApps,
    AsyncDeliveries,
    AsyncEndpoints,
    AsyncEvents,
    AsyncEventTypes,
    AsyncPortalSessions,
    AsyncTokens,
    Deliveries,
    Endpoints,
    Events,
    EventTypes,
    PortalSessions,
    Tokens,
)
from .version import __version__


def _client(base_url: str, token: str, timeout: float, httpx_args: dict[str, Any]) -> AuthenticatedClient:
    return AuthenticatedClient(
        base_url=base_url.rstrip("/"),
        token=token,
        timeout=httpx.Timeout(timeout),
        headers={"User-Agent": f"fenix-sdk-python/{__version__}"},
        raise_on_unexpected_status=False,
        httpx_args=httpx_args,
    )


class Fenix:
    """A client for one Fenix server, e.g. `Fenix("https://fenix.example.com", "fxa_…")`.

    `token` is an API token (admin, or confined to one app). Calls that are
    safe to repeat are retried up to `max_retries` times on 429/503, waiting
    as `Retry-After` says. `timeout` is per request, in seconds. `httpx_args`
    go to the `httpx.Client` (a `transport` is wrapped by the retries). Use it
    as a context manager, or call `close()`, to release its connections.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        httpx_args: Optional[dict[str, Any]] = None,
    ) -> None:
        inner = (httpx_args or {}).get("transport") or httpx.HTTPTransport()
        args = {**(httpx_args or {}), "transport": RetryTransport(inner, max_retries=max_retries)}
        self._client = _client(base_url, token, timeout, args)
        self.apps = Apps(self._client)
        self.endpoints = Endpoints(self._client)
        self.events = Events(self._client)
        self.deliveries = Deliveries(self._client)
        self.event_types = EventTypes(self._client)
        self.portal_sessions = PortalSessions(self._client)
        self.tokens = Tokens(self._client)

    def close(self) -> None:
        """Closes the connection pool."""
        self._client.get_httpx_client().close()

    def __enter__(self) -> Fenix:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.close()


class AsyncFenix:
    """`Fenix` for asyncio: the same resources and arguments, each call awaited
    (`await fenix.apps.get("acme")`), `list_all` an async iterator. Close it
    with `await fenix.aclose()` or `async with AsyncFenix(...) as fenix:`.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        httpx_args: Optional[dict[str, Any]] = None,
    ) -> None:
        inner = (httpx_args or {}).get("transport") or httpx.AsyncHTTPTransport()
        args = {**(httpx_args or {}), "transport": AsyncRetryTransport(inner, max_retries=max_retries)}
        self._client = _client(base_url, token, timeout, args)
        self.apps = AsyncApps(self._client)
        self.endpoints = AsyncEndpoints(self._client)
        self.events = AsyncEvents(self._client)
        self.deliveries = AsyncDeliveries(self._client)
        self.event_types = AsyncEventTypes(self._client)
        self.portal_sessions = AsyncPortalSessions(self._client)
        self.tokens = AsyncTokens(self._client)

    async def aclose(self) -> None:
        """Closes the connection pool."""
        await self._client.get_async_httpx_client().aclose()

    async def __aenter__(self) -> AsyncFenix:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        await self.aclose()
