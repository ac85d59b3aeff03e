// The client without a server: FenixError's fields, and which calls are
// retried on 429 and 503 (reads, deletes, events with an idempotency key).
import assert from "node:assert/strict";
import { test } from "node:test";

import { Fenix, FenixError } from "../../dist/index.js";

/** A fetch that answers `answers` in turn and records each request. */
function fakeFetch(answers) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url: String(url), init });
    const [status, body, headers] = answers[Math.min(calls.length - 1, answers.length - 1)];
    return new Response(body === undefined ? null : JSON.stringify(body), { status, headers });
  };
  return { fetch, calls };
}

const refused = (code, message) => ({ error: { code, message } });

test("a refused call throws FenixError with the status, code, message and Retry-After", async () => {
  const { fetch } = fakeFetch([[429, refused("replay_limit_reached", "slow down"), { "retry-after": "60" }]]);
  const fenix = new Fenix("http://fenix.test/", { token: "fxa_x", fetch });
  const error = await fenix.deliveries.replay("app_1", "dlv_1").catch((e) => e);
  assert.ok(error instanceof FenixError);
  assert.equal(error.status, 429);
  assert.equal(error.code, "replay_limit_reached");
  assert.equal(error.message, "slow down");
  assert.equal(error.retryAfter, 60);
});

test("a read is retried after 503 and a 429 with Retry-After", async () => {
  const { fetch, calls } = fakeFetch([
    [503, refused("database_unavailable", "later")],
    [429, refused("rate_limited", "later"), { "retry-after": "0" }],
    [200, { id: "app_1", name: "a", uid: "a" }],
  ]);
  const fenix = new Fenix("http://fenix.test", { token: "fxa_x", fetch });
  const app = await fenix.apps.get("app_1");
  assert.equal(app.id, "app_1");
  assert.equal(calls.length, 3);
  assert.equal(calls[0].url, "http://fenix.test/v1/apps/app_1");
  assert.equal(calls[0].init.headers.authorization, "Bearer fxa_x");
});

test("retries stop after maxRetries", async () => {
  const { fetch, calls } = fakeFetch([[503, refused("database_unavailable", "later"), { "retry-after": "0" }]]);
  const fenix = new Fenix("http://fenix.test", { token: "fxa_x", fetch, maxRetries: 2 });
  await assert.rejects(fenix.apps.list(), (e) => e instanceof FenixError && e.status === 503);
  assert.equal(calls.length, 3);
});

test("an event is retried only with an idempotency key, sent as Idempotency-Key", async () => {
  const answers = [[503, refused("database_unavailable", "later"), { "retry-after": "0" }], [202, { id: "evt_1" }]];
  let { fetch, calls } = fakeFetch(answers);
  let fenix = new Fenix("http://fenix.test", { token: "fxa_x", fetch });
  await assert.rejects(fenix.events.send("app_1", { type: "a.b", data: {} }), (e) => e.status === 503);
  assert.equal(calls.length, 1, "an event without a key is not sent twice");
  ({ fetch, calls } = fakeFetch(answers));
  fenix = new Fenix("http://fenix.test", { token: "fxa_x", fetch });
  const event = await fenix.events.send("app_1", { type: "a.b", data: { n: 1 }, idempotency_key: "k1" });
  assert.equal(event.id, "evt_1");
  assert.equal(calls.length, 2);
  assert.equal(calls[1].init.headers["idempotency-key"], "k1");
  assert.deepEqual(JSON.parse(calls[1].init.body), { type: "a.b", data: { n: 1 } });
});

test("listAll follows next_cursor with the same filters until it is null", async () => {
  const { fetch, calls } = fakeFetch([
    [200, { data: [{ id: "dlv_2" }, { id: "dlv_1" }], next_cursor: "c1" }],
    [200, { data: [{ id: "dlv_0" }], next_cursor: null }],
  ]);
  const fenix = new Fenix("http://fenix.test", { token: "fxa_x", fetch });
  const ids = [];
  for await (const delivery of fenix.deliveries.listAll("app_1", { status: "failed", limit: 2 })) ids.push(delivery.id);
  assert.deepEqual(ids, ["dlv_2", "dlv_1", "dlv_0"]);
  assert.equal(calls[1].url, "http://fenix.test/v1/apps/app_1/deliveries?status=failed&limit=2&cursor=c1");
});

test("no answer at all is a FenixError with status 0 and code network_error", async () => {
  const fetch = async () => {
    throw new TypeError("fetch failed");
  };
  const fenix = new Fenix("http://fenix.test", { token: "fxa_x", fetch });
  await assert.rejects(fenix.apps.list(), (e) => e instanceof FenixError && e.status === 0 && e.code === "network_error");
});
