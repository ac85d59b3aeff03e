"""`Fenix`, the client: one authenticated HTTP connection pool and the resources over it."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Optional

import httpx

from ._generated.client import AuthenticatedClient
from ._transport import RetryTransport
from .resources import Apps, Deliveries, Endpoints, Events, EventTypes, PortalSessions, Tokens
from .version import __version__


class Fenix:
    """A client for one Fenix server, e.g. `Fenix("https://fenix.example.com", "fxa_…")`.

    `token` is an API token (admin, or confined to one app). Calls that are
    safe to repeat are retried up to `max_retries` times on 429/503, waiting
    as `Retry-After` says. `timeout` is per request, in seconds. Use it as a
    context manager, or call `close()`, to release its connections.
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
        self._client = AuthenticatedClient(
            base_url=base_url.rstrip("/"),
            token=token,
            timeout=httpx.Timeout(timeout),
            headers={"User-Agent": f"fenix-sdk-python/{__version__}"},
            raise_on_unexpected_status=False,
            httpx_args=args,
        )
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
