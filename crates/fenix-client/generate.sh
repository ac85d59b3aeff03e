#!/usr/bin/env bash
# Regenerates src/generated.rs (the request and response models) from
# sdks/openapi.json with typify. The generator is its own small cargo project
# (generator/), so typify compiles only here, never in the workspace's builds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}/fenix-client-generator"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
CARGO_TARGET_DIR="$target" cargo run --quiet --locked --manifest-path "$here/generator/Cargo.toml" -- \
  "$root/sdks/openapi.json" >"$out"
# rustfmt with the repository's settings, so `cargo fmt` leaves the file as generated.
rustfmt --edition 2021 --config-path "$root/rustfmt.toml" "$out"
mv "$out" "$here/src/generated.rs"
trap - EXIT
