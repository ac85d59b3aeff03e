//! Fenix's files on disk are the owner's alone: the SQLite database, its
//! write-ahead log and shared-memory index hold every payload and the sealed
//! secrets, and the key file opens those secrets. These tests run as root in
//! CI, where permissions are not enforced, so they read the mode bits.

#![cfg(unix)]

use std::{os::unix::fs::PermissionsExt, path::Path, time::Duration};

use super::{
    common::{run_fenix, with_env},
    support::{fenix::base_env, Backend, Fenix, TestDb},
};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_database_its_wal_and_shm_and_the_key_file_are_owner_only() {
    let db = TestDb::new(Backend::Sqlite).await;
    let files = ["fenix.db", "fenix.db-wal", "fenix.db-shm", "fenix.db.key"].map(|name| db.path(name));
    let env = with_env(base_env(&db), "FENIX_MASTER_KEY", None);
    let mut fenix = Fenix::spawn(env, db.path("fenix.log"), &["serve"]).await;
    fenix.create_app("acme").await;
    for file in &files {
        assert_eq!(mode(file), 0o600, "{} is readable by its owner only", file.display());
    }

    // A database left open to others (an older version, a copy) is tightened at start, and the log says so.
    fenix.kill9();
    for file in &files[..3] {
        chmod(file, 0o644);
    }
    fenix.restart().await;
    fenix.create_app("globex").await;
    for file in &files {
        assert_eq!(mode(file), 0o600, "{} was made owner-only", file.display());
    }
    let logs = fenix.logs();
    assert!(logs.contains("made it owner-only (0600)"), "the start says what it changed: {logs}");
    assert!(logs.contains("fenix.db-wal"), "and names each file: {logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_key_file_open_to_group_or_others_stops_the_start_and_says_how_to_fix_it() {
    let db = TestDb::new(Backend::Sqlite).await;
    let key_path = db.path("fenix.db.key");
    let env = with_env(base_env(&db), "FENIX_MASTER_KEY", None);
    let mut fenix = Fenix::spawn(env.clone(), db.path("fenix.log"), &["serve"]).await;
    fenix.kill9();
    let key = std::fs::read_to_string(&key_path).expect("the key file was created");

    chmod(&key_path, 0o644);
    let refused = run_fenix(&env, &["serve"], Duration::from_secs(30)).await;
    assert!(!refused.status.success(), "a world-readable key file must stop the start");
    assert!(!refused.stdout.contains("listening"), "it never listened: {}", refused.stdout);
    let fix = format!("chmod 600 {}", key_path.display());
    assert!(refused.stderr.contains(&fix), "the error names the file and the fix: {}", refused.stderr);
    assert!(!refused.stderr.contains(key.trim()), "the key itself is never shown");
    assert_eq!(mode(&key_path), 0o644, "Fenix does not quietly change a key file it refuses");

    // Doing what it says works, with the same key.
    chmod(&key_path, 0o600);
    let fenix = Fenix::spawn(env, db.path("fenix-2.log"), &["serve"]).await;
    fenix.create_app("acme").await;
    assert_eq!(std::fs::read_to_string(&key_path).unwrap(), key, "the key file is left as it was");
}
