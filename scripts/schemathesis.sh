#!/usr/bin/env bash
# Schemathesis against the real `fenix` binary: every operation of its own
# /openapi.json is called with generated valid and invalid input, and the run
# fails on any 5xx, any dropped connection or transport error, and any answer
# the document does not allow (status code, content type, body schema, headers).
#
#   scripts/schemathesis.sh [path/to/fenix]      (default: target/debug/fenix)
#
# scripts/test.sh runs it after the cargo tests with the binary cargo built;
# alone it needs only a built binary and python3 (it makes its own virtualenv
# under target/, so nothing is installed system-wide).
#
# Fenix runs on SQLite in a temporary directory (or on the PostgreSQL database
# SCHEMATHESIS_DATABASE_URL names, which should be empty: scripts/test.sh runs
# both) with a known admin token, and
# nothing it does can reach beyond loopback: FENIX_DNS_SERVERS is
# scripts/loopback_dns.py, which answers 127.0.0.1 for every name, and only
# 127.0.0.1/32 is allowed past the destination policy. So the https URLs the
# fuzzer registers resolve (endpoints, events, deliveries and attempts exist to
# be read, paused, replayed...) and every delivery goes to 127.0.0.1:443, where
# nothing listens, and fails at once.
#
# Bounded: an overall time budget (SCHEMATHESIS_MAX_TIME seconds, default 150;
# the fuzzing and stateful phases repeat until it is spent) and a cap on
# examples per operation and pass. Repeatable as far as a time budget allows:
# a fixed seed, one worker, no example database kept between runs. A failure
# prints a curl command and a test case id to reproduce it.
#
# Other knobs: SCHEMATHESIS_SEED, SCHEMATHESIS_MAX_EXAMPLES, SCHEMATHESIS_CHECKS
# (e.g. `all` to also see where the document's input constraints are looser or
# stricter than the server's), SCHEMATHESIS_VENV.
set -euo pipefail
FENIX=target/debug/fenix
if [ $# -gt 0 ]; then
  FENIX=$(realpath -- "$1")
fi
cd "$(dirname "$0")/.."
ROOT=$(pwd)

VERSION=4.32.5
VENV=${SCHEMATHESIS_VENV:-$ROOT/target/schemathesis-venv}
MAX_EXAMPLES=${SCHEMATHESIS_MAX_EXAMPLES:-40}
MAX_TIME=${SCHEMATHESIS_MAX_TIME:-150}
SEED=${SCHEMATHESIS_SEED:-20261130}
# What fails the run: 5xx, and any status code, content type, header or body
# the document does not allow (transport errors always fail it).
CHECKS=${SCHEMATHESIS_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance}
TOKEN=fxa_schemathesis_token_0123456789

[ -x "$FENIX" ] || { echo "schemathesis.sh: no fenix binary at $FENIX (cargo build -p fenix first)" >&2; exit 1; }

if ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -qF "version $VERSION"; then
  echo "==> installing schemathesis $VERSION into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION"
fi

WORK=$(mktemp -d /tmp/fenix-schemathesis-XXXXXX)
FENIX_PID=
DNS_PID=
cleanup() {
  for pid in $FENIX_PID $DNS_PID; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

python3 scripts/loopback_dns.py >"$WORK/dns-port" &
DNS_PID=$!
DNS_PORT=
for _ in $(seq 100); do
  DNS_PORT=$(head -n1 "$WORK/dns-port")
  [ -n "$DNS_PORT" ] && break
  sleep 0.1
done
[ -n "$DNS_PORT" ] || { echo "schemathesis.sh: the loopback DNS server did not start" >&2; exit 1; }

DATABASE=${SCHEMATHESIS_DATABASE_URL:-sqlite://$WORK/fenix.db}
# PostgreSQL has no key file beside the database: a throwaway master key.
MASTER_KEY=$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')
echo "==> schemathesis on ${DATABASE%%:*}"
env -i PATH="$PATH" \
  DATABASE_URL="$DATABASE" \
  FENIX_MASTER_KEY="$MASTER_KEY" \
  FENIX_LISTEN=127.0.0.1:0 \
  FENIX_ADMIN_TOKEN="$TOKEN" \
  FENIX_DNS_SERVERS="127.0.0.1:$DNS_PORT" \
  FENIX_UNSAFE_ALLOW_CIDRS=127.0.0.1/32 \
  FENIX_LOG="info,sqlx=warn" \
  "$FENIX" serve >"$WORK/stdout" 2>"$WORK/fenix.log" &
FENIX_PID=$!

BASE=
for _ in $(seq 600); do
  BASE=$(sed -n 's/^Fenix listening on //p' "$WORK/stdout" | head -n1)
  [ -n "$BASE" ] && break
  kill -0 "$FENIX_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$BASE" ]; then
  echo "schemathesis.sh: fenix did not start; its log:" >&2
  cat "$WORK/fenix.log" >&2
  exit 1
fi
# A few apps with an endpoint, an event and its delivery, and a schemathesis
# configuration that uses their ids for most generated path parameters (random
# ids, which answer 404, are generated too). DELETE calls get random ids only,
# so the seeded data lives through the run; ids, not uids, as a PATCH may
# change a uid.
python3 - "$BASE" "$TOKEN" >"$WORK/schemathesis.toml" <<'PY'
import json, sys, urllib.request

base, token = sys.argv[1], sys.argv[2]

def call(method, path, body=None):
    req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)

ids = {"app": [], "ep": [], "evt": [], "dlv": []}
for n in range(3):
    app = call("POST", "/v1/apps", {"name": f"Seed {n}", "uid": f"seed-{n}"})["id"]
    ids["app"].append(app)
    ids["ep"].append(call("POST", f"/v1/apps/{app}/endpoints", {"url": f"https://seed-{n}.example.com/hook"})["id"])
    ids["evt"].append(call("POST", f"/v1/apps/{app}/events", {"type": "seed.created", "data": {"n": n}})["id"])
    ids["dlv"].append(call("GET", f"/v1/apps/{app}/deliveries")["data"][0]["id"])
for name, values in ids.items():
    print(f"[dictionaries.{name}]\nvalues = {json.dumps(values)}\n")
bindings = ", ".join(f'"path.{name}" = {{ dictionary = "{name}", probability = 0.8 }}' for name in ids)
print(f'[[operations]]\nexclude-method = "DELETE"\nparameters = {{ {bindings} }}')
PY

echo "==> schemathesis $VERSION against $BASE/openapi.json (seed $SEED, at most $MAX_EXAMPLES examples per operation, ${MAX_TIME}s)"

status=0
# From the temporary directory: schemathesis keeps a cache in the working directory.
(cd "$WORK" && "$VENV/bin/schemathesis" --config-file "$WORK/schemathesis.toml" run "$BASE/openapi.json" \
  --url "$BASE" \
  --header "Authorization: Bearer $TOKEN" \
  --checks "$CHECKS" \
  --seed "$SEED" \
  --max-examples "$MAX_EXAMPLES" \
  --max-time "$MAX_TIME" \
  --workers 1 \
  --request-timeout 10 \
  --generation-database none \
  --no-color) \
  || status=$?

if ! kill -0 "$FENIX_PID" 2>/dev/null; then
  echo "schemathesis.sh: fenix exited during the run; its log:" >&2
  tail -n 50 "$WORK/fenix.log" >&2
  status=1
fi
if [ "$status" != 0 ]; then
  echo "schemathesis.sh: failed (exit $status); the server log's errors:" >&2
  grep -E ' (ERROR|WARN) |panicked' "$WORK/fenix.log" | grep -v 'development setting' | tail -n 30 >&2 || true
fi
exit "$status"
