import datetime
from collections.abc import Mapping
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.status_class import StatusClass
from ..types import UNSET, Unset

T = TypeVar("T", bound="TaskFilterRecord")


@_attrs_define
class TaskFilterRecord:
    """A task's selection as it was given: an app's task's filter, an
    operator's (`app_ids`), or the app an app's deletion erases (`app_id`).

        Attributes:
            app_id (Union[None, Unset, str]): An app's deletion (`delete_app`): the app it erases.
            app_ids (Union[None, Unset, list[str]]): An operator's task: only these apps (ids or uids, as given).
            endpoint_id (Union[None, Unset, str]): An app's task: only this endpoint's deliveries.
            event_types (Union[None, Unset, list[str]]): Only these event types.
            last_status_class (Union[None, StatusClass, Unset]):
            since (Union[None, Unset, datetime.datetime]): Deliveries created at or after this time (RFC 3339).
            statuses (Union[None, Unset, list[str]]): Statuses as given.
            until (Union[None, Unset, datetime.datetime]): Deliveries created before this time (RFC 3339).
    """

    app_id: Union[None, Unset, str] = UNSET
    app_ids: Union[None, Unset, list[str]] = UNSET
    endpoint_id: Union[None, Unset, str] = UNSET
    event_types: Union[None, Unset, list[str]] = UNSET
    last_status_class: Union[None, StatusClass, Unset] = UNSET
    since: Union[None, Unset, datetime.datetime] = UNSET
    statuses: Union[None, Unset, list[str]] = UNSET
    until: Union[None, Unset, datetime.datetime] = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        app_id: Union[None, Unset, str]
        if isinstance(self.app_id, Unset):
            app_id = UNSET
        else:
            app_id = self.app_id

        app_ids: Union[None, Unset, list[str]]
        if isinstance(self.app_ids, Unset):
            app_ids = UNSET
        elif isinstance(self.app_ids, list):
            app_ids = self.app_ids

        else:
            app_ids = self.app_ids

        endpoint_id: Union[None, Unset, str]
        if isinstance(self.endpoint_id, Unset):
            endpoint_id = UNSET
        else:
            endpoint_id = self.endpoint_id

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
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if app_id is not UNSET:
            field_dict["app_id"] = app_id
        if app_ids is not UNSET:
            field_dict["app_ids"] = app_ids
        if endpoint_id is not UNSET:
            field_dict["endpoint_id"] = endpoint_id
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

        def _parse_app_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        app_id = _parse_app_id(d.pop("app_id", UNSET))

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

        def _parse_endpoint_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        endpoint_id = _parse_endpoint_id(d.pop("endpoint_id", UNSET))

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

        task_filter_record = cls(
            app_id=app_id,
            app_ids=app_ids,
            endpoint_id=endpoint_id,
            event_types=event_types,
            last_status_class=last_status_class,
            since=since,
            statuses=statuses,
            until=until,
        )

        task_filter_record.additional_properties = d
        return task_filter_record

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
