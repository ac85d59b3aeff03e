#!/usr/bin/env bash
# The Rust SDK's tests against a running Fenix: FENIX_URL (its address) and
# FENIX_TOKEN (an admin token) must be set; scripts/sdk_tests.sh starts the
# server (SQLite, then PostgreSQL, loopback delivery allowed) and sets them.
# Also runs the unit tests (the shared signature vectors, retries against a
# stand-in server) and the README's examples.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${FENIX_URL:?FENIX_URL must name a running Fenix}"
: "${FENIX_TOKEN:?FENIX_TOKEN must be an admin token of it}"
echo "==> fenix-client (Rust): unit tests, README examples, vectors"
cargo test --quiet -p fenix-client --lib --test vectors --test retries
cargo test --quiet -p fenix-client --doc
echo "==> fenix-client (Rust): integration test against $FENIX_URL"
CI=true cargo test --quiet -p fenix-client --test integration
