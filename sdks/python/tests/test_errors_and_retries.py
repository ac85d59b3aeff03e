"""FenixError carries what Fenix said; 429/503 are retried only for calls safe to repeat."""

from __future__ import annotations

import json

import httpx
import pytest

from fenix_sdk import Fenix, FenixError


def scripted(answers, seen):
    """A transport that answers from `answers` in turn and records each request."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status, headers, body = answers[min(len(seen), len(answers)) - 1]
        return httpx.Response(status, headers=headers, content=json.dumps(body).encode())

    return httpx.MockTransport(handler)


def client(answers, seen, **kwargs):
    return Fenix("http://fenix.test", "fxa_token", httpx_args={"transport": scripted(answers, seen)}, **kwargs)


BUSY = (503, {"Retry-After": "0"}, {"error": {"code": "overloaded", "message": "busy"}})
APP = {
    "id": "app_1",
    "name": "Acme",
    "uid": "acme",
    "created_at": "t",
    "updated_at": "t",
    "require_endpoint_verification": False,
}


def test_a_refusal_carries_status_code_message_and_retry_after():
    seen = []
    fenix = client(
        [(429, {"Retry-After": "7"}, {"error": {"code": "rate_limited", "message": "slow down"}})], seen, max_retries=0
    )
    with pytest.raises(FenixError) as refused:
        fenix.apps.get("acme")
    assert (refused.value.status, refused.value.code, refused.value.message) == (429, "rate_limited", "slow down")
    assert refused.value.retry_after == 7


def test_a_get_answered_503_is_retried_until_it_succeeds():
    seen = []
    app = client([BUSY, BUSY, (200, {}, APP)], seen).apps.get("acme")
    assert app.id == "app_1" and len(seen) == 3
    assert seen[0].headers["authorization"] == "Bearer fxa_token"


def test_a_post_without_an_idempotency_key_is_sent_once():
    seen = []
    with pytest.raises(FenixError) as refused:
        client([BUSY, (201, {}, APP)], seen).apps.create(name="Acme", uid="acme")
    assert refused.value.status == 503 and len(seen) == 1


def test_an_event_with_an_idempotency_key_is_retried():
    seen = []
    event = {
        "id": "evt_1",
        "app_id": "app_1",
        "type": "a.b",
        "payload_sha256": "x",
        "deliveries": 1,
        "created_at": "t",
        "channels": [],
        "tags": [],
    }
    sent = client([BUSY, (202, {}, event)], seen).events.send("acme", type="a.b", data={}, idempotency_key="k")
    assert sent.id == "evt_1" and len(seen) == 2
    assert seen[1].headers["idempotency-key"] == "k"


def test_retries_stop_after_max_retries():
    seen = []
    with pytest.raises(FenixError) as refused:
        client([BUSY], seen, max_retries=2).apps.get("acme")
    assert refused.value.code == "overloaded" and len(seen) == 3


def test_an_unknown_keyword_is_refused_before_anything_is_sent():
    seen = []
    with pytest.raises(TypeError):
        client([(201, {}, APP)], seen).apps.create(name="Acme", colour="red")
    assert seen == []


def test_an_error_page_that_is_not_fenix_json_is_still_a_fenix_error():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, headers={"Content-Type": "text/html"}, content=b"<h1>proxy error</h1>")

    fenix = Fenix("http://fenix.test", "t", httpx_args={"transport": httpx.MockTransport(handler)})
    with pytest.raises(FenixError) as refused:
        fenix.apps.get("acme")
    assert (refused.value.status, refused.value.code) == (500, "http_error")


def test_a_code_newer_than_the_sdk_is_read_as_text():
    seen = []
    answer = (404, {}, {"error": {"code": "some_future_code", "message": "new"}})
    with pytest.raises(FenixError) as refused:
        client([answer], seen).apps.get("acme")
    assert refused.value.code == "some_future_code"
