#!/usr/bin/env python3
"""Shares of a worker profile by part of the delivery path.

Input: folded stacks (`perf script -i F --no-inline | inferno-collapse-perf --all`).
Each sample goes to the first part whose test matches its stack; the kernel
column counts samples whose innermost frame is the kernel's.
Usage: scripts/profile_buckets.py worker.folded
"""
import collections
import sys

PARTS = [
    ("HTTP request future: reqwest's layers (redirect policy, retry, URL re-parses, request copy)",
     lambda s: "fenix::worker::attempt::send::" in s and "hyper" not in s),
    ("HTTP request future: hyper under it (pool checkout, dispatch)",
     lambda s: "fenix::worker::attempt::send::" in s),
    ("signing and the wire headers", lambda s: "signed_headers" in s or "WireHeaders" in s),
    ("rest of an attempt (destination check, gate, spawn, record building)",
     lambda s: "admit_all" in s or "check_sign_send" in s),
    ("SQLite statements (sqlx's SQLite threads)", lambda s: "sqlx_sqlite" in s or "sqlite3" in s),
    ("sqlx's query layer (sqlx-core; on PostgreSQL sqlx-postgres, its protocol and socket I/O)",
     lambda s: "sqlx_postgres" in s or "sqlx_core" in s),
    ("claim loop (claim, batch context, jobs)",
     lambda s: "Worker>::step" in s or "Worker>::run" in s or "Worker::start" in s),
    ("recorder (outcomes to the store)", lambda s: "Recorder" in s or "recorder" in s),
    ("hyper's connection tasks (socket reads and writes)",
     lambda s: "hyper::" in s or "hyper_util" in s or "rustls" in s),
    ("runtime: scheduling, parking, wake-ups", lambda s: "tokio::" in s or "futex" in s or "schedule" in s),
]


def main(path: str) -> None:
    total = 0
    user: collections.Counter = collections.Counter()
    kernel: collections.Counter = collections.Counter()
    for line in open(path, encoding="utf-8", errors="replace"):
        stack, _, n = line.rstrip().rpartition(" ")
        if not stack:
            continue
        samples = int(n)
        total += samples
        part = next((name for name, test in PARTS if test(stack)), "other")
        (kernel if stack.rsplit(";", 1)[-1].endswith("_[k]") else user)[part] += samples
    print("| part | share | user space | kernel |")
    print("|---|---:|---:|---:|")
    parts = sorted({*user, *kernel}, key=lambda p: -(user[p] + kernel[p]))
    for p in parts:
        pct = lambda c: f"{100 * c / total:.1f} %"
        print(f"| {p} | {pct(user[p] + kernel[p])} | {pct(user[p])} | {pct(kernel[p])} |")


if __name__ == "__main__":
    main(sys.argv[1])
