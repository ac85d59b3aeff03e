"""Fenix from Python: `Fenix` calls the admin API (`AsyncFenix` with asyncio), `Webhook`
verifies what Fenix sends.

    from fenix_sdk import Fenix, Webhook, FenixError, WebhookVerificationError

The request and answer models (`App`, `Endpoint`, `Delivery`, …) and the HTTP
calls are generated from Fenix's OpenAPI document into `fenix_sdk._generated`
(by scripts/generate_sdks.sh); this package is the thin layer over them.
"""

from ._aliases import add_api_names
from ._base import Page
from ._generated.models import (
    App,
    Attempt,
    Delivery,
    DeliveryStatus,
    Endpoint,
    ErrorCode,
    Event,
    EventBatchResult,
    EventType,
    PortalLink,
    Rotated,
)
from .client import AsyncFenix, Fenix
from .errors import FenixError, WebhookVerificationError
from .version import __version__
from .webhook import DEFAULT_TOLERANCE, Webhook

add_api_names()

__all__ = [
    "DEFAULT_TOLERANCE",
    "App",
    "AsyncFenix",
    "Attempt",
    "Delivery",
    "DeliveryStatus",
    "Endpoint",
    "ErrorCode",
    "Event",
    "EventBatchResult",
    "EventType",
    "Fenix",
    "FenixError",
    "Page",
    "PortalLink",
    "Rotated",
    "Webhook",
    "WebhookVerificationError",
    "__version__",
]
