from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.new_event import NewEvent


T = TypeVar("T", bound="EventBatch")


@_attrs_define
class EventBatch:
    """Many events in one request.

    Attributes:
        events (list['NewEvent']): 1 to `FENIX_MAX_BATCH_EVENTS` (default 1000) events, each as in `send_event`; its
            `id` is its
            idempotency key.
    """

    events: list["NewEvent"]

    def to_dict(self) -> dict[str, Any]:
        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "events": events,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_event import NewEvent

        d = dict(src_dict)
        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = NewEvent.from_dict(events_item_data)

            events.append(events_item)

        event_batch = cls(
            events=events,
        )

        return event_batch
