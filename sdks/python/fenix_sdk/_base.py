"""What every resource shares: making a generated call, turning a refusal into
`FenixError`, building request bodies from keyword arguments, and pages.

The generated operation modules (`_generated/api/...`) build each request and
parse a success into the generated models; this layer sends the request,
turns a refusal into `FenixError` and keeps the SDK's calling shape (keyword
arguments, `Page`, `list_all`).
"""

from __future__ import annotations

import enum
import functools
import typing
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Callable, Generic, Optional, TypeVar

import attrs
import httpx

from ._generated.client import AuthenticatedClient
from ._generated.types import UNSET, Unset
from .errors import FenixError

T = TypeVar("T")
M = TypeVar("M")


@dataclass
class Page(Generic[T]):
    """One page of a list, newest first: pass `next_cursor` as `cursor` for the next one."""

    #: The items: generated models with the API's fields.
    data: list[T]
    #: Opaque; None on the last page.
    next_cursor: Optional[str]

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def walk(fetch: Callable[[Optional[str]], Page[T]]) -> Iterator[T]:
    """Every item of every page, asking for the next page only when one is needed."""
    cursor: Optional[str] = None
    while True:
        page = fetch(cursor)
        yield from page.data
        if not page.next_cursor:
            return
        cursor = page.next_cursor


def unset_if_none(value: Any) -> Any:
    """None means "not given" for optional query parameters and create fields."""
    return UNSET if value is None else value


class Resource:
    """A group of calls (`apps`, `endpoints`, …) over one authenticated client.

    Each call is a generated operation module: its `_get_kwargs` builds the
    request and its `_parse_response` reads a success into the models.
    """

    def __init__(self, client: AuthenticatedClient) -> None:
        self._client = client

    def _call(self, operation: Any, *args: Any, **kwargs: Any) -> Any:
        """Runs a generated operation; its parsed answer, or `FenixError`."""
        request = _request(operation, args, kwargs)
        try:
            response = self._client.get_httpx_client().request(**request)
        except httpx.TransportError as error:
            raise _network_error(error) from error
        return _parsed(operation, self._client, response)

    def _page(self, operation: Any, *args: Any, **kwargs: Any) -> Page[Any]:
        """A generated list operation's answer as a `Page`."""
        return _as_page(self._call(operation, *args, **kwargs))


class AsyncResource:
    """`Resource` for `AsyncFenix`: the same requests, sent on the async connection pool."""

    def __init__(self, client: AuthenticatedClient) -> None:
        self._client = client

    async def _call(self, operation: Any, *args: Any, **kwargs: Any) -> Any:
        request = _request(operation, args, kwargs)
        try:
            response = await self._client.get_async_httpx_client().request(**request)
        except httpx.TransportError as error:
            raise _network_error(error) from error
        return _parsed(operation, self._client, response)

    async def _page(self, operation: Any, *args: Any, **kwargs: Any) -> Page[Any]:
        return _as_page(await self._call(operation, *args, **kwargs))


async def awalk(fetch: Callable[[Optional[str]], Awaitable[Page[T]]]) -> AsyncIterator[T]:
    """`walk` for `AsyncFenix`: every item of every page, as an async iterator."""
    cursor: Optional[str] = None
    while True:
        page = await fetch(cursor)
        for item in page.data:
            yield item
        if not page.next_cursor:
            return
        cursor = page.next_cursor


def _network_error(error: httpx.TransportError) -> FenixError:
    return FenixError(0, "network_error", f"{type(error).__name__}: {error}")


def _request(operation: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The request a generated operation builds (method, URL, query, headers, JSON body)."""
    kwargs = {name: _as_enum(operation, name, value) for name, value in kwargs.items()}
    return operation._get_kwargs(*args, **kwargs)


def _parsed(operation: Any, client: AuthenticatedClient, response: httpx.Response) -> Any:
    """A success parsed into the generated model; any refusal as `FenixError`.

    Refusals never reach the generated parser: an error body that is not
    Fenix's JSON (a proxy's HTML page) or that names a code newer than this
    SDK's document still becomes a `FenixError` with the status.
    """
    if response.status_code >= 400:
        raise FenixError.from_response(response)
    return operation._parse_response(client=client, response=response)


def _as_page(parsed: Any) -> Page[Any]:
    cursor = parsed.next_cursor
    return Page(data=list(parsed.data), next_cursor=None if isinstance(cursor, Unset) else cursor)


def body(model: type[M], fields: Mapping[str, Any], *, keep_none: bool = False) -> M:
    """A generated request model from keyword arguments.

    Unknown names are refused here (`TypeError`) rather than sent. With
    `keep_none=False` (creates) a None means "left out"; with `keep_none=True`
    (updates) it is sent as JSON null, which Fenix reads as "back to the
    default" where the field allows it.
    """
    # The generator renames a field that would shadow a Python name (`type` -> `type_`).
    known = {name.rstrip("_") for name in attrs.fields_dict(model)}  # type: ignore[arg-type]
    unknown = sorted(set(fields) - set(known))
    if unknown:
        raise TypeError(f"{model.__name__} has no field {', '.join(unknown)}")
    values = {name: value for name, value in fields.items() if keep_none or value is not None}
    return model.from_dict(values)  # type: ignore[attr-defined]


@functools.cache
def _enum_parameters(operation: Any) -> dict[str, type[enum.Enum]]:
    """The parameters of a generated call that take a closed set (an enum), by name."""
    hints = typing.get_type_hints(operation.sync_detailed)
    found = {}
    for name, hint in hints.items():
        for candidate in typing.get_args(hint) or (hint,):
            if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
                found[name] = candidate
    return found


def _as_enum(operation: Any, name: str, value: Any) -> Any:
    """Text given for a closed-set query parameter, as the generated call's enum.

    Callers pass `status="failed"`; the generated call wants the enum the
    document names. An unknown value is a `ValueError` here, not a request.
    """
    kind = _enum_parameters(operation).get(name)
    if kind is None or not isinstance(value, str) or isinstance(value, enum.Enum):
        return value
    return kind(value)
