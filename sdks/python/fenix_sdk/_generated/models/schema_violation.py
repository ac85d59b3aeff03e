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

T = TypeVar("T", bound="SchemaViolation")


@_attrs_define
class SchemaViolation:
    """One way `data` fails its type's schema.

    Attributes:
        message (str): What the schema wants there; the offending value itself is never
            quoted (it is the producer's payload), it reads as `value`. Example: value is not of type "integer".
        path (str): JSON Pointer to the offending value, from the root of the request body
            (`/data/amount`, or `/events/3/data/amount` in a batch). Example: /data/amount.
        column (Union[None, Unset, int]): Only with `invalid_filter`: the column of `line` (1-based, in characters).
        line (Union[None, Unset, int]): Only with `invalid_filter`: where in the filter's text (1-based, in characters).
    """

    message: str
    path: str
    column: Union[None, Unset, int] = UNSET
    line: Union[None, Unset, int] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message = self.message

        path = self.path

        column: Union[None, Unset, int]
        if isinstance(self.column, Unset):
            column = UNSET
        else:
            column = self.column

        line: Union[None, Unset, int]
        if isinstance(self.line, Unset):
            line = UNSET
        else:
            line = self.line

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message": message,
                "path": path,
            }
        )
        if column is not UNSET:
            field_dict["column"] = column
        if line is not UNSET:
            field_dict["line"] = line

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        message = d.pop("message")

        path = d.pop("path")

        def _parse_column(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        column = _parse_column(d.pop("column", UNSET))

        def _parse_line(data: object) -> Union[None, Unset, int]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, int], data)

        line = _parse_line(d.pop("line", UNSET))

        schema_violation = cls(
            message=message,
            path=path,
            column=column,
            line=line,
        )

        schema_violation.additional_properties = d
        return schema_violation

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
