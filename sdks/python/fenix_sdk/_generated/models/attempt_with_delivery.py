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

from ..models.attempt_error_type_1 import AttemptErrorType1
from ..models.attempt_error_type_2_type_1 import AttemptErrorType2Type1
from ..models.attempt_error_type_3_type_1 import AttemptErrorType3Type1
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.delivery import Delivery


T = TypeVar("T", bound="AttemptWithDelivery")


@_attrs_define
class AttemptWithDelivery:
    """An attempt with the delivery it belongs to.

    Attributes:
        attempt_number (int):
        delivery_id (str):
        duration_ms (int):
        id (str):
        signed_with (list[int]): Secret versions whose signatures the request carried, newest first.
        started_at (str):
        delivery (Delivery): A delivery as the API shows it.
        error (Union[AttemptErrorType1, AttemptErrorType2Type1, AttemptErrorType3Type1, None, Unset]):
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
    delivery: "Delivery"
    error: Union[
        AttemptErrorType1, AttemptErrorType2Type1, AttemptErrorType3Type1, None, Unset
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

        delivery = self.delivery.to_dict()

        error: Union[None, Unset, str]
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, AttemptErrorType1):
            error = self.error.value
        elif isinstance(self.error, AttemptErrorType2Type1):
            error = self.error.value
        elif isinstance(self.error, AttemptErrorType3Type1):
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
                "delivery": delivery,
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
        from ..models.delivery import Delivery

        d = dict(src_dict)
        attempt_number = d.pop("attempt_number")

        delivery_id = d.pop("delivery_id")

        duration_ms = d.pop("duration_ms")

        id = d.pop("id")

        signed_with = cast(list[int], d.pop("signed_with"))

        started_at = d.pop("started_at")

        delivery = Delivery.from_dict(d.pop("delivery"))

        def _parse_error(
            data: object,
        ) -> Union[
            AttemptErrorType1,
            AttemptErrorType2Type1,
            AttemptErrorType3Type1,
            None,
            Unset,
        ]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_type_1 = AttemptErrorType1(data)

                return error_type_1
            except:  # noqa: E722
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_type_2_type_1 = AttemptErrorType2Type1(data)

                return error_type_2_type_1
            except:  # noqa: E722
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                error_type_3_type_1 = AttemptErrorType3Type1(data)

                return error_type_3_type_1
            except:  # noqa: E722
                pass
            return cast(
                Union[
                    AttemptErrorType1,
                    AttemptErrorType2Type1,
                    AttemptErrorType3Type1,
                    None,
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

        attempt_with_delivery = cls(
            attempt_number=attempt_number,
            delivery_id=delivery_id,
            duration_ms=duration_ms,
            id=id,
            signed_with=signed_with,
            started_at=started_at,
            delivery=delivery,
            error=error,
            error_detail=error_detail,
            response_excerpt=response_excerpt,
            response_status=response_status,
        )

        attempt_with_delivery.additional_properties = d
        return attempt_with_delivery

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
