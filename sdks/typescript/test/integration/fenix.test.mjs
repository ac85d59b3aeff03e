// The TypeScript SDK against a real Fenix (FENIX_URL, FENIX_TOKEN): an app and
// an endpoint at a receiver that verifies with the SDK's Webhook, an event and
// a batch delivered, 250 deliveries paged, a failed delivery replayed, a
// refused call's code. Each step is one test, run in order; a failure names
// the SDK call (see `call`).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Fenix, FenixError, Webhook } from "fenix-sdk";

import { startReceiver } from "./receiver.mjs";

const { FENIX_URL, FENIX_TOKEN } = process.env;
if (!FENIX_URL || !FENIX_TOKEN) throw new Error("set FENIX_URL and FENIX_TOKEN (scripts/sdk_tests.sh does)");

const fenix = new Fenix(FENIX_URL, { token: FENIX_TOKEN });
let receiver;
let app;
let endpoint;

/** Awaits one SDK call; a failure says which call it was. */
async function call(name, promise) {
  try {
    return await promise;
  } catch (error) {
    const detail = error instanceof FenixError ? `${error.status} ${error.code}: ${error.message}` : String(error);
    throw new Error(`typescript SDK: ${name} failed: ${detail}`, { cause: error });
  }
}

/** Polls `check` until it answers a truthy value, for at most `seconds`. */
async function eventually(what, check, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`typescript SDK: ${what} did not happen within ${seconds} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function deliveriesOf(query) {
  const all = [];
  for await (const delivery of fenix.deliveries.listAll(app.id, { ...query, limit: 250 })) all.push(delivery);
  return all;
}

before(async () => {
  receiver = await startReceiver();
});

after(async () => {
  await receiver?.close();
});

test("apps.create makes an app that apps.get and apps.list show", async () => {
  const uid = `sdk-ts-${Date.now()}`;
  app = await call("apps.create", fenix.apps.create({ name: "TypeScript SDK test", uid }));
  assert.match(app.id, /^app_/);
  assert.equal(app.uid, uid);
  assert.equal((await call("apps.get", fenix.apps.get(uid))).id, app.id);
  const page = await call("apps.list", fenix.apps.list({ limit: 250 }));
  assert.ok(Array.isArray(page.data) && "next_cursor" in page);
});

test("endpoints.create answers the endpoint with its one-time secret", async () => {
  endpoint = await call(
    "endpoints.create",
    fenix.endpoints.create(app.id, { url: receiver.url, event_types: ["sdk.*"], retry_schedule: ["100ms"] }),
  );
  assert.match(endpoint.secret, /^whsec_/);
  receiver.webhook = new Webhook(endpoint.secret);
  const read = await call("endpoints.get", fenix.endpoints.get(app.id, endpoint.id));
  assert.equal(read.url, receiver.url);
  assert.equal(read.secret ?? undefined, undefined, "the secret is shown only once");
  const listed = await call("endpoints.list", fenix.endpoints.list(app.id));
  assert.deepEqual(listed.data.map((ep) => ep.id), [endpoint.id]);
});

test("an event and a batch are delivered and verified by the receiver's Webhook", async () => {
  const event = await call(
    "events.send",
    fenix.events.send(app.id, { type: "sdk.single", data: { n: 0 }, idempotency_key: `single-${app.id}` }),
  );
  assert.match(event.id, /^evt_/);
  const again = await call(
    "events.send (same idempotency key)",
    fenix.events.send(app.id, { type: "sdk.single", data: { n: 0 }, idempotency_key: `single-${app.id}` }),
  );
  assert.equal(again.id, event.id, "a repeated idempotency key answers the first event");
  const batch = await call(
    "events.sendBatch",
    fenix.events.sendBatch(app.id, [1, 2, 3].map((n) => ({ type: "sdk.batch", data: { n } }))),
  );
  assert.equal(batch.data.length, 3);
  const ids = [event.id, ...batch.data.map((item) => item.id)];
  await eventually("the event and the batch reaching the receiver", () => ids.every((id) => receiver.accepted.has(id)));
  await eventually("their deliveries showing succeeded", async () => {
    const succeeded = await call("deliveries.listAll", deliveriesOf({ status: "succeeded" }));
    return ids.every((id) => succeeded.some((delivery) => delivery.event_id === id));
  });
  assert.deepEqual(receiver.refused, [], "every request Fenix sent verified");
});

test("250 deliveries are paged through by deliveries.list and deliveries.listAll", async () => {
  for (let start = 0; start < 250; start += 100) {
    const events = Array.from({ length: Math.min(100, 250 - start) }, (_, i) => ({
      type: "sdk.bulk",
      data: { n: start + i },
      id: `bulk-${start + i}`,
    }));
    await call("events.sendBatch", fenix.events.sendBatch(app.id, events));
  }
  const filters = { event_type: "sdk.bulk", status: "succeeded" };
  await eventually("250 bulk deliveries succeeding", async () => (await deliveriesOf(filters)).length === 250, 120);
  const sizes = [];
  let cursor;
  do {
    const page = await call("deliveries.list", fenix.deliveries.list(app.id, { ...filters, limit: 100, cursor }));
    sizes.push(page.data.length);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  assert.deepEqual(sizes, [100, 100, 50]);
  const walked = [];
  for await (const delivery of fenix.deliveries.listAll(app.id, { ...filters, limit: 30 })) walked.push(delivery.id);
  assert.equal(walked.length, 250);
  assert.equal(new Set(walked).size, 250, "no delivery twice");
});

test("a failed delivery is replayed with deliveries.replay and then succeeds", async () => {
  receiver.failing.add("sdk.fail");
  const event = await call("events.send", fenix.events.send(app.id, { type: "sdk.fail", data: { n: -1 } }));
  const [failed] = await eventually("the delivery failing", async () => {
    const page = await call("deliveries.list", fenix.deliveries.list(app.id, { event_type: "sdk.fail", status: "failed" }));
    return page.data.length > 0 ? page.data : null;
  });
  assert.equal(failed.event_id, event.id);
  const attempts = await call("deliveries.attempts", fenix.deliveries.attempts(app.id, failed.id));
  assert.equal(attempts.data.length, 2, "one attempt and one retry (the endpoint's schedule is [100ms])");
  receiver.failing.delete("sdk.fail");
  const replayed = await call("deliveries.replay", fenix.deliveries.replay(app.id, failed.id));
  assert.equal(replayed.id, failed.id);
  await eventually("the replayed delivery succeeding", async () => {
    const delivery = await call("deliveries.get", fenix.deliveries.get(app.id, failed.id));
    return delivery.status === "succeeded";
  });
  assert.ok(receiver.accepted.has(event.id));
});

test("a refused call throws FenixError with Fenix's status and code", async () => {
  const error = await fenix.apps.get("no-such-app-anywhere").catch((e) => e);
  assert.ok(error instanceof FenixError, `apps.get of an unknown app: ${error}`);
  assert.equal(error.status, 404);
  assert.equal(error.code, "app_not_found");
  const invalid = await fenix.deliveries.list(app.id, { limit: 0 }).catch((e) => e);
  assert.ok(invalid instanceof FenixError);
  assert.equal(invalid.status, 400);
  assert.equal(invalid.code, "invalid_limit");
});

test("the other resources answer: endpoint pause, resume and rotation, portal links, tokens, event types", async () => {
  const paused = await call("endpoints.pause", fenix.endpoints.pause(app.id, endpoint.id));
  assert.equal(paused.state, "paused");
  const resumed = await call("endpoints.resume", fenix.endpoints.resume(app.id, endpoint.id));
  assert.equal(resumed.state, "active");
  const rotated = await call("endpoints.rotateSecret", fenix.endpoints.rotateSecret(app.id, endpoint.id));
  assert.match(rotated.secret, /^whsec_/);
  const link = await call(
    "portalSessions.create",
    fenix.portalSessions.create(app.id, { access: "read", expires_in: 600 }),
  );
  assert.match(link.url, /#fxp_/);
  const token = await call("tokens.create", fenix.tokens.create({ name: "sdk test", access: "read", app: app.id }));
  assert.match(token.token, /^fxk_/);
  const appClient = new Fenix(FENIX_URL, { token: token.token });
  assert.equal((await call("apps.get (app token)", appClient.apps.get(app.id))).id, app.id);
  await call("tokens.delete", fenix.tokens.delete(token.id));
  const types = await call("eventTypes.list", fenix.eventTypes.list());
  assert.ok(Array.isArray(types.data));
  const updated = await call("endpoints.update", fenix.endpoints.update(app.id, endpoint.id, { description: "sdk" }));
  assert.equal(updated.description, "sdk");
  await call("endpoints.delete", fenix.endpoints.delete(app.id, endpoint.id));
  await call("apps.delete", fenix.apps.delete(app.id));
});
