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

T = TypeVar("T", bound="Jwk")


@_attrs_define
class Jwk:
    """One Ed25519 public key as a JWK (RFC 8037), with Fenix's own members for
    its endpoint and validity.

        Attributes:
            alg (str): Always `EdDSA`. Example: EdDSA.
            crv (str): Always `Ed25519`. Example: Ed25519.
            kid (str): The key id fenix-v1 `v1a` signatures name: `k_<ref>.v<version>`, opaque;
                `<ref>` is the same for every key of one endpoint. Example: k_3f1c9a0b5d7e2f4a6c8e.v2.
            kty (str): Always `OKP`. Example: OKP.
            public_key (str): The same key in the Standard Webhooks form, `whpk_<base64>`.
            use (str): Always `sig`. Example: sig.
            x (str): The 32-byte public key, base64url without padding.
            expires_at (Union[None, Unset, str]): When it stops signing (`null`: until a rotation retires it).
    """

    alg: str
    crv: str
    kid: str
    kty: str
    public_key: str
    use: str
    x: str
    expires_at: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        alg = self.alg

        crv = self.crv

        kid = self.kid

        kty = self.kty

        public_key = self.public_key

        use = self.use

        x = self.x

        expires_at: Union[None, Unset, str]
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "alg": alg,
                "crv": crv,
                "kid": kid,
                "kty": kty,
                "public_key": public_key,
                "use": use,
                "x": x,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        alg = d.pop("alg")

        crv = d.pop("crv")

        kid = d.pop("kid")

        kty = d.pop("kty")

        public_key = d.pop("public_key")

        use = d.pop("use")

        x = d.pop("x")

        def _parse_expires_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        jwk = cls(
            alg=alg,
            crv=crv,
            kid=kid,
            kty=kty,
            public_key=public_key,
            use=use,
            x=x,
            expires_at=expires_at,
        )

        jwk.additional_properties = d
        return jwk

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
