"""`fenix.events`: what a producer sends; each event becomes one delivery per subscribed endpoint."""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Optional, Sequence, Union

from .._base import Page, Resource, body, unset_if_none, walk
from .._generated.api.events import get_event, list_events, send_event, send_event_batch
from .._generated.models import Event, EventBatch, EventBatchResult, NewEvent
from .deliveries import timestamp


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
        new = body(NewEvent, {"type": type, "data": dict(data), "ordering_key": ordering_key})
        return self._call(send_event, app, body=new, idempotency_key=unset_if_none(idempotency_key))

    def send_batch(
        self, app: str, events: Sequence[Union[Mapping[str, Any], NewEvent]]
    ) -> EventBatchResult:
        """Sends many events in one request (up to 1000 by default).

        Each event is a mapping with `type` and `data`, and optionally `id`
        (its idempotency key) and `ordering_key`. The answer has one item per
        event, in order, with its `id` and whether it was `created`.
        """
        items = [item.to_dict() if isinstance(item, NewEvent) else dict(item) for item in events]
        new_events = [body(NewEvent, item) for item in items]
        return self._call(send_event_batch, app, body=EventBatch(events=new_events))

    def get(self, app: str, evt: str, *, include_payload: bool = False) -> Event:
        """The event; its `data` only with `include_payload=True`."""
        include = "payload" if include_payload else None
        return self._call(get_event, app, evt, include=unset_if_none(include))

    def list(
        self,
        app: str,
        *,
        event_type: Optional[str] = None,
        since: Any = None,
        until: Any = None,
        include_payload: bool = False,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Event]:
        """One page of the app's events, newest first (`since`/`until`: datetime or RFC 3339)."""
        return self._page(
            list_events,
            app,
            event_type=unset_if_none(event_type),
            since=unset_if_none(timestamp(since)),
            until=unset_if_none(timestamp(until)),
            include="payload" if include_payload else unset_if_none(None),
            limit=unset_if_none(limit),
            cursor=unset_if_none(cursor),
        )

    def list_all(self, app: str, **filters: Any) -> Iterator[Event]:
        """Every event matching the filters of `list`, page after page."""
        return walk(lambda cursor: self.list(app, cursor=cursor, **filters))
