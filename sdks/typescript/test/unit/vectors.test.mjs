// Every vector of sdks/vectors.json (made by fenix-signing) verifies, or is
// refused with the reason it names, by the built package's Webhook.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { Webhook, WebhookVerificationError, TOLERANCE_SECONDS } from "../../dist/index.js";

const file = JSON.parse(readFileSync(new URL("../../../vectors.json", import.meta.url), "utf8"));

/** What a receiver can tell: a wrong key and an altered body both read `no_match`. */
const REASONS = {
  expired: "expired",
  future: "future",
  tampered_body: "no_match",
  wrong_key: "no_match",
  missing_header: "missing_header",
  malformed_header: "malformed_header",
};

test("the vectors' tolerance is the SDK's", () => {
  assert.equal(file.tolerance_seconds, TOLERANCE_SECONDS);
  assert.ok(file.vectors.length >= 40, `only ${file.vectors.length} vectors`);
});

for (const vector of file.vectors) {
  test(`vector ${vector.name}`, () => {
    const webhook = new Webhook(vector.key);
    const verify = () => webhook.verify(vector.body, vector.headers, { now: vector.now });
    if (vector.valid) {
      assert.deepEqual(verify(), JSON.parse(vector.body));
      // The same request given as a Headers object, and the body as bytes.
      const headers = new Headers(vector.headers);
      assert.deepEqual(webhook.verify(Buffer.from(vector.body), headers, { now: vector.now }), JSON.parse(vector.body));
    } else {
      const reason = REASONS[vector.error];
      assert.ok(reason, `unknown error ${vector.error}`);
      assert.throws(verify, (error) => error instanceof WebhookVerificationError && error.reason === reason);
    }
  });
}
