//! A newcomer's first hour: the README's quick start, run as written (twice
//! in one shell, and with its port taken), and the two things it relies on:
//! `localhost` receivers in development mode, and an event that reaches no
//! endpoint saying so in its answer.

use std::{process::Stdio, time::Duration};

use serde_json::{json, Value};

use crate::support::{eventually, free_port, Backend, Fenix, Plan, Receiver, TestDb};

const README: &str = include_str!("../../README.md");

/// The shell block between the README's `quickstart:begin` and `quickstart:end`
/// markers, without its fences.
fn quick_start_block() -> String {
    let start = README.find("<!-- quickstart:begin").expect("README has a quickstart:begin marker");
    let end = README.find("<!-- quickstart:end -->").expect("README has a quickstart:end marker");
    let block = &README[start..end];
    let body = block.split_once("```sh\n").expect("the marked block is a ```sh fence").1;
    body.rsplit_once("```").expect("the fence is closed").0.to_string()
}

/// What a run of the block in bash left: its exit status, stdout, stderr,
/// or `None` when it did not finish in time (then its processes are killed).
type Run = Option<(std::process::ExitStatus, String, String)>;

/// Runs `script` in bash in `dir` with only the debug `fenix` on the `PATH` and
/// the three ports the block reads, stopping whatever it left running after.
async fn run_in_bash(dir: &std::path::Path, script: &str, ports: (u16, u16, u16), limit: Duration) -> Run {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_fenix")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut child = tokio::process::Command::new("bash")
        .args(["-e", "-c", script])
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("PORT", ports.0.to_string())
        .env("HOOK_PORT", ports.1.to_string())
        .env("DOWN_PORT", ports.2.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("run bash");
    let pid = child.id().expect("pid");
    let output = tokio::time::timeout(limit, async {
        let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let (mut stdout, mut stderr) = (String::new(), String::new());
        use tokio::io::AsyncReadExt;
        let (a, b) = tokio::join!(out.read_to_string(&mut stdout), err.read_to_string(&mut stderr));
        a.unwrap();
        b.unwrap();
        (child.wait().await.unwrap(), stdout, stderr)
    })
    .await;
    // Whatever happened, stop what the block left running in the background.
    let _ = std::process::Command::new("kill").args(["-9", "--", &format!("-{pid}")]).stderr(Stdio::null()).status();
    output.ok()
}

/// The README's quick start, pasted twice into one bash in an empty directory
/// (only the debug `fenix` on the `PATH`, its three ports moved through the
/// `PORT`, `HOOK_PORT` and `DOWN_PORT` variables the block itself reads), must
/// end with both receivers' `verified` lines and both deliveries `succeeded`,
/// in one `fenix-quickstart` directory: the second paste does not nest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_quick_start_runs_as_written_and_again_in_the_same_shell() {
    let dir = tempfile::tempdir().unwrap();
    let ports = (free_port(), free_port(), free_port());
    let block = quick_start_block();
    let output = run_in_bash(dir.path(), &format!("{block}\n{block}"), ports, Duration::from_secs(180)).await;
    let qs = dir.path().join("fenix-quickstart");
    let file = |name: &str| std::fs::read_to_string(qs.join(name)).unwrap_or_default();
    let Some((status, stdout, stderr)) = output else {
        panic!(
            "the quick start did not finish within 180 s\nfenix.log:\n{}\nreceiver.log:\n{}\nreceiver2.log:\n{}",
            file("fenix.log"),
            file("receiver.log"),
            file("receiver2.log")
        );
    };
    assert!(
        status.success(),
        "the quick start failed: {status}\nstdout:\n{stdout}\nstderr:\n{stderr}\nfenix.log:\n{}",
        file("fenix.log")
    );
    // The commands' own notes may go to stderr; a missing command or file may not.
    for broken in ["command not found", "No such file", "Usage:", "error:", "gave up", "curl:"] {
        assert!(!stderr.contains(broken), "the quick start wrote `{broken}` to stderr:\n{stderr}");
    }
    assert!(!qs.join("fenix-quickstart").exists(), "the second paste nested its directory");
    assert_eq!(stdout.matches("Fenix listening").count(), 2, "both pastes started Fenix:\n{stdout}");

    // Step 7 and 9 (of the second paste: the first one's files were removed):
    // each receiver verified exactly one request, and rejected none.
    for log in ["receiver.log", "receiver2.log"] {
        let text = file(log);
        assert_eq!(text.matches("verified  evt_").count(), 1, "{log}:\n{text}");
        assert!(!text.contains("REJECTED"), "{log}:\n{text}");
    }
    // Step 6: the event went to both endpoints.
    let event: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"].as_str().is_some_and(|id| id.starts_with("evt_")))
        .expect("the event's answer");
    assert_eq!(event["deliveries"], 2, "{event}");
    assert!(event.get("warning").is_none(), "{event}");
    // Step 10: the delivery log, the last line printed.
    let log: Value = serde_json::from_str(stdout.lines().last().expect("output")).expect("the delivery log is JSON");
    let mut rows: Vec<(String, i64)> = log["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|d| (d["status"].as_str().unwrap().to_string(), d["attempt_count"].as_i64().unwrap()))
        .collect();
    rows.sort_by_key(|(_, attempts)| *attempts);
    // The first endpoint at once; the second after 3 refused attempts and the replay.
    assert_eq!(rows, [("succeeded".to_string(), 1), ("succeeded".to_string(), 4)], "{log}");
    assert!(stdout.contains(r#""error":"connect""#), "step 8 shows the refused attempts:\n{stdout}");
}

/// With Fenix's port taken by something else, the block stops before it
/// starts anything, names the port and says how to move it, instead of
/// talking to whatever listens there and waiting forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quick_start_stops_at_once_when_its_port_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let started = std::time::Instant::now();
    let output =
        run_in_bash(dir.path(), &quick_start_block(), (port, free_port(), free_port()), Duration::from_secs(60)).await;
    let (status, stdout, stderr) = output.expect("the quick start stops within 60 s");
    assert!(!status.success(), "the quick start went on with port {port} taken:\n{stdout}");
    assert!(started.elapsed() < Duration::from_secs(10), "it took {:?} to stop", started.elapsed());
    assert!(stderr.contains(&format!("port {port} is taken")) && stderr.contains("PORT="), "{stderr}");
    assert!(!dir.path().join("fenix-quickstart/fenix.log").exists(), "Fenix was started:\n{stdout}");
    drop(taken);
}

/// In development mode with loopback allowed, `http://localhost:…` is an
/// endpoint like `http://127.0.0.1:…` (it used to be refused as not public).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_localhost_endpoint_is_registered_and_delivered_to_when_loopback_is_allowed() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[("FENIX_UNSAFE_ALLOW_CIDRS", "127.0.0.0/8")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let url = receiver.url.replace("127.0.0.1", "localhost");
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": url})).await;
    assert_eq!(ep["url"], url.as_str());
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    eventually("the localhost receiver got the event", Duration::from_secs(10), || async { receiver.count() == 1 })
        .await;
    assert_eq!(receiver.received()[0].header("x-fenix-event-id"), evt["id"].as_str().unwrap());
}

/// Without loopback in the allow list, `localhost` stays refused, and the
/// message says what would work instead of naming a host that cannot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_localhost_endpoint_is_refused_without_loopback_in_the_allow_list() {
    let db = TestDb::new(Backend::Sqlite).await;
    let dev = Fenix::start(&db, &[("FENIX_UNSAFE_ALLOW_CIDRS", "10.0.0.0/8")]).await;
    let app = dev.create_app("acme").await;
    let (status, body) = dev
        .call("POST", &format!("/v1/apps/{app}/endpoints"), Some(json!({"url": "http://localhost:9000/hook"})))
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "url_host_not_public", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("FENIX_UNSAFE_ALLOW_CIDRS") && !message.contains("example.com"), "{message}");
    drop(dev);

    let db = TestDb::new(Backend::Sqlite).await;
    let production = Fenix::start(&db, &[("FENIX_UNSAFE_ALLOW_HTTP", "false"), ("FENIX_UNSAFE_ALLOW_CIDRS", "")]).await;
    let app = production.create_app("acme").await;
    let (status, body) = production
        .call("POST", &format!("/v1/apps/{app}/endpoints"), Some(json!({"url": "https://localhost/hook"})))
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "url_host_not_public", "{body}");
    assert!(!body["error"]["message"].as_str().unwrap().contains("example.com"), "{body}");
}

/// An event no endpoint subscribes to is stored with `"deliveries": 0`, and
/// its answer says nothing will be delivered; the event log does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_no_endpoint_subscribes_to_says_so_in_its_answer() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url, "event_types": ["booking.*"]})).await;

    let send = |key: &'static str, kind: &'static str| {
        let fenix = &fenix;
        let app = &app;
        async move {
            let resp = fenix
                .request("POST", &format!("/v1/apps/{app}/events"))
                .header("idempotency-key", key)
                .json(&json!({"type": kind, "data": {}}))
                .send()
                .await
                .unwrap();
            (resp.status().as_u16(), resp.json::<Value>().await.unwrap())
        }
    };
    let (status, nobody) = send("k1", "bokking.confirmed").await;
    assert_eq!(status, 202, "{nobody}");
    assert_eq!(nobody["deliveries"], 0);
    let warning = nobody["warning"].as_str().expect("a warning when nothing will be delivered");
    assert!(warning.contains("`bokking.confirmed`") && warning.contains("nothing will be delivered"), "{warning}");
    // The same answer when the producer retries with the same key.
    let (status, again) = send("k1", "bokking.confirmed").await;
    assert_eq!((status, &again["warning"]), (200, &nobody["warning"]), "{again}");

    let (status, delivered) = send("k2", "booking.confirmed").await;
    assert_eq!((status, &delivered["deliveries"]), (202, &json!(1)), "{delivered}");
    assert!(delivered.get("warning").is_none(), "{delivered}");

    let (status, read) =
        fenix.call("GET", &format!("/v1/apps/{app}/events/{}", nobody["id"].as_str().unwrap()), None).await;
    assert_eq!(status, 200, "{read}");
    assert!(read.get("warning").is_none(), "{read}");
}
