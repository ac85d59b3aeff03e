//! Fixtures for the storage suite: a migrated [`Store`] per test, rows built at
//! controlled times through the store's own functions, and a raw SQL pool on the
//! same database for what the store deliberately cannot do (purging a payload,
//! reading internal columns, asking the planner).

use fenix::{
    ids::{AppId, AttemptId, DeliveryId, EndpointId, EventId},
    store::{
        apps::AppRow,
        endpoints::EndpointRow,
        events::{Ingested, NewEvent},
        AttemptRecord, ClaimedDelivery, DeliveryFilter, NewEndpoint, Outcome, Store,
    },
    time::Millis,
};
use sqlx::{PgPool, SqlitePool};

use crate::support::{Backend, TestDb};

/// A fixed "now" for the suite: every time is explicit, no test reads the clock.
pub const T0: Millis = 1_800_000_000_000;

/// An id of kind `prefix` whose ULID carries the time `at`, so "newest first"
/// (ORDER BY id DESC) is known in advance when rows are made at distinct times.
pub fn id_at(prefix: &str, at: Millis) -> String {
    format!("{prefix}_{}", ulid::Ulid::from_parts(at as u64, rand::random::<u128>()))
}

/// A fresh, migrated database with a store on it.
pub struct Fixture {
    pub db: TestDb,
    pub store: Store,
}

impl Fixture {
    pub async fn new(backend: Backend) -> Fixture {
        let db = TestDb::new(backend).await;
        let store = Store::connect(&db.url, 8).await.expect("connect");
        store.migrate().await.expect("migrate");
        Fixture { db, store }
    }

    /// Another handle on the same database (as a second instance would have).
    pub async fn second_store(&self) -> Store {
        Store::connect(&self.db.url, 8).await.expect("connect a second store")
    }

    pub async fn raw(&self) -> Raw {
        Raw::connect(&self.db).await
    }

    /// Inserts an app created at `T0`.
    pub async fn app(&self, uid: &str) -> AppId {
        let id = AppId::new_at(T0);
        self.store
            .insert_app(&AppRow {
                id: id.clone(),
                uid: Some(uid.into()),
                name: uid.into(),
                created_at: T0,
                updated_at: T0,
            })
            .await
            .expect("insert app");
        id
    }

    /// Inserts an active endpoint subscribed to `event_types` (empty = all), with secret v1 `sealed-v1`.
    pub async fn endpoint(&self, app_id: &AppId, event_types: &[&str]) -> EndpointId {
        let row = endpoint_row(app_id, event_types);
        let id = row.id.clone();
        self.store
            .insert_endpoint(&NewEndpoint { row, sealed_secret: b"sealed-v1".to_vec(), public_key: None })
            .await
            .expect("insert endpoint");
        id
    }

    /// Sets an endpoint's state the way the API does.
    pub async fn set_state(&self, endpoint_id: &EndpointId, state: fenix::lifecycle::EndpointState) {
        let changed = self
            .store
            .set_endpoint_state(endpoint_id, state, "test", &id_at("esc", T0), T0)
            .await
            .expect("set endpoint state");
        assert!(changed, "{endpoint_id} was already {state}");
    }

    /// Ingests an event of `event_type` created at `at` (fan-out by the real
    /// event-type filter); returns the event and the ids of its new deliveries.
    pub async fn event(&self, app_id: &AppId, event_type: &str, at: Millis) -> (Ingested, Vec<DeliveryId>) {
        self.ingest(&new_event(app_id, event_type, None, at)).await.expect("ingest event")
    }

    /// Ingests `ev`; returns the result and the delivery ids this call generated.
    pub async fn ingest(&self, ev: &NewEvent) -> fenix::store::Result<(Ingested, Vec<DeliveryId>)> {
        ingest_on(&self.store, ev).await
    }

    /// Drives the deliveries `ids` to `status` through the worker's own cycle:
    /// claims everything due at `now`, records an outcome for each of `ids`
    /// (with one failed attempt and `attempt_count` as given, or a skip without
    /// an attempt), and gives every other claimed delivery back.
    pub async fn settle(&self, ids: &[DeliveryId], status: &'static str, attempt_count: i64, now: Millis) {
        let claimed = self.store.claim_due("fixture", now, now + 60_000, 100_000).await.expect("claim");
        let (mine, others): (Vec<ClaimedDelivery>, Vec<ClaimedDelivery>) =
            claimed.into_iter().partition(|c| ids.contains(&c.id));
        assert_eq!(mine.len(), ids.len(), "every delivery to settle is due at {now}");
        let outcomes: Vec<Outcome> = mine
            .iter()
            .map(|c| {
                let attempt = (status != "skipped").then(|| attempt_for(c, attempt_count, now));
                outcome(c, status, attempt_count, attempt)
            })
            .collect();
        let lost = self.store.record_outcomes(&outcomes, now).await.expect("record outcomes");
        assert_eq!(lost, 0);
        let leases: Vec<(DeliveryId, i64)> = others.iter().map(|c| (c.id.clone(), c.lease_token)).collect();
        self.store.release_leases(&leases, now).await.expect("release");
    }
}

/// Ingests `ev` on `store` as the ingestion queue does (a batch of one on a
/// held writer); returns the result and the ids of the deliveries it made.
pub async fn ingest_on(store: &Store, ev: &NewEvent) -> fenix::store::Result<(Ingested, Vec<DeliveryId>)> {
    let mut writer = store.hold_writer().await?;
    let ingested = store
        .ingest_batch(&mut writer, std::slice::from_ref(ev), fenix::store::queue::Whole::EachOnItsOwn, None)
        .await?
        .0
        .remove(0);
    drop(writer);
    let made = if ingested.created {
        let f = DeliveryFilter { event_id: Some(ev.id.clone()), limit: 100_000, ..Default::default() };
        store.list_deliveries(&ev.app_id, &f).await?.into_iter().map(|d| d.id).collect()
    } else {
        Vec::new()
    };
    Ok((ingested, made))
}

/// A new event as ingestion builds it.
pub fn new_event(app_id: &AppId, event_type: &str, key: Option<&str>, at: Millis) -> NewEvent {
    let id = EventId::new_at(at);
    let envelope = format!(r#"{{"id":"{id}","type":"{event_type}","created_at":"{at}","data":{{}}}}"#).into_bytes();
    NewEvent {
        payload_sha256: format!("sha256-of-{id}"),
        id,
        app_id: app_id.clone(),
        event_type: event_type.into(),
        idempotency_key: key.map(Into::into),
        envelope,
        created_at: at,
        max_fanout: usize::MAX,
        only_endpoint: None,
        ordering_key: None,
        channels: Vec::new(),
        tags: Vec::new(),
        deliver_at: None,
        trace_context: None,
    }
}

/// The record of one failed HTTP attempt on a claimed delivery.
pub fn attempt_for(c: &ClaimedDelivery, attempt_number: i64, at: Millis) -> AttemptRecord {
    AttemptRecord {
        id: AttemptId::new_at(at),
        delivery_id: c.id.clone(),
        endpoint_id: c.endpoint_id.clone(),
        attempt_number,
        started_at: at,
        duration_ms: 12,
        response_status: Some(500),
        response_excerpt: Some("boom".into()),
        error: Some("http_status".into()),
        error_detail: None,
        signed_with: "[1]".into(),
    }
}

/// The outcome the worker would write for `c`.
pub fn outcome(
    c: &ClaimedDelivery,
    status: &'static str,
    attempt_count: i64,
    attempt: Option<AttemptRecord>,
) -> Outcome {
    let status = status.parse().expect("a delivery status");
    Outcome { attempt_count, ..c.outcome(status, attempt, None) }
}

/// A bound value for [`Raw`] queries.
#[derive(Debug, Clone)]
pub enum Arg {
    Text(String),
    Int(i64),
}

impl From<&str> for Arg {
    fn from(s: &str) -> Arg {
        Arg::Text(s.into())
    }
}

impl From<&String> for Arg {
    fn from(s: &String) -> Arg {
        Arg::Text(s.clone())
    }
}

macro_rules! id_args {
    ($($t:ty),*) => {$(
        impl From<&$t> for Arg {
            fn from(id: &$t) -> Arg {
                Arg::Text(id.to_string())
            }
        }
    )*};
}
id_args!(AppId, EndpointId, EventId, DeliveryId);

impl From<i64> for Arg {
    fn from(n: i64) -> Arg {
        Arg::Int(n)
    }
}

/// A plain pool on the test database, beside the store.
pub enum Raw {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

macro_rules! bind_all {
    ($q:expr, $args:expr) => {{
        let mut q = $q;
        for a in $args {
            q = match a {
                Arg::Text(s) => q.bind(s.clone()),
                Arg::Int(n) => q.bind(*n),
            };
        }
        q
    }};
}

impl Raw {
    pub async fn connect(db: &TestDb) -> Raw {
        match db.backend {
            Backend::Sqlite => Raw::Sqlite(SqlitePool::connect(&db.url).await.expect("raw sqlite pool")),
            Backend::Postgres => Raw::Postgres(PgPool::connect(&db.url).await.expect("raw postgres pool")),
        }
    }

    /// Runs a statement; returns the rows it touched.
    pub async fn exec(&self, sql: &str, args: &[Arg]) -> u64 {
        let r = match self {
            Raw::Sqlite(p) => bind_all!(sqlx::query(sql), args).execute(p).await.map(|r| r.rows_affected()),
            Raw::Postgres(p) => bind_all!(sqlx::query(sql), args).execute(p).await.map(|r| r.rows_affected()),
        };
        r.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Reads one integer (NULL as `None`).
    pub async fn int(&self, sql: &str, args: &[Arg]) -> Option<i64> {
        let r = match self {
            Raw::Sqlite(p) => bind_all!(sqlx::query_scalar::<_, Option<i64>>(sql), args).fetch_one(p).await,
            Raw::Postgres(p) => bind_all!(sqlx::query_scalar::<_, Option<i64>>(sql), args).fetch_one(p).await,
        };
        r.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Reads one text value (NULL or no row as `None`).
    pub async fn text(&self, sql: &str, args: &[Arg]) -> Option<String> {
        let r = match self {
            Raw::Sqlite(p) => bind_all!(sqlx::query_scalar::<_, Option<String>>(sql), args).fetch_optional(p).await,
            Raw::Postgres(p) => bind_all!(sqlx::query_scalar::<_, Option<String>>(sql), args).fetch_optional(p).await,
        };
        r.unwrap_or_else(|e| panic!("{sql}: {e}")).flatten()
    }

    /// Counts the rows of `table`.
    pub async fn count(&self, table: &str) -> i64 {
        self.int(&format!("SELECT COUNT(*) FROM {table}"), &[]).await.unwrap_or(0)
    }

    /// The query plan of `sql` as text lines: `EXPLAIN QUERY PLAN` details on
    /// SQLite; on PostgreSQL `EXPLAIN` after `ANALYZE`, with sequential scans
    /// discouraged on that one connection so the plan shows whether an index
    /// *can* serve the query (a small table would otherwise be scanned).
    pub async fn plan(&self, sql: &str, args: &[Arg]) -> Vec<String> {
        match self {
            Raw::Sqlite(p) => {
                let q = format!("EXPLAIN QUERY PLAN {sql}");
                let rows: Vec<(i64, i64, i64, String)> =
                    bind_all!(sqlx::query_as(&q), args).fetch_all(p).await.unwrap_or_else(|e| panic!("{q}: {e}"));
                rows.into_iter().map(|r| r.3).collect()
            }
            Raw::Postgres(p) => {
                let mut conn = p.acquire().await.expect("connection");
                sqlx::query("ANALYZE").execute(&mut *conn).await.expect("analyze");
                sqlx::query("SET enable_seqscan = off").execute(&mut *conn).await.expect("set");
                let q = format!("EXPLAIN {sql}");
                let lines: Vec<String> = bind_all!(sqlx::query_scalar(&q), args)
                    .fetch_all(&mut *conn)
                    .await
                    .unwrap_or_else(|e| panic!("{q}: {e}"));
                sqlx::query("RESET enable_seqscan").execute(&mut *conn).await.expect("reset");
                lines
            }
        }
    }
}

/// An active endpoint row of `app_id` subscribed to `event_types` (empty = all), not yet stored.
pub fn endpoint_row(app_id: &AppId, event_types: &[&str]) -> EndpointRow {
    let id = EndpointId::new_at(T0);
    let types: Vec<String> = event_types.iter().map(|t| t.to_string()).collect();
    EndpointRow {
        url: format!("https://hooks.example.com/{id}"),
        id,
        app_id: app_id.clone(),
        description: String::new(),
        state: fenix::lifecycle::EndpointState::Active,
        state_reason: None,
        state_changed_at: None,
        created_at: T0,
        updated_at: T0,
        spec: fenix::endpoint_spec::EndpointSpec {
            event_types: fenix::event_types::EventTypeFilter::from_json(&serde_json::to_string(&types).unwrap())
                .unwrap(),
            ..Default::default()
        },
    }
}
