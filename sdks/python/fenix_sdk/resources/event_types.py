"""`fenix.event_types`: the catalogue of event types, with optional JSON Schemas (`/v1/event-types`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Optional

from .._base import AsyncResource, Page, Resource, awalk, body, unset_if_none, walk
from .._generated.api.event_types import (
    create_event_type,
    delete_event_type,
    get_event_type,
    list_event_types,
    update_event_type,
)
from .._generated.models import CreateEventType, EventType, PatchEventType


class EventTypes(Resource):
    def create(self, name: str, **options: Any) -> EventType:
        """A catalogue entry; options: `description`, `schema`, `example`, `deprecated`."""
        return self._call(create_event_type, body=body(CreateEventType, {"name": name, **options}))

    def get(self, name: str) -> EventType:
        return self._call(get_event_type, name)

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[EventType]:
        return self._page(list_event_types, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, *, limit: Optional[int] = None) -> Iterator[EventType]:
        return walk(lambda cursor: self.list(limit=limit, cursor=cursor))

    def update(self, name: str, **fields: Any) -> EventType:
        """Changes the given fields only; `schema=None` removes the schema."""
        return self._call(update_event_type, name, body=body(PatchEventType, fields, keep_none=True))

    def delete(self, name: str) -> None:
        self._call(delete_event_type, name)


class AsyncEventTypes(AsyncResource):
    """`EventTypes` for `AsyncFenix`: the same calls, awaited."""

    async def create(self, name: str, **options: Any) -> EventType:
        return await self._call(create_event_type, body=body(CreateEventType, {"name": name, **options}))

    async def get(self, name: str) -> EventType:
        return await self._call(get_event_type, name)

    async def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[EventType]:
        return await self._page(list_event_types, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, *, limit: Optional[int] = None) -> AsyncIterator[EventType]:
        return awalk(lambda cursor: self.list(limit=limit, cursor=cursor))

    async def update(self, name: str, **fields: Any) -> EventType:
        return await self._call(update_event_type, name, body=body(PatchEventType, fields, keep_none=True))

    async def delete(self, name: str) -> None:
        await self._call(delete_event_type, name)
