"""The README's examples run as written (the blocks marked `readme=…`).

The quick start and the blocks after it need a running Fenix (FENIX_URL,
FENIX_TOKEN): its placeholder address, token, uid and endpoint URL are swapped
for the real server, a fresh uid and a receiver on 127.0.0.1. The receiver
block is started on a free port and fed a signed and an altered request.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import os
import re
import threading
import time
import uuid
from pathlib import Path

import pytest
from receiver import Receiver

from fenix_sdk import Webhook

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
BLOCKS = dict(re.findall(r"```python readme=(\w+)\n(.*?)```", README, flags=re.S))
URL = os.environ.get("FENIX_URL")
TOKEN = os.environ.get("FENIX_TOKEN")
needs_fenix = pytest.mark.skipif(not (URL and TOKEN), reason="FENIX_URL and FENIX_TOKEN name a running Fenix")


def test_the_readme_has_each_example():
    assert set(BLOCKS) == {"quickstart", "batch", "asyncio", "pagination", "errors", "replay", "receiver"}


@needs_fenix
def test_the_quick_start_and_the_examples_after_it_run():
    receiver = Receiver()
    try:
        uid = f"py-readme-{uuid.uuid4().hex[:12]}"
        quickstart = for_this_server(BLOCKS["quickstart"], uid).replace(
            '"https://hooks.acme.example.com/fenix"', repr(receiver.url)
        )
        namespace: dict = {}
        exec(quickstart, namespace)
        receiver.webhook = Webhook(namespace["endpoint"].secret)
        for name in ("batch", "pagination", "errors", "replay"):
            exec(BLOCKS[name], namespace)
        exec(for_this_server(BLOCKS["asyncio"], uid), {"__name__": "readme_asyncio"})
    finally:
        receiver.close()


def for_this_server(block: str, uid: str) -> str:
    """A block with the README's placeholder address, token and uid swapped for the real ones."""
    swapped = (
        block.replace('"http://localhost:8080"', repr(URL))
        .replace('"fxa_your_admin_token"', repr(TOKEN))
        .replace('"acme"', repr(uid))
    )
    assert swapped != block
    return swapped


def test_the_receiver_accepts_a_signed_request_and_refuses_an_altered_one(monkeypatch):
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    monkeypatch.setenv("WEBHOOK_SECRET", secret)
    namespace: dict = {"__name__": "readme_receiver"}
    exec(BLOCKS["receiver"], namespace)
    server = namespace["ThreadingHTTPServer"](("127.0.0.1", 0), namespace["Receiver"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        body = b'{"id":"evt_1","type":"booking.confirmed","created_at":"2026-12-01T00:00:00.000Z","data":{}}'
        timestamp = str(int(time.time()))
        signature = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        headers = {"X-Fenix-Timestamp": timestamp, "X-Fenix-Signature": f"v1={signature}"}
        assert post(server, body, headers) == 200
        assert post(server, body.replace(b"evt_1", b"evt_2"), headers) == 401
    finally:
        server.shutdown()
        server.server_close()


def post(server, body: bytes, headers: dict) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
    connection.request("POST", "/webhooks", body=body, headers={"Content-Type": "application/json", **headers})
    status = connection.getresponse().status
    connection.close()
    return status
