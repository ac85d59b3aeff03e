from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PreviousTlsCertificate")


@_attrs_define
class PreviousTlsCertificate:
    """The client certificate a rotation replaced, still presented when the new
    one fails the handshake, until `expires_at`.

        Attributes:
            expires_soon (bool): Whether it expires within 14 days.
            not_after (str): When it stops being valid. Example: 2027-01-01T00:00:00.000Z.
            sha256 (str): Lowercase hex SHA-256 of the certificate (DER).
            subject (str): The subject's distinguished name. Example: CN=fenix.example.com.
            expires_at (str):
    """

    expires_soon: bool
    not_after: str
    sha256: str
    subject: str
    expires_at: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        expires_soon = self.expires_soon

        not_after = self.not_after

        sha256 = self.sha256

        subject = self.subject

        expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "expires_soon": expires_soon,
                "not_after": not_after,
                "sha256": sha256,
                "subject": subject,
                "expires_at": expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        expires_soon = d.pop("expires_soon")

        not_after = d.pop("not_after")

        sha256 = d.pop("sha256")

        subject = d.pop("subject")

        expires_at = d.pop("expires_at")

        previous_tls_certificate = cls(
            expires_soon=expires_soon,
            not_after=not_after,
            sha256=sha256,
            subject=subject,
            expires_at=expires_at,
        )

        previous_tls_certificate.additional_properties = d
        return previous_tls_certificate

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
