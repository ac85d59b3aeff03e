from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..models.access import Access
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreatePortalSession")


@_attrs_define
class CreatePortalSession:
    """
    Attributes:
        access (Access): What an app-scoped caller may do within its app.
        expires_in (Union[None, Unset, int, str]):
        label (Union[None, Unset, str]): For the operator: who the link is for (1-256 characters). Example: acme support
            ticket 4711.
    """

    access: Access
    expires_in: Union[None, Unset, int, str] = UNSET
    label: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        access = self.access.value

        expires_in: Union[None, Unset, int, str]
        if isinstance(self.expires_in, Unset):
            expires_in = UNSET
        else:
            expires_in = self.expires_in

        label: Union[None, Unset, str]
        if isinstance(self.label, Unset):
            label = UNSET
        else:
            label = self.label

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "access": access,
            }
        )
        if expires_in is not UNSET:
            field_dict["expires_in"] = expires_in
        if label is not UNSET:
            field_dict["label"] = label

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access = Access(d.pop("access"))

        def _parse_expires_in(data: object) -> Union[None, Unset, int, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int, str], data)

        expires_in = _parse_expires_in(d.pop("expires_in", UNSET))

        def _parse_label(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        label = _parse_label(d.pop("label", UNSET))

        create_portal_session = cls(
            access=access,
            expires_in=expires_in,
            label=label,
        )

        return create_portal_session
