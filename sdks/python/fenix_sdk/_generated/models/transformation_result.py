from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.transformation_result_headers import TransformationResultHeaders
    from ..models.transformation_result_payload import TransformationResultPayload


T = TypeVar("T", bound="TransformationResult")


@_attrs_define
class TransformationResult:
    """The request the transformation made.

    Attributes:
        cancel (bool): `true`: the delivery would be skipped (`transformation_cancelled`); the
            other fields then show the request as it was before the script.
        headers (TransformationResultHeaders): Custom headers; Fenix's own, the signature and sensitive headers are
            added after.
        method (str): `POST` or `PUT`.
        payload (TransformationResultPayload): The body the receiver would get (signed as it is).
        url (str):
    """

    cancel: bool
    headers: "TransformationResultHeaders"
    method: str
    payload: "TransformationResultPayload"
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cancel = self.cancel

        headers = self.headers.to_dict()

        method = self.method

        payload = self.payload.to_dict()

        url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cancel": cancel,
                "headers": headers,
                "method": method,
                "payload": payload,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.transformation_result_headers import TransformationResultHeaders
        from ..models.transformation_result_payload import TransformationResultPayload

        d = dict(src_dict)
        cancel = d.pop("cancel")

        headers = TransformationResultHeaders.from_dict(d.pop("headers"))

        method = d.pop("method")

        payload = TransformationResultPayload.from_dict(d.pop("payload"))

        url = d.pop("url")

        transformation_result = cls(
            cancel=cancel,
            headers=headers,
            method=method,
            payload=payload,
            url=url,
        )

        transformation_result.additional_properties = d
        return transformation_result

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
