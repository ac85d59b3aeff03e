from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.page_attempt_data_item_error_type_1 import PageAttemptDataItemErrorType1
from ..models.page_attempt_data_item_error_type_2_type_1 import (
    PageAttemptDataItemErrorType2Type1,
)
from ..models.page_attempt_data_item_error_type_3_type_1 import (
    PageAttemptDataItemErrorType3Type1,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="PageAttemptDataItem")


@_attrs_define
class PageAttemptDataItem:
    """An attempt as the API shows it; `id` is the `X-Fenix-Delivery-Id` that was sent.

    Attributes:
        attempt_number (int):
        delivery_id (str):
        duration_ms (int):
        id (str):
        signed_with (list[int]): Secret versions whose signatures the request carried, newest first.
        started_at (str):
        error (Union[None, PageAttemptDataItemErrorType1, PageAttemptDataItemErrorType2Type1,
            PageAttemptDataItemErrorType3Type1, Unset]):
        error_detail (Union[None, Unset, str]):
        response_excerpt (Union[None, Unset, str]):
        response_status (Union[None, Unset, int]):
    """

    attempt_number: int
    delivery_id: str
    duration_ms: int
    id: str
    signed_with: list[int]
    started_at: str
    error: Union[
        None,
        PageAttemptDataItemErrorType1,
        PageAttemptDataItemErrorType2Type1,
        PageAttemptDataItemErrorType3Type1,
        Unset,
    ] = UNSET
    error_detail: Union[None, Unset, str] = UNSET
    response_excerpt: Union[None, Unset, str] = UNSET
    response_status: Union[None, Unset, int] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt_number = self.attempt_number

        delivery_id = self.delivery_id

        duration_ms = self.duration_ms

        id = self.id

        signed_with = self.signed_with

        started_at = self.started_at

        error: Union[None, Unset, str]
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, PageAttemptDataItemErrorType1):
            error = self.error.value
        elif isinstance(self.error, PageAttemptDataItemErrorType2Type1):
            error = self.error.value
        elif isinstance(self.error, PageAttemptDataItemErrorType3Type1):
            error = self.error.value
        else:
            error = self.error

        error_detail: Union[None, Unset, str]
        if isinstance(self.error_detail, Unset):
            error_detail = UNSET
        else:
            error_detail = self.error_detail

        response_excerpt: Union[None, Unset, str]
        if isinstance(self.response_excerpt, Unset):
            response_excerpt = UNSET
        else:
            response_excerpt = self.response_excerpt

        response_status: Union[None, Unset, int]
        if isinstance(self.response_status, Unset):
            response_status = UNSET
        else:
            response_status = self.response_status

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt_number": attempt_number,
                "delivery_id": delivery_id,
                "duration_ms": duration_ms,
                "id": id,
                "signed_with": signed_with,
                "started_at": started_at,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if error_detail is not UNSET:
            field_dict["error_detail"] = error_detail
        if response_excerpt is not UNSET:
            field_dict["response_excerpt"] = response_excerpt
        if response_status is not UNSET:
            field_dict["response_status"] = response_status

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempt_number = d.pop("attempt_number")

        delivery_id = d.pop("delivery_id")

        duration_ms = d.pop("duration_ms")

        id = d.pop("id")

        signed_with = cast(list[int], d.pop("signed_with"))

        started_at = d.pop("started_at")

        def _parse_error(
            data: object,
        ) -> Union[
            None,
            PageAttemptDataItemErrorType1,
            PageAttemptDataItemErrorType2Type1,
            PageAttemptDataItemErrorType3Type1,
            Unset,
        ]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_type_1 = PageAttemptDataItemErrorType1(data)

                return error_type_1
            except:  # noqa: E722
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_type_2_type_1 = PageAttemptDataItemErrorType2Type1(data)

                return error_type_2_type_1
            except:  # noqa: E722
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_type_3_type_1 = PageAttemptDataItemErrorType3Type1(data)

                return error_type_3_type_1
            except:  # noqa: E722
                pass
            return cast(
                Union[
                    None,
                    PageAttemptDataItemErrorType1,
                    PageAttemptDataItemErrorType2Type1,
                    PageAttemptDataItemErrorType3Type1,
                    Unset,
                ],
                data,
            )

        error = _parse_error(d.pop("error", UNSET))

        def _parse_error_detail(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        error_detail = _parse_error_detail(d.pop("error_detail", UNSET))

        def _parse_response_excerpt(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        response_excerpt = _parse_response_excerpt(d.pop("response_excerpt", UNSET))

        def _parse_response_status(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        response_status = _parse_response_status(d.pop("response_status", UNSET))

        page_attempt_data_item = cls(
            attempt_number=attempt_number,
            delivery_id=delivery_id,
            duration_ms=duration_ms,
            id=id,
            signed_with=signed_with,
            started_at=started_at,
            error=error,
            error_detail=error_detail,
            response_excerpt=response_excerpt,
            response_status=response_status,
        )

        page_attempt_data_item.additional_properties = d
        return page_attempt_data_item

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
