import datetime
from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from dateutil.parser import isoparse

from ..models.status_class import StatusClass
from ..types import UNSET, Unset

T = TypeVar("T", bound="OperatorTaskFilter")


@_attrs_define
class OperatorTaskFilter:
    """Which deliveries of which apps an operator's task selects; every field narrows it.

    Attributes:
        app_ids (Union[None, Unset, list[str]]): Only these apps' deliveries (ids or uids); default: every app's.
        event_types (Union[None, Unset, list[str]]): Only these event types.
        last_status_class (Union[None, StatusClass, Unset]):
        since (Union[None, Unset, datetime.datetime]): Deliveries created at or after this time (RFC 3339).
        statuses (Union[None, Unset, list[str]]): Statuses as shown, as in an app's task.
        until (Union[None, Unset, datetime.datetime]): Deliveries created before this time (RFC 3339).
    """

    app_ids: Union[None, Unset, list[str]] = UNSET
    event_types: Union[None, Unset, list[str]] = UNSET
    last_status_class: Union[None, StatusClass, Unset] = UNSET
    since: Union[None, Unset, datetime.datetime] = UNSET
    statuses: Union[None, Unset, list[str]] = UNSET
    until: Union[None, Unset, datetime.datetime] = UNSET

    def to_dict(self) -> dict[str, Any]:
        app_ids: Union[None, Unset, list[str]]
        if isinstance(self.app_ids, Unset):
            app_ids = UNSET
        elif isinstance(self.app_ids, list):
            app_ids = self.app_ids

        else:
            app_ids = self.app_ids

        event_types: Union[None, Unset, list[str]]
        if isinstance(self.event_types, Unset):
            event_types = UNSET
        elif isinstance(self.event_types, list):
            event_types = self.event_types

        else:
            event_types = self.event_types

        last_status_class: Union[None, Unset, str]
        if isinstance(self.last_status_class, Unset):
            last_status_class = UNSET
        elif isinstance(self.last_status_class, StatusClass):
            last_status_class = self.last_status_class.value
        else:
            last_status_class = self.last_status_class

        since: Union[None, Unset, str]
        if isinstance(self.since, Unset):
            since = UNSET
        elif isinstance(self.since, datetime.datetime):
            since = self.since.isoformat()
        else:
            since = self.since

        statuses: Union[None, Unset, list[str]]
        if isinstance(self.statuses, Unset):
            statuses = UNSET
        elif isinstance(self.statuses, list):
            statuses = self.statuses

        else:
            statuses = self.statuses

        until: Union[None, Unset, str]
        if isinstance(self.until, Unset):
            until = UNSET
        elif isinstance(self.until, datetime.datetime):
            until = self.until.isoformat()
        else:
            until = self.until

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if app_ids is not UNSET:
            field_dict["app_ids"] = app_ids
        if event_types is not UNSET:
            field_dict["event_types"] = event_types
        if last_status_class is not UNSET:
            field_dict["last_status_class"] = last_status_class
        if since is not UNSET:
            field_dict["since"] = since
        if statuses is not UNSET:
            field_dict["statuses"] = statuses
        if until is not UNSET:
            field_dict["until"] = until

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_app_ids(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                app_ids_type_0 = cast(list[str], data)

                return app_ids_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        app_ids = _parse_app_ids(d.pop("app_ids", UNSET))

        def _parse_event_types(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                event_types_type_0 = cast(list[str], data)

                return event_types_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        event_types = _parse_event_types(d.pop("event_types", UNSET))

        def _parse_last_status_class(data: object) -> Union[None, StatusClass, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_status_class_type_1 = StatusClass(data)

                return last_status_class_type_1
            except:  # noqa: E722
                pass
            return cast(Union[None, StatusClass, Unset], data)

        last_status_class = _parse_last_status_class(d.pop("last_status_class", UNSET))

        def _parse_since(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                since_type_0 = isoparse(data)

                return since_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        since = _parse_since(d.pop("since", UNSET))

        def _parse_statuses(data: object) -> Union[None, Unset, list[str]]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                statuses_type_0 = cast(list[str], data)

                return statuses_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, list[str]], data)

        statuses = _parse_statuses(d.pop("statuses", UNSET))

        def _parse_until(data: object) -> Union[None, Unset, datetime.datetime]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                until_type_0 = isoparse(data)

                return until_type_0
            except:  # noqa: E722
                pass
            return cast(Union[None, Unset, datetime.datetime], data)

        until = _parse_until(d.pop("until", UNSET))

        operator_task_filter = cls(
            app_ids=app_ids,
            event_types=event_types,
            last_status_class=last_status_class,
            since=since,
            statuses=statuses,
            until=until,
        )

        return operator_task_filter
