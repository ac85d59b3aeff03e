#!/usr/bin/env bash
# Builds a release of Fenix: a static x86_64 Linux binary (musl) and its
# SHA-256 checksum, in dist/:
#
#   dist/fenix-<version>-x86_64-unknown-linux-musl
#   dist/fenix-<version>-x86_64-unknown-linux-musl.sha256   (sha256sum -c reads it)
#
# Run from a clean checkout of the release's tag (see CONTRIBUTING.md, "Releases"):
#   git tag -a v0.1.0 -m 'Fenix 0.1.0' && scripts/release.sh
# It needs rustup (it adds the musl target if missing) and a musl C compiler
# for the C parts of mimalloc and ring (Debian: apt-get install musl-tools).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=x86_64-unknown-linux-musl
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$VERSION" ] || { echo "error: no version in Cargo.toml's [workspace.package]" >&2; exit 1; }

if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  echo "error: the working tree has uncommitted changes; a release is built from a commit" >&2
  exit 1
fi
if ! git describe --exact-match --tags HEAD >/dev/null 2>&1; then
  echo "warning: HEAD carries no tag; tag the release (v$VERSION) before publishing it" >&2
fi

if ! rustup target list --installed | grep -qx "$TARGET"; then
  echo "==> rustup target add $TARGET"
  rustup target add "$TARGET"
fi
command -v musl-gcc >/dev/null || {
  echo "error: musl-gcc is missing (Debian: apt-get install musl-tools)" >&2
  exit 1
}

echo "==> cargo build --release --locked --target $TARGET"
export CC_x86_64_unknown_linux_musl=musl-gcc
cargo build --release --locked -p fenix --bin fenix --target "$TARGET"

BIN="target/$TARGET/release/fenix"
# Static, or it is not the binary this script promises.
if ldd "$BIN" 2>&1 | grep -q '=>'; then
  echo "error: $BIN is dynamically linked:" >&2
  ldd "$BIN" >&2
  exit 1
fi

mkdir -p dist
NAME="fenix-$VERSION-$TARGET"
cp "$BIN" "dist/$NAME"
strip "dist/$NAME"
(cd dist && sha256sum "$NAME" >"$NAME.sha256")
echo "==> dist/$NAME ($("dist/$NAME" --version))"
cat "dist/$NAME.sha256"
