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
    from ..models.task_filter import TaskFilter


T = TypeVar("T", bound="TaskRequest")


@_attrs_define
class TaskRequest:
    """A task to create, or to count (`dry_run`).

    Attributes:
        kind (TaskRequestKind): What a created task does (an app's deletion, `delete_app`, is made by `DELETE
            /v1/apps/{app}`).
        dry_run (Union[Unset, bool]): True: create nothing, answer how many deliveries the task would act on.
        filter_ (Union[Unset, TaskFilter]): Which deliveries of the app a task selects; every field narrows it.
    """

    kind: TaskRequestKind
    dry_run: Union[Unset, bool] = UNSET
    filter_: Union[Unset, "TaskFilter"] = UNSET

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
        from ..models.task_filter import TaskFilter

        d = dict(src_dict)
        kind = TaskRequestKind(d.pop("kind"))

        dry_run = d.pop("dry_run", UNSET)

        _filter_ = d.pop("filter", UNSET)
        filter_: Union[Unset, TaskFilter]
        if isinstance(_filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = TaskFilter.from_dict(_filter_)

        task_request = cls(
            kind=kind,
            dry_run=dry_run,
            filter_=filter_,
        )

        return task_request
