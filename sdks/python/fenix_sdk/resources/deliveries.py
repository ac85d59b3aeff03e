"""`fenix.deliveries`: one event to one endpoint, with its attempts (`/v1/apps/{app}/deliveries`)."""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator, Iterator
from typing import Any, Optional, Union

from dateutil.parser import isoparse

from .._base import AsyncResource, Page, Resource, awalk, unset_if_none, walk
from .._generated.api.deliveries import (
    get_attempt,
    get_delivery,
    list_deliveries,
    list_delivery_attempts,
    replay_delivery,
    skip_delivery,
)
from .._generated.models import Attempt, AttemptWithDelivery, Delivery, NoOptions


def _query(
    status: Optional[str],
    endpoint_id: Optional[str],
    event_type: Optional[str],
    since: Union[None, str, datetime.datetime],
    until: Union[None, str, datetime.datetime],
    event_id: Optional[str],
    limit: Optional[int],
    cursor: Optional[str],
) -> dict[str, Any]:
    """The list's filters as the generated call takes them (left out when None)."""
    return {
        "status": unset_if_none(status),
        "endpoint_id": unset_if_none(endpoint_id),
        "event_type": unset_if_none(event_type),
        "since": unset_if_none(timestamp(since)),
        "until": unset_if_none(timestamp(until)),
        "event_id": unset_if_none(event_id),
        "limit": unset_if_none(limit),
        "cursor": unset_if_none(cursor),
    }


def timestamp(value: Union[None, str, datetime.datetime]) -> Optional[datetime.datetime]:
    """A `since`/`until` filter as the generated call takes it: a datetime, from RFC 3339 text too."""
    if value is None or isinstance(value, datetime.datetime):
        return value
    return isoparse(value)


class Deliveries(Resource):
    def list(
        self,
        app: str,
        status: Optional[str] = None,
        endpoint_id: Optional[str] = None,
        event_type: Optional[str] = None,
        since: Union[None, str, datetime.datetime] = None,
        until: Union[None, str, datetime.datetime] = None,
        *,
        event_id: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Delivery]:
        """One page of the app's deliveries, newest first, filtered by what is given.

        `status`: `pending`, `in_flight`, `succeeded`, `failed` or `skipped`.
        `limit`: 1-250 items a page (default 50).
        """
        return self._page(
            list_deliveries, app, **_query(status, endpoint_id, event_type, since, until, event_id, limit, cursor)
        )

    def list_all(self, app: str, **filters: Any) -> Iterator[Delivery]:
        """Every delivery matching the filters of `list`, page after page."""
        return walk(lambda cursor: self.list(app, cursor=cursor, **filters))

    def get(self, app: str, dlv: str) -> Delivery:
        return self._call(get_delivery, app, dlv)

    def attempts(self, app: str, dlv: str) -> Page[Attempt]:
        """The delivery's attempts (HTTP requests), newest first."""
        return self._page(list_delivery_attempts, app, dlv)

    def attempt(self, app: str, att: str) -> AttemptWithDelivery:
        """One attempt by the `X-Fenix-Delivery-Id` a receiver saw, with its delivery."""
        return self._call(get_attempt, app, att)

    def replay(self, app: str, dlv: str) -> Delivery:
        """Sends a finished delivery (say `failed`) again, as a fresh one: `pending`, attempts from 1."""
        return self._call(replay_delivery, app, dlv, body=NoOptions())

    def skip(self, app: str, dlv: str) -> Delivery:
        """Gives up on a failed delivery: it becomes `skipped` and is not sent."""
        return self._call(skip_delivery, app, dlv, body=NoOptions())


class AsyncDeliveries(AsyncResource):
    """`Deliveries` for `AsyncFenix`: the same calls, awaited."""

    async def list(
        self,
        app: str,
        status: Optional[str] = None,
        endpoint_id: Optional[str] = None,
        event_type: Optional[str] = None,
        since: Union[None, str, datetime.datetime] = None,
        until: Union[None, str, datetime.datetime] = None,
        *,
        event_id: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Delivery]:
        return await self._page(
            list_deliveries, app, **_query(status, endpoint_id, event_type, since, until, event_id, limit, cursor)
        )

    def list_all(self, app: str, **filters: Any) -> AsyncIterator[Delivery]:
        return awalk(lambda cursor: self.list(app, cursor=cursor, **filters))

    async def get(self, app: str, dlv: str) -> Delivery:
        return await self._call(get_delivery, app, dlv)

    async def attempts(self, app: str, dlv: str) -> Page[Attempt]:
        return await self._page(list_delivery_attempts, app, dlv)

    async def attempt(self, app: str, att: str) -> AttemptWithDelivery:
        return await self._call(get_attempt, app, att)

    async def replay(self, app: str, dlv: str) -> Delivery:
        return await self._call(replay_delivery, app, dlv, body=NoOptions())

    async def skip(self, app: str, dlv: str) -> Delivery:
        return await self._call(skip_delivery, app, dlv, body=NoOptions())
