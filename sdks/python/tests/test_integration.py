"""The SDK against a running Fenix (FENIX_URL, FENIX_TOKEN; skipped without them).

An app, an endpoint pointing at a local receiver that verifies with the SDK's
`Webhook`, an event and a batch delivered, 250 deliveries paged through, a
failed delivery replayed, and a refused call's code. Each step names the SDK
call it makes, so a failure says which one broke.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid

import pytest
from receiver import Receiver

from fenix_sdk import Fenix, FenixError, Webhook

URL = os.environ.get("FENIX_URL")
TOKEN = os.environ.get("FENIX_TOKEN")
pytestmark = pytest.mark.skipif(not (URL and TOKEN), reason="FENIX_URL and FENIX_TOKEN name a running Fenix")


@contextlib.contextmanager
def call(name: str):
    """Names the SDK call in any failure inside the block."""
    try:
        yield
    except Exception as error:
        raise AssertionError(f"python SDK, {name}: {type(error).__name__}: {error}") from error


def eventually(what: str, check, timeout: float = 30.0):
    """Polls `check` until it answers something true; fails naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        answer = check()
        if answer:
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(f"python SDK, {what}: not reached within {timeout} s")
        time.sleep(0.1)


@pytest.fixture
def fenix():
    with Fenix(URL, TOKEN) as client:
        yield client


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.fixture
def setup(fenix, receiver):
    """An app and an endpoint (one retry after 200 ms) whose secret the receiver verifies with."""
    uid = f"py-sdk-{uuid.uuid4().hex[:12]}"
    with call("apps.create"):
        app = fenix.apps.create(name="Python SDK test", uid=uid)
    with call("endpoints.create"):
        endpoint = fenix.endpoints.create(app.id, url=receiver.url, event_types=[], retry_schedule=["200ms"])
    assert endpoint.secret.startswith("whsec_")
    receiver.webhook = Webhook(endpoint.secret)
    return app, endpoint


def test_an_event_and_a_batch_reach_the_receiver_verified(fenix, receiver, setup):
    app, endpoint = setup
    with call("apps.get"):
        assert fenix.apps.get(app.uid).id == app.id
    with call("endpoints.get"):
        assert fenix.endpoints.get(app.id, endpoint.id).url == receiver.url
    with call("events.send"):
        event = fenix.events.send(app.id, type="sdk.hello", data={"n": 1}, idempotency_key=f"{app.uid}-1")
        again = fenix.events.send(app.id, type="sdk.hello", data={"n": 1}, idempotency_key=f"{app.uid}-1")
    assert again.id == event.id and event.deliveries == 1
    with call("events.send_batch"):
        batch = fenix.events.send_batch(app.id, [{"type": "sdk.batch", "data": {"i": i}} for i in range(3)])
    ids = [event.id] + [item.id for item in batch.data]
    assert all(item.created for item in batch.data)
    eventually("the receiver verifying the event and the batch", lambda: receiver.seen(ids))
    assert receiver.verified[event.id]["data"] == {"n": 1} and receiver.rejected == 0
    with call("deliveries.list"):
        succeeded = eventually(
            "deliveries.list(status=succeeded) showing the four",
            lambda: (page := fenix.deliveries.list(app.id, status="succeeded")) and len(page.data) == 4 and page,
        )
    assert {delivery.event_id for delivery in succeeded.data} == set(ids)
    with call("deliveries.get / deliveries.attempts"):
        delivery = fenix.deliveries.get(app.id, succeeded.data[0].id)
        attempts = fenix.deliveries.attempts(app.id, delivery.id)
    assert attempts.data[0].response_status == 200


def test_250_deliveries_page_through_list_and_list_all(fenix, receiver, setup):
    app, endpoint = setup
    with call("events.send_batch (250 events)"):
        batch = fenix.events.send_batch(app.id, [{"type": "sdk.bulk", "data": {"i": i}} for i in range(250)])
    assert len(batch.data) == 250
    pages, cursor, seen = 0, None, []
    with call("deliveries.list (pages of 100)"):
        while True:
            page = fenix.deliveries.list(app.id, event_type="sdk.bulk", limit=100, cursor=cursor)
            pages, cursor = pages + 1, page.next_cursor
            seen += [delivery.id for delivery in page.data]
            if cursor is None:
                break
    assert pages == 3 and len(seen) == 250 == len(set(seen))
    with call("deliveries.list_all"):
        walked = [delivery.id for delivery in fenix.deliveries.list_all(app.id, event_type="sdk.bulk", limit=100)]
    assert walked == seen
    with call("endpoints.list_all / apps.list"):
        assert [ep.id for ep in fenix.endpoints.list_all(app.id)] == [endpoint.id]
        assert len(fenix.apps.list(limit=1).data) == 1


def test_a_failed_delivery_is_replayed_and_succeeds(fenix, receiver, setup):
    app, _ = setup
    receiver.failing.add("sdk.flaky")
    with call("events.send"):
        event = fenix.events.send(app.id, type="sdk.flaky", data={"try": "again"})
    with call("deliveries.list(status=failed)"):
        failed = eventually(
            "the delivery failing after its two attempts",
            lambda: fenix.deliveries.list(app.id, status="failed", event_type="sdk.flaky").data,
        )[0]
    assert failed.event_id == event.id and failed.attempt_count == 2
    with call("deliveries.attempts"):
        assert [attempt.response_status for attempt in fenix.deliveries.attempts(app.id, failed.id).data] == [500, 500]
    receiver.failing.clear()
    with call("deliveries.replay"):
        replayed = fenix.deliveries.replay(app.id, failed.id)
    assert replayed.id == failed.id
    with call("deliveries.get"):
        eventually(
            "the replayed delivery succeeding",
            lambda: fenix.deliveries.get(app.id, failed.id).status.value == "succeeded",
        )
    assert receiver.seen([event.id])


def test_a_refused_call_carries_fenix_code(fenix, setup):
    app, endpoint = setup
    with pytest.raises(FenixError) as refused:
        fenix.apps.get(f"no-such-app-{uuid.uuid4().hex[:8]}")
    assert (refused.value.status, refused.value.code) == (404, "app_not_found")
    with pytest.raises(FenixError) as refused:
        fenix.apps.create(name="again", uid=app.uid)
    assert refused.value.status == 409 and refused.value.code
    with call("endpoints.pause / resume / update / rotate_secret"):
        assert fenix.endpoints.pause(app.id, endpoint.id).state.value == "paused"
        assert fenix.endpoints.resume(app.id, endpoint.id).state.value == "active"
        assert fenix.endpoints.update(app.id, endpoint.id, description="changed").description == "changed"
        assert fenix.endpoints.rotate_secret(app.id, endpoint.id, overlap_seconds=0).secret.startswith("whsec_")
    with call("portal_sessions.create"):
        assert "#fxp_" in fenix.portal_sessions.create(app.id, access="read", expires_in=60).url
