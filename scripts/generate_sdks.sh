#!/usr/bin/env bash
# Regenerates what the three SDKs are generated from, and their generated code:
#
#   sdks/openapi.json                  the document `fenix openapi` prints (the one
#                                      /openapi.json serves), indented for review
#   sdks/typescript/src/generated/     sdks/typescript/generate.sh (openapi-typescript)
#   sdks/python/fenix_sdk/_generated/  sdks/python/generate.sh (openapi-python-client)
#   crates/fenix-client (generated)    crates/fenix-client/generate.sh
#
# The generated files are committed; scripts/test.sh runs this and then
# `git diff --exit-code` on them, so a change to the API that was not
# regenerated fails CI. FENIX_BIN names a built `fenix` binary to read the
# document from (default: `cargo run -p fenix`, which builds it first).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${FENIX_BIN:-}" ]; then
  "$FENIX_BIN" openapi >sdks/openapi.json.tmp
else
  cargo run --quiet -p fenix --bin fenix -- openapi >sdks/openapi.json.tmp
fi
python3 - sdks/openapi.json.tmp sdks/openapi.json <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    document = json.load(f)
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump(document, f, indent=2, ensure_ascii=False)
    f.write("\n")
PY
rm -f sdks/openapi.json.tmp
echo "sdks/openapi.json: $(python3 -c 'import json; print(len(json.load(open("sdks/openapi.json"))["paths"]))') paths"

for sdk in sdks/typescript sdks/python crates/fenix-client; do
  echo "==> $sdk/generate.sh"
  "$sdk/generate.sh"
done
