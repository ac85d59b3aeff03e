#!/usr/bin/env bash
# Eight concurrent large reads of the event log while the process's RSS is
# watched (issue 27, finding 3): 250 events of about 255 KB on SQLite, then
# eight `GET …/events?include=payload&limit=250` at once; prints the RSS
# before, the peak sampled every 50 ms from /proc/<pid>/status, and each
# read's status, bytes and seconds (docs/benchmarks.md, "Large reads").
# Usage: scripts/measure_large_reads.sh <fenix binary> <port> <label> [VAR=value...]
set -euo pipefail
BIN=$1; PORT=$2; LABEL=$3; shift 3
DIR=$(mktemp -d "/tmp/fenix-large-reads-$LABEL.XXXX")
TOKEN=fxa_test_token_0123456789abcdef
H="Authorization: Bearer $TOKEN"
B=http://127.0.0.1:$PORT
env DATABASE_URL="sqlite://$DIR/fenix.db" FENIX_LISTEN=127.0.0.1:$PORT FENIX_ADMIN_TOKEN=$TOKEN \
  FENIX_MASTER_KEY=q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA= FENIX_LOG=warn "$@" \
  "$BIN" serve > "$DIR/log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for i in $(seq 100); do curl -sf $B/healthz >/dev/null && break; sleep 0.1; done
APP=$(curl -sf -X POST $B/v1/apps -H "$H" -H 'content-type: application/json' -d '{"name":"big","uid":"big"}' | python3 -c 'import sys,json;print(json.load(sys.stdin)["id"])')
# 250 events of about 255 KB each, 50 to a batch (12.75 MB bodies).
python3 - "$DIR/batch.json" <<'PY'
import json, sys
ev = {"type": "report.ready", "data": {"blob": "x" * (255 * 1024 - 100)}}
json.dump({"events": [ev] * 50}, open(sys.argv[1], "w"))
PY
for b in 1 2 3 4 5; do
  curl -sf -o /dev/null -X POST $B/v1/apps/$APP/events/batch -H "$H" -H 'content-type: application/json' --data-binary @"$DIR/batch.json"
done
rss() { awk '/^VmRSS/{print $2}' /proc/$PID/status; }
hwm() { awk '/^VmHWM/{print $2}' /proc/$PID/status; }
sleep 1
BEFORE=$(rss)
# Reset the high-water mark to now, so VmHWM is the peak of the reads alone.
echo 5 > /proc/$PID/clear_refs 2>/dev/null || true
( while kill -0 $PID 2>/dev/null; do rss >> "$DIR/rss"; sleep 0.05; done ) &
WATCH=$!
START=$(date +%s.%N)
READS=()
for i in $(seq 8); do
  curl -s -o /dev/null -w "%{http_code} %{size_download} %{time_total}\n" \
    "$B/v1/apps/$APP/events?include=payload&limit=250" -H "$H" > "$DIR/read.$i" &
  READS+=($!)
done
wait "${READS[@]}"
sleep 0.5; kill $WATCH 2>/dev/null || true
AFTER=$(rss)
PEAK=$(sort -n "$DIR/rss" | tail -1)
echo "== $LABEL: RSS before reads ${BEFORE} kB, peak during ${PEAK} kB (VmHWM $(hwm) kB), after ${AFTER} kB"
cat "$DIR"/read.* | sort | uniq -c
