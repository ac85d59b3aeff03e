"""`fenix.tokens`: API tokens, admin or confined to one app (`/v1/tokens`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Optional

from .._base import AsyncResource, Page, Resource, awalk, body, unset_if_none, walk
from .._generated.api.tokens import create_token, delete_token, list_tokens
from .._generated.models import CreatedToken, CreateToken, Token


class Tokens(Resource):
    def create(
        self, name: str, access: str, app: Optional[str] = None, *, expires_at: Optional[str] = None
    ) -> CreatedToken:
        """A token (its `token` shown once): `access` `admin`, or `manage`/`read` with an `app`."""
        fields = {"name": name, "access": access, "app": app, "expires_at": expires_at}
        return self._call(create_token, body=body(CreateToken, fields))

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Token]:
        return self._page(list_tokens, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, *, limit: Optional[int] = None) -> Iterator[Token]:
        return walk(lambda cursor: self.list(limit=limit, cursor=cursor))

    def delete(self, tok: str) -> None:
        """Revokes the token."""
        self._call(delete_token, tok)


class AsyncTokens(AsyncResource):
    """`Tokens` for `AsyncFenix`: the same calls, awaited."""

    async def create(
        self, name: str, access: str, app: Optional[str] = None, *, expires_at: Optional[str] = None
    ) -> CreatedToken:
        fields = {"name": name, "access": access, "app": app, "expires_at": expires_at}
        return await self._call(create_token, body=body(CreateToken, fields))

    async def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Token]:
        return await self._page(list_tokens, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, *, limit: Optional[int] = None) -> AsyncIterator[Token]:
        return awalk(lambda cursor: self.list(limit=limit, cursor=cursor))

    async def delete(self, tok: str) -> None:
        await self._call(delete_token, tok)
