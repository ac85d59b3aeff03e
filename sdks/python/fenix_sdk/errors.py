"""The SDK's two exceptions: one for a call Fenix refused, one for a webhook that does not verify.

Fenix answers every refusal with `{"error": {"code", "message"}}`; `FenixError`
carries that `code` (stable, machine-readable: branch on it) with the HTTP
status, so callers never parse bodies themselves.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import httpx


class FenixError(Exception):
    """A call that Fenix refused (status 4xx or 5xx), or that never got an answer.

    `code` is Fenix's stable error code (`app_not_found`, `validation_failed`, …,
    docs/api.md lists them); `retry_after` is the `Retry-After` the server sent
    (seconds), if any. A call that got no answer at all (connection refused,
    timeout) has `status` 0 and code `network_error`.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        retry_after: Optional[float] = None,
        details: Optional[list[Any]] = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after
        #: Only with `schema_mismatch`: each place the data breaks the event type's schema.
        self.details = details

    @classmethod
    def from_response(cls, response: httpx.Response) -> FenixError:
        """The error an answer carries; a body that is not Fenix's error shape keeps its status."""
        code, message, details = "http_error", response.reason_phrase or "", None
        try:
            error = json.loads(response.content)["error"]
            code, message = str(error["code"]), str(error["message"])
            details = error.get("details")
        except (ValueError, KeyError, TypeError):
            pass
        return cls(
            response.status_code,
            code,
            message,
            retry_after=retry_after_seconds(response),
            details=details,
        )


class WebhookVerificationError(Exception):
    """A webhook request that `Webhook.verify` refused; answer it with 401.

    `reason` says why: `missing_header`, `malformed_header`, `expired`,
    `future` (the timestamp is over the tolerance away from now) or
    `no_match` (no signature matches any key: a wrong key or an altered body).
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def retry_after_seconds(response: httpx.Response) -> Optional[float]:
    """`Retry-After` in seconds (Fenix sends whole seconds), or None."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
