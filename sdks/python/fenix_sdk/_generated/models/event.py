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
    from ..models.event_data_type_0 import EventDataType0


T = TypeVar("T", bound="Event")


@_attrs_define
class Event:
    """An event as the API shows it; `data` only with `?include=payload`.

    Attributes:
        app_id (str):
        channels (list[str]):
        created_at (str):
        deliveries (int):
        id (str):
        payload_sha256 (str):
        tags (list[str]):
        type_ (str):
        data (Union['EventDataType0', None, Unset]): The producer's `data` (with `?include=payload`); `null` once erased
            (`expunged_at`).
        deliver_at (Union[None, Unset, str]): When its deliveries were scheduled for (`deliver_at`, or `delay` after it
            was accepted); null:
            sent at once. Example: 2026-12-24T18:00:00.000Z.
        expunged_at (Union[None, Unset, str]): When its payload was erased on request (`POST …/events/{evt}/expunge`);
            only then. Example: 2026-12-24T18:00:00.000Z.
        idempotency_key (Union[None, Unset, str]):
        payload_purged (Union[None, Unset, bool]):
        warning (Union[None, Unset, str]): Only in the answer to sending an event, and only when `deliveries` is
            `0` (no endpoint will receive it, so that a typo in `type` or a
            missing endpoint does not pass silently) or the type is deprecated in
            the event-type catalogue; both joined by `; `. Example: no endpoint of this app subscribes to
            `booking.confirmed`; nothing will be delivered.
    """

    app_id: str
    channels: list[str]
    created_at: str
    deliveries: int
    id: str
    payload_sha256: str
    tags: list[str]
    type_: str
    data: Union["EventDataType0", None, Unset] = UNSET
    deliver_at: Union[None, Unset, str] = UNSET
    expunged_at: Union[None, Unset, str] = UNSET
    idempotency_key: Union[None, Unset, str] = UNSET
    payload_purged: Union[None, Unset, bool] = UNSET
    warning: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_data_type_0 import EventDataType0

        app_id = self.app_id

        channels = self.channels

        created_at = self.created_at

        deliveries = self.deliveries

        id = self.id

        payload_sha256 = self.payload_sha256

        tags = self.tags

        type_ = self.type_

        data: Union[None, Unset, dict[str, Any]]
        if isinstance(self.data, Unset):
            data = UNSET
        elif isinstance(self.data, EventDataType0):
            data = self.data.to_dict()
        else:
            data = self.data

        deliver_at: Union[None, Unset, str]
        if isinstance(self.deliver_at, Unset):
            deliver_at = UNSET
        else:
            deliver_at = self.deliver_at

        expunged_at: Union[None, Unset, str]
        if isinstance(self.expunged_at, Unset):
            expunged_at = UNSET
        else:
            expunged_at = self.expunged_at

        idempotency_key: Union[None, Unset, str]
        if isinstance(self.idempotency_key, Unset):
            idempotency_key = UNSET
        else:
            idempotency_key = self.idempotency_key

        payload_purged: Union[None, Unset, bool]
        if isinstance(self.payload_purged, Unset):
            payload_purged = UNSET
        else:
            payload_purged = self.payload_purged

        warning: Union[None, Unset, str]
        if isinstance(self.warning, Unset):
            warning = UNSET
        else:
            warning = self.warning

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "app_id": app_id,
                "channels": channels,
                "created_at": created_at,
                "deliveries": deliveries,
                "id": id,
                "payload_sha256": payload_sha256,
                "tags": tags,
                "type": type_,
            }
        )
        if data is not UNSET:
            field_dict["data"] = data
        if deliver_at is not UNSET:
            field_dict["deliver_at"] = deliver_at
        if expunged_at is not UNSET:
            field_dict["expunged_at"] = expunged_at
        if idempotency_key is not UNSET:
            field_dict["idempotency_key"] = idempotency_key
        if payload_purged is not UNSET:
            field_dict["payload_purged"] = payload_purged
        if warning is not UNSET:
            field_dict["warning"] = warning

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_data_type_0 import EventDataType0

        d = dict(src_dict)
        app_id = d.pop("app_id")

        channels = cast(list[str], d.pop("channels"))

        created_at = d.pop("created_at")

        deliveries = d.pop("deliveries")

        id = d.pop("id")

        payload_sha256 = d.pop("payload_sha256")

        tags = cast(list[str], d.pop("tags"))

        type_ = d.pop("type")

        def _parse_data(data: object) -> Union["EventDataType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                data_type_0 = EventDataType0.from_dict(data)

                return data_type_0
            except:  # noqa: E722
                pass
            return cast(Union["EventDataType0", None, Unset], data)

        data = _parse_data(d.pop("data", UNSET))

        def _parse_deliver_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        deliver_at = _parse_deliver_at(d.pop("deliver_at", UNSET))

        def _parse_expunged_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        expunged_at = _parse_expunged_at(d.pop("expunged_at", UNSET))

        def _parse_idempotency_key(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        idempotency_key = _parse_idempotency_key(d.pop("idempotency_key", UNSET))

        def _parse_payload_purged(data: object) -> Union[None, Unset, bool]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, bool], data)

        payload_purged = _parse_payload_purged(d.pop("payload_purged", UNSET))

        def _parse_warning(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        warning = _parse_warning(d.pop("warning", UNSET))

        event = cls(
            app_id=app_id,
            channels=channels,
            created_at=created_at,
            deliveries=deliveries,
            id=id,
            payload_sha256=payload_sha256,
            tags=tags,
            type_=type_,
            data=data,
            deliver_at=deliver_at,
            expunged_at=expunged_at,
            idempotency_key=idempotency_key,
            payload_purged=payload_purged,
            warning=warning,
        )

        event.additional_properties = d
        return event

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
