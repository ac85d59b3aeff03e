from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.transformed_request_headers import TransformedRequestHeaders
    from ..models.transformed_request_payload import TransformedRequestPayload


T = TypeVar("T", bound="TransformedRequest")


@_attrs_define
class TransformedRequest:
    """The request a delivery's endpoint transformation made, as every attempt sends it.

    Attributes:
        headers (TransformedRequestHeaders): The custom headers it chose (Fenix's own, the signature and sensitive
            headers are added to them).
        method (str): `POST` or `PUT`.
        payload (TransformedRequestPayload): The body every attempt sends (and signs).
        url (str): The endpoint's URL with the path and query the transformation chose.
    """

    headers: "TransformedRequestHeaders"
    method: str
    payload: "TransformedRequestPayload"
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        headers = self.headers.to_dict()

        method = self.method

        payload = self.payload.to_dict()

        url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "headers": headers,
                "method": method,
                "payload": payload,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.transformed_request_headers import TransformedRequestHeaders
        from ..models.transformed_request_payload import TransformedRequestPayload

        d = dict(src_dict)
        headers = TransformedRequestHeaders.from_dict(d.pop("headers"))

        method = d.pop("method")

        payload = TransformedRequestPayload.from_dict(d.pop("payload"))

        url = d.pop("url")

        transformed_request = cls(
            headers=headers,
            method=method,
            payload=payload,
            url=url,
        )

        transformed_request.additional_properties = d
        return transformed_request

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
