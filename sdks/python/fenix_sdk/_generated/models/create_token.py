from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..models.token_access import TokenAccess
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateToken")


@_attrs_define
class CreateToken:
    """
    Attributes:
        access (TokenAccess): What a token reaches: `admin` (every app and route), or, with `app`,
            `manage` (everything within the app) or `read` (read it, change nothing).
        name (str): For people: what the token is for. Example: acme dashboard.
        app (Union[None, Unset, str]): The app (id or uid) an app token is confined to; required with `read`
            and `manage`, left out (or null) with `admin`. Example: acme.
        expires_at (Union[None, Unset, str]): RFC 3339, in the future; left out (or null), like `expires_in`: never
            expires. Example: 2027-01-01T00:00:00Z.
        expires_in (Union[None, Unset, int, str]):
    """

    access: TokenAccess
    name: str
    app: Union[None, Unset, str] = UNSET
    expires_at: Union[None, Unset, str] = UNSET
    expires_in: Union[None, Unset, int, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        access = self.access.value

        name = self.name

        app: Union[None, Unset, str]
        if isinstance(self.app, Unset):
            app = UNSET
        else:
            app = self.app

        expires_at: Union[None, Unset, str]
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = self.expires_at

        expires_in: Union[None, Unset, int, str]
        if isinstance(self.expires_in, Unset):
            expires_in = UNSET
        else:
            expires_in = self.expires_in

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "access": access,
                "name": name,
            }
        )
        if app is not UNSET:
            field_dict["app"] = app
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if expires_in is not UNSET:
            field_dict["expires_in"] = expires_in

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access = TokenAccess(d.pop("access"))

        name = d.pop("name")

        def _parse_app(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        app = _parse_app(d.pop("app", UNSET))

        def _parse_expires_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        def _parse_expires_in(data: object) -> Union[None, Unset, int, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int, str], data)

        expires_in = _parse_expires_in(d.pop("expires_in", UNSET))

        create_token = cls(
            access=access,
            name=name,
            app=app,
            expires_at=expires_at,
            expires_in=expires_in,
        )

        return create_token
