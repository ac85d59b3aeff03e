"""`fenix.apps`: the tenants that own endpoints and events (`/v1/apps`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Optional

from .._base import AsyncResource, Page, Resource, awalk, body, unset_if_none, walk
from .._generated.api.apps import create_app, delete_app, get_app, list_apps, update_app
from .._generated.models import App, CreateApp, PatchApp, Task


class Apps(Resource):
    def create(self, name: str, uid: Optional[str] = None, **options: Any) -> App:
        """A new app; `uid` is your own id for it, usable wherever an app id is.

        Options: `require_endpoint_verification`. `409 uid_taken` if the uid exists.
        """
        return self._call(create_app, body=body(CreateApp, {"name": name, "uid": uid, **options}))

    def get(self, app: str) -> App:
        """The app by id (`app_…`) or uid; `404 app_not_found` if there is none."""
        return self._call(get_app, app)

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[App]:
        """One page of apps, newest first."""
        return self._page(list_apps, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, *, limit: Optional[int] = None) -> Iterator[App]:
        """Every app, page after page."""
        return walk(lambda cursor: self.list(limit=limit, cursor=cursor))

    def update(self, app: str, **fields: Any) -> App:
        """Changes the given fields only (`name`, `uid`, `require_endpoint_verification`)."""
        return self._call(update_app, app, body=body(PatchApp, fields, keep_none=True))

    def delete(self, app: str) -> Task:
        """Deletes the app with its endpoints, events and deliveries: the app is not
        found from now on, and the `delete_app` task answered erases its rows."""
        return self._call(delete_app, app)


class AsyncApps(AsyncResource):
    """`Apps` for `AsyncFenix`: the same calls, awaited."""

    async def create(self, name: str, uid: Optional[str] = None, **options: Any) -> App:
        return await self._call(create_app, body=body(CreateApp, {"name": name, "uid": uid, **options}))

    async def get(self, app: str) -> App:
        return await self._call(get_app, app)

    async def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[App]:
        return await self._page(list_apps, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, *, limit: Optional[int] = None) -> AsyncIterator[App]:
        return awalk(lambda cursor: self.list(limit=limit, cursor=cursor))

    async def update(self, app: str, **fields: Any) -> App:
        return await self._call(update_app, app, body=body(PatchApp, fields, keep_none=True))

    async def delete(self, app: str) -> Task:
        return await self._call(delete_app, app)
