from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RotateEndpointTls")


@_attrs_define
class RotateEndpointTls:
    """A new client certificate, the current one presented as a fallback during the overlap.

    Attributes:
        client_certificate (str): The new client certificate chain (PEM, leaf first).
        client_key (str): Its private key (PEM). Write-only.
        expires_in (Union[None, Unset, int, str]):
    """

    client_certificate: str
    client_key: str
    expires_in: Union[None, Unset, int, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        client_certificate = self.client_certificate

        client_key = self.client_key

        expires_in: Union[None, Unset, int, str]
        if isinstance(self.expires_in, Unset):
            expires_in = UNSET
        else:
            expires_in = self.expires_in

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "client_certificate": client_certificate,
                "client_key": client_key,
            }
        )
        if expires_in is not UNSET:
            field_dict["expires_in"] = expires_in

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        client_certificate = d.pop("client_certificate")

        client_key = d.pop("client_key")

        def _parse_expires_in(data: object) -> Union[None, Unset, int, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int, str], data)

        expires_in = _parse_expires_in(d.pop("expires_in", UNSET))

        rotate_endpoint_tls = cls(
            client_certificate=client_certificate,
            client_key=client_key,
            expires_in=expires_in,
        )

        return rotate_endpoint_tls
