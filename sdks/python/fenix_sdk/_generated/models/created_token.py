from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.token_access import TokenAccess
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreatedToken")


@_attrs_define
class CreatedToken:
    """A token just made: the listing's fields and, this once, the token.

    Attributes:
        access (TokenAccess): What a token reaches: `admin` (every app and route), or, with `app`,
            `manage` (everything within the app) or `read` (read it, change nothing).
        created_at (str):
        expired (bool): True once `expires_at` is past: the token no longer authenticates.
        id (str):
        name (str):
        token (str): The token (`fxa_…` or `fxk_…`): shown only in this answer, store it now.
        app_id (Union[None, Unset, str]):
        expires_at (Union[None, Unset, str]): Null: never expires.
    """

    access: TokenAccess
    created_at: str
    expired: bool
    id: str
    name: str
    token: str
    app_id: Union[None, Unset, str] = UNSET
    expires_at: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access = self.access.value

        created_at = self.created_at

        expired = self.expired

        id = self.id

        name = self.name

        token = self.token

        app_id: Union[None, Unset, str]
        if isinstance(self.app_id, Unset):
            app_id = UNSET
        else:
            app_id = self.app_id

        expires_at: Union[None, Unset, str]
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "access": access,
                "created_at": created_at,
                "expired": expired,
                "id": id,
                "name": name,
                "token": token,
            }
        )
        if app_id is not UNSET:
            field_dict["app_id"] = app_id
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access = TokenAccess(d.pop("access"))

        created_at = d.pop("created_at")

        expired = d.pop("expired")

        id = d.pop("id")

        name = d.pop("name")

        token = d.pop("token")

        def _parse_app_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        app_id = _parse_app_id(d.pop("app_id", UNSET))

        def _parse_expires_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        created_token = cls(
            access=access,
            created_at=created_at,
            expired=expired,
            id=id,
            name=name,
            token=token,
            app_id=app_id,
            expires_at=expires_at,
        )

        created_token.additional_properties = d
        return created_token

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
