from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.test_event_request_data import TestEventRequestData


T = TypeVar("T", bound="TestEventRequest")


@_attrs_define
class TestEventRequest:
    """What to send; every field optional, an empty body sends `{}` as `fenix.test`.

    Attributes:
        data (Union[Unset, TestEventRequestData]): The event's `data` (default `{}`), a JSON object sent byte for byte.
        event_type (Union[Unset, str]): The event's type (default `fenix.test`); the endpoint's event-type filter does
            not apply. Example: fenix.test.
    """

    data: Union[Unset, "TestEventRequestData"] = UNSET
    event_type: Union[Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        data: Union[Unset, dict[str, Any]] = UNSET
        if not isinstance(self.data, Unset):
            data = self.data.to_dict()

        event_type = self.event_type

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if data is not UNSET:
            field_dict["data"] = data
        if event_type is not UNSET:
            field_dict["event_type"] = event_type

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.test_event_request_data import TestEventRequestData

        d = dict(src_dict)
        _data = d.pop("data", UNSET)
        data: Union[Unset, TestEventRequestData]
        if isinstance(_data, Unset):
            data = UNSET
        else:
            data = TestEventRequestData.from_dict(_data)

        event_type = d.pop("event_type", UNSET)

        test_event_request = cls(
            data=data,
            event_type=event_type,
        )

        return test_event_request
