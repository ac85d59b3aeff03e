//! Instances that start together on a fresh database migrate it once; the
//! `--api-only` and `--worker-only` roles split ingestion from delivery.

use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::json;

use super::common::{endpoints_on, private_db, tally, wait_all_delivered, wait_all_succeeded, FAST_LEASES};
use crate::support::{fenix::base_env, Fenix, Plan, Receiver};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_started_together_migrate_once() {
    let Some((_pg, db)) = private_db().await else { return };
    // All three connect to an empty database at the same moment.
    let (a, b, c) = tokio::join!(Fenix::start(&db, &[]), Fenix::start(&db, &[]), Fenix::start(&db, &[]));
    let instances = [a, b, c];
    let app = instances[0].create_app("acme").await;
    for (k, f) in instances.iter().enumerate() {
        let health = reqwest::get(format!("{}/healthz", f.base)).await.expect("healthz");
        assert_eq!(health.status(), 200, "instance {k} healthy");
        let (status, body) = f.call("GET", &format!("/v1/apps/{app}"), None).await;
        assert_eq!(status, 200, "instance {k} sees the app another created: {body}");
    }
    let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&db.url).await.expect("connect");
    let applied: Vec<(i64, bool)> = sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&mut conn)
        .await
        .expect("migration table");
    let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations/postgres"))
        .expect("migrations dir")
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "sql")))
        .count();
    println!("3 instances started together: all up, {} migration(s) applied once each: {applied:?}", applied.len());
    assert_eq!(applied.len(), files, "each migration recorded once");
    assert!(applied.iter().all(|(_, ok)| *ok), "every migration succeeded: {applied:?}");
}

/// A `fenix serve --worker-only` process: it prints no listening line, so it is
/// started here rather than with [`Fenix::spawn`]; killed when dropped.
struct WorkerOnly {
    child: Child,
    stdout: std::path::PathBuf,
}

impl WorkerOnly {
    fn start(env: &[(String, String)], dir: &std::path::Path) -> WorkerOnly {
        let stdout = dir.join("worker-only.stdout");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fenix"));
        cmd.args(["serve", "--worker-only"]).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).expect("stdout file"))
            .stderr(std::fs::File::create(dir.join("worker-only.log")).expect("log file"))
            .spawn()
            .expect("spawn fenix --worker-only");
        WorkerOnly { child, stdout }
    }
}

impl Drop for WorkerOnly {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_only_and_worker_only_roles() {
    const EVENTS: usize = 20;
    let Some((_pg, db)) = private_db().await else { return };
    let started = Instant::now();
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let mut env = base_env(&db);
    env.extend(FAST_LEASES.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let api = Fenix::spawn(env.clone(), db.path("api-only.log"), &["serve", "--api-only"]).await;
    let app = api.create_app("acme").await;
    let paths = endpoints_on(&api, &app, &receiver, 1).await;
    let mut ids = std::collections::BTreeSet::new();
    for i in 0..EVENTS {
        let e = api.send_event(&app, json!({"type": "role.item", "data": {"i": i}})).await;
        ids.insert(e["id"].as_str().expect("id").to_string());
    }
    // The API-only instance runs no worker: nothing is sent however long we wait.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.count(), 0, "an --api-only instance sends nothing");
    assert_eq!(api.deliveries(&app, "status=pending").await.len(), EVENTS, "the deliveries wait, pending");

    let mut worker = WorkerOnly::start(&env, db.dir.path());
    wait_all_delivered(&receiver, &ids, &paths, Duration::from_secs(20)).await;
    wait_all_succeeded(&api, &app, EVENTS, Duration::from_secs(10)).await;
    assert!(worker.child.try_wait().expect("try_wait").is_none(), "the worker-only instance runs");
    let printed = std::fs::read_to_string(&worker.stdout).unwrap_or_default();
    assert!(!printed.contains("listening"), "a --worker-only instance serves no API: {printed}");
    // It answers readiness like any instance, without a token.
    let ops = printed.split("health and metrics on ").nth(1).and_then(|r| r.split(')').next()).expect("ops address");
    let ready = reqwest::get(format!("{ops}/readyz")).await.expect("readyz");
    assert_eq!(ready.status(), 200);
    assert_eq!(ready.json::<serde_json::Value>().await.expect("json"), json!({"status": "ready"}));

    // An event ingested now reaches the worker-only instance through LISTEN/NOTIFY (or its sweep).
    let late = api.send_event(&app, json!({"type": "role.late", "data": {}})).await;
    ids.insert(late["id"].as_str().expect("id").to_string());
    wait_all_delivered(&receiver, &ids, &paths, Duration::from_secs(10)).await;

    let t = tally(&receiver);
    println!(
        "--api-only + --worker-only: accepted {}, delivered {} distinct, duplicated {}; {:.1} s",
        ids.len(),
        t.delivered,
        t.duplicated,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(t.duplicated, 0, "nothing sent twice");
}
