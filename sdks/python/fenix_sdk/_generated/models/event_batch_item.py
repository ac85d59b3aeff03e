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

T = TypeVar("T", bound="EventBatchItem")


@_attrs_define
class EventBatchItem:
    """What became of one event of a batch, in the request's order.

    Attributes:
        created (bool): `true`: stored by this request; `false`: a repeat of an idempotency key seen before (in an
            earlier request, or earlier in this batch), nothing stored for it.
        deliveries (int): Deliveries of the event.
        id (str):
        type_ (str):
        deliver_at (Union[None, Unset, str]): When its deliveries are scheduled for (its `deliver_at` or `delay`); null:
            sent at once.
        idempotency_key (Union[None, Unset, str]):
    """

    created: bool
    deliveries: int
    id: str
    type_: str
    deliver_at: Union[None, Unset, str] = UNSET
    idempotency_key: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created = self.created

        deliveries = self.deliveries

        id = self.id

        type_ = self.type_

        deliver_at: Union[None, Unset, str]
        if isinstance(self.deliver_at, Unset):
            deliver_at = UNSET
        else:
            deliver_at = self.deliver_at

        idempotency_key: Union[None, Unset, str]
        if isinstance(self.idempotency_key, Unset):
            idempotency_key = UNSET
        else:
            idempotency_key = self.idempotency_key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created": created,
                "deliveries": deliveries,
                "id": id,
                "type": type_,
            }
        )
        if deliver_at is not UNSET:
            field_dict["deliver_at"] = deliver_at
        if idempotency_key is not UNSET:
            field_dict["idempotency_key"] = idempotency_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created = d.pop("created")

        deliveries = d.pop("deliveries")

        id = d.pop("id")

        type_ = d.pop("type")

        def _parse_deliver_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        deliver_at = _parse_deliver_at(d.pop("deliver_at", UNSET))

        def _parse_idempotency_key(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        idempotency_key = _parse_idempotency_key(d.pop("idempotency_key", UNSET))

        event_batch_item = cls(
            created=created,
            deliveries=deliveries,
            id=id,
            type_=type_,
            deliver_at=deliver_at,
            idempotency_key=idempotency_key,
        )

        event_batch_item.additional_properties = d
        return event_batch_item

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
