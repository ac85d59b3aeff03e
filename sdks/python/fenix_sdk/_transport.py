"""Retries with backoff on `429` and `503`, below the generated calls (sync and asyncio).

Only calls that are safe to repeat are retried: `GET`, `HEAD`, `PUT`,
`DELETE` and `OPTIONS`, and any call that carries an `Idempotency-Key`
(`events.send` with an idempotency key: Fenix stores the event once however
often it arrives). A `POST` without one (creating an app, a batch) is never
sent twice: the caller sees the `FenixError` and decides.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Callable

import httpx

from .errors import retry_after_seconds

_IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
_RETRIED_STATUSES = frozenset({429, 503})


def is_retryable(request: httpx.Request) -> bool:
    """Whether sending `request` twice does no more than sending it once."""
    return request.method in _IDEMPOTENT_METHODS or "idempotency-key" in request.headers


class _Backoff:
    """How often and how long to wait: the server's `Retry-After` when it sent
    one (capped at `max_wait`), else exponential backoff from `base_wait` with jitter."""

    def __init__(self, *, max_retries: int = 3, base_wait: float = 0.5, max_wait: float = 30.0) -> None:
        self._max_retries = max_retries
        self._base_wait = base_wait
        self._max_wait = max_wait

    def _retries(self, request: httpx.Request) -> int:
        return self._max_retries if is_retryable(request) else 0

    def _wait(self, response: httpx.Response, attempt: int) -> float:
        told = retry_after_seconds(response)
        if told is not None:
            return min(told, self._max_wait)
        backoff = self._base_wait * (2**attempt)
        return float(min(backoff * (0.5 + random.random() / 2), self._max_wait))


class RetryTransport(_Backoff, httpx.BaseTransport):
    """Wraps a transport; repeats a retryable request answered 429/503."""

    def __init__(
        self,
        inner: httpx.BaseTransport,
        *,
        max_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(max_retries=max_retries)
        self._inner = inner
        self._sleep = sleep

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        retries = self._retries(request)
        for attempt in range(retries + 1):
            response = self._inner.handle_request(request)
            if response.status_code not in _RETRIED_STATUSES or attempt == retries:
                return response
            response.read()
            wait = self._wait(response, attempt)
            response.close()
            self._sleep(wait)
        raise AssertionError("unreachable: the loop returns on its last attempt")

    def close(self) -> None:
        self._inner.close()


class AsyncRetryTransport(_Backoff, httpx.AsyncBaseTransport):
    """`RetryTransport` for `AsyncFenix`: the same rules, waiting with `asyncio.sleep`."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, max_retries: int = 3) -> None:
        super().__init__(max_retries=max_retries)
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        retries = self._retries(request)
        for attempt in range(retries + 1):
            response = await self._inner.handle_async_request(request)
            if response.status_code not in _RETRIED_STATUSES or attempt == retries:
                return response
            await response.aread()
            wait = self._wait(response, attempt)
            await response.aclose()
            await asyncio.sleep(wait)
        raise AssertionError("unreachable: the loop returns on its last attempt")

    async def aclose(self) -> None:
        await self._inner.aclose()
