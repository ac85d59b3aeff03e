#!/usr/bin/env bash
# The whole test suite, on a fresh machine, in one command.
#
# It starts a throwaway PostgreSQL (as a non-root user: PostgreSQL refuses to
# run as root), installs the receiver-side Python packages the docs' snippets
# use and the headless browser the console tests drive (Debian's chromium,
# playwright-core), runs every test (unit, storage on both backends,
# end-to-end, the console in the browser), checks the deployment files with
# nginx, systemd-analyze and the compose schema (scripts/check_deploy.sh),
# checks that the SDKs' generated code is what the API's document gives
# (scripts/generate_sdks.sh) and runs each SDK's tests against `fenix serve`
# on both backends (scripts/sdk_tests.sh), then a
# bounded schemathesis run against the debug binary on SQLite and PostgreSQL (scripts/schemathesis.sh,
# which installs schemathesis into a virtualenv under target/), and stops
# PostgreSQL again, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
WORK=$(mktemp -d /tmp/fenix-test-XXXXXX)
chmod 755 "$WORK"
export FENIX_TEST_PGDATA="$WORK/pg"
export FENIX_TEST_PG_BIN="$PGBIN"
mkdir -p "$FENIX_TEST_PGDATA"

as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u nobody -- "$@"
  else
    "$@"
  fi
}
[ "$(id -u)" = 0 ] && chown nobody "$FENIX_TEST_PGDATA"

PGPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export FENIX_TEST_PGPORT="$PGPORT"

stop_pg() {
  as_pg "$PGBIN/pg_ctl" -D "$FENIX_TEST_PGDATA" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap stop_pg EXIT

echo "==> starting PostgreSQL on 127.0.0.1:$PGPORT"
as_pg "$PGBIN/initdb" -D "$FENIX_TEST_PGDATA" -U fenix --auth=trust -E UTF8 >"$WORK/initdb.log" 2>&1 || { cat "$WORK/initdb.log"; exit 1; }
as_pg "$PGBIN/pg_ctl" -D "$FENIX_TEST_PGDATA" -l "$FENIX_TEST_PGDATA/server.log" -w -o \
  "-p $PGPORT -k $FENIX_TEST_PGDATA -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=600 -c shared_buffers=256MB" \
  start >/dev/null
export FENIX_TEST_POSTGRES_URL="postgres://fenix@127.0.0.1:$PGPORT/postgres"

echo "==> receiver-side packages for the documentation snippets"
# `cryptography`: the Python Ed25519 receiver of docs/receiving.md verifies `v1a` with it.
python3 -c 'import standardwebhooks, cryptography' 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check 'standardwebhooks>=1.0' 'cryptography>=41' \
  || echo "warning: could not install the standardwebhooks and cryptography Python packages"
if [ ! -d tests/receivers/node_modules/standardwebhooks ] && [ -f tests/receivers/package.json ]; then
  (cd tests/receivers && npm install --silent --no-audit --no-fund) || echo "warning: npm install failed"
fi

echo "==> a headless browser for the console tests (tests/console/, tests/browser/)"
# Debian's chromium, driven by playwright-core (which downloads no browser of
# its own): the console suite fails under CI when either is missing.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } \
      || { echo "error: could not install Debian's chromium (apt-get install chromium)" >&2; exit 1; }
  else
    echo "error: /usr/bin/chromium is missing; install Debian's chromium package (as root: apt-get install chromium)" >&2
    exit 1
  fi
fi
if [ ! -d tests/browser/node_modules/playwright-core ]; then
  (cd tests/browser && { npm ci --silent --no-audit --no-fund || npm install --silent --no-audit --no-fund; }) \
    || { echo "error: npm could not install playwright-core into tests/browser" >&2; exit 1; }
fi

echo "==> a real HTTP proxy for the egress tests (tests/e2e/egress.rs)"
# Debian's tinyproxy, started by each test on its own loopback port
# (tests/support/proxy.rs): the egress suite fails under CI when it is missing.
if [ ! -x /usr/bin/tinyproxy ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tinyproxy >/dev/null; } \
      || { echo "error: could not install Debian's tinyproxy (apt-get install tinyproxy)" >&2; exit 1; }
  elif [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then
    echo "error: /usr/bin/tinyproxy is missing; install Debian's tinyproxy package (as root: apt-get install tinyproxy)" >&2
    exit 1
  else
    echo "warning: /usr/bin/tinyproxy is missing: the egress tests will be skipped (apt-get install tinyproxy)"
  fi
fi

echo "==> no circles among modules (scripts/module_circles.py)"
# Every crate under crates/, the bench included, and any crate added later.
for src in crates/*/src; do
  crate=${src#crates/}; crate=${crate%/src}
  out=$(python3 scripts/module_circles.py "$src")
  echo "$crate: ${out##*$'\n'}"
  case "$out" in
    "0 circles"*) ;;
    *) echo "$out" >&2; echo "error: module circles in crates/$crate" >&2; exit 1 ;;
  esac
done

echo "==> deployment files (scripts/check_deploy.sh)"
# nginx -t, systemd-analyze verify and the compose schema on what deploy/ ships.
scripts/check_deploy.sh

echo "==> tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast --test-threads 6
  cargo test --workspace --doc
else
  cargo test --workspace -- --test-threads 6
fi

echo "==> the SDKs' generated code is fresh (scripts/generate_sdks.sh, then no change)"
# The document of the binary the tests ran, and each SDK's code generated from
# it: a change to the API that was not regenerated and committed fails here.
[ -x target/debug/fenix ] || cargo build -p fenix --bin fenix --quiet
FENIX_BIN=target/debug/fenix scripts/generate_sdks.sh
stale=$(git status --porcelain -- sdks crates/fenix-client)
if [ -n "$stale" ]; then
  echo "$stale" >&2
  git --no-pager diff --stat -- sdks crates/fenix-client >&2
  echo "error: the generated SDK code differs from what sdks/openapi.json gives: run scripts/generate_sdks.sh and commit" >&2
  exit 1
fi

echo "==> each SDK against fenix serve on SQLite and PostgreSQL (scripts/sdk_tests.sh)"
FENIX_BIN=target/debug/fenix scripts/sdk_tests.sh

echo "==> schemathesis against the debug binary's /openapi.json"
# The binary the integration tests just ran (cargo builds it for them): a
# `cargo build -p fenix` here would compile the crate again, without the
# dev-dependencies' features.
[ -x target/debug/fenix ] || cargo build -p fenix --bin fenix --quiet
SCHEMATHESIS_MAX_TIME=${SCHEMATHESIS_MAX_TIME:-120} scripts/schemathesis.sh target/debug/fenix
# The same on PostgreSQL, which refuses values SQLite stores (NUL in text) and
# locks differently: a fresh database on the throwaway server.
"$PGBIN/psql" -q -h 127.0.0.1 -p "$PGPORT" -U fenix -d postgres -c 'CREATE DATABASE schemathesis' >/dev/null
SCHEMATHESIS_MAX_TIME=${SCHEMATHESIS_MAX_TIME:-120} \
  SCHEMATHESIS_DATABASE_URL="postgres://fenix@127.0.0.1:$PGPORT/schemathesis" \
  scripts/schemathesis.sh target/debug/fenix
