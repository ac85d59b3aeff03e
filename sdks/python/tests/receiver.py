"""A webhook receiver on 127.0.0.1 for the integration test: it verifies every request with the
SDK's own `Webhook` and answers 500 to the event types it is told to fail."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

from fenix_sdk import Webhook, WebhookVerificationError


class Receiver:
    """Collects verified events by id; `rejected` counts requests that did not verify."""

    def __init__(self) -> None:
        self.webhook: Optional[Webhook] = None
        self.failing: set[str] = set()
        self.verified: dict[str, dict[str, Any]] = {}
        self.rejected = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/webhooks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def seen(self, event_ids) -> bool:
        with self.lock:
            return all(event_id in self.verified for event_id in event_ids)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw_body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, answer = receiver._receive(raw_body, self.headers)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def _receive(self, raw_body: bytes, headers: Any) -> tuple[int, bytes]:
        if self.webhook is None:
            return 503, b"{}"
        try:
            event = self.webhook.verify(raw_body, headers)
        except WebhookVerificationError:
            with self.lock:
                self.rejected += 1
            return 401, b'{"error":"invalid signature"}'
        if event["type"] == "webhook.verification":  # proof of ownership, if the server asks for it
            return 200, json.dumps({"challenge": event["data"]["challenge"]}).encode()
        if event["type"] in self.failing:
            return 500, b'{"error":"told to fail"}'
        with self.lock:
            self.verified[event["id"]] = event
        return 200, b"{}"
