from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
)

from attrs import define as _attrs_define

from ..models.task_request_kind import TaskRequestKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.operator_task_filter import OperatorTaskFilter


T = TypeVar("T", bound="OperatorTaskRequest")


@_attrs_define
class OperatorTaskRequest:
    """An operator's task to create across apps, or to count (`dry_run`).

    Attributes:
        kind (TaskRequestKind): What a created task does (an app's deletion, `delete_app`, is made by `DELETE
            /v1/apps/{app}`).
        dry_run (Union[Unset, bool]): True: create nothing, answer how many deliveries the task would act on.
        filter_ (Union[Unset, OperatorTaskFilter]): Which deliveries of which apps an operator's task selects; every
            field narrows it.
    """

    kind: TaskRequestKind
    dry_run: Union[Unset, bool] = UNSET
    filter_: Union[Unset, "OperatorTaskFilter"] = UNSET

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        dry_run = self.dry_run

        filter_: Union[Unset, dict[str, Any]] = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "kind": kind,
            }
        )
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if filter_ is not UNSET:
            field_dict["filter"] = filter_

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.operator_task_filter import OperatorTaskFilter

        d = dict(src_dict)
        kind = TaskRequestKind(d.pop("kind"))

        dry_run = d.pop("dry_run", UNSET)

        _filter_ = d.pop("filter", UNSET)
        filter_: Union[Unset, OperatorTaskFilter]
        if isinstance(_filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = OperatorTaskFilter.from_dict(_filter_)

        operator_task_request = cls(
            kind=kind,
            dry_run=dry_run,
            filter_=filter_,
        )

        return operator_task_request
