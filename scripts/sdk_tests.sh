#!/usr/bin/env bash
# Each SDK's own tests against a real `fenix serve`, on SQLite and then on
# PostgreSQL: for every SDK and backend, a fresh database and a fresh server
# (loopback receivers allowed, a short retry schedule), then the SDK's
# test.sh with FENIX_URL and FENIX_TOKEN set. Every run goes on after a
# failure; the end names each SDK and backend that failed, and exits 1.
#
#   FENIX_BIN                 the binary to serve (default target/debug/fenix, built if missing)
#   FENIX_TEST_POSTGRES_URL   a PostgreSQL server to create the databases in (required;
#                             scripts/test.sh starts a throwaway one)
#   FENIX_TEST_PG_BIN         where psql is (default: on PATH)
#   SDKS                      which to run (default: "typescript python rust")
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

: "${FENIX_TEST_POSTGRES_URL:?set FENIX_TEST_POSTGRES_URL to a PostgreSQL server (postgres://user@host:port/postgres)}"
psql=${FENIX_TEST_PG_BIN:+$FENIX_TEST_PG_BIN/}psql
bin=${FENIX_BIN:-target/debug/fenix}
[ -x "$bin" ] || cargo build --quiet -p fenix --bin fenix
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

declare -A dirs=([typescript]=sdks/typescript [python]=sdks/python [rust]=crates/fenix-client)
token=fxa_sdk_tests_0123456789abcdef
work=$(mktemp -d "${TMPDIR:-/tmp}/fenix-sdk-tests.XXXXXX")
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# Starts `fenix serve` on $1 (a database URL) and sets $server and $url.
start_fenix() {
  local log=$work/fenix.log
  url=""
  : >"$log"
  DATABASE_URL=$1 FENIX_LISTEN=127.0.0.1:0 FENIX_ADMIN_TOKEN=$token \
    FENIX_MASTER_KEY=q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA= \
    FENIX_UNSAFE_ALLOW_HTTP=true FENIX_UNSAFE_ALLOW_CIDRS=127.0.0.0/8,::1/128 \
    FENIX_RETRY_SCHEDULE=200ms,400ms,800ms,1600ms FENIX_ATTEMPT_TIMEOUT=2s FENIX_LEASE_DURATION=5s \
    FENIX_LOG=warn "$bin" serve >"$log" 2>&1 &
  server=$!
  for _ in $(seq 600); do
    url=$(sed -n 's/^Fenix listening on \(http:[^ ]*\)$/\1/p' "$log")
    [ -n "$url" ] && return 0
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  echo "error: fenix serve did not start on $1:" >&2
  cat "$log" >&2
  return 1
}

stop_fenix() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
}

failed=()
for backend in sqlite postgres; do
  for sdk in ${SDKS:-typescript python rust}; do
    dir=${dirs[$sdk]}
    db=sdk_${sdk}_$(date +%s)_$RANDOM
    if [ "$backend" = sqlite ]; then
      database_url=sqlite://$work/$db.db
    else
      "$psql" -q "$FENIX_TEST_POSTGRES_URL" -c "CREATE DATABASE $db" >/dev/null
      database_url=${FENIX_TEST_POSTGRES_URL%/*}/$db
    fi
    echo "==> $sdk SDK on $backend ($dir/test.sh)"
    if start_fenix "$database_url" && FENIX_URL=$url FENIX_TOKEN=$token "$root/$dir/test.sh"; then
      echo "==> $sdk SDK on $backend: passed"
    else
      echo "error: the $sdk SDK's tests failed on $backend (above); the server's log:" >&2
      tail -n 50 "$work/fenix.log" >&2 || true
      failed+=("$sdk on $backend")
    fi
    stop_fenix
    if [ "$backend" = postgres ]; then
      "$psql" -q "$FENIX_TEST_POSTGRES_URL" -c "DROP DATABASE IF EXISTS $db" >/dev/null || true
    fi
  done
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "error: SDK tests failed: ${failed[*]}" >&2
  exit 1
fi
echo "SDK tests passed on SQLite and PostgreSQL"
