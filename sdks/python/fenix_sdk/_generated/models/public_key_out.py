from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PublicKeyOut")


@_attrs_define
class PublicKeyOut:
    """One live Ed25519 public key of an endpoint.

    Attributes:
        created_at (str):
        key_id (str): Written beside each fenix-v1 `v1a` signature, and the key's `kid` in the app's key document.
            Example: ep_01JD0000000000000000000000.v2.
        public_key (str): `whpk_` + base64 of the 32-byte key (the Standard Webhooks form).
        version (int): The key's version among the endpoint's secrets.
        expires_at (Union[None, Unset, str]): Until when it signs (`null`: until a rotation retires it).
    """

    created_at: str
    key_id: str
    public_key: str
    version: int
    expires_at: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        key_id = self.key_id

        public_key = self.public_key

        version = self.version

        expires_at: Union[None, Unset, str]
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "key_id": key_id,
                "public_key": public_key,
                "version": version,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        key_id = d.pop("key_id")

        public_key = d.pop("public_key")

        version = d.pop("version")

        def _parse_expires_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        public_key_out = cls(
            created_at=created_at,
            key_id=key_id,
            public_key=public_key,
            version=version,
            expires_at=expires_at,
        )

        public_key_out.additional_properties = d
        return public_key_out

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
