"""One module per API noun; each class is one attribute of `Fenix` (`fenix.apps`, …)."""

from .apps import Apps
from .deliveries import Deliveries
from .endpoints import Endpoints
from .event_types import EventTypes
from .events import Events
from .portal_sessions import PortalSessions
from .tokens import Tokens

__all__ = ["Apps", "Deliveries", "Endpoints", "EventTypes", "Events", "PortalSessions", "Tokens"]
