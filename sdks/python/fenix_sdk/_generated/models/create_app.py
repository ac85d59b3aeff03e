from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateApp")


@_attrs_define
class CreateApp:
    """
    Attributes:
        name (str):  Example: Acme Corp.
        log_retention (Union[None, Unset, int, str]):
        payload_retention (Union[None, Unset, int, str]):
        require_endpoint_verification (Union[Unset, bool]): Its endpoints must prove ownership of their URL (default
            `false`).
        uid (Union[None, Unset, str]): Not shaped like an app id (`app_…`). Example: acme.
    """

    name: str
    log_retention: Union[None, Unset, int, str] = UNSET
    payload_retention: Union[None, Unset, int, str] = UNSET
    require_endpoint_verification: Union[Unset, bool] = UNSET
    uid: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        log_retention: Union[None, Unset, int, str]
        if isinstance(self.log_retention, Unset):
            log_retention = UNSET
        else:
            log_retention = self.log_retention

        payload_retention: Union[None, Unset, int, str]
        if isinstance(self.payload_retention, Unset):
            payload_retention = UNSET
        else:
            payload_retention = self.payload_retention

        require_endpoint_verification = self.require_endpoint_verification

        uid: Union[None, Unset, str]
        if isinstance(self.uid, Unset):
            uid = UNSET
        else:
            uid = self.uid

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if log_retention is not UNSET:
            field_dict["log_retention"] = log_retention
        if payload_retention is not UNSET:
            field_dict["payload_retention"] = payload_retention
        if require_endpoint_verification is not UNSET:
            field_dict["require_endpoint_verification"] = require_endpoint_verification
        if uid is not UNSET:
            field_dict["uid"] = uid

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_log_retention(data: object) -> Union[None, Unset, int, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int, str], data)

        log_retention = _parse_log_retention(d.pop("log_retention", UNSET))

        def _parse_payload_retention(data: object) -> Union[None, Unset, int, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int, str], data)

        payload_retention = _parse_payload_retention(d.pop("payload_retention", UNSET))

        require_endpoint_verification = d.pop("require_endpoint_verification", UNSET)

        def _parse_uid(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        uid = _parse_uid(d.pop("uid", UNSET))

        create_app = cls(
            name=name,
            log_retention=log_retention,
            payload_retention=payload_retention,
            require_endpoint_verification=require_endpoint_verification,
            uid=uid,
        )

        return create_app
