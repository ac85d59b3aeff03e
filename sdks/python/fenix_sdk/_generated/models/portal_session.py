from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.access import Access
from ..types import UNSET, Unset

T = TypeVar("T", bound="PortalSession")


@_attrs_define
class PortalSession:
    """A portal link as listed (no secret), with what became of it.

    Attributes:
        access (Access): What an app-scoped caller may do within its app.
        app_id (str):
        created_at (str):
        expires_at (str):
        id (str):
        label (Union[None, Unset, str]):
        revoked_at (Union[None, Unset, str]): When it was revoked; `null` unless revoked.
        used_at (Union[None, Unset, str]): When the link was exchanged for a session; `null` while unused.
    """

    access: Access
    app_id: str
    created_at: str
    expires_at: str
    id: str
    label: Union[None, Unset, str] = UNSET
    revoked_at: Union[None, Unset, str] = UNSET
    used_at: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access = self.access.value

        app_id = self.app_id

        created_at = self.created_at

        expires_at = self.expires_at

        id = self.id

        label: Union[None, Unset, str]
        if isinstance(self.label, Unset):
            label = UNSET
        else:
            label = self.label

        revoked_at: Union[None, Unset, str]
        if isinstance(self.revoked_at, Unset):
            revoked_at = UNSET
        else:
            revoked_at = self.revoked_at

        used_at: Union[None, Unset, str]
        if isinstance(self.used_at, Unset):
            used_at = UNSET
        else:
            used_at = self.used_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "access": access,
                "app_id": app_id,
                "created_at": created_at,
                "expires_at": expires_at,
                "id": id,
            }
        )
        if label is not UNSET:
            field_dict["label"] = label
        if revoked_at is not UNSET:
            field_dict["revoked_at"] = revoked_at
        if used_at is not UNSET:
            field_dict["used_at"] = used_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access = Access(d.pop("access"))

        app_id = d.pop("app_id")

        created_at = d.pop("created_at")

        expires_at = d.pop("expires_at")

        id = d.pop("id")

        def _parse_label(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        label = _parse_label(d.pop("label", UNSET))

        def _parse_revoked_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        revoked_at = _parse_revoked_at(d.pop("revoked_at", UNSET))

        def _parse_used_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        used_at = _parse_used_at(d.pop("used_at", UNSET))

        portal_session = cls(
            access=access,
            app_id=app_id,
            created_at=created_at,
            expires_at=expires_at,
            id=id,
            label=label,
            revoked_at=revoked_at,
            used_at=used_at,
        )

        portal_session.additional_properties = d
        return portal_session

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
