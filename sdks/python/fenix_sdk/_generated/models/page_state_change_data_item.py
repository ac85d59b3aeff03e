from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.endpoint_state import EndpointState

T = TypeVar("T", bound="PageStateChangeDataItem")


@_attrs_define
class PageStateChangeDataItem:
    """One change of an endpoint's state; fields in the order of every resource:
    `id` first, `created_at` last.

        Attributes:
            created_at (str):
            id (str):
            reason (str):
            state (EndpointState):
    """

    created_at: str
    id: str
    reason: str
    state: EndpointState
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        id = self.id

        reason = self.reason

        state = self.state.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "reason": reason,
                "state": state,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        id = d.pop("id")

        reason = d.pop("reason")

        state = EndpointState(d.pop("state"))

        page_state_change_data_item = cls(
            created_at=created_at,
            id=id,
            reason=reason,
            state=state,
        )

        page_state_change_data_item.additional_properties = d
        return page_state_change_data_item

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
