// A receiver on 127.0.0.1 (random port) that verifies every request with the
// SDK's own Webhook, records the events it accepted, and answers 500 to the
// types in `failing` until they are taken out of it.
import { createServer } from "node:http";

import { Webhook, WebhookVerificationError } from "fenix-sdk";

export async function startReceiver() {
  const receiver = {
    webhook: null,
    /** Event ids accepted (verified and answered 2xx), with how often. */
    accepted: new Map(),
    /** Requests whose signature did not verify (should stay empty). */
    refused: [],
    failing: new Set(),
    url: "",
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        // Fenix keeps its connections to the receiver open: without this, close waits for them.
        server.closeAllConnections();
      }),
  };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      let event;
      try {
        event = receiver.webhook.verify(Buffer.concat(chunks), req.headers);
      } catch (error) {
        receiver.refused.push(error instanceof WebhookVerificationError ? error.reason : String(error));
        res.writeHead(401).end();
        return;
      }
      if (receiver.failing.has(event.type)) {
        res.writeHead(500).end("failing on purpose");
        return;
      }
      receiver.accepted.set(event.id, (receiver.accepted.get(event.id) ?? 0) + 1);
      res.writeHead(200).end("ok");
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${server.address().port}/hooks`;
  return receiver;
}
