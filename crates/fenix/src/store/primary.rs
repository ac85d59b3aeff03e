//! Following the primary among several PostgreSQL hosts (`DATABASE_URL`
//! with a host list, `pg_url.rs`), as libpq does with `target_session_attrs`.
//!
//! The pools (the API's and the worker's) connect to one host at a time: the
//! first of the list that answers and, with `read-write` or `primary`, is
//! one. A watcher holds a connection of its own to that host and asks it
//! twice a second whether it still is; when the connection breaks (the
//! primary died) it tries the hosts in order again until one qualifies (a
//! promoted standby) and points both pools at it. Meanwhile requests wait
//! for a connection up to the pool's timeout and are answered `503
//! database_unavailable`; the worker's recorder keeps its outcomes and
//! retries them. Two guards keep writes off a server that is not the primary:
//! every new connection is checked before it is used (a standby, such as an
//! old primary that came back as one, is refused and the pool tries again),
//! and connections opened before the pools moved are closed instead of reused.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use sqlx::{
    postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions},
    ConnectOptions, Connection,
};

use super::{
    pg_url::{PgUrl, SessionAttrs},
    WORKER_PLANNER_SETTINGS,
};

/// How often the watcher asks the host in use whether it still qualifies.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// How long one host may take to accept a connection and answer the check.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The pause between two rounds over the hosts while none qualifies.
const SEARCH_PAUSE: Duration = Duration::from_millis(250);

/// The hosts of the URL and which of them the pools use now.
#[derive(Debug)]
pub(crate) struct Primary {
    url: PgUrl,
    /// Index in `url.hosts` of the host the pools connect to, and when they
    /// were pointed at it (`None`: at start). Connections opened before that
    /// moment are to another host and are not used again.
    current: Mutex<(usize, Option<Instant>)>,
}

impl Primary {
    pub(crate) fn new(url: PgUrl) -> Arc<Primary> {
        Arc::new(Primary { url, current: Mutex::new((0, None)) })
    }

    /// True when the host must be searched for: a list of hosts, or a server
    /// that must be a primary or writable. Otherwise the one host is used as
    /// it is, as before host lists.
    pub(crate) fn must_search(&self) -> bool {
        self.url.hosts.len() > 1 || self.url.attrs != SessionAttrs::Any
    }

    /// Finds the first host that qualifies, trying the list again for up to
    /// `budget` (a start during a failover waits for the promotion a little);
    /// answers a connection to it, for [`Primary::follow`].
    pub(crate) async fn find(&self, budget: Duration) -> anyhow::Result<PgConnection> {
        let deadline = Instant::now() + budget;
        loop {
            match self.search().await {
                Ok((at, conn)) => {
                    self.current.lock().expect("primary lock").0 = at;
                    return Ok(conn);
                }
                Err(why) if Instant::now() >= deadline => {
                    anyhow::bail!("connecting to PostgreSQL: no host of DATABASE_URL can be used: {why}")
                }
                Err(_) => tokio::time::sleep(SEARCH_PAUSE).await,
            }
        }
    }

    /// The options of the host in use (the pools' first connections).
    pub(crate) fn options(&self) -> PgConnectOptions {
        self.url.hosts[self.current.lock().expect("primary lock").0].options.clone()
    }

    /// `options` with the two guards: each new connection is checked before
    /// it is used (with `read-write` or `primary`: a standby is refused, and
    /// the pool tries again up to its timeout), and, with several hosts, a
    /// connection opened before the pools last moved is closed, not reused.
    pub(crate) fn guard(self: &Arc<Self>, mut options: PgPoolOptions) -> PgPoolOptions {
        let attrs = self.url.attrs;
        if attrs != SessionAttrs::Any {
            options = options.after_connect(move |conn, _| {
                Box::pin(async move {
                    match qualifies(conn, attrs).await? {
                        true => Ok(()),
                        false => Err(sqlx::Error::Configuration(
                            "this PostgreSQL server is a standby or read-only (target_session_attrs)".into(),
                        )),
                    }
                })
            });
        }
        if self.url.hosts.len() > 1 {
            let primary = self.clone();
            options = options.before_acquire(move |_, meta| {
                let keep = primary.current_host_opened(meta.age);
                Box::pin(async move { Ok(keep) })
            });
        }
        options
    }

    /// True when a connection `age` old was opened after the pools were last
    /// pointed at their host (so it is to that host).
    fn current_host_opened(&self, age: Duration) -> bool {
        let moved = self.current.lock().expect("primary lock").1;
        moved.is_none_or(|at| Instant::now().checked_sub(age).is_none_or(|opened| opened >= at))
    }

    /// Whether there is a host to move to: a list of more than one.
    pub(crate) fn has_choices(&self) -> bool {
        self.url.hosts.len() > 1
    }

    /// Watches the host in use through `conn` and moves `pool` and `worker`
    /// to the next host that qualifies when it fails; ends when the pools close.
    pub(crate) async fn follow(self: Arc<Self>, mut conn: PgConnection, pool: PgPool, worker: PgPool) {
        let mut since_lost: Option<Instant> = None;
        loop {
            tokio::time::sleep(if since_lost.is_some() { SEARCH_PAUSE } else { WATCH_EVERY }).await;
            if pool.is_closed() {
                let _ = conn.close().await;
                return;
            }
            if since_lost.is_none() {
                let answer = tokio::time::timeout(PROBE_TIMEOUT, qualifies(&mut conn, self.url.attrs)).await;
                let why = match answer {
                    Ok(Ok(true)) => continue,
                    Ok(Ok(false)) => "it is read-only now".to_string(),
                    Ok(Err(e)) => e.to_string(),
                    Err(_) => format!("no answer within {PROBE_TIMEOUT:?}"),
                };
                let host = &self.url.hosts[self.current.lock().expect("primary lock").0].label;
                tracing::warn!(%host, reason = %why, "lost the PostgreSQL primary; looking for it among the hosts of DATABASE_URL");
                since_lost = Some(Instant::now());
            }
            match self.search().await {
                Ok((at, fresh)) => {
                    conn = fresh;
                    let lost_for = since_lost.take().map(|t| t.elapsed()).unwrap_or_default();
                    self.move_to(at, &pool, &worker, lost_for);
                }
                Err(why) => tracing::debug!(reason = %why, "no PostgreSQL host can be used yet"),
            }
        }
    }

    /// Points both pools at host `at` (a no-op when they are there already).
    fn move_to(&self, at: usize, pool: &PgPool, worker: &PgPool, lost_for: Duration) {
        let host = &self.url.hosts[at];
        let mut current = self.current.lock().expect("primary lock");
        if current.0 == at {
            tracing::warn!(host = %host.label, after = ?lost_for, "the PostgreSQL primary answers again");
            return;
        }
        pool.set_connect_options(host.options.clone());
        worker.set_connect_options(host.options.clone().options(WORKER_PLANNER_SETTINGS));
        let from = &self.url.hosts[current.0].label;
        tracing::warn!(host = %host.label, %from, after = ?lost_for, "the PostgreSQL primary is now another host; Fenix writes there");
        *current = (at, Some(Instant::now()));
    }

    /// The first host, in order, that accepts a connection and qualifies; or
    /// why none does, host by host.
    async fn search(&self) -> Result<(usize, PgConnection), String> {
        let mut why = Vec::new();
        for (at, host) in self.url.hosts.iter().enumerate() {
            match tokio::time::timeout(PROBE_TIMEOUT, probe(&host.options, self.url.attrs)).await {
                Ok(Ok(conn)) => return Ok((at, conn)),
                Ok(Err(e)) => why.push(format!("{}: {e}", host.label)),
                Err(_) => why.push(format!("{}: no answer within {PROBE_TIMEOUT:?}", host.label)),
            }
        }
        Err(why.join("; "))
    }
}

/// A connection to the server of `options`, if it qualifies.
async fn probe(options: &PgConnectOptions, attrs: SessionAttrs) -> Result<PgConnection, String> {
    let mut conn = options.connect().await.map_err(|e| e.to_string())?;
    match qualifies(&mut conn, attrs).await {
        Ok(true) => Ok(conn),
        Ok(false) => {
            let _ = conn.close().await;
            Err("a standby or read-only server".into())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Whether the server of `conn` is what `attrs` asks for (libpq's checks:
/// `read-write` reads `transaction_read_only`, `primary` `pg_is_in_recovery()`).
async fn qualifies(conn: &mut PgConnection, attrs: SessionAttrs) -> sqlx::Result<bool> {
    const SQL: &str = "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'";
    let (in_recovery, read_only): (bool, bool) = sqlx::query_as(SQL).fetch_one(conn).await?;
    Ok(match attrs {
        SessionAttrs::Any => true,
        SessionAttrs::ReadWrite => !read_only,
        SessionAttrs::Primary => !in_recovery,
    })
}
