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
    from ..models.event_type_example_type_0 import EventTypeExampleType0
    from ..models.event_type_schema_type_0 import EventTypeSchemaType0


T = TypeVar("T", bound="EventType")


@_attrs_define
class EventType:
    """A catalogued event type as the API shows it.

    Attributes:
        created_at (str):
        deprecated (bool): Still accepted; producers are told (`warning`) when they send it.
        description (str):
        name (str): The event type, as events carry it in `type`. Example: order.paid.
        updated_at (str):
        example (Union['EventTypeExampleType0', None, Unset]): An example `data`; it matches `schema`.
        schema (Union['EventTypeSchemaType0', None, Unset]): The JSON Schema (draft 2020-12) every event's `data` must
            match; null: any object.
    """

    created_at: str
    deprecated: bool
    description: str
    name: str
    updated_at: str
    example: Union["EventTypeExampleType0", None, Unset] = UNSET
    schema: Union["EventTypeSchemaType0", None, Unset] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_type_example_type_0 import EventTypeExampleType0
        from ..models.event_type_schema_type_0 import EventTypeSchemaType0

        created_at = self.created_at

        deprecated = self.deprecated

        description = self.description

        name = self.name

        updated_at = self.updated_at

        example: Union[None, Unset, dict[str, Any]]
        if isinstance(self.example, Unset):
            example = UNSET
        elif isinstance(self.example, EventTypeExampleType0):
            example = self.example.to_dict()
        else:
            example = self.example

        schema: Union[None, Unset, dict[str, Any]]
        if isinstance(self.schema, Unset):
            schema = UNSET
        elif isinstance(self.schema, EventTypeSchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "deprecated": deprecated,
                "description": description,
                "name": name,
                "updated_at": updated_at,
            }
        )
        if example is not UNSET:
            field_dict["example"] = example
        if schema is not UNSET:
            field_dict["schema"] = schema

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_example_type_0 import EventTypeExampleType0
        from ..models.event_type_schema_type_0 import EventTypeSchemaType0

        d = dict(src_dict)
        created_at = d.pop("created_at")

        deprecated = d.pop("deprecated")

        description = d.pop("description")

        name = d.pop("name")

        updated_at = d.pop("updated_at")

        def _parse_example(data: object) -> Union["EventTypeExampleType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                example_type_0 = EventTypeExampleType0.from_dict(data)

                return example_type_0
            except:  # noqa: E722
                pass
            return cast(Union["EventTypeExampleType0", None, Unset], data)

        example = _parse_example(d.pop("example", UNSET))

        def _parse_schema(data: object) -> Union["EventTypeSchemaType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = EventTypeSchemaType0.from_dict(data)

                return schema_type_0
            except:  # noqa: E722
                pass
            return cast(Union["EventTypeSchemaType0", None, Unset], data)

        schema = _parse_schema(d.pop("schema", UNSET))

        event_type = cls(
            created_at=created_at,
            deprecated=deprecated,
            description=description,
            name=name,
            updated_at=updated_at,
            example=example,
            schema=schema,
        )

        event_type.additional_properties = d
        return event_type

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
