"""`fenix.events`: what a producer sends; each event becomes one delivery per subscribed endpoint."""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Optional, Union

from .._base import AsyncResource, Page, Resource, awalk, body, unset_if_none, walk
from .._generated.api.events import get_event, list_events, send_event, send_event_batch
from .._generated.models import Event, EventBatch, EventBatchResult, NewEvent
from .deliveries import timestamp

#: A batch's events: mappings with `type`, `data` and optionally `id` and `ordering_key`.
BatchEvents = Sequence[Union[Mapping[str, Any], NewEvent]]
When = Union[None, str, datetime.datetime]


def _new_event(type: str, data: Mapping[str, Any], ordering_key: Optional[str]) -> NewEvent:
    return body(NewEvent, {"type": type, "data": dict(data), "ordering_key": ordering_key})


def _batch(events: BatchEvents) -> EventBatch:
    items = [item.to_dict() if isinstance(item, NewEvent) else dict(item) for item in events]
    return EventBatch(events=[body(NewEvent, item) for item in items])


def _query(
    event_type: Optional[str],
    since: When,
    until: When,
    include_payload: bool,
    limit: Optional[int],
    cursor: Optional[str],
) -> dict[str, Any]:
    """The list's filters as the generated call takes them (left out when None)."""
    return {
        "event_type": unset_if_none(event_type),
        "since": unset_if_none(timestamp(since)),
        "until": unset_if_none(timestamp(until)),
        "include": unset_if_none("payload" if include_payload else None),
        "limit": unset_if_none(limit),
        "cursor": unset_if_none(cursor),
    }


class Events(Resource):
    def send(
        self,
        app: str,
        type: str,
        data: Mapping[str, Any],
        idempotency_key: Optional[str] = None,
        *,
        ordering_key: Optional[str] = None,
    ) -> Event:
        """Sends one event of `type` with `data` (a JSON object) to the app's endpoints.

        With an `idempotency_key`, sending it again stores nothing new and
        answers the first event; such a call is also retried on 429/503.
        """
        new = _new_event(type, data, ordering_key)
        return self._call(send_event, app, body=new, idempotency_key=unset_if_none(idempotency_key))

    def send_batch(self, app: str, events: BatchEvents) -> EventBatchResult:
        """Sends many events in one request (up to 1000 by default).

        Each event is a mapping with `type` and `data`, and optionally `id`
        (its idempotency key) and `ordering_key`. The answer has one item per
        event, in order, with its `id` and whether it was `created`.
        """
        return self._call(send_event_batch, app, body=_batch(events))

    def get(self, app: str, evt: str, *, include_payload: bool = False) -> Event:
        """The event; its `data` only with `include_payload=True`."""
        include = "payload" if include_payload else None
        return self._call(get_event, app, evt, include=unset_if_none(include))

    def list(
        self,
        app: str,
        *,
        event_type: Optional[str] = None,
        since: When = None,
        until: When = None,
        include_payload: bool = False,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Event]:
        """One page of the app's events, newest first (`since`/`until`: datetime or RFC 3339)."""
        query = _query(event_type, since, until, include_payload, limit, cursor)
        return self._page(list_events, app, **query)

    def list_all(self, app: str, **filters: Any) -> Iterator[Event]:
        """Every event matching the filters of `list`, page after page."""
        return walk(lambda cursor: self.list(app, cursor=cursor, **filters))


class AsyncEvents(AsyncResource):
    """`Events` for `AsyncFenix`: the same calls, awaited."""

    async def send(
        self,
        app: str,
        type: str,
        data: Mapping[str, Any],
        idempotency_key: Optional[str] = None,
        *,
        ordering_key: Optional[str] = None,
    ) -> Event:
        new = _new_event(type, data, ordering_key)
        return await self._call(send_event, app, body=new, idempotency_key=unset_if_none(idempotency_key))

    async def send_batch(self, app: str, events: BatchEvents) -> EventBatchResult:
        return await self._call(send_event_batch, app, body=_batch(events))

    async def get(self, app: str, evt: str, *, include_payload: bool = False) -> Event:
        include = "payload" if include_payload else None
        return await self._call(get_event, app, evt, include=unset_if_none(include))

    async def list(
        self,
        app: str,
        *,
        event_type: Optional[str] = None,
        since: When = None,
        until: When = None,
        include_payload: bool = False,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Event]:
        query = _query(event_type, since, until, include_payload, limit, cursor)
        return await self._page(list_events, app, **query)

    def list_all(self, app: str, **filters: Any) -> AsyncIterator[Event]:
        return awalk(lambda cursor: self.list(app, cursor=cursor, **filters))
