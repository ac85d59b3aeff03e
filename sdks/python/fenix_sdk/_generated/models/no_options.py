from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="NoOptions")


@_attrs_define
class NoOptions:
    """The body of a `POST` that takes no options (`pause`, a delivery's
    `replay`): empty or `{}`. Malformed JSON or any field is refused rather
    than ignored, as on every other body.

    """

    def to_dict(self) -> dict[str, Any]:
        field_dict: dict[str, Any] = {}

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        no_options = cls()

        return no_options
