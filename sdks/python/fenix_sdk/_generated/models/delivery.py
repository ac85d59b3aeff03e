from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_status import DeliveryStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="Delivery")


@_attrs_define
class Delivery:
    """A delivery as the API shows it.

    Attributes:
        app_id (str):
        attempt_count (int):
        created_at (str):
        endpoint_id (str):
        event_id (str):
        event_type (str): The event's type.
        id (str):
        status (DeliveryStatus):
        updated_at (str):
        blocked_by (Union[None, Unset, str]): Why a `pending` delivery of an ordered endpoint waits: the id of the
            delivery of its lane it
            waits for (the head of the lane, a dead letter that blocks it, or one being sent); else null.
        last_attempt_at (Union[None, Unset, str]):
        last_error (Union[None, Unset, str]): What failed the latest attempt (its `error_detail`, else its `error`);
            null once it succeeded or before any. Example: the receiver answered 503.
        last_status_code (Union[None, Unset, int]): The HTTP status the latest attempt was answered with; null before
            any attempt, or when none came. Example: 503.
        next_attempt_at (Union[None, Unset, str]):
        ordering_key (Union[None, Unset, str]): Its lane on an ordered endpoint (`""` is the keyless lane); null for an
            unordered endpoint.
        skip_reason (Union[None, Unset, str]): Why a `skipped` delivery was not sent, when known:
            `transformation_cancelled` (its endpoint's
            transformation set `cancel`), `cancelled` (its event was cancelled before it was sent),
            `payload_erased` (its event's payload was erased before it was sent); else null. Example:
            transformation_cancelled.
    """

    app_id: str
    attempt_count: int
    created_at: str
    endpoint_id: str
    event_id: str
    event_type: str
    id: str
    status: DeliveryStatus
    updated_at: str
    blocked_by: Union[None, Unset, str] = UNSET
    last_attempt_at: Union[None, Unset, str] = UNSET
    last_error: Union[None, Unset, str] = UNSET
    last_status_code: Union[None, Unset, int] = UNSET
    next_attempt_at: Union[None, Unset, str] = UNSET
    ordering_key: Union[None, Unset, str] = UNSET
    skip_reason: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        app_id = self.app_id

        attempt_count = self.attempt_count

        created_at = self.created_at

        endpoint_id = self.endpoint_id

        event_id = self.event_id

        event_type = self.event_type

        id = self.id

        status = self.status.value

        updated_at = self.updated_at

        blocked_by: Union[None, Unset, str]
        if isinstance(self.blocked_by, Unset):
            blocked_by = UNSET
        else:
            blocked_by = self.blocked_by

        last_attempt_at: Union[None, Unset, str]
        if isinstance(self.last_attempt_at, Unset):
            last_attempt_at = UNSET
        else:
            last_attempt_at = self.last_attempt_at

        last_error: Union[None, Unset, str]
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        last_status_code: Union[None, Unset, int]
        if isinstance(self.last_status_code, Unset):
            last_status_code = UNSET
        else:
            last_status_code = self.last_status_code

        next_attempt_at: Union[None, Unset, str]
        if isinstance(self.next_attempt_at, Unset):
            next_attempt_at = UNSET
        else:
            next_attempt_at = self.next_attempt_at

        ordering_key: Union[None, Unset, str]
        if isinstance(self.ordering_key, Unset):
            ordering_key = UNSET
        else:
            ordering_key = self.ordering_key

        skip_reason: Union[None, Unset, str]
        if isinstance(self.skip_reason, Unset):
            skip_reason = UNSET
        else:
            skip_reason = self.skip_reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "app_id": app_id,
                "attempt_count": attempt_count,
                "created_at": created_at,
                "endpoint_id": endpoint_id,
                "event_id": event_id,
                "event_type": event_type,
                "id": id,
                "status": status,
                "updated_at": updated_at,
            }
        )
        if blocked_by is not UNSET:
            field_dict["blocked_by"] = blocked_by
        if last_attempt_at is not UNSET:
            field_dict["last_attempt_at"] = last_attempt_at
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_status_code is not UNSET:
            field_dict["last_status_code"] = last_status_code
        if next_attempt_at is not UNSET:
            field_dict["next_attempt_at"] = next_attempt_at
        if ordering_key is not UNSET:
            field_dict["ordering_key"] = ordering_key
        if skip_reason is not UNSET:
            field_dict["skip_reason"] = skip_reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        app_id = d.pop("app_id")

        attempt_count = d.pop("attempt_count")

        created_at = d.pop("created_at")

        endpoint_id = d.pop("endpoint_id")

        event_id = d.pop("event_id")

        event_type = d.pop("event_type")

        id = d.pop("id")

        status = DeliveryStatus(d.pop("status"))

        updated_at = d.pop("updated_at")

        def _parse_blocked_by(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        blocked_by = _parse_blocked_by(d.pop("blocked_by", UNSET))

        def _parse_last_attempt_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        last_attempt_at = _parse_last_attempt_at(d.pop("last_attempt_at", UNSET))

        def _parse_last_error(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))

        def _parse_last_status_code(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        last_status_code = _parse_last_status_code(d.pop("last_status_code", UNSET))

        def _parse_next_attempt_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at", UNSET))

        def _parse_ordering_key(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        ordering_key = _parse_ordering_key(d.pop("ordering_key", UNSET))

        def _parse_skip_reason(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        skip_reason = _parse_skip_reason(d.pop("skip_reason", UNSET))

        delivery = cls(
            app_id=app_id,
            attempt_count=attempt_count,
            created_at=created_at,
            endpoint_id=endpoint_id,
            event_id=event_id,
            event_type=event_type,
            id=id,
            status=status,
            updated_at=updated_at,
            blocked_by=blocked_by,
            last_attempt_at=last_attempt_at,
            last_error=last_error,
            last_status_code=last_status_code,
            next_attempt_at=next_attempt_at,
            ordering_key=ordering_key,
            skip_reason=skip_reason,
        )

        delivery.additional_properties = d
        return delivery

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
