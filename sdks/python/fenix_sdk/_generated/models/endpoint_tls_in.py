from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointTlsIn")


@_attrs_define
class EndpointTlsIn:
    """An endpoint's TLS material as a create or update gives it. Each part is
    optional; `client_certificate` and `client_key` go together.

        Attributes:
            ca_certificates (Union[None, Unset, str]): Extra trust anchors for the receiver's server certificate (PEM
                bundle), on top of the public roots; hostname verification stays on. Example: -----BEGIN CERTIFICATE-----
                MIIB…
                -----END CERTIFICATE-----
                .
            client_certificate (Union[None, Unset, str]): The client certificate chain (PEM, leaf first), presented in the
                TLS
                handshake (mTLS). At most 64 KiB. Example: -----BEGIN CERTIFICATE-----
                MIIB…
                -----END CERTIFICATE-----
                .
            client_key (Union[None, Unset, str]): Its private key (PEM: PKCS#8, RSA or EC). Write-only: sealed under
                the master key, never answered or logged. Example: -----BEGIN PRIVATE KEY-----
                MIG…
                -----END PRIVATE KEY-----
                .
    """

    ca_certificates: Union[None, Unset, str] = UNSET
    client_certificate: Union[None, Unset, str] = UNSET
    client_key: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        ca_certificates: Union[None, Unset, str]
        if isinstance(self.ca_certificates, Unset):
            ca_certificates = UNSET
        else:
            ca_certificates = self.ca_certificates

        client_certificate: Union[None, Unset, str]
        if isinstance(self.client_certificate, Unset):
            client_certificate = UNSET
        else:
            client_certificate = self.client_certificate

        client_key: Union[None, Unset, str]
        if isinstance(self.client_key, Unset):
            client_key = UNSET
        else:
            client_key = self.client_key

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if ca_certificates is not UNSET:
            field_dict["ca_certificates"] = ca_certificates
        if client_certificate is not UNSET:
            field_dict["client_certificate"] = client_certificate
        if client_key is not UNSET:
            field_dict["client_key"] = client_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_ca_certificates(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        ca_certificates = _parse_ca_certificates(d.pop("ca_certificates", UNSET))

        def _parse_client_certificate(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        client_certificate = _parse_client_certificate(
            d.pop("client_certificate", UNSET)
        )

        def _parse_client_key(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        client_key = _parse_client_key(d.pop("client_key", UNSET))

        endpoint_tls_in = cls(
            ca_certificates=ca_certificates,
            client_certificate=client_certificate,
            client_key=client_key,
        )

        return endpoint_tls_in
