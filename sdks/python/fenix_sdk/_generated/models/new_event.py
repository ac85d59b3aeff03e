import datetime
from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from dateutil.parser import isoparse

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.new_event_data import NewEventData


T = TypeVar("T", bound="NewEvent")


@_attrs_define
class NewEvent:
    """
    Attributes:
        data (NewEventData):
        type_ (str):  Example: booking.confirmed.
        channels (Union[Unset, list[str]]):
        delay (Union[None, Unset, int, str]):
        deliver_at (Union[None, Unset, datetime.datetime]): Send it later, at this time (RFC 3339), at most
            `FENIX_MAX_SCHEDULE_AHEAD` (default 30d) ahead;
            a time already past means now. Its deliveries are stored at once and show `scheduled` until
            then. Not with `delay`. Example: 2026-12-24T18:00:00Z.
        id (Union[None, Unset, str]): The producer's idempotency key (the `Idempotency-Key` header wins).
        ordering_key (Union[None, Unset, str]): On an ordered endpoint, events with the same key are delivered one at a
            time in the order they were accepted; different keys go in parallel.
            Without a key, the event is in the endpoint's one keyless lane.
            Ignored by unordered endpoints.
        tags (Union[Unset, list[str]]):
    """

    data: "NewEventData"
    type_: str
    channels: Union[Unset, list[str]] = UNSET
    delay: Union[None, Unset, int, str] = UNSET
    deliver_at: Union[None, Unset, datetime.datetime] = UNSET
    id: Union[None, Unset, str] = UNSET
    ordering_key: Union[None, Unset, str] = UNSET
    tags: Union[Unset, list[str]] = UNSET

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        type_ = self.type_

        channels: Union[Unset, list[str]] = UNSET
        if not isinstance(self.channels, Unset):
            channels = self.channels

        delay: Union[None, Unset, int, str]
        if isinstance(self.delay, Unset):
            delay = UNSET
        else:
            delay = self.delay

        deliver_at: Union[None, Unset, str]
        if isinstance(self.deliver_at, Unset):
            deliver_at = UNSET
        elif isinstance(self.deliver_at, datetime.datetime):
            deliver_at = self.deliver_at.isoformat()
        else:
            deliver_at = self.deliver_at

        id: Union[None, Unset, str]
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        ordering_key: Union[None, Unset, str]
        if isinstance(self.ordering_key, Unset):
            ordering_key = UNSET
        else:
            ordering_key = self.ordering_key

        tags: Union[Unset, list[str]] = UNSET
        if not isinstance(self.tags, Unset):
            tags = self.tags

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "data": data,
                "type": type_,
            }
        )
        if channels is not UNSET:
            field_dict["channels"] = channels
        if delay is not UNSET:
            field_dict["delay"] = delay
        if deliver_at is not UNSET:
            field_dict["deliver_at"] = deliver_at
        if id is not UNSET:
            field_dict["id"] = id
        if ordering_key is not UNSET:
            field_dict["ordering_key"] = ordering_key
        if tags is not UNSET:
            field_dict["tags"] = tags

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_event_data import NewEventData

        d = dict(src_dict)
        data = NewEventData.from_dict(d.pop("data"))

        type_ = d.pop("type")

        channels = cast(list[str], d.pop("channels", UNSET))

        def _parse_delay(data: object) -> Union[None, Unset, int, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int, str], data)

        delay = _parse_delay(d.pop("delay", UNSET))

        def _parse_deliver_at(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                deliver_at_type_0 = isoparse(data)

                return deliver_at_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        deliver_at = _parse_deliver_at(d.pop("deliver_at", UNSET))

        def _parse_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_ordering_key(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        ordering_key = _parse_ordering_key(d.pop("ordering_key", UNSET))

        tags = cast(list[str], d.pop("tags", UNSET))

        new_event = cls(
            data=data,
            type_=type_,
            channels=channels,
            delay=delay,
            deliver_at=deliver_at,
            id=id,
            ordering_key=ordering_key,
            tags=tags,
        )

        return new_event
