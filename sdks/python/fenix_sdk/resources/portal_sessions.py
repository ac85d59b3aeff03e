"""`fenix.portal_sessions`: one-time links that open the console for one app (`…/portal-sessions`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Optional

from .._base import AsyncResource, Page, Resource, awalk, body, unset_if_none, walk
from .._generated.api.portal import (
    create_portal_session,
    list_portal_sessions,
    revoke_portal_session,
)
from .._generated.models import CreatePortalSession, PortalLink, PortalSession


class PortalSessions(Resource):
    def create(
        self, app: str, access: str, expires_in: Optional[int] = None, *, label: Optional[str] = None
    ) -> PortalLink:
        """A link (`url`, shown once) for a customer: `access` is `read` or `manage`."""
        fields = {"access": access, "expires_in": expires_in, "label": label}
        return self._call(create_portal_session, app, body=body(CreatePortalSession, fields))

    def list(self, app: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[PortalSession]:
        return self._page(list_portal_sessions, app, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, app: str, *, limit: Optional[int] = None) -> Iterator[PortalSession]:
        return walk(lambda cursor: self.list(app, limit=limit, cursor=cursor))

    def revoke(self, app: str, ps: str) -> None:
        """Ends the session (and the link, if not yet used) at once."""
        self._call(revoke_portal_session, app, ps)


class AsyncPortalSessions(AsyncResource):
    """`PortalSessions` for `AsyncFenix`: the same calls, awaited."""

    async def create(
        self, app: str, access: str, expires_in: Optional[int] = None, *, label: Optional[str] = None
    ) -> PortalLink:
        fields = {"access": access, "expires_in": expires_in, "label": label}
        return await self._call(create_portal_session, app, body=body(CreatePortalSession, fields))

    async def list(self, app: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[PortalSession]:
        return await self._page(list_portal_sessions, app, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, app: str, *, limit: Optional[int] = None) -> AsyncIterator[PortalSession]:
        return awalk(lambda cursor: self.list(app, limit=limit, cursor=cursor))

    async def revoke(self, app: str, ps: str) -> None:
        await self._call(revoke_portal_session, app, ps)
