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
    from ..models.test_event_data_type_0 import TestEventDataType0


T = TypeVar("T", bound="TestEvent")


@_attrs_define
class TestEvent:
    """The event a test runs on.

    Attributes:
        type_ (str):  Example: booking.confirmed.
        data (Union['TestEventDataType0', None, Unset]): The event's `data`; absent: `{}`.
    """

    type_: str
    data: Union["TestEventDataType0", None, Unset] = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.test_event_data_type_0 import TestEventDataType0

        type_ = self.type_

        data: Union[None, Unset, dict[str, Any]]
        if isinstance(self.data, Unset):
            data = UNSET
        elif isinstance(self.data, TestEventDataType0):
            data = self.data.to_dict()
        else:
            data = self.data

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
            }
        )
        if data is not UNSET:
            field_dict["data"] = data

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.test_event_data_type_0 import TestEventDataType0

        d = dict(src_dict)
        type_ = d.pop("type")

        def _parse_data(data: object) -> Union["TestEventDataType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                data_type_0 = TestEventDataType0.from_dict(data)

                return data_type_0
            except:  # noqa: E722
                pass
            return cast(Union["TestEventDataType0", None, Unset], data)

        data = _parse_data(d.pop("data", UNSET))

        test_event = cls(
            type_=type_,
            data=data,
        )

        return test_event
