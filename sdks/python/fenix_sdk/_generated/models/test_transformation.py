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
    from ..models.test_event import TestEvent


T = TypeVar("T", bound="TestTransformation")


@_attrs_define
class TestTransformation:
    """A transformation to try.

    Attributes:
        event (TestEvent): The event a test runs on.
        transformation (str): The script, as an endpoint's `transformation` (at most 64 KiB). Example: function
            handler(webhook) { webhook.payload = {text: webhook.payload.type}; return webhook; }.
        endpoint_id (Union[None, Unset, str]): An endpoint of the app whose URL and custom headers the script is given
            (sensitive ones are not); absent: `https://receiver.example/webhook`, no headers.
    """

    event: "TestEvent"
    transformation: str
    endpoint_id: Union[None, Unset, str] = UNSET

    def to_dict(self) -> dict[str, Any]:
        event = self.event.to_dict()

        transformation = self.transformation

        endpoint_id: Union[None, Unset, str]
        if isinstance(self.endpoint_id, Unset):
            endpoint_id = UNSET
        else:
            endpoint_id = self.endpoint_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "event": event,
                "transformation": transformation,
            }
        )
        if endpoint_id is not UNSET:
            field_dict["endpoint_id"] = endpoint_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.test_event import TestEvent

        d = dict(src_dict)
        event = TestEvent.from_dict(d.pop("event"))

        transformation = d.pop("transformation")

        def _parse_endpoint_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        endpoint_id = _parse_endpoint_id(d.pop("endpoint_id", UNSET))

        test_transformation = cls(
            event=event,
            transformation=transformation,
            endpoint_id=endpoint_id,
        )

        return test_transformation
