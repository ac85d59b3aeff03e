from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.previous_tls_certificate import PreviousTlsCertificate
    from ..models.tls_certificate import TlsCertificate


T = TypeVar("T", bound="EndpointTls")


@_attrs_define
class EndpointTls:
    """An endpoint's TLS material as reads show it (never the key).

    Attributes:
        ca_certificates (list['TlsCertificate']): The extra trust anchors for the receiver's server certificate.
        client_certificate (Union['TlsCertificate', None, Unset]):
        previous_client_certificate (Union['PreviousTlsCertificate', None, Unset]):
    """

    ca_certificates: list["TlsCertificate"]
    client_certificate: Union["TlsCertificate", None, Unset] = UNSET
    previous_client_certificate: Union["PreviousTlsCertificate", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.previous_tls_certificate import PreviousTlsCertificate
        from ..models.tls_certificate import TlsCertificate

        ca_certificates = []
        for ca_certificates_item_data in self.ca_certificates:
            ca_certificates_item = ca_certificates_item_data.to_dict()
            ca_certificates.append(ca_certificates_item)

        client_certificate: Union[None, Unset, dict[str, Any]]
        if isinstance(self.client_certificate, Unset):
            client_certificate = UNSET
        elif isinstance(self.client_certificate, TlsCertificate):
            client_certificate = self.client_certificate.to_dict()
        else:
            client_certificate = self.client_certificate

        previous_client_certificate: Union[None, Unset, dict[str, Any]]
        if isinstance(self.previous_client_certificate, Unset):
            previous_client_certificate = UNSET
        elif isinstance(self.previous_client_certificate, PreviousTlsCertificate):
            previous_client_certificate = self.previous_client_certificate.to_dict()
        else:
            previous_client_certificate = self.previous_client_certificate

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ca_certificates": ca_certificates,
            }
        )
        if client_certificate is not UNSET:
            field_dict["client_certificate"] = client_certificate
        if previous_client_certificate is not UNSET:
            field_dict["previous_client_certificate"] = previous_client_certificate

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.previous_tls_certificate import PreviousTlsCertificate
        from ..models.tls_certificate import TlsCertificate

        d = dict(src_dict)
        ca_certificates = []
        _ca_certificates = d.pop("ca_certificates")
        for ca_certificates_item_data in _ca_certificates:
            ca_certificates_item = TlsCertificate.from_dict(ca_certificates_item_data)

            ca_certificates.append(ca_certificates_item)

        def _parse_client_certificate(
            data: object,
        ) -> Union["TlsCertificate", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                client_certificate_type_1 = TlsCertificate.from_dict(data)

                return client_certificate_type_1
            except:  # noqa: E722
                pass
            return cast(Union["TlsCertificate", None, Unset], data)

        client_certificate = _parse_client_certificate(
            d.pop("client_certificate", UNSET)
        )

        def _parse_previous_client_certificate(
            data: object,
        ) -> Union["PreviousTlsCertificate", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                previous_client_certificate_type_1 = PreviousTlsCertificate.from_dict(
                    data
                )

                return previous_client_certificate_type_1
            except:  # noqa: E722
                pass
            return cast(Union["PreviousTlsCertificate", None, Unset], data)

        previous_client_certificate = _parse_previous_client_certificate(
            d.pop("previous_client_certificate", UNSET)
        )

        endpoint_tls = cls(
            ca_certificates=ca_certificates,
            client_certificate=client_certificate,
            previous_client_certificate=previous_client_certificate,
        )

        endpoint_tls.additional_properties = d
        return endpoint_tls

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
