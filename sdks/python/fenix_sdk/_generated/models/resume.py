from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Resume")


@_attrs_define
class Resume:
    """
    Attributes:
        replay_skipped (Union[Unset, bool]):
    """

    replay_skipped: Union[Unset, bool] = UNSET

    def to_dict(self) -> dict[str, Any]:
        replay_skipped = self.replay_skipped

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if replay_skipped is not UNSET:
            field_dict["replay_skipped"] = replay_skipped

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        replay_skipped = d.pop("replay_skipped", UNSET)

        resume = cls(
            replay_skipped=replay_skipped,
        )

        return resume
