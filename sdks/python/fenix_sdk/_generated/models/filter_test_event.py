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
    from ..models.filter_test_event_data_type_0 import FilterTestEventDataType0


T = TypeVar("T", bound="FilterTestEvent")


@_attrs_define
class FilterTestEvent:
    """A sample event, as a filter sees it.

    Attributes:
        type_ (str):  Example: order.paid.
        channels (Union[Unset, list[str]]): The event's channels (checked as an event's are).
        data (Union['FilterTestEventDataType0', None, Unset]): The event's `data`; absent: `{}`.
        tags (Union[Unset, list[str]]): The event's tags (checked as an event's are).
    """

    type_: str
    channels: Union[Unset, list[str]] = UNSET
    data: Union["FilterTestEventDataType0", None, Unset] = UNSET
    tags: Union[Unset, list[str]] = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.filter_test_event_data_type_0 import FilterTestEventDataType0

        type_ = self.type_

        channels: Union[Unset, list[str]] = UNSET
        if not isinstance(self.channels, Unset):
            channels = self.channels

        data: Union[None, Unset, dict[str, Any]]
        if isinstance(self.data, Unset):
            data = UNSET
        elif isinstance(self.data, FilterTestEventDataType0):
            data = self.data.to_dict()
        else:
            data = self.data

        tags: Union[Unset, list[str]] = UNSET
        if not isinstance(self.tags, Unset):
            tags = self.tags

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
            }
        )
        if channels is not UNSET:
            field_dict["channels"] = channels
        if data is not UNSET:
            field_dict["data"] = data
        if tags is not UNSET:
            field_dict["tags"] = tags

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.filter_test_event_data_type_0 import FilterTestEventDataType0

        d = dict(src_dict)
        type_ = d.pop("type")

        channels = cast(list[str], d.pop("channels", UNSET))

        def _parse_data(data: object) -> Union["FilterTestEventDataType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                data_type_0 = FilterTestEventDataType0.from_dict(data)

                return data_type_0
            except:  # noqa: E722
                pass
            return cast(Union["FilterTestEventDataType0", None, Unset], data)

        data = _parse_data(d.pop("data", UNSET))

        tags = cast(list[str], d.pop("tags", UNSET))

        filter_test_event = cls(
            type_=type_,
            channels=channels,
            data=data,
            tags=tags,
        )

        return filter_test_event
