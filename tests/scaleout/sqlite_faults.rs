//! SQLite faults: the database file locked by another process gives a clear
//! `503 database_unavailable` (never a hang, a 500 or a stored half), the
//! process keeps running and recovers by itself, and the database file stays
//! sound. (A full disk, on both backends: `full_disk.rs`.)

use std::{
    io::{BufRead, BufReader, Write},
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{json, Value};

use super::common::{tally, wait_all_delivered};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

/// `PRAGMA integrity_check` on a SQLite file, by another program (Python's sqlite3).
pub(super) fn integrity_check(path: &Path) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
        ])
        .arg(path)
        .output()
        .expect("python3");
    assert!(out.status.success(), "integrity check: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Posts one event with a generous client timeout; answers status, body and how long it took.
async fn post_event(fenix: &Fenix, app: &str, body: Value) -> (u16, Value, Duration) {
    let t = Instant::now();
    let resp = fenix
        .request("POST", &format!("/v1/apps/{app}/events"))
        .json(&body)
        .timeout(Duration::from_secs(90))
        .send()
        .await
        .expect("ingestion answered (no hang)");
    let status = resp.status().as_u16();
    let body = resp.json::<Value>().await.unwrap_or(Value::Null);
    (status, body, t.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_sqlite_file_answers_503_and_recovers_when_released() {
    let db = TestDb::new(Backend::Sqlite).await;
    let file = db.path("fenix.db");
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let mut fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let first = fenix.send_event(&app, json!({"type": "lock.before", "data": {}})).await;

    // Another process takes the write lock and keeps it.
    let mut holder = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys\n\
             c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)\n\
             c.execute('BEGIN EXCLUSIVE')\n\
             print('locked', flush=True)\n\
             sys.stdin.readline()\n\
             c.execute('COMMIT')\n",
        ])
        .arg(&file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().expect("stdout")).read_line(&mut line).expect("lock holder output");
    assert_eq!(line.trim(), "locked", "the other process holds the lock");

    let (status, body, took) = post_event(&fenix, &app, json!({"type": "lock.during", "data": {}})).await;
    assert_eq!(status, 503, "ingestion while another process holds the write lock: {body}");
    assert_eq!(body["error"]["code"], "database_unavailable", "{body}");
    let (read_status, _) = fenix.call("GET", &format!("/v1/apps/{app}"), None).await;
    assert!(fenix.child.try_wait().expect("try_wait").is_none(), "fenix keeps running");

    // Released: writes work again, and only the events answered 2xx exist.
    holder.stdin.take().expect("stdin").write_all(b"\n").expect("release the lock");
    assert!(holder.wait().expect("lock holder").success());
    let after = fenix.send_event(&app, json!({"type": "lock.after", "data": {}})).await;
    let ids: std::collections::BTreeSet<String> =
        [first, after].iter().map(|e| e["id"].as_str().expect("id").to_string()).collect();
    wait_all_delivered(&receiver, &ids, &["/hook".to_string()], Duration::from_secs(30)).await;
    assert_eq!(fenix.deliveries(&app, "").await.len(), 2, "the event refused with 503 was not stored");
    let t = tally(&receiver);
    let status_at_exit = fenix.terminate().await;
    let integrity = integrity_check(&file);
    let logs = fenix.logs();
    let cause = logs.lines().find(|l| l.contains("database unavailable")).and_then(|l| l.split("error=").nth(1));
    println!(
        "SQLite locked by another process: ingestion answered {status} {} after {:.1} s (logged: {cause:?}), a read \
         answered {read_status}; after release accepted 2, delivered {} distinct, duplicated {}; exit {status_at_exit}; \
         integrity {integrity}",
        body["error"]["code"],
        took.as_secs_f64(),
        t.delivered,
        t.duplicated
    );
    assert!(status_at_exit.success());
    assert_eq!(integrity, "ok", "the database file is sound");
}
