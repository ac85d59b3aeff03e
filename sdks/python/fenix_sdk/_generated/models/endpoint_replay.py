from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EndpointReplay")


@_attrs_define
class EndpointReplay:
    """The answer of an endpoint replay.

    Attributes:
        replayed (int): Deliveries re-queued with their original event id and envelope.
        skipped_payload_expired (int): Matching deliveries not re-queued because retention purged their payload.
    """

    replayed: int
    skipped_payload_expired: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        replayed = self.replayed

        skipped_payload_expired = self.skipped_payload_expired

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "replayed": replayed,
                "skipped_payload_expired": skipped_payload_expired,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        replayed = d.pop("replayed")

        skipped_payload_expired = d.pop("skipped_payload_expired")

        endpoint_replay = cls(
            replayed=replayed,
            skipped_payload_expired=skipped_payload_expired,
        )

        endpoint_replay.additional_properties = d
        return endpoint_replay

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
