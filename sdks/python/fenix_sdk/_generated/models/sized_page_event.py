from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.sized_page_event_data_item import SizedPageEventDataItem


T = TypeVar("T", bound="SizedPageEvent")


@_attrs_define
class SizedPageEvent:
    """One page of a list whose items can be large (events with their payloads),
    newest first. Pass `next_cursor` as `cursor` for the next page.

        Attributes:
            cut_by_size (bool): `true` when the page stopped before `limit` items because the next
                item would have taken it past `FENIX_MAX_PAGE_BYTES` (4 MiB by
                default) of items; `next_cursor` then continues after its last item.
                A page always holds at least one item, however large.
            data (list['SizedPageEventDataItem']):
            next_cursor (Union[None, Unset, str]): Opaque; absent (null) on the last page.
    """

    cut_by_size: bool
    data: list["SizedPageEventDataItem"]
    next_cursor: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cut_by_size = self.cut_by_size

        data = []
        for data_item_data in self.data:
            data_item = data_item_data.to_dict()
            data.append(data_item)

        next_cursor: Union[None, Unset, str]
        if isinstance(self.next_cursor, Unset):
            next_cursor = UNSET
        else:
            next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cut_by_size": cut_by_size,
                "data": data,
            }
        )
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.sized_page_event_data_item import SizedPageEventDataItem

        d = dict(src_dict)
        cut_by_size = d.pop("cut_by_size")

        data = []
        _data = d.pop("data")
        for data_item_data in _data:
            data_item = SizedPageEventDataItem.from_dict(data_item_data)

            data.append(data_item)

        def _parse_next_cursor(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        next_cursor = _parse_next_cursor(d.pop("next_cursor", UNSET))

        sized_page_event = cls(
            cut_by_size=cut_by_size,
            data=data,
            next_cursor=next_cursor,
        )

        sized_page_event.additional_properties = d
        return sized_page_event

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
