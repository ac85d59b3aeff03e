from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.filter_test_event import FilterTestEvent


T = TypeVar("T", bound="FilterTest")


@_attrs_define
class FilterTest:
    """A filter to try on sample events.

    Attributes:
        events (list['FilterTestEvent']): 1 to 20 events.
        filter_ (str): The filter, as an endpoint's `filter`. Example: data.amount > 100 && data.currency == "EUR".
    """

    events: list["FilterTestEvent"]
    filter_: str

    def to_dict(self) -> dict[str, Any]:
        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)

        filter_ = self.filter_

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "events": events,
                "filter": filter_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.filter_test_event import FilterTestEvent

        d = dict(src_dict)
        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = FilterTestEvent.from_dict(events_item_data)

            events.append(events_item)

        filter_ = d.pop("filter")

        filter_test = cls(
            events=events,
            filter_=filter_,
        )

        return filter_test
