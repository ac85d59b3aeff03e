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
    from ..models.patch_event_type_example_type_0 import PatchEventTypeExampleType0
    from ..models.patch_event_type_schema_type_0 import PatchEventTypeSchemaType0


T = TypeVar("T", bound="PatchEventType")


@_attrs_define
class PatchEventType:
    """
    Attributes:
        deprecated (Union[Unset, bool]): Left out: unchanged; cannot be null.
        description (Union[Unset, str]): Left out: unchanged; cannot be null.
        example (Union['PatchEventTypeExampleType0', None, Unset]): Left out: unchanged; `null` removes the example.
        schema (Union['PatchEventTypeSchemaType0', None, Unset]): Left out: unchanged; `null` removes the schema.
    """

    deprecated: Union[Unset, bool] = UNSET
    description: Union[Unset, str] = UNSET
    example: Union["PatchEventTypeExampleType0", None, Unset] = UNSET
    schema: Union["PatchEventTypeSchemaType0", None, Unset] = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.patch_event_type_example_type_0 import PatchEventTypeExampleType0
        from ..models.patch_event_type_schema_type_0 import PatchEventTypeSchemaType0

        deprecated = self.deprecated

        description = self.description

        example: Union[None, Unset, dict[str, Any]]
        if isinstance(self.example, Unset):
            example = UNSET
        elif isinstance(self.example, PatchEventTypeExampleType0):
            example = self.example.to_dict()
        else:
            example = self.example

        schema: Union[None, Unset, dict[str, Any]]
        if isinstance(self.schema, Unset):
            schema = UNSET
        elif isinstance(self.schema, PatchEventTypeSchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        field_dict: dict[str, Any] = {}

        field_dict.update({})
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
        from ..models.patch_event_type_example_type_0 import PatchEventTypeExampleType0
        from ..models.patch_event_type_schema_type_0 import PatchEventTypeSchemaType0

        d = dict(src_dict)
        deprecated = d.pop("deprecated", UNSET)

        description = d.pop("description", UNSET)

        def _parse_example(
            data: object,
        ) -> Union["PatchEventTypeExampleType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                example_type_0 = PatchEventTypeExampleType0.from_dict(data)

                return example_type_0
            except:  # noqa: E722
                pass
            return cast(Union["PatchEventTypeExampleType0", None, Unset], data)

        example = _parse_example(d.pop("example", UNSET))

        def _parse_schema(
            data: object,
        ) -> Union["PatchEventTypeSchemaType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = PatchEventTypeSchemaType0.from_dict(data)

                return schema_type_0
            except:  # noqa: E722
                pass
            return cast(Union["PatchEventTypeSchemaType0", None, Unset], data)

        schema = _parse_schema(d.pop("schema", UNSET))

        patch_event_type = cls(
            deprecated=deprecated,
            description=description,
            example=example,
            schema=schema,
        )

        return patch_event_type
