#!/usr/bin/env bash
# Tests the TypeScript SDK as a user gets it:
#   1. `npm ci && npm run build` here, and the unit tests (every vector of
#      sdks/vectors.json, errors, retries, paging) against the build;
#   2. `npm install <this directory>` into a scratch project in a temp dir:
#      `import { Fenix, Webhook, FenixError, WebhookVerificationError } from
#      "fenix-sdk"` must work from JavaScript and type-check from TypeScript,
#      as must every TypeScript example of README.md and ../../README.md;
#   3. with FENIX_URL and FENIX_TOKEN (an admin token) set, the integration
#      test against that Fenix (scripts/sdk_tests.sh starts one and sets both).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

echo "typescript SDK: npm ci && npm run build ($(node --version))"
npm ci --silent --no-audit --no-fund
npm run --silent build
echo "typescript SDK: unit tests"
node --test test/unit/*.test.mjs >"${TMPDIR:-/tmp}/fenix-sdk-ts-unit.log" 2>&1 \
  || { cat "${TMPDIR:-/tmp}/fenix-sdk-ts-unit.log"; echo "typescript SDK: unit tests failed" >&2; exit 1; }
grep -E '^# (pass|fail)' "${TMPDIR:-/tmp}/fenix-sdk-ts-unit.log"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/fenix-sdk-ts-scratch.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
echo "typescript SDK: npm install $here in a scratch project"
(
  cd "$scratch"
  npm init -y >/dev/null
  npm pkg set type=module >/dev/null
  npm install --silent --no-audit --no-fund "$here"
  cat >check.mjs <<'JS'
import { Fenix, Webhook, FenixError, WebhookVerificationError } from "fenix-sdk";
const fenix = new Fenix("http://127.0.0.1:1", { token: "fxa_x" });
for (const resource of ["apps", "endpoints", "events", "deliveries", "eventTypes", "portalSessions", "tokens"]) {
  if (typeof fenix[resource] !== "object") throw new Error(`fenix.${resource} is missing`);
}
const error = await fenix.apps.list().catch((e) => e);
if (!(error instanceof FenixError) || error.code !== "network_error") throw new Error(`no FenixError: ${error}`);
try {
  new Webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").verify("{}", {});
  throw new Error("verified a request without headers");
} catch (e) {
  if (!(e instanceof WebhookVerificationError) || e.reason !== "missing_header") throw e;
}
console.log("import from fenix-sdk: ok");
JS
  node check.mjs
  cat >check.ts <<'TS'
import { Fenix, FenixError, Webhook, type App, type Delivery, type Page } from "fenix-sdk";
export async function quickStart(url: string, token: string): Promise<string> {
  const fenix = new Fenix(url, { token });
  const app: App = await fenix.apps.create({ name: "Acme", uid: "acme" });
  const endpoint = await fenix.endpoints.create(app.id, { url: "https://example.com/hooks", event_types: [] });
  await fenix.events.send(app.id, { type: "invoice.paid", data: { amount: 42 }, idempotency_key: "k" });
  const page: Page<Delivery> = await fenix.deliveries.list(app.id, { status: "failed" });
  for await (const delivery of fenix.deliveries.listAll(app.id)) console.log(delivery.status);
  new Webhook(endpoint.secret ?? "").verify("{}", new Headers());
  return page.next_cursor ?? (FenixError.name as string);
}
TS
  # Every TypeScript example of this README and the repository's, each a module of its own.
  python3 - "$here/README.md" "$here/../../README.md" <<'PY'
import re, sys
blocks = []
for readme in sys.argv[1:]:
    found = re.findall(r"^```ts\n(.*?)^```", open(readme, encoding="utf-8").read(), re.S | re.M)
    assert found, f"{readme} has no TypeScript example"
    blocks += found
for i, block in enumerate(blocks):
    open(f"readme-{i}.ts", "w", encoding="utf-8").write(block)
print(f"READMEs: {len(blocks)} TypeScript examples")
PY
  "$here/node_modules/.bin/tsc" --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 \
    --types node --typeRoots "$here/node_modules/@types" check.ts readme-*.ts
  echo "types from fenix-sdk, and the README's examples: ok"
)

if [ -z "${FENIX_URL:-}" ] || [ -z "${FENIX_TOKEN:-}" ]; then
  echo "typescript SDK: FENIX_URL/FENIX_TOKEN not set, integration test skipped"
  exit 0
fi
echo "typescript SDK: integration test against $FENIX_URL"
node --test --test-reporter=spec test/integration/*.test.mjs
