"""`Webhook`: verifying the requests Fenix sends to a receiver, as docs/receiving.md specifies.

Both schemes (`fenix-v1`: `X-Fenix-Timestamp` and `X-Fenix-Signature`;
`standard-webhooks`: `webhook-id`, `webhook-timestamp`, `webhook-signature`)
and both algorithms (HMAC-SHA256 with a `whsec_` secret, Ed25519 `v1a` with a
`whpk_` public key). The scheme is read from the headers, the algorithm from
each key. A request is accepted when its timestamp is within the tolerance
and any of its signatures matches any key held, so it keeps verifying during
a rotation (two signatures in one header, or two keys in the receiver).
HMACs are compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .errors import WebhookVerificationError

#: Seconds a request's timestamp may be away from the receiver's clock, either way.
DEFAULT_TOLERANCE = 300


class _Signed:
    """The parts of one request that its signatures cover."""

    def __init__(self, scheme: str, msg_id: str, timestamp: str, entries: list[tuple[str, str]], body: bytes):
        self.scheme = scheme
        self.entries = entries  # (version, value): ("v1", hex or base64), ("v1a", …)
        if scheme == "fenix-v1":
            self.message = timestamp.encode() + b"." + body
        else:
            self.message = f"{msg_id}.{timestamp}.".encode() + body


class _HmacKey:
    def __init__(self, secret: str) -> None:
        self._fenix_key = secret.encode()  # fenix-v1: the whole text, `whsec_` included
        try:  # standard-webhooks: the base64 after `whsec_`, decoded
            self._standard_key: Optional[bytes] = base64.b64decode(secret[len("whsec_") :], validate=True)
        except binascii.Error:
            self._standard_key = None

    def matches(self, signed: _Signed) -> bool:
        if signed.scheme == "fenix-v1":
            expected = hmac.new(self._fenix_key, signed.message, hashlib.sha256).hexdigest().encode()
        elif self._standard_key is None:
            return False
        else:
            digest = hmac.new(self._standard_key, signed.message, hashlib.sha256).digest()
            expected = base64.b64encode(digest)
        found = False
        for version, value in signed.entries:
            if version == "v1" and hmac.compare_digest(expected, value.encode()):
                found = True
        return found


class _Ed25519Key:
    def __init__(self, public_key: str) -> None:
        try:
            raw = base64.b64decode(public_key[len("whpk_") :], validate=True)
            self._key = Ed25519PublicKey.from_public_bytes(raw)
        except (binascii.Error, ValueError) as error:
            raise ValueError("a whpk_ public key is whpk_ and the base64 of 32 bytes") from error

    def matches(self, signed: _Signed) -> bool:
        for version, value in signed.entries:
            if version != "v1a":
                continue
            if signed.scheme == "fenix-v1":
                value = value.rpartition(":")[2]  # `<key id>:<base64>`
            try:
                self._key.verify(base64.b64decode(value, validate=True), signed.message)
                return True
            except (InvalidSignature, binascii.Error, ValueError):
                continue
        return False


class Webhook:
    """Verifies Fenix's requests with an endpoint's secret (`whsec_…`) or public key (`whpk_…`).

    Give several (a list, newest first) while a rotation's overlap lasts.
    """

    def __init__(self, key: Union[str, Sequence[str]], *, tolerance: int = DEFAULT_TOLERANCE) -> None:
        keys = [key] if isinstance(key, str) else list(key)
        if not keys:
            raise ValueError("Webhook needs at least one secret or public key")
        self._keys = [_parse_key(item) for item in keys]
        self._tolerance = tolerance

    def verify(
        self,
        raw_body: Union[bytes, str],
        headers: Mapping[str, Any],
        *,
        now: Optional[float] = None,
    ) -> dict[str, Any]:
        """The event (the parsed JSON body) if the request verifies; else `WebhookVerificationError`.

        `raw_body` is the body exactly as received (verify before parsing:
        re-serialised JSON no longer matches). `headers` is any mapping of
        header names (any case) to values: a dict, `http.server`'s
        `self.headers`, a framework's request headers. `now` (unix seconds)
        stands for the clock in tests.
        """
        body = raw_body.encode() if isinstance(raw_body, str) else bytes(raw_body)
        signed = _read_headers(_lower(headers), body, self._tolerance, time.time() if now is None else now)
        if not any(key.matches(signed) for key in self._keys):
            raise WebhookVerificationError("no_match", "no signature matches the key(s) held")
        try:
            event = json.loads(body)
        except ValueError as error:
            raise WebhookVerificationError("malformed_body", "the body is not JSON") from error
        if not isinstance(event, dict):
            raise WebhookVerificationError("malformed_body", "the body is not a JSON object")
        return event


def _parse_key(key: str) -> Union[_HmacKey, _Ed25519Key]:
    if key.startswith("whsec_"):
        return _HmacKey(key)
    if key.startswith("whpk_"):
        return _Ed25519Key(key)
    raise ValueError("a key is an endpoint secret (whsec_…) or public key (whpk_…)")


def _lower(headers: Mapping[str, Any]) -> dict[str, str]:
    return {str(name).lower(): str(value) for name, value in headers.items()}


def _read_headers(headers: dict[str, str], body: bytes, tolerance: int, now: float) -> _Signed:
    """The signed parts; refuses missing or malformed headers and a timestamp out of tolerance."""
    names: tuple[str, ...]
    if any(name.startswith("webhook-") for name in headers):
        scheme, names = "standard-webhooks", ("webhook-id", "webhook-timestamp", "webhook-signature")
    else:
        scheme, names = "fenix-v1", ("x-fenix-timestamp", "x-fenix-signature")
    missing = [name for name in names if not headers.get(name)]
    if missing:
        raise WebhookVerificationError("missing_header", f"no {', '.join(missing)} header")
    msg_id = headers.get("webhook-id", "")
    timestamp = headers[names[-2]].strip()
    if not (timestamp.isascii() and timestamp.isdigit()):
        raise WebhookVerificationError("malformed_header", f"{names[-2]} is not unix seconds")
    if now - int(timestamp) > tolerance:
        raise WebhookVerificationError("expired", f"the timestamp is over {tolerance} s old")
    if int(timestamp) - now > tolerance:
        raise WebhookVerificationError("future", f"the timestamp is over {tolerance} s ahead")
    entries = _entries(scheme, headers[names[-1]])
    if not entries:
        raise WebhookVerificationError("malformed_header", f"{names[-1]} holds no signature")
    return _Signed(scheme, msg_id, timestamp, entries, body)


def _entries(scheme: str, header: str) -> list[tuple[str, str]]:
    """`v1=a,v1a=b` (fenix-v1) or `v1,a v1a,b` (standard-webhooks) as (version, value) pairs."""
    separator, joiner = (",", "=") if scheme == "fenix-v1" else (" ", ",")
    pairs = []
    for entry in header.split(separator):
        version, found, value = entry.strip().partition(joiner)
        if found and version and value:
            pairs.append((version, value))
    return pairs
