"""One module per API noun; each class is one attribute of `Fenix` (`fenix.apps`, …), and
its `Async…` twin the same attribute of `AsyncFenix`."""

from .apps import Apps, AsyncApps
from .deliveries import AsyncDeliveries, Deliveries
from .endpoints import AsyncEndpoints, Endpoints
from .event_types import AsyncEventTypes, EventTypes
from .events import AsyncEvents, Events
from .portal_sessions import AsyncPortalSessions, PortalSessions
from .tokens import AsyncTokens, Tokens

__all__ = [
    "Apps",
    "AsyncApps",
    "AsyncDeliveries",
    "AsyncEndpoints",
    "AsyncEventTypes",
    "AsyncEvents",
    "AsyncPortalSessions",
    "AsyncTokens",
    "Deliveries",
    "Endpoints",
    "EventTypes",
    "Events",
    "PortalSessions",
    "Tokens",
]
