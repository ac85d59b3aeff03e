//! A full disk: the database refuses writes for lack of space.
//!
//! Unlike an outage it does not pass by itself: someone must free space
//! (`docs/operations.md`, "Runbook: a full disk"). So from the first write the
//! database refuses for it, this process says so: one ERROR line in the log,
//! `/readyz` answers `503 storage_full`, the gauge `fenix_storage_full` is 1,
//! and `fenix_storage_full_refusals_total` counts each refused write. Writes
//! are still tried (each answered `503 storage_full` only when it failed), so
//! what fits is stored; the report ends when a probe write of [`PROBE_BYTES`]
//! succeeds, tried every [`PROBE_EVERY`] while it lasts ([`watch`]).
//!
//! Process-wide: a process has one database, and a full disk is noticed where
//! the driver's error is classified (`error.rs`), which holds no store.

use std::{
    sync::atomic::{AtomicI64, AtomicU64, Ordering},
    time::Duration,
};

use rand::RngCore;
use tokio_util::sync::CancellationToken;

use super::{Error, Result, Store};
use crate::time::{self, Millis};

/// How often a probe write is tried while the disk is full.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);

/// What the probe writes (random bytes: PostgreSQL would compress zeros
/// away). Room for four events of the largest body (256 KiB): a smaller
/// write can fit in space a refused write left allocated (SQLite's WAL
/// keeps the frames of a transaction that failed), and would end the report
/// while events are still refused.
pub const PROBE_BYTES: usize = 1024 * 1024;

/// When the first refused write of this spell was (0: none), and how many
/// writes were refused in all.
static SINCE_MS: AtomicI64 = AtomicI64::new(0);
static REFUSALS: AtomicU64 = AtomicU64::new(0);

/// The database refused a write for a full disk (`e`, for the log).
pub(super) fn refused(e: &Error) {
    REFUSALS.fetch_add(1, Ordering::Relaxed);
    let now = time::now_ms();
    if SINCE_MS.compare_exchange(0, now.max(1), Ordering::Relaxed, Ordering::Relaxed).is_ok() {
        tracing::error!(
            code = ?e.database_code(),
            error = %e,
            "storage full: the database refuses writes for lack of disk space; nothing is stored until space is \
             freed (see the runbook \"a full disk\")"
        );
    }
}

/// Since when writes have been refused for a full disk (`None`: they are not).
pub fn since() -> Option<Millis> {
    Some(SINCE_MS.load(Ordering::Relaxed)).filter(|&t| t > 0)
}

/// Writes refused for a full disk since the process started (probes included).
pub fn refusals() -> u64 {
    REFUSALS.load(Ordering::Relaxed)
}

impl Store {
    /// Writes [`PROBE_BYTES`] and deletes them, in one committed
    /// transaction: the space is needed (SQLite writes the pages to its WAL
    /// at commit, PostgreSQL extends the table's file at the insert) and
    /// given back. The key is this probe's own, so instances sharing the
    /// database never wait for each other's probes.
    pub async fn probe_storage(&self) -> Result<()> {
        let key = format!("storage_probe:{}", ulid::Ulid::new());
        let mut bytes = vec![0u8; PROBE_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        let mut tx = self.writes().begin_write().await?;
        tx.execute("INSERT INTO meta (key, value) VALUES ($1, $2)", &[key.as_str().into(), (&bytes).into()]).await?;
        tx.execute("DELETE FROM meta WHERE key = $1", &[key.as_str().into()]).await?;
        tx.commit().await
    }
}

/// While writes are refused for a full disk, probes every [`PROBE_EVERY`]
/// until one succeeds, then ends the report; until `shutdown`.
pub async fn watch(store: Store, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(PROBE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let Some(since) = since() else { continue };
        let before = refusals();
        match store.probe_storage().await {
            // A write refused while the probe ran keeps the report.
            Ok(()) if refusals() == before => {
                if SINCE_MS.compare_exchange(since, 0, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
                    tracing::info!(
                        full_for_s = (time::now_ms() - since) / 1000,
                        "storage writable again: a probe write of 1 MiB succeeded"
                    );
                }
            }
            Ok(()) => {}
            Err(e) if e.is_storage_full() => tracing::debug!("storage still full"),
            Err(e) => tracing::debug!(error = %e, "storage probe failed"),
        }
    }
}
