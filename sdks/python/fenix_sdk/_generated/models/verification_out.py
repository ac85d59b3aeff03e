from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.verification_status import VerificationStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="VerificationOut")


@_attrs_define
class VerificationOut:
    """An endpoint's open ownership challenge: its attempts and why the last one failed.

    Attributes:
        attempts (int): Attempts made so far (failed ones: a success ends the challenge).
        started_at (str): When this challenge was started.
        status (VerificationStatus): Whether an ownership challenge is still being sent.
        last_attempt_at (Union[None, Unset, str]):
        last_error (Union[None, Unset, str]): Why the last attempt failed: `challenge_mismatch`, `http_status`,
            `timeout`, `connect`,
            `destination_blocked`, … (the delivery log's classes).
        last_error_detail (Union[None, Unset, str]):
        last_status (Union[None, Unset, int]): The HTTP status of the last answer, if there was one.
        next_attempt_at (Union[None, Unset, str]):
    """

    attempts: int
    started_at: str
    status: VerificationStatus
    last_attempt_at: Union[None, Unset, str] = UNSET
    last_error: Union[None, Unset, str] = UNSET
    last_error_detail: Union[None, Unset, str] = UNSET
    last_status: Union[None, Unset, int] = UNSET
    next_attempt_at: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        started_at = self.started_at

        status = self.status.value

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

        last_error_detail: Union[None, Unset, str]
        if isinstance(self.last_error_detail, Unset):
            last_error_detail = UNSET
        else:
            last_error_detail = self.last_error_detail

        last_status: Union[None, Unset, int]
        if isinstance(self.last_status, Unset):
            last_status = UNSET
        else:
            last_status = self.last_status

        next_attempt_at: Union[None, Unset, str]
        if isinstance(self.next_attempt_at, Unset):
            next_attempt_at = UNSET
        else:
            next_attempt_at = self.next_attempt_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "started_at": started_at,
                "status": status,
            }
        )
        if last_attempt_at is not UNSET:
            field_dict["last_attempt_at"] = last_attempt_at
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_error_detail is not UNSET:
            field_dict["last_error_detail"] = last_error_detail
        if last_status is not UNSET:
            field_dict["last_status"] = last_status
        if next_attempt_at is not UNSET:
            field_dict["next_attempt_at"] = next_attempt_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        started_at = d.pop("started_at")

        status = VerificationStatus(d.pop("status"))

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

        def _parse_last_error_detail(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        last_error_detail = _parse_last_error_detail(d.pop("last_error_detail", UNSET))

        def _parse_last_status(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        last_status = _parse_last_status(d.pop("last_status", UNSET))

        def _parse_next_attempt_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at", UNSET))

        verification_out = cls(
            attempts=attempts,
            started_at=started_at,
            status=status,
            last_attempt_at=last_attempt_at,
            last_error=last_error,
            last_error_detail=last_error_detail,
            last_status=last_status,
            next_attempt_at=next_attempt_at,
        )

        verification_out.additional_properties = d
        return verification_out

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
