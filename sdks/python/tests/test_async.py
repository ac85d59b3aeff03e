"""`AsyncFenix`: the same calls awaited, the same retries and errors (asyncio.run, no plugin)."""

from __future__ import annotations

import asyncio
import json
import os
import uuid

import httpx
import pytest
from receiver import Receiver
from test_errors_and_retries import APP, BUSY

from fenix_sdk import AsyncFenix, FenixError, Webhook

URL = os.environ.get("FENIX_URL")
TOKEN = os.environ.get("FENIX_TOKEN")


def scripted(answers, seen):
    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status, headers, body = answers[min(len(seen), len(answers)) - 1]
        return httpx.Response(status, headers=headers, content=json.dumps(body).encode())

    return httpx.MockTransport(handler)


def test_an_awaited_get_answered_503_is_retried_and_a_create_is_not():
    async def run():
        seen = []
        async with AsyncFenix(
            "http://fenix.test", "t", httpx_args={"transport": scripted([BUSY, (200, {}, APP)], seen)}
        ) as fenix:
            assert (await fenix.apps.get("acme")).id == "app_1"
        assert len(seen) == 2
        seen.clear()
        async with AsyncFenix("http://fenix.test", "t", httpx_args={"transport": scripted([BUSY], seen)}) as fenix:
            with pytest.raises(FenixError) as refused:
                await fenix.apps.create(name="Acme")
        assert refused.value.code == "overloaded" and len(seen) == 1

    asyncio.run(run())


@pytest.mark.skipif(not (URL and TOKEN), reason="FENIX_URL and FENIX_TOKEN name a running Fenix")
def test_the_async_client_sends_pages_and_reads_refusals():
    receiver = Receiver()

    async def run():
        async with AsyncFenix(URL, TOKEN) as fenix:
            app = await fenix.apps.create(name="Python SDK async test", uid=f"py-async-{uuid.uuid4().hex[:12]}")
            endpoint = await fenix.endpoints.create(app.id, url=receiver.url, event_types=["sdk.*"])
            receiver.webhook = Webhook(endpoint.secret)
            event = await fenix.events.send(app.id, type="sdk.async", data={"n": 1})
            batch = await fenix.events.send_batch(app.id, [{"type": "sdk.async", "data": {"i": i}} for i in range(5)])
            ids = [event.id] + [item.id for item in batch.data]
            walked = [delivery.event_id async for delivery in fenix.deliveries.list_all(app.id, limit=2)]
            assert sorted(walked) == sorted(ids)
            for _ in range(300):
                if receiver.seen(ids):
                    break
                await asyncio.sleep(0.1)
            assert receiver.seen(ids), "python SDK, AsyncFenix: the receiver did not verify every event"
            with pytest.raises(FenixError) as refused:
                await fenix.apps.get(f"no-such-app-{uuid.uuid4().hex[:8]}")
            assert (refused.value.status, refused.value.code) == (404, "app_not_found")

    try:
        asyncio.run(run())
    finally:
        receiver.close()
