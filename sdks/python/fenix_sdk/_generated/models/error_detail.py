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

from ..models.error_code import ErrorCode
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.schema_violation import SchemaViolation


T = TypeVar("T", bound="ErrorDetail")


@_attrs_define
class ErrorDetail:
    """What went wrong.

    Attributes:
        code (ErrorCode): Stable, machine-readable: branch on this.
        message (str): For people: says what to change. Example: no such app.
        details (Union[None, Unset, list['SchemaViolation']]): Only with `schema_mismatch` (and an example that fails
            its schema):
            each place the value breaks the schema, at most 10.
    """

    code: ErrorCode
    message: str
    details: Union[None, Unset, list["SchemaViolation"]] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code.value

        message = self.message

        details: Union[None, Unset, list[dict[str, Any]]]
        if isinstance(self.details, Unset):
            details = UNSET
        elif isinstance(self.details, list):
            details = []
            for details_type_0_item_data in self.details:
                details_type_0_item = details_type_0_item_data.to_dict()
                details.append(details_type_0_item)

        else:
            details = self.details

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "message": message,
            }
        )
        if details is not UNSET:
            field_dict["details"] = details

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.schema_violation import SchemaViolation

        d = dict(src_dict)
        code = ErrorCode(d.pop("code"))

        message = d.pop("message")

        def _parse_details(data: object) -> Union[None, Unset, list["SchemaViolation"]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                details_type_0 = []
                _details_type_0 = data
                for details_type_0_item_data in _details_type_0:
                    details_type_0_item = SchemaViolation.from_dict(
                        details_type_0_item_data
                    )

                    details_type_0.append(details_type_0_item)

                return details_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list["SchemaViolation"]], data)

        details = _parse_details(d.pop("details", UNSET))

        error_detail = cls(
            code=code,
            message=message,
            details=details,
        )

        error_detail.additional_properties = d
        return error_detail

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
