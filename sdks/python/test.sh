#!/usr/bin/env bash
# Tests the Python SDK as a user gets it: a fresh venv, `pip install ./sdks/python`
# (as the README says) plus pytest, then the unit tests (every vector of
# sdks/vectors.json, errors, retries, the README's examples), a type check of
# the hand-written layer (mypy), ruff's lint and format check, and the
# integration test against the Fenix at FENIX_URL with the admin token
# FENIX_TOKEN (scripts/sdk_tests.sh starts one and sets both). Without
# FENIX_URL only the unit tests run (outside CI: under CI=true that fails).
# PYTHON picks the interpreter (default python3; 3.9 or later).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
venv=$(mktemp -d "${TMPDIR:-/tmp}/fenix-sdk-python.XXXXXX")
trap 'rm -rf "$venv"' EXIT

echo "python SDK: installing $here into a fresh venv ($("$python" --version))"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$here" "pytest>=7" "mypy>=1.8" types-python-dateutil "ruff==0.13.3"

cd "$here"
echo "python SDK: lint and format check (ruff), type check (mypy --strict; pyproject.toml's settings)"
"$venv/bin/ruff" check --no-cache --quiet .
"$venv/bin/ruff" format --no-cache --check --quiet .
"$venv/bin/mypy" --cache-dir=/dev/null fenix_sdk
if [ -z "${FENIX_URL:-}" ] || [ -z "${FENIX_TOKEN:-}" ]; then
    if [ "${CI:-}" = true ]; then
        echo "python SDK: FENIX_URL and FENIX_TOKEN are required under CI=true (scripts/sdk_tests.sh sets them)" >&2
        exit 1
    fi
    echo "python SDK: FENIX_URL/FENIX_TOKEN not set, running the unit tests only"
    exec "$venv/bin/pytest" -q -p no:cacheprovider tests --ignore=tests/test_integration.py
fi
echo "python SDK: unit tests and the integration test against $FENIX_URL"
"$venv/bin/pytest" -q -p no:cacheprovider tests || {
    echo "python SDK: FAILED (the failing test above names the SDK call)" >&2
    exit 1
}
