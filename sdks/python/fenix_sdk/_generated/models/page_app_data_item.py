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

T = TypeVar("T", bound="PageAppDataItem")


@_attrs_define
class PageAppDataItem:
    """An app as the API shows it.

    Attributes:
        created_at (str):
        id (str):
        name (str):
        require_endpoint_verification (bool): Its endpoints must prove they control their URL before they are sent
            events (also when `FENIX_REQUIRE_ENDPOINT_VERIFICATION` is off).
        updated_at (str):
        log_retention (Union[None, Unset, str]): How long this app's finished deliveries and their attempts are kept;
            null: the operator's `FENIX_LOG_RETENTION`. Example: 30d.
        payload_retention (Union[None, Unset, str]): How long this app's event payloads are kept (e.g. `7d`); null: the
            operator's `FENIX_PAYLOAD_RETENTION`. Example: 7d.
        uid (Union[None, Unset, str]):
    """

    created_at: str
    id: str
    name: str
    require_endpoint_verification: bool
    updated_at: str
    log_retention: Union[None, Unset, str] = UNSET
    payload_retention: Union[None, Unset, str] = UNSET
    uid: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        id = self.id

        name = self.name

        require_endpoint_verification = self.require_endpoint_verification

        updated_at = self.updated_at

        log_retention: Union[None, Unset, str]
        if isinstance(self.log_retention, Unset):
            log_retention = UNSET
        else:
            log_retention = self.log_retention

        payload_retention: Union[None, Unset, str]
        if isinstance(self.payload_retention, Unset):
            payload_retention = UNSET
        else:
            payload_retention = self.payload_retention

        uid: Union[None, Unset, str]
        if isinstance(self.uid, Unset):
            uid = UNSET
        else:
            uid = self.uid

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "name": name,
                "require_endpoint_verification": require_endpoint_verification,
                "updated_at": updated_at,
            }
        )
        if log_retention is not UNSET:
            field_dict["log_retention"] = log_retention
        if payload_retention is not UNSET:
            field_dict["payload_retention"] = payload_retention
        if uid is not UNSET:
            field_dict["uid"] = uid

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        id = d.pop("id")

        name = d.pop("name")

        require_endpoint_verification = d.pop("require_endpoint_verification")

        updated_at = d.pop("updated_at")

        def _parse_log_retention(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        log_retention = _parse_log_retention(d.pop("log_retention", UNSET))

        def _parse_payload_retention(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        payload_retention = _parse_payload_retention(d.pop("payload_retention", UNSET))

        def _parse_uid(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        uid = _parse_uid(d.pop("uid", UNSET))

        page_app_data_item = cls(
            created_at=created_at,
            id=id,
            name=name,
            require_endpoint_verification=require_endpoint_verification,
            updated_at=updated_at,
            log_retention=log_retention,
            payload_retention=payload_retention,
            uid=uid,
        )

        page_app_data_item.additional_properties = d
        return page_app_data_item

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
