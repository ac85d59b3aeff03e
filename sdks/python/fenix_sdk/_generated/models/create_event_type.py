from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.create_event_type_example_type_0 import CreateEventTypeExampleType0
    from ..models.create_event_type_schema_type_0 import CreateEventTypeSchemaType0


T = TypeVar("T", bound="CreateEventType")


@_attrs_define
class CreateEventType:
    """
    Attributes:
        name (str): An event type: 1-128 characters of `A-Z a-z 0-9 _ - . :`, no leading or trailing dot. Example:
            order.paid.
        deprecated (Union[Unset, bool]):
        description (Union[Unset, str]): Up to 2000 characters (line breaks allowed).
        example (Union['CreateEventTypeExampleType0', None, Unset]): An example `data` (an object); must match `schema`
            when both are given.
        schema (Union['CreateEventTypeSchemaType0', None, Unset]): A JSON Schema, draft 2020-12 (`$schema` left out or
            that draft's URI); `$ref` only within it.
    """

    name: str
    deprecated: Union[Unset, bool] = UNSET
    description: Union[Unset, str] = UNSET
    example: Union["CreateEventTypeExampleType0", None, Unset] = UNSET
    schema: Union["CreateEventTypeSchemaType0", None, Unset] = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.create_event_type_example_type_0 import (
            CreateEventTypeExampleType0,
        )
        from ..models.create_event_type_schema_type_0 import CreateEventTypeSchemaType0

        name = self.name

        deprecated = self.deprecated

        description = self.description

        example: Union[None, Unset, dict[str, Any]]
        if isinstance(self.example, Unset):
            example = UNSET
        elif isinstance(self.example, CreateEventTypeExampleType0):
            example = self.example.to_dict()
        else:
            example = self.example

        schema: Union[None, Unset, dict[str, Any]]
        if isinstance(self.schema, Unset):
            schema = UNSET
        elif isinstance(self.schema, CreateEventTypeSchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if deprecated is not UNSET:
            field_dict["deprecated"] = deprecated
        if description is not UNSET:
            field_dict["description"] = description
        if example is not UNSET:
            field_dict["example"] = example
        if schema is not UNSET:
            field_dict["schema"] = schema

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.create_event_type_example_type_0 import (
            CreateEventTypeExampleType0,
        )
        from ..models.create_event_type_schema_type_0 import CreateEventTypeSchemaType0

        d = dict(src_dict)
        name = d.pop("name")

        deprecated = d.pop("deprecated", UNSET)

        description = d.pop("description", UNSET)

        def _parse_example(
            data: object,
        ) -> Union["CreateEventTypeExampleType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                example_type_0 = CreateEventTypeExampleType0.from_dict(data)

                return example_type_0
            except:  # noqa: E722
                pass
            return cast(Union["CreateEventTypeExampleType0", None, Unset], data)

        example = _parse_example(d.pop("example", UNSET))

        def _parse_schema(
            data: object,
        ) -> Union["CreateEventTypeSchemaType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = CreateEventTypeSchemaType0.from_dict(data)

                return schema_type_0
            except:  # noqa: E722
                pass
            return cast(Union["CreateEventTypeSchemaType0", None, Unset], data)

        schema = _parse_schema(d.pop("schema", UNSET))

        create_event_type = cls(
            name=name,
            deprecated=deprecated,
            description=description,
            example=example,
            schema=schema,
        )

        return create_event_type
