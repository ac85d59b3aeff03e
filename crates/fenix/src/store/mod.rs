//! Storage on SQLite and PostgreSQL behind one [`Store`].
//!
//! The two schemas use the same column names and units (milliseconds as
//! 64-bit integers, text ids, bytes), so the shared CRUD is written once with
//! `$n` placeholders and its values as `sql::Value`s, and runs on either
//! pool through `sql.rs`, the one place that binds them onto a backend's
//! query: `self.reads()` or `self.writes()` (a pool), `begin_write()` (a
//! write transaction, `sql::Tx`). A query built piece by piece is a
//! `sql::Built` (text and values) written once, as in `replay.rs`. The
//! delivery queue, where the backends differ, is one file per backend under
//! `queue/`, each reading straight through; the SQL they share about ordered
//! lanes (the lane-head condition, `PARKED`, the claim) is written once in
//! `queue/lane.rs`.
//!
//! Every call answers the store's own [`Error`] ([`Result`]): what callers
//! tell apart (an outage, a taken unique value, a refused value, a parent
//! deleted meanwhile, a lost conflict) is decided once, in `error.rs`; no
//! `sqlx::Error` leaves the store. Callers ask the store what they need to
//! know about its backend ([`Store::shares_limits`], [`Store::concurrent_writes`]),
//! never which backend it is.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | connecting (pools per backend), migrations, `NOTIFY`/`LISTEN` for cross-instance wake-ups (behind the wake-up handle, `Wake`), the retry of lost conflicts (`Conflicts`) |
//! | `sql.rs` | shared SQL run on either backend: `Value`, the pools (`Db`), connections (`Conn`, `Held`) and write transactions (`Tx`), one `match` per operation |
//! | `pg_url.rs`, `primary.rs` | a PostgreSQL `DATABASE_URL` as libpq reads it (a host list, `target_session_attrs`, the key/value form); the primary among the hosts found, checked on each new connection and followed to another host when it fails |
//! | `error.rs` | the store's `Error` and `Result`: the driver's errors classified once (unavailable, storage full, unique or foreign-key violation, data error, conflict, not found, internal) |
//! | `disk_full.rs` | a full disk noticed and reported (`/readyz`, metrics) until a probe write succeeds |
//! | `queue/lane.rs` | ordered lanes in SQL, written once: `PARKED`, the lane-head condition, the claim statement (SQLite's and PostgreSQL's differ only by `SKIP LOCKED`) |
//! | `queue/mod.rs` | the delivery queue's surface: `hold_writer`, `ingest_batch`, `claim_due`, `batch_context`, `record_outcomes(_applied)`, `extend_leases`, `release_leases`, one `match` on the backend each |
//! | `queue/plan.rs` | an ingest batch's plan, shared: idempotency keys, the one fan-out query, fan-out limit, delivery rows |
//! | `queue/sqlite.rs` | the queue on SQLite: `BEGIN IMMEDIATE` transactions, multi-row inserts and `UPDATE … FROM (VALUES …)` |
//! | `queue/postgres.rs` | the queue on PostgreSQL: one statement over arrays per write, `FOR UPDATE SKIP LOCKED`, `ON CONFLICT` for keys raced by other instances |
//! | `outcomes.rs` | recording a batch of outcomes so that one refused outcome cannot stall the rest |
//! | `ownership.rs` | proof of endpoint ownership: the `unverified` flag, open challenges, their leased claim and results |
//! | `events.rs` | `NewEvent`, `Ingested`, the event log |
//! | `expunge.rs` | erasing one event's payload on request, and telling an erased payload from a purged one |
//! | `event_types.rs` | the event-type catalogue (names, schemas, examples), with a revision per change for the instances' caches |
//! | `deliveries.rs` | the delivery log, attempts, `next_due_at`, `work_due` |
//! | `replay.rs` | re-queueing failed or skipped deliveries |
//! | `tasks.rs` | bulk operations as tasks: their selection, leased claim and batches |
//! | `apps.rs`, `endpoints.rs` | apps; endpoints and their sealed secrets |
//! | `master_keys.rs`, `meta.rs` | the master keys a database was sealed with, each with its canary; the key check of databases from before them |
//! | `tokens.rs` | API tokens (admin and app-scoped), by hash, with their expiry |
//! | `sessions.rs` | console sessions: operators' sessions, portal links exchanged once for a session |
//! | `limits.rs` | limits shared by every instance on PostgreSQL: concurrency slots leased in blocks, rate-limit send times taken in runs |
//! | `send_budgets.rs` | budgets of tenant-triggered requests (challenges, test events, replays): GCRA buckets taken all or nothing |
//! | `maintenance.rs` | retention purges, auto-disable candidates, stats, queue gauges |
//! | `retention.rs` | apps' own retentions and the purges of one app that apply them |
//! | `sqlite_files.rs` | owner-only permissions of the SQLite files |
//!
//! SQLite gets one writer connection and a pool of read-only connections: writes
//! are serialised in-process (no `SQLITE_BUSY` upgrades), reads run beside them.
//! Its files are readable by the owner only (see `sqlite_files`).
//!
//! # One lock order
//!
//! On PostgreSQL several instances write at once, and two transactions that
//! take the same rows' locks in opposite orders wait on each other until the
//! server aborts one (`deadlock detected`). Every write that touches an app's
//! rows takes their locks in this order, and only in this order:
//!
//! 1. **the app's row** (`apps`): `FOR UPDATE` by its deletion (the
//!    `DELETE` itself); `FOR NO KEY UPDATE` by an endpoint's creation (which
//!    counts the app's endpoints: creations wait for each other, ingestion
//!    does not wait for them); `FOR KEY SHARE` by everything else that writes
//!    under the app: ingestion, an endpoint's deletion. Several apps' rows
//!    are locked in id order;
//! 2. **its endpoints' rows**, in id order: `FOR KEY SHARE` by ingestion,
//!    `UPDATE` of lane counters by ordered ingestion, `FOR UPDATE` by an
//!    outcome batch that moves lanes, the `DELETE` of an endpoint or the
//!    cascade of an app's;
//! 3. **events, then deliveries** (and their attempts).
//!
//! A foreign-key check locks the parent row (`FOR KEY SHARE`) at the end of
//! its statement, so a write that inserts under an app (events, endpoints)
//! locks the app's row *explicitly first*: otherwise the check would take it
//! after the endpoints, the order an app's deletion reverses. Writes of
//! deliveries alone (replays, skips, claims, outcomes without lanes) hold no
//! app or endpoint lock, and where one statement updates many deliveries it
//! takes them in id order where the statement allows it.
//!
//! A deadlock or serialization failure that can still happen (a statement's
//! plan decides the order it locks rows of one table in; a CLI or an
//! operator's own session) is retried inside Fenix: the whole transaction
//! runs again, a few times ([`Conflicts`]), and is never answered as an
//! internal error. SQLite has one writer: it cannot deadlock.

use std::{str::FromStr, time::Duration};

use anyhow::Context;
use sqlx::{
    postgres::PgPoolOptions,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
    PgPool, SqlitePool,
};

pub mod apps;
pub mod deliveries;
pub mod disk_full;
pub mod endpoint_tls;
pub mod endpoints;
mod error;
pub mod event_types;
pub mod events;
pub mod expunge;
pub mod limits;
pub mod maintenance;
pub mod master_keys;
mod meta;
pub mod oauth_tokens;
pub mod outcomes;
pub mod ownership;
mod pg_url;
mod primary;
pub mod queue;
pub mod replay;
pub mod retention;
pub mod send_budgets;
pub mod sessions;
mod sql;
mod sqlite_files;
pub mod tasks;
pub mod tokens;
pub mod transformed;

pub use deliveries::{AttemptRecord, DeliveryFilter};
pub use endpoints::{EndpointPatch, NewEndpoint};
pub use error::{Error, Result};
pub use events::{Ingested, NewEvent};
use pg_url::PgUrl;
pub use pg_url::{check_postgres_url, is_postgres_url};
use primary::Primary;
pub use queue::{ClaimedDelivery, FreshLease, HeldWriter, Outcome};

/// The two backends.
#[derive(Clone, Debug)]
pub(crate) enum Backend {
    Sqlite {
        write: SqlitePool,
        read: SqlitePool,
        /// The WAL's checkpoints, off the writer's thread ([`sqlite_checkpointer`]).
        checkpoint: SqlitePool,
    },
    /// `worker` serves the delivery worker's claims, result writes and lease
    /// updates: sessions that plan by index (see [`WORKER_PLANNER_SETTINGS`]).
    Postgres { pool: PgPool, worker: PgPool },
}

/// Planner settings of the worker's PostgreSQL sessions: walk indexes, never
/// sort or hash whole tables. Right after a large ingestion the statistics
/// still say "few due rows", and the planner would then read every due row
/// (sorting them, spilling to disk) instead of walking `deliveries_due` in
/// order up to the limit, or looking rows up by primary key. The worker's plans
/// must not depend on when ANALYZE last ran. Set when a connection opens, so
/// each claim or result write is one statement (one round trip), not a
/// transaction that first sets them.
pub const WORKER_PLANNER_SETTINGS: [(&str, &str); 4] =
    [("enable_sort", "off"), ("enable_bitmapscan", "off"), ("enable_hashjoin", "off"), ("enable_mergejoin", "off")];

/// Connections of the worker's own pool: the claim loop, up to three result
/// writers and the lease keeper.
const WORKER_CONNECTIONS: u32 = 6;

/// WAL pages past which the SQLite writer checkpoints by itself, in its own
/// commit (SQLite's default is 1,000). Normally [`sqlite_checkpointer`] has
/// copied the WAL back long before: this is the backstop should it fall behind.
const WRITER_AUTOCHECKPOINT_PAGES: &str = "8000";

/// Each SQLite reader's page cache (`PRAGMA cache_size`, negative: KiB); the
/// writer keeps 16 MB.
const READER_CACHE_KIB: &str = "-4000";

/// How often the SQLite checkpointer copies committed WAL pages into the database.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// Opens the connection that checkpoints SQLite's WAL beside the writer, and
/// starts its task. Why: with SQLite's automatic checkpoint, the commit that
/// takes the WAL past 1,000 pages copies them into the database file and
/// syncs it on the writer's own thread: ~13 % of that thread's time under
/// batch ingestion (`docs/benchmarks.md`), and the writer is the one serial
/// resource. This connection has its own thread and checkpoints `PASSIVE`:
/// it never waits for, nor blocks, the writer or the readers. The task ends
/// when the store is closed.
async fn sqlite_checkpointer(opts: &SqliteConnectOptions) -> anyhow::Result<SqlitePool> {
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .test_before_acquire(false)
        .connect_with(opts.clone())
        .await
        .context("opening the SQLite database for checkpoints")?;
    let task = pool.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if task.is_closed() {
                return;
            }
            if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&task).await {
                if task.is_closed() {
                    return;
                }
                tracing::warn!(error = %e, "WAL checkpoint failed; the writer checkpoints by itself past its limit");
            }
        }
    });
    Ok(pool)
}

/// SQLite's settings for every connection to the file at `url`.
fn sqlite_options(url: &str) -> anyhow::Result<SqliteConnectOptions> {
    Ok(SqliteConnectOptions::from_str(url)
        .with_context(|| "DATABASE_URL is not a valid sqlite:// URL")?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(10))
        .foreign_keys(true)
        .pragma("cache_size", "-16000")
        .pragma("temp_store", "memory")
        .pragma("wal_autocheckpoint", WRITER_AUTOCHECKPOINT_PAGES)
        // Deleted content (an erased or purged payload, a deleted
        // row) is overwritten with zeros, not left in free space of
        // the file (`store::expunge`); writes measured no slower.
        .pragma("secure_delete", "on")
        // Rows travel from sqlx's SQLite thread one message each: a deep
        // buffer lets a 256-row claim flow without a wake-up per row.
        .row_buffer_size(1024))
}

/// The SQLite file's one writer, its checkpointer and up to 8 readers.
async fn connect_sqlite(url: &str, max_connections: u32) -> anyhow::Result<Backend> {
    let opts = sqlite_options(url)?;
    // Owner-only files before SQLite opens (and so creates) any of them.
    if let Some(file) = sqlite_files::database_file(url, &opts) {
        sqlite_files::make_private(&file)?;
    }
    // No ping before handing out a connection: it is a file in this
    // process, not a socket that can go stale, and each ping is a round
    // trip to sqlx's SQLite thread on every transaction.
    let write = SqlitePoolOptions::new()
        .max_connections(1)
        .test_before_acquire(false)
        // SQLite rolls a transaction back by itself on some errors (a full
        // disk); a connection left "in a transaction" in sqlx's view is
        // replaced rather than reused, so the writer recovers.
        .before_acquire(|conn, _| Box::pin(async move { Ok(!sqlx::Connection::is_in_transaction(conn)) }))
        .acquire_timeout(Duration::from_secs(30))
        .connect_with(opts.clone())
        .await
        .context("opening the SQLite database")?;
    let checkpoint = sqlite_checkpointer(&opts).await?;
    let read = SqlitePoolOptions::new()
        .max_connections(max_connections.clamp(2, 8))
        .test_before_acquire(false)
        .acquire_timeout(Duration::from_secs(30))
        // Up to 8 readers, each with a quarter of the writer's page
        // cache: their pages are also in the OS's file cache, and eight
        // full caches alone would be 128 MB (a million-delivery drain
        // reads events on every reader).
        .connect_with(opts.read_only(true).create_if_missing(false).pragma("cache_size", READER_CACHE_KIB))
        .await
        .context("opening the SQLite database for reading")?;
    Ok(Backend::Sqlite { write, read, checkpoint })
}

/// The PostgreSQL pool of the API, and the worker's own. With a list of
/// hosts, both connect to the primary among them and follow it to another
/// host when it fails (`primary.rs`).
async fn connect_postgres(url: &str, max_connections: u32) -> anyhow::Result<Backend> {
    const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);
    let primary = Primary::new(PgUrl::parse(url).map_err(|e| anyhow::anyhow!("DATABASE_URL: {e}"))?);
    let watch = match primary.must_search() {
        true => Some(primary.find(ACQUIRE_TIMEOUT).await?),
        false => None,
    };
    let opts = primary.options();
    let pool = primary
        .guard(PgPoolOptions::new())
        .max_connections(max_connections)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(opts.clone())
        .await
        .context("connecting to PostgreSQL")?;
    // Opens connections when the worker first needs them (none for `--api-only`).
    let worker = primary
        .guard(PgPoolOptions::new())
        .max_connections(WORKER_CONNECTIONS)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_lazy_with(opts.options(WORKER_PLANNER_SETTINGS));
    if let Some(conn) = watch.filter(|_| primary.has_choices()) {
        tokio::spawn(primary.follow(conn, pool.clone(), worker.clone()));
    }
    Ok(Backend::Postgres { pool, worker })
}

/// Handle to the database; cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) backend: Backend,
}

impl Store {
    /// Connects to `url` (`sqlite://…` or `postgres://…`), creating a SQLite file (owner-only, 0600) if missing.
    pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<Store> {
        let backend = if url.starts_with("sqlite:") {
            connect_sqlite(url, max_connections).await?
        } else {
            connect_postgres(url, max_connections).await?
        };
        Ok(Store { backend })
    }

    /// Applies pending migrations. On PostgreSQL the migrator holds an advisory
    /// lock, so several instances starting at once apply them exactly once.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match &self.backend {
            Backend::Sqlite { write, .. } => sqlx::migrate!("../../migrations/sqlite").run(write).await,
            Backend::Postgres { pool, .. } => sqlx::migrate!("../../migrations/postgres").run(pool).await,
        }
        .context("applying database migrations")
    }

    /// The pool that serves reads (SQLite's read-only connections).
    pub(crate) fn reads(&self) -> sql::Db<'_> {
        match &self.backend {
            Backend::Sqlite { read, .. } => sql::Db::Sqlite(read),
            Backend::Postgres { pool, .. } => sql::Db::Postgres(pool),
        }
    }

    /// The pool that serves writes (SQLite's one writer).
    pub(crate) fn writes(&self) -> sql::Db<'_> {
        match &self.backend {
            Backend::Sqlite { write, .. } => sql::Db::Sqlite(write),
            Backend::Postgres { pool, .. } => sql::Db::Postgres(pool),
        }
    }

    /// True on PostgreSQL: for the store's own choices of SQL only (callers
    /// ask what they need: [`Store::shares_limits`], [`Store::concurrent_writes`]).
    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres { .. })
    }

    /// Closes every connection (SQLite checkpoints its WAL).
    pub async fn close(&self) {
        match &self.backend {
            Backend::Sqlite { write, read, checkpoint } => {
                checkpoint.close().await;
                read.close().await;
                write.close().await;
            }
            Backend::Postgres { pool, worker } => {
                worker.close().await;
                pool.close().await;
            }
        }
    }

    /// A cheap round trip, for readiness checks.
    pub async fn ping(&self) -> Result<()> {
        self.reads().execute("SELECT 1", &[]).await.map(|_| ())
    }

    /// Whether the worker's limits (concurrency per endpoint and host, rate
    /// limits) are held by the database for every instance that shares it
    /// (PostgreSQL, `limits.rs`) rather than by this process (SQLite, where
    /// only this process works).
    pub fn shares_limits(&self) -> bool {
        self.is_postgres()
    }

    /// Whether several connections can write at the same time: true on
    /// PostgreSQL; false on SQLite, whose one writer takes writes in turn.
    pub fn concurrent_writes(&self) -> bool {
        self.writes().concurrent_writes()
    }
}

/// PostgreSQL channel that wakes workers on every instance.
pub const WAKE_CHANNEL: &str = "fenix_wake";

impl Store {
    /// Wakes the workers of the other instances sharing this database
    /// (PostgreSQL `NOTIFY`); a no-op on SQLite, where only this process
    /// works. Called through the wake-up handle (`Wake`), the one way to announce work.
    pub async fn notify_other_instances(&self) {
        if let Backend::Postgres { pool, .. } = &self.backend {
            if let Err(e) = sqlx::query("SELECT pg_notify($1, '')").bind(WAKE_CHANNEL).execute(pool).await {
                tracing::debug!(error = %e, "could not notify other instances");
            }
        }
    }

    /// Calls `wake` whenever another instance announces new work, until the
    /// process ends; reconnects when the connection drops. SQLite: returns at once.
    pub async fn listen_for_work(&self, wake: &tokio::sync::Notify) {
        let Backend::Postgres { pool, .. } = &self.backend else { return };
        loop {
            let mut listener = match sqlx::postgres::PgListener::connect_with(pool).await {
                Ok(l) => l,
                Err(e) => {
                    tracing::debug!(error = %e, "LISTEN connection failed; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            if listener.listen(WAKE_CHANNEL).await.is_err() {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            loop {
                match listener.recv().await {
                    Ok(_) => wake.notify_one(),
                    Err(e) => {
                        tracing::debug!(error = %e, "LISTEN connection lost; reconnecting");
                        // Work may have arrived while we were away.
                        wake.notify_one();
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        break;
                    }
                }
            }
        }
    }
}

/// How many times a write transaction is run in all when PostgreSQL aborts
/// it for a deadlock or a serialization failure ([`Conflicts`]).
const CONFLICT_ATTEMPTS: u32 = 5;

/// The bounded retry of a whole write transaction that lost a conflict
/// ([`Error::Conflict`]). The lock order above makes deadlocks among Fenix's own
/// writes impossible by design; this is the backstop for what the order
/// cannot cover (row locks PostgreSQL takes inside one statement in a plan's
/// order, a CLI or an operator's session), so that a conflict is never
/// answered as an internal error:
///
/// ```ignore
/// let mut conflicts = Conflicts::default();
/// loop {
///     match self.delete_app_once(id).await {
///         Err(e) if conflicts.again(&e).await => {}
///         done => return done,
///     }
/// }
/// ```
#[derive(Debug, Default)]
pub(crate) struct Conflicts {
    /// Runs that lost a conflict so far.
    lost: u32,
}

impl Conflicts {
    /// True, after a short, growing pause, when `e` is a conflict and the
    /// transaction may run again; false when it is another error or the
    /// attempts are spent (the caller answers the error as it is).
    pub(crate) async fn again(&mut self, e: &Error) -> bool {
        if !matches!(e, Error::Conflict(_)) || self.lost + 1 >= CONFLICT_ATTEMPTS {
            return false;
        }
        self.lost += 1;
        tracing::debug!(error = %e, attempt = self.lost + 1, "write transaction lost a conflict; running it again");
        // The winner of the conflict goes on meanwhile; a jittered pause keeps
        // two losers from meeting again at once.
        let pause = 5 * u64::from(self.lost) + rand::random::<u64>() % 10;
        tokio::time::sleep(Duration::from_millis(pause)).await;
        true
    }
}
