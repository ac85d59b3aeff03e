"""`fenix.endpoints`: the URLs an app's events are delivered to (`/v1/apps/{app}/endpoints`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Optional

from .._base import AsyncResource, Page, Resource, awalk, body, unset_if_none, walk
from .._generated.api.endpoints import (
    create_endpoint,
    delete_endpoint,
    get_endpoint,
    list_endpoint_public_keys,
    list_endpoints,
    pause_endpoint,
    resume_endpoint,
    rotate_endpoint_secret,
    update_endpoint,
    verify_endpoint,
)
from .._generated.models import (
    CreateEndpoint,
    Endpoint,
    NoOptions,
    PatchEndpoint,
    PublicKeys,
    Resume,
    ResumedEndpoint,
    Rotated,
    RotateSecret,
)


class Endpoints(Resource):
    def create(self, app: str, url: str, event_types: Optional[Sequence[str]] = None, **options: Any) -> Endpoint:
        """A new endpoint of `app`; the answer carries its one-time `secret` (or `public_key`).

        `event_types` it subscribes to (None or `[]`: every type; `booking.*`
        matches a prefix). Options, as in the API: `description`,
        `signature_scheme` (`fenix-v1`, `standard-webhooks`), `signing_algorithm`
        (`hmac`, `ed25519`), `secret`, `headers`, `sensitive_headers`,
        `rate_limit_per_sec`, `retry_schedule` (e.g. `["1s", "5s"]`),
        `final_status_codes`, `attempt_timeout`, `ordered`, `on_dead_letter`.
        """
        fields = {"url": url, "event_types": None if event_types is None else list(event_types)}
        return self._call(create_endpoint, app, body=body(CreateEndpoint, {**fields, **options}))

    def get(self, app: str, ep: str) -> Endpoint:
        return self._call(get_endpoint, app, ep)

    def list(self, app: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Endpoint]:
        """One page of the app's endpoints, newest first."""
        return self._page(list_endpoints, app, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, app: str, *, limit: Optional[int] = None) -> Iterator[Endpoint]:
        return walk(lambda cursor: self.list(app, limit=limit, cursor=cursor))

    def update(self, app: str, ep: str, **fields: Any) -> Endpoint:
        """Changes the given fields only; None sends null (`retry_schedule=None`: the server's)."""
        return self._call(update_endpoint, app, ep, body=body(PatchEndpoint, fields, keep_none=True))

    def delete(self, app: str, ep: str) -> None:
        self._call(delete_endpoint, app, ep)

    def pause(self, app: str, ep: str) -> Endpoint:
        """Stops deliveries to it; they wait (`pending`) until it is resumed."""
        return self._call(pause_endpoint, app, ep, body=NoOptions())

    def resume(self, app: str, ep: str, *, replay_skipped: Optional[bool] = None) -> ResumedEndpoint:
        """Starts deliveries again; `replay_skipped=True` also sends what was skipped meanwhile."""
        return self._call(resume_endpoint, app, ep, body=body(Resume, {"replay_skipped": replay_skipped}))

    def rotate_secret(
        self,
        app: str,
        ep: str,
        *,
        overlap_seconds: Optional[int] = None,
        secret: Optional[str] = None,
        signing_algorithm: Optional[str] = None,
    ) -> Rotated:
        """A new secret (or key pair); the old one keeps signing for `overlap_seconds` (default 24 h)."""
        fields = {
            "overlap_seconds": overlap_seconds,
            "secret": secret,
            "signing_algorithm": signing_algorithm,
        }
        return self._call(rotate_endpoint_secret, app, ep, body=body(RotateSecret, fields))

    def public_keys(self, app: str, ep: str) -> PublicKeys:
        """The Ed25519 public keys that sign the endpoint's requests now."""
        return self._call(list_endpoint_public_keys, app, ep)

    def verify(self, app: str, ep: str) -> Endpoint:
        """Sends a new ownership challenge (when the app requires proof of ownership)."""
        return self._call(verify_endpoint, app, ep, body=NoOptions())


class AsyncEndpoints(AsyncResource):
    """`Endpoints` for `AsyncFenix`: the same calls, awaited."""

    async def create(self, app: str, url: str, event_types: Optional[Sequence[str]] = None, **options: Any) -> Endpoint:
        fields = {"url": url, "event_types": None if event_types is None else list(event_types)}
        return await self._call(create_endpoint, app, body=body(CreateEndpoint, {**fields, **options}))

    async def get(self, app: str, ep: str) -> Endpoint:
        return await self._call(get_endpoint, app, ep)

    async def list(self, app: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[Endpoint]:
        return await self._page(list_endpoints, app, limit=unset_if_none(limit), cursor=unset_if_none(cursor))

    def list_all(self, app: str, *, limit: Optional[int] = None) -> AsyncIterator[Endpoint]:
        return awalk(lambda cursor: self.list(app, limit=limit, cursor=cursor))

    async def update(self, app: str, ep: str, **fields: Any) -> Endpoint:
        return await self._call(update_endpoint, app, ep, body=body(PatchEndpoint, fields, keep_none=True))

    async def delete(self, app: str, ep: str) -> None:
        await self._call(delete_endpoint, app, ep)

    async def pause(self, app: str, ep: str) -> Endpoint:
        return await self._call(pause_endpoint, app, ep, body=NoOptions())

    async def resume(self, app: str, ep: str, *, replay_skipped: Optional[bool] = None) -> ResumedEndpoint:
        return await self._call(resume_endpoint, app, ep, body=body(Resume, {"replay_skipped": replay_skipped}))

    async def rotate_secret(
        self,
        app: str,
        ep: str,
        *,
        overlap_seconds: Optional[int] = None,
        secret: Optional[str] = None,
        signing_algorithm: Optional[str] = None,
    ) -> Rotated:
        fields = {"overlap_seconds": overlap_seconds, "secret": secret, "signing_algorithm": signing_algorithm}
        return await self._call(rotate_endpoint_secret, app, ep, body=body(RotateSecret, fields))

    async def public_keys(self, app: str, ep: str) -> PublicKeys:
        return await self._call(list_endpoint_public_keys, app, ep)

    async def verify(self, app: str, ep: str) -> Endpoint:
        return await self._call(verify_endpoint, app, ep, body=NoOptions())
