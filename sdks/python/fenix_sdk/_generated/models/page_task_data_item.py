import datetime
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
from dateutil.parser import isoparse

from ..models.task_kind import TaskKind
from ..models.task_state import TaskState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.task_filter_record import TaskFilterRecord


T = TypeVar("T", bound="PageTaskDataItem")


@_attrs_define
class PageTaskDataItem:
    """A task: its progress and its audit record.

    Attributes:
        created_at (datetime.datetime):
        created_by (str): Who created it: `admin` (an admin token or an operator's session), `app_token` or
            `portal_customer`.
        done (int): Selected deliveries it changed (re-queued, or made `skipped`; `delete_app`: rows erased).
        failed (int): Selected deliveries it looked at and left: their status changed
            meanwhile (sent, replayed, cancelled by another call), or, for a
            replay, their payload was purged or erased since.
        filter_ (TaskFilterRecord): A task's selection as it was given: an app's task's filter, an
            operator's (`app_ids`), or the app an app's deletion erases (`app_id`).
        id (str):
        kind (TaskKind):
        rate_per_s (int): Deliveries per second it acts on, at most.
        selected (int): Deliveries selected when the task was created (`delete_app`: the
            app's deliveries, events and endpoints when its deletion was asked).
        state (TaskState):
        app_id (Union[None, Unset, str]): The app whose deliveries it selects; `null` for an operator's task across apps
            (`/v1/tasks`). Example: app_01JD3Z6N4VQK1T9S0W5X2Y8R7M.
        finished_at (Union[None, Unset, datetime.datetime]):
        started_at (Union[None, Unset, datetime.datetime]):
    """

    created_at: datetime.datetime
    created_by: str
    done: int
    failed: int
    filter_: "TaskFilterRecord"
    id: str
    kind: TaskKind
    rate_per_s: int
    selected: int
    state: TaskState
    app_id: Union[None, Unset, str] = UNSET
    finished_at: Union[None, Unset, datetime.datetime] = UNSET
    started_at: Union[None, Unset, datetime.datetime] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        created_by = self.created_by

        done = self.done

        failed = self.failed

        filter_ = self.filter_.to_dict()

        id = self.id

        kind = self.kind.value

        rate_per_s = self.rate_per_s

        selected = self.selected

        state = self.state.value

        app_id: Union[None, Unset, str]
        if isinstance(self.app_id, Unset):
            app_id = UNSET
        else:
            app_id = self.app_id

        finished_at: Union[None, Unset, str]
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        started_at: Union[None, Unset, str]
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "created_by": created_by,
                "done": done,
                "failed": failed,
                "filter": filter_,
                "id": id,
                "kind": kind,
                "rate_per_s": rate_per_s,
                "selected": selected,
                "state": state,
            }
        )
        if app_id is not UNSET:
            field_dict["app_id"] = app_id
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if started_at is not UNSET:
            field_dict["started_at"] = started_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.task_filter_record import TaskFilterRecord

        d = dict(src_dict)
        created_at = isoparse(d.pop("created_at"))

        created_by = d.pop("created_by")

        done = d.pop("done")

        failed = d.pop("failed")

        filter_ = TaskFilterRecord.from_dict(d.pop("filter"))

        id = d.pop("id")

        kind = TaskKind(d.pop("kind"))

        rate_per_s = d.pop("rate_per_s")

        selected = d.pop("selected")

        state = TaskState(d.pop("state"))

        def _parse_app_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        app_id = _parse_app_id(d.pop("app_id", UNSET))

        def _parse_finished_at(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = isoparse(data)

                return finished_at_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        def _parse_started_at(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = isoparse(data)

                return started_at_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        page_task_data_item = cls(
            created_at=created_at,
            created_by=created_by,
            done=done,
            failed=failed,
            filter_=filter_,
            id=id,
            kind=kind,
            rate_per_s=rate_per_s,
            selected=selected,
            state=state,
            app_id=app_id,
            finished_at=finished_at,
            started_at=started_at,
        )

        page_task_data_item.additional_properties = d
        return page_task_data_item

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
