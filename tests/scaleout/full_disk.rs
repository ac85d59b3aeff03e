//! A full disk, on SQLite (the database file on a small tmpfs) and on
//! PostgreSQL (a private server whose database lives in a tablespace on a
//! small tmpfs): ingestion answers `503 storage_full` with `Retry-After`
//! (never a `202` for an event that was not stored), `/readyz` and the
//! metrics say so, deliveries in flight when the disk fills are all
//! delivered once space returns, and the process recovers by itself.

use std::{
    collections::BTreeSet,
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use rand::RngCore;
use serde_json::{json, Value};

use super::{
    common::{sample, tally, wait_all_delivered},
    sqlite_faults::integrity_check,
};
use crate::support::{eventually, postgres::PrivatePostgres, Backend, Fenix, Plan, Receiver, TestDb};

/// How long the receiver holds each request: the deliveries sent just before
/// the disk fills are still in flight while it fills.
const HOLD: Duration = Duration::from_secs(3);

/// Longer than [`HOLD`]: the held requests succeed.
const ATTEMPT_TIMEOUT: (&str, &str) = ("FENIX_ATTEMPT_TIMEOUT", "4s");

/// Deliveries in flight when the disk fills.
const IN_FLIGHT: usize = 3;

/// A small tmpfs mounted for one test; unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (e.g. "16m") at `path`, if this process may mount.
    fn mount(path: PathBuf, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(&path).expect("mount point");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(&path)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("note: cannot mount a tmpfs here (needs root); the disk-full scenario is not run");
        }
        ok.then_some(Tmpfs(path))
    }

    /// Fills it until it is full (a file named `filler`).
    fn fill(&self) {
        let mut f = std::fs::File::create(self.0.join("filler")).expect("filler");
        let chunk = vec![0u8; 64 * 1024];
        while f.write_all(&chunk).is_ok() {}
        let small = [0u8; 512];
        while f.write_all(&small).is_ok() {}
        let _ = f.sync_all();
    }

    /// Frees the space the filler took.
    fn free(&self) {
        std::fs::remove_file(self.0.join("filler")).expect("free the space");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// What a producer sees of one ingestion request.
struct Answer {
    status: u16,
    body: Value,
    retry_after: Option<String>,
}

async fn post_event(fenix: &Fenix, app: &str, body: Value) -> Answer {
    let resp = fenix
        .request("POST", &format!("/v1/apps/{app}/events"))
        .json(&body)
        .timeout(Duration::from_secs(90))
        .send()
        .await
        .expect("ingestion answered (no hang)");
    let status = resp.status().as_u16();
    let retry_after = resp.headers().get("retry-after").map(|v| v.to_str().unwrap_or_default().to_string());
    let body = resp.json::<Value>().await.unwrap_or(Value::Null);
    Answer { status, body, retry_after }
}

/// `/readyz`: status and body.
async fn readyz(fenix: &Fenix) -> (u16, Value) {
    let resp = reqwest::get(format!("{}/readyz", fenix.base)).await.expect("readyz");
    (resp.status().as_u16(), resp.json().await.expect("readyz JSON"))
}

/// One sample's value in `/metrics` (the line `name value`).
async fn metric(fenix: &Fenix, name: &str) -> f64 {
    let resp = fenix.request("GET", "/metrics").send().await.expect("metrics request");
    assert_eq!(resp.status(), 200, "GET /metrics");
    let text = resp.text().await.expect("metrics body");
    sample(&text, name).unwrap_or_else(|| panic!("no {name}"))
}

/// `n` bytes of hex that no database compresses away.
fn incompressible(n: usize) -> String {
    let mut bytes = vec![0u8; n / 2];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Sends events built by `event(i)` until one is refused; every accepted
/// one joins `ids`. Answers the refusal.
async fn send_until_refused(
    fenix: &Fenix,
    app: &str,
    ids: &mut BTreeSet<String>,
    event: impl Fn(usize) -> Value,
) -> Answer {
    for i in 0..2000 {
        let answer = post_event(fenix, app, event(i)).await;
        if answer.status != 202 {
            return answer;
        }
        ids.insert(answer.body["id"].as_str().expect("id").to_string());
    }
    panic!("the full disk never refused an event");
}

/// The last few ERROR and WARN lines of a log (to show why a scenario failed).
fn problems(log: &str) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("ERROR") || l.contains("WARN")).collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// The scenario on either backend: `disk` holds `fenix`'s database.
async fn a_full_disk_refuses_reports_and_recovers(label: &str, fenix: &mut Fenix, disk: &Tmpfs) {
    let receiver = Receiver::http(|_| Plan::ok().after(HOLD)).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let (status, _) = readyz(fenix).await;
    assert_eq!(status, 200, "ready before the disk fills");
    let mut ids = BTreeSet::new();
    for i in 0..IN_FLIGHT {
        let event = fenix.send_event(&app, json!({"type": "disk.in_flight", "data": {"i": i}})).await;
        ids.insert(event["id"].as_str().expect("id").to_string());
    }
    eventually("the first deliveries reached the receiver", Duration::from_secs(20), || async {
        receiver.count() >= IN_FLIGHT
    })
    .await;

    // While the receiver holds them, the disk fills: large events until one is
    // refused, then small ones until one is refused too (what a refused write
    // left allocated is used up).
    disk.fill();
    let pad = incompressible(200 * 1024);
    let big =
        send_until_refused(fenix, &app, &mut ids, |i| json!({"type": "disk.full", "data": {"i": i, "pad": pad}})).await;
    let accepted_big = ids.len() - IN_FLIGHT;
    let small = send_until_refused(fenix, &app, &mut ids, |i| json!({"type": "disk.small", "data": {"i": i}})).await;
    for refused in [&big, &small] {
        assert_eq!(
            (refused.status, refused.body["error"]["code"].as_str()),
            (503, Some("storage_full")),
            "ingestion on a full disk: {}; logged:\n{}",
            refused.body,
            problems(&fenix.logs())
        );
        assert_eq!(refused.retry_after.as_deref(), Some("30"), "storage_full carries Retry-After");
    }
    let accepted_while_filling = ids.len() - IN_FLIGHT;

    let (status, ready) = readyz(fenix).await;
    assert_eq!(status, 503, "not ready while the disk is full: {ready}");
    assert_eq!(ready["error"]["code"], "storage_full", "{ready}");
    assert!(ready["error"]["message"].as_str().unwrap_or_default().contains("disk is full"), "{ready}");
    assert_eq!(metric(fenix, "fenix_storage_full").await, 1.0);
    let refusals = metric(fenix, "fenix_storage_full_refusals_total").await;
    assert!(refusals >= 2.0, "the two refused events were counted: {refusals}");
    assert!(fenix.logs().contains("storage full: the database refuses writes"), "the log says why");

    // The in-flight deliveries' answers come back while the disk is full: each
    // outcome is recorded if it fits, else the recorder keeps it and retries.
    eventually("the receiver answered what it held", HOLD + Duration::from_secs(20), || async {
        receiver.received().iter().all(|r| r.at.elapsed() > HOLD + Duration::from_secs(1))
    })
    .await;
    let recorder_refused = fenix.logs().contains("recording outcomes failed; retrying");
    let succeeded_while_full = fenix.deliveries(&app, "status=succeeded").await.len();
    assert!(fenix.child.try_wait().expect("try_wait").is_none(), "fenix keeps running on a full disk");

    disk.free();
    let freed = Instant::now();
    eventually("ready again after space was freed", Duration::from_secs(20), || async { readyz(fenix).await.0 == 200 })
        .await;
    let ready_after = freed.elapsed();
    assert_eq!(metric(fenix, "fenix_storage_full").await, 0.0);
    assert!(fenix.logs().contains("storage writable again"), "the log says it is over");
    // Ingestion works again.
    let after = post_event(fenix, &app, json!({"type": "disk.after", "data": {}})).await;
    assert_eq!(after.status, 202, "ingestion after space was freed: {}", after.body);
    ids.insert(after.body["id"].as_str().expect("id").to_string());

    wait_all_delivered(&receiver, &ids, &["/hook".to_string()], Duration::from_secs(60)).await;
    let succeeded_by = Instant::now() + Duration::from_secs(30);
    loop {
        let all = fenix.deliveries(&app, "").await;
        if all.iter().all(|d| d["status"] == "succeeded") && all.len() == ids.len() {
            break;
        }
        if Instant::now() > succeeded_by {
            let statuses: Vec<String> = all.iter().map(|d| format!("{} {}", d["status"], d["attempt_count"])).collect();
            std::fs::write("/tmp/full_disk_fenix.log", fenix.logs()).ok();
            panic!(
                "not every accepted delivery succeeded within 30 s: {statuses:?}; logged:\n{}",
                problems(&fenix.logs())
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(fenix.deliveries(&app, "").await.len(), ids.len(), "only events answered 202 exist");
    let t = tally(&receiver);
    println!(
        "{label} on a full disk: {accepted_while_filling} events accepted while it filled ({accepted_big} large), \
         then 503 storage_full with Retry-After {:?}; {refusals} writes refused by the time readyz was read; \
         {IN_FLIGHT} deliveries in flight (recorder refused: {recorder_refused}; {succeeded_while_full} deliveries \
         recorded succeeded while full); ready {:.1} s after space was freed; {} accepted in all, delivered {} \
         distinct, duplicated {}",
        small.retry_after,
        ready_after.as_secs_f64(),
        ids.len(),
        t.delivered,
        t.duplicated
    );
    assert_eq!(t.delivered, ids.len(), "every accepted event delivered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_on_a_full_disk_answers_503_storage_full_and_recovers_when_space_returns() {
    let db = TestDb::new(Backend::Sqlite).await;
    let Some(disk) = Tmpfs::mount(db.path("disk"), "16m") else { return };
    let file = disk.0.join("fenix.db");
    let url = format!("sqlite://{}", file.display());
    let mut fenix = Fenix::start(&db, &[("DATABASE_URL", &url), ATTEMPT_TIMEOUT]).await;
    a_full_disk_refuses_reports_and_recovers("SQLite", &mut fenix, &disk).await;
    let status_at_exit = fenix.terminate().await;
    assert!(status_at_exit.success(), "exit {status_at_exit}");
    assert_eq!(integrity_check(&file), "ok", "the database file is sound");
}

/// A private PostgreSQL whose test database lives in a tablespace on a
/// small tmpfs (its WAL stays on the ordinary disk: a full disk under the
/// WAL stops the server, an outage, not this scenario).
async fn postgres_on_a_small_disk(root: &Path) -> Option<(Tmpfs, PrivatePostgres, TestDb)> {
    set_mode(root, 0o755);
    let disk = Tmpfs::mount(root.join("disk"), "32m")?;
    let pg = PrivatePostgres::start_new().await?;
    let space = disk.0.join("tablespace");
    std::fs::create_dir(&space).expect("tablespace directory");
    for dir in [&disk.0, &space] {
        let ok = Command::new("chown").arg("nobody").arg(dir).status().expect("chown");
        assert!(ok.success(), "chown nobody {}", dir.display());
    }
    let mut admin =
        <sqlx::PgConnection as sqlx::Connection>::connect(&pg.admin_url).await.expect("connect to private PostgreSQL");
    sqlx::query(&format!("CREATE TABLESPACE small_disk LOCATION '{}'", space.display()))
        .execute(&mut admin)
        .await
        .expect("create tablespace");
    let name = format!("fenix_test_{}", ulid::Ulid::new().to_string().to_lowercase());
    sqlx::query(&format!("CREATE DATABASE {name} TABLESPACE small_disk")).execute(&mut admin).await.expect("database");
    let url = format!("postgres://fenix@127.0.0.1:{}/{name}", pg.port);
    let db = TestDb { backend: Backend::Postgres, url, dir: tempfile::tempdir().expect("temp dir") };
    Some((disk, pg, db))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_on_a_full_disk_answers_503_storage_full_and_recovers_when_space_returns() {
    let root = tempfile::tempdir().expect("temp dir");
    // Dropped in reverse: the server stops before its disk is unmounted.
    let Some((disk, pg, db)) = postgres_on_a_small_disk(root.path()).await else { return };
    let mut fenix = Fenix::start(&db, &[ATTEMPT_TIMEOUT]).await;
    a_full_disk_refuses_reports_and_recovers("PostgreSQL", &mut fenix, &disk).await;
    let status_at_exit = fenix.terminate().await;
    assert!(status_at_exit.success(), "exit {status_at_exit}; server log:\n{}", pg.server_log());
    drop(pg);
    drop(disk);
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}
