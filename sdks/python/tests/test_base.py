"""The thin layer's plumbing: request bodies from keyword arguments, closed sets, pages."""

from __future__ import annotations

import types
from typing import Union

import pytest

from fenix_sdk import Event, Page
from fenix_sdk._base import _as_enum, body, walk
from fenix_sdk._generated.models import CreateApp, DeliveryStatus, NewEvent, PatchEndpoint
from fenix_sdk._generated.types import UNSET, Unset


def test_a_create_leaves_out_what_is_none_and_an_update_sends_it_as_null():
    assert body(CreateApp, {"name": "Acme", "uid": None}).to_dict() == {"name": "Acme"}
    assert body(PatchEndpoint, {"retry_schedule": None}).to_dict() == {}
    assert body(PatchEndpoint, {"retry_schedule": None}, keep_none=True).to_dict() == {"retry_schedule": None}


def test_a_field_the_generator_renamed_keeps_its_api_name():
    assert body(NewEvent, {"type": "a.b", "data": {"x": 1}}).to_dict() == {"type": "a.b", "data": {"x": 1}}


def test_text_for_a_closed_set_parameter_becomes_its_enum():
    def sync_detailed(*, client: object, status: Union[Unset, DeliveryStatus] = UNSET) -> None: ...

    operation = types.ModuleType("list_things")  # a generated call is a module
    operation.sync_detailed = sync_detailed  # type: ignore[attr-defined]
    assert _as_enum(operation, "status", "failed") is DeliveryStatus.FAILED
    assert _as_enum(operation, "other", "failed") == "failed"
    with pytest.raises(ValueError):
        _as_enum(operation, "status", "exploded")


def test_walk_asks_for_each_next_page_until_the_last():
    pages = {None: Page(data=[1, 2], next_cursor="b"), "b": Page(data=[3], next_cursor=None)}
    asked = []
    assert list(walk(lambda cursor: asked.append(cursor) or pages[cursor])) == [1, 2, 3]
    assert asked == [None, "b"]


def test_a_field_the_generator_renamed_reads_under_its_api_name_too():
    event = Event.from_dict(
        {
            "id": "evt_1",
            "app_id": "app_1",
            "type": "a.b",
            "payload_sha256": "x",
            "deliveries": 1,
            "created_at": "t",
            "channels": [],
            "tags": [],
        }
    )
    assert event.type == event.type_ == "a.b"  # type: ignore[attr-defined]
