from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.signing_algorithm import SigningAlgorithm
from ..types import UNSET, Unset

T = TypeVar("T", bound="Rotated")


@_attrs_define
class Rotated:
    """The new secret. Fields in the order docs/api.md shows them, like every
    answer: what identifies it first (`version`), times last.

        Attributes:
            previous_expires_at (str): Until when the previous secret(s) still sign.
            signing_algorithm (SigningAlgorithm):
            version (int): The new secret's version (the first secret is 1).
            key_id (Union[None, Unset, str]): The new Ed25519 key's id (`ed25519` only), as its `v1a` signatures and the key
                document name it.
            public_key (Union[None, Unset, str]): The new Ed25519 public key, `whpk_…` (`ed25519` only).
            secret (Union[None, Unset, str]): The new HMAC secret (`hmac` only).
    """

    previous_expires_at: str
    signing_algorithm: SigningAlgorithm
    version: int
    key_id: Union[None, Unset, str] = UNSET
    public_key: Union[None, Unset, str] = UNSET
    secret: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        previous_expires_at = self.previous_expires_at

        signing_algorithm = self.signing_algorithm.value

        version = self.version

        key_id: Union[None, Unset, str]
        if isinstance(self.key_id, Unset):
            key_id = UNSET
        else:
            key_id = self.key_id

        public_key: Union[None, Unset, str]
        if isinstance(self.public_key, Unset):
            public_key = UNSET
        else:
            public_key = self.public_key

        secret: Union[None, Unset, str]
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "previous_expires_at": previous_expires_at,
                "signing_algorithm": signing_algorithm,
                "version": version,
            }
        )
        if key_id is not UNSET:
            field_dict["key_id"] = key_id
        if public_key is not UNSET:
            field_dict["public_key"] = public_key
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        previous_expires_at = d.pop("previous_expires_at")

        signing_algorithm = SigningAlgorithm(d.pop("signing_algorithm"))

        version = d.pop("version")

        def _parse_key_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        key_id = _parse_key_id(d.pop("key_id", UNSET))

        def _parse_public_key(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        public_key = _parse_public_key(d.pop("public_key", UNSET))

        def _parse_secret(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        secret = _parse_secret(d.pop("secret", UNSET))

        rotated = cls(
            previous_expires_at=previous_expires_at,
            signing_algorithm=signing_algorithm,
            version=version,
            key_id=key_id,
            public_key=public_key,
            secret=secret,
        )

        rotated.additional_properties = d
        return rotated

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
