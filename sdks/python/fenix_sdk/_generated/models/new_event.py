from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

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
        id (Union[None, Unset, str]): The producer's idempotency key (the `Idempotency-Key` header wins).
        ordering_key (Union[None, Unset, str]): On an ordered endpoint, events with the same key are delivered one at a
            time in the order they were accepted; different keys go in parallel.
            Without a key, the event is in the endpoint's one keyless lane.
            Ignored by unordered endpoints.
    """

    data: "NewEventData"
    type_: str
    id: Union[None, Unset, str] = UNSET
    ordering_key: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        type_ = self.type_

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

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "data": data,
                "type": type_,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id
        if ordering_key is not UNSET:
            field_dict["ordering_key"] = ordering_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_event_data import NewEventData

        d = dict(src_dict)
        data = NewEventData.from_dict(d.pop("data"))

        type_ = d.pop("type")

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

        new_event = cls(
            data=data,
            type_=type_,
            id=id,
            ordering_key=ordering_key,
        )

        return new_event
