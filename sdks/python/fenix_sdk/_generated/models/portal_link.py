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

T = TypeVar("T", bound="PortalLink")


@_attrs_define
class PortalLink:
    """A portal link as minted: `url` carries the secret, shown once.

    Attributes:
        access (Access): What an app-scoped caller may do within its app.
        app_id (str):
        created_at (str):
        expires_at (str):
        id (str):
        url (str): Open this once (or in an iframe) to reach the console for this app.
            Its fragment is the single-use secret: shown only here, never stored. Example:
            https://fenix.example.com/console/portal#fxp_9f86d081884c7d659a2feaa0c55ad015.
        label (Union[None, Unset, str]):
    """

    access: Access
    app_id: str
    created_at: str
    expires_at: str
    id: str
    url: str
    label: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access = self.access.value

        app_id = self.app_id

        created_at = self.created_at

        expires_at = self.expires_at

        id = self.id

        url = self.url

        label: Union[None, Unset, str]
        if isinstance(self.label, Unset):
            label = UNSET
        else:
            label = self.label

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "access": access,
                "app_id": app_id,
                "created_at": created_at,
                "expires_at": expires_at,
                "id": id,
                "url": url,
            }
        )
        if label is not UNSET:
            field_dict["label"] = label

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access = Access(d.pop("access"))

        app_id = d.pop("app_id")

        created_at = d.pop("created_at")

        expires_at = d.pop("expires_at")

        id = d.pop("id")

        url = d.pop("url")

        def _parse_label(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        label = _parse_label(d.pop("label", UNSET))

        portal_link = cls(
            access=access,
            app_id=app_id,
            created_at=created_at,
            expires_at=expires_at,
            id=id,
            url=url,
            label=label,
        )

        portal_link.additional_properties = d
        return portal_link

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
