//! The delivery queue: what the hot path writes and reads, each backend read
//! straight through in a file of its own.
//!
//! | operation | [`Store`] method | SQLite | PostgreSQL |
//! |---|---|---|---|
//! | ingest a batch of events with their deliveries | [`Store::ingest_batch`] | [`sqlite::ingest_batch`] | [`postgres::ingest_batch`] |
//! | lease due deliveries | [`Store::claim_due`] | [`sqlite::claim_due`] | [`postgres::claim_due`] |
//! | envelopes, endpoints, secrets of a claim | [`Store::batch_context`] | [`sqlite::batch_context`] | [`postgres::batch_context`] |
//! | write outcomes where the lease holds | [`Store::record_outcomes_applied`] | [`sqlite::record_outcomes`] | [`postgres::record_outcomes`] |
//! | renew or give back leases | [`Store::extend_leases`], [`Store::release_leases`] | [`sqlite::update_leases`] | [`postgres::update_leases`] |
//! | the state and URL of endpoints in hand | [`Store::endpoints_now`] | [`sqlite::endpoints_now`] | [`postgres::endpoints_now`] |
//!
//! Each method here is one `match` on the backend and nothing else: on the
//! store's pools, or (an ingest batch) on the connection of the
//! [`HeldWriter`], the same `Conn` a batch's [`plan`] reads on; what both
//! backends share (the fan-out and idempotency plan of an ingest batch, the
//! endpoints' failure runs of an outcome batch) is computed once, here or in
//! [`plan`], and handed to the backend as data.
//!
//! A claim is its own short statement that leases due rows: `lease_until`,
//! `lease_owner` and a fresh `lease_token`, no indexed column (the row stays
//! `pending`; the API shows a leased row as `in_flight`). No transaction is
//! ever held open across an HTTP request. Results are written later, in
//! batches, only where the lease token still matches.

use crate::store::Result;
use std::collections::{HashMap, HashSet};

use crate::ids::{AppId, AttemptId, DeliveryId, EndpointId, EventId};

use super::{
    endpoints::SecretRow,
    events::{Ingested, NewEvent},
    Backend, Store,
};
use crate::{
    error_class::ErrorClass,
    lifecycle::{DeliveryStatus, EndpointState},
    time::Millis,
};

pub(super) mod lane;
mod plan;
mod target;
use crate::store::sql::Db;
use plan::Conn;
pub use plan::Whole;
pub use target::EndpointTarget;
pub(super) use target::TARGET_COLUMNS;

pub use lane::PARKED;

/// Whether a lane (endpoint $1, ordering key $2) has a delivery that new
/// ones must wait behind: a `pending` one, or a dead letter of an endpoint
/// that blocks on them.
pub(super) const LANE_BUSY: &str = "SELECT COUNT(*) FROM (SELECT 1 FROM deliveries o WHERE o.endpoint_id = $1 \
     AND o.ordering_key = $2 AND o.lane_seq IS NOT NULL AND o.status IN ('pending', 'failed') \
     AND (o.status = 'pending' OR (SELECT e.on_dead_letter FROM endpoints e WHERE e.id = $1) = 'block') \
     LIMIT 1) AS busy";

/// After the delivery $1 of an ordered lane became final: the lane's first
/// `pending` delivery, if parked ($3), is due at $2, or at its scheduled
/// event's `deliver_at` if that is later. The lane is read as two
/// values first, so the lane index gives its rows in order (no sort: the
/// worker's PostgreSQL sessions refuse sorts, and a plan costed that high
/// would also be JIT-compiled, ~0.3 s a statement).
pub(super) const PROMOTE_NEXT: &str = "UPDATE deliveries \
     SET next_attempt_at = CASE WHEN deliver_at > $2 THEN deliver_at ELSE $2 END WHERE id = \
     (SELECT n.id FROM deliveries n \
      WHERE n.endpoint_id = (SELECT h.endpoint_id FROM deliveries h WHERE h.id = $1) \
      AND n.ordering_key = (SELECT h.ordering_key FROM deliveries h WHERE h.id = $1) \
      AND n.lane_seq IS NOT NULL AND n.status IN ('pending', 'failed') AND n.status = 'pending' \
      ORDER BY n.lane_seq LIMIT 1) AND next_attempt_at = $3";
/// Up to $2 apps with pending deliveries, in id order after $1: a loose
/// scan of `deliveries_due_by_app`, one index seek per app whatever its
/// backlog. The same text on both backends.
pub(super) const APPS_WITH_PENDING: &str = "WITH RECURSIVE apps(id, n) AS ( \
     SELECT (SELECT MIN(d.app_id) FROM deliveries d WHERE d.status = 'pending' AND d.app_id > $1), 1 \
     UNION ALL \
     SELECT (SELECT MIN(d.app_id) FROM deliveries d WHERE d.status = 'pending' AND d.app_id > apps.id), apps.n + 1 \
     FROM apps WHERE apps.id IS NOT NULL AND apps.n < $2) \
     SELECT id FROM apps WHERE id IS NOT NULL";

/// A backend's claim statement narrowed to one app (an extra parameter
/// after the claim's own four): the same rows, lane rule and lease, read
/// from `deliveries_due_by_app`.
fn claim_of_app(claim: &str) -> String {
    let due = "WHERE d.status = 'pending' AND d.next_attempt_at <= $3";
    assert!(claim.contains(due), "the claim statement selects due rows as expected");
    claim.replacen(due, "WHERE d.app_id = $5 AND d.status = 'pending' AND d.next_attempt_at <= $3", 1)
}

pub mod postgres;
pub mod sqlite;

/// An attempt as stored; `id` is the `X-Fenix-Delivery-Id` that was sent.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AttemptRecord {
    pub id: AttemptId,
    pub delivery_id: DeliveryId,
    pub endpoint_id: EndpointId,
    pub attempt_number: i64,
    pub started_at: Millis,
    pub duration_ms: i64,
    pub response_status: Option<i64>,
    pub response_excerpt: Option<String>,
    pub error: Option<String>,
    pub error_detail: Option<String>,
    /// JSON array of the secret versions that signed the request.
    pub signed_with: String,
}

impl AttemptRecord {
    /// Whether this attempt tells anything of the receiver's health: a
    /// success, or a failure of a class that concerns the receiver (not the
    /// egress proxy's). A class this version does not know counts.
    pub fn concerns_the_receiver(&self) -> bool {
        self.error.as_deref().and_then(ErrorClass::parse).is_none_or(ErrorClass::concerns_the_receiver)
    }
}

/// A delivery this worker holds a lease on.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedDelivery {
    pub id: DeliveryId,
    pub app_id: AppId,
    pub event_id: EventId,
    pub endpoint_id: EndpointId,
    pub attempt_count: i64,
    pub budget_start: i64,
    pub lease_token: i64,
    /// Its place in its lane on an ordered endpoint; `None` when unordered.
    pub lane_seq: Option<i64>,
}

impl ClaimedDelivery {
    /// The outcome of working on this delivery: its identity and lease token
    /// as claimed, `status` and the retry time, and the attempt made, if any
    /// (which counts one more attempt and is the last one).
    pub fn outcome(
        &self,
        status: DeliveryStatus,
        attempt: Option<AttemptRecord>,
        next_attempt_at: Option<Millis>,
    ) -> Outcome {
        Outcome {
            delivery_id: self.id.clone(),
            endpoint_id: self.endpoint_id.clone(),
            app_id: self.app_id.clone(),
            event_id: self.event_id.clone(),
            lease_token: self.lease_token,
            attempt_count: self.attempt_count + i64::from(attempt.is_some()),
            last_attempt_at: attempt.as_ref().map(|a| a.started_at),
            attempt,
            status,
            next_attempt_at,
            in_lane: self.lane_seq.is_some(),
        }
    }
}

/// What the worker needs to send a batch: envelopes, endpoints and live secrets.
#[derive(Debug, Default)]
pub struct BatchContext {
    /// event id → (type, envelope bytes (`None` when retention purged them), created at).
    pub events: HashMap<EventId, (String, Option<Vec<u8>>, Millis)>,
    /// endpoint id → what sending needs of it.
    pub endpoints: HashMap<EndpointId, EndpointTarget>,
    /// endpoint id → live secrets, newest first.
    pub secrets: HashMap<EndpointId, Vec<SecretRow>>,
    /// event id → the W3C `traceparent` its ingestion stored (`traces`);
    /// only events ingested while tracing was on have one.
    pub trace_contexts: HashMap<EventId, String>,
}

/// A lease an ingest batch may put on its fresh deliveries for this
/// instance's worker, which then gets them in hand without claiming them
/// (`wake.rs`, [`crate::wake::Fresh`]): the claim's own columns, set at insert.
#[derive(Debug, Clone)]
pub struct FreshLease {
    pub owner: String,
    pub lease_until: Millis,
    /// How many deliveries of the batch may be leased at most.
    pub max: usize,
}

/// The token a delivery leased at its insert carries: that of a first claim.
pub const FRESH_LEASE_TOKEN: i64 = 1;

impl ClaimedDelivery {
    /// A delivery leased as it was inserted ([`FreshLease`]): no attempt yet,
    /// never of an ordered lane.
    pub(super) fn fresh(d: &plan::NewDelivery<'_>) -> ClaimedDelivery {
        ClaimedDelivery {
            id: d.id.clone(),
            app_id: d.app_id.clone(),
            event_id: d.event_id.clone(),
            endpoint_id: d.endpoint_id.clone(),
            attempt_count: 0,
            budget_start: 0,
            lease_token: FRESH_LEASE_TOKEN,
            lane_seq: None,
        }
    }
}

/// An endpoint's state and URL now, for the worker's watch over the jobs it
/// holds (`worker::watch`).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EndpointNow {
    pub id: EndpointId,
    pub url: String,
    /// The shown state, as [`TARGET_COLUMNS`] reads it.
    pub state: EndpointState,
}

/// The columns of [`EndpointNow`].
const NOW_COLUMNS: &str = "id, url, \
     CASE WHEN state = 'active' AND unverified THEN 'pending_verification' ELSE state END AS state";

/// The result of working on one claimed delivery.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub delivery_id: DeliveryId,
    pub endpoint_id: EndpointId,
    pub app_id: AppId,
    pub event_id: EventId,
    pub lease_token: i64,
    /// The request made, if one was made (a skip makes none).
    pub attempt: Option<AttemptRecord>,
    /// `pending` (a retry at `next_attempt_at`), `succeeded`, `failed` or `skipped`.
    pub status: DeliveryStatus,
    pub attempt_count: i64,
    pub next_attempt_at: Option<Millis>,
    pub last_attempt_at: Option<Millis>,
    /// A delivery of an ordered endpoint: once it is final, the next one of
    /// its lane may go (the worker is woken for it).
    pub in_lane: bool,
}

/// An event's envelope as a claim's context loads it.
#[derive(sqlx::FromRow)]
pub(super) struct EventPart {
    id: EventId,
    event_type: String,
    payload: Option<Vec<u8>>,
    created_at: Millis,
    trace_context: Option<String>,
}

/// The rows a claim's context is made of, as one backend read them.
type ContextRows = (Vec<EventPart>, Vec<EndpointTarget>, Vec<SecretRow>);

/// A write connection taken from the pool and kept across several
/// transactions: the ingestion queue holds one while events keep coming,
/// instead of a pool round trip per batch (sqlx returns a connection to its
/// pool through a spawned task). On SQLite it is *the* writer: hold it briefly.
/// Its [`Conn`] is the queue's backend, matched once per operation.
pub type HeldWriter = crate::store::sql::Held;

/// The endpoints of an outcome batch that had a success (clear their
/// `failing_since`) and those that had only failures (start it).
#[derive(Debug, Default)]
pub(super) struct Health<'a> {
    healthy: Vec<&'a str>,
    failing: Vec<&'a str>,
}

impl<'a> Health<'a> {
    /// Any success of an endpoint in the batch clears its failure run; failures alone start it.
    fn of(outcomes: &'a [Outcome]) -> Health<'a> {
        let mut by_endpoint: HashMap<&str, bool> = HashMap::new();
        for o in outcomes.iter().filter(|o| o.attempt.as_ref().is_some_and(AttemptRecord::concerns_the_receiver)) {
            *by_endpoint.entry(o.endpoint_id.as_str()).or_default() |= o.status == DeliveryStatus::Succeeded;
        }
        let mut health = Health::default();
        for (id, ok) in by_endpoint {
            if ok {
                health.healthy.push(id);
            } else {
                health.failing.push(id);
            }
        }
        health
    }
}

impl Store {
    /// Takes a write connection out of the pool until the [`HeldWriter`] is dropped.
    pub async fn hold_writer(&self) -> Result<HeldWriter> {
        self.writes().acquire().await
    }

    /// Ingests `events`, each with one `pending` delivery per endpoint of its
    /// app whose filter wants its type (paused and disabled ones too: those
    /// are skipped when due, and a resume can replay them), all or nothing: one
    /// transaction on SQLite, one statement on PostgreSQL. An idempotency key
    /// already stored (or repeated within the batch, or stored by another
    /// instance while this batch was written) yields the original event with
    /// `created = false`; an event matching more endpoints than its
    /// `max_fanout` is refused whole. Any error fails the whole batch (nothing
    /// is stored); the caller may retry its events one by one. `writer` is a
    /// write connection the caller holds, possibly across batches. With
    /// [`Whole::AllOrNothing`] an event refused for its fan-out stores nothing
    /// of the batch (its answer says which).
    ///
    /// With `fresh`, up to `fresh.max` of the unordered deliveries are
    /// inserted leased to `fresh.owner` and answered as claimed (those
    /// written): the caller hands them to that worker after the commit, or
    /// gives the leases back.
    pub async fn ingest_batch(
        &self,
        writer: &mut HeldWriter,
        events: &[NewEvent],
        whole: Whole,
        fresh: Option<&FreshLease>,
    ) -> Result<(Vec<Ingested>, Vec<ClaimedDelivery>)> {
        match writer.conn() {
            Conn::Sqlite(conn) => sqlite::ingest_batch(conn, events, whole, fresh).await,
            Conn::Postgres(conn) => postgres::ingest_batch(conn, events, whole, fresh).await,
        }
    }

    /// Leases up to `limit` due deliveries (fresh, retrying, or whose lease expired) until `lease_until`.
    pub async fn claim_due(
        &self,
        owner: &str,
        now: Millis,
        lease_until: Millis,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>> {
        match &self.backend {
            Backend::Sqlite { write, .. } => sqlite::claim_due(write, owner, now, lease_until, limit).await,
            Backend::Postgres { worker, .. } => postgres::claim_due(worker, owner, now, lease_until, limit).await,
        }
    }

    /// Leases up to `limit` due deliveries of one app, as [`Store::claim_due`]
    /// does for all: the fair claim's part for an app (see `worker::hands`).
    pub async fn claim_due_of_app(
        &self,
        owner: &str,
        now: Millis,
        lease_until: Millis,
        limit: i64,
        app_id: &crate::ids::AppId,
    ) -> Result<Vec<ClaimedDelivery>> {
        match &self.backend {
            Backend::Sqlite { write, .. } => {
                sqlite::claim_due_of_app(write, owner, now, lease_until, limit, app_id).await
            }
            Backend::Postgres { worker, .. } => {
                postgres::claim_due_of_app(worker, owner, now, lease_until, limit, app_id).await
            }
        }
    }

    /// The state and URL of those of `ids` that still exist, one query.
    pub async fn endpoints_now(&self, ids: &[String]) -> Result<Vec<EndpointNow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        match &self.backend {
            Backend::Sqlite { read, .. } => sqlite::endpoints_now(read, ids).await,
            Backend::Postgres { worker, .. } => postgres::endpoints_now(worker, ids).await,
        }
    }

    /// Up to `max` apps with pending deliveries (due or not), in id order
    /// from just after `after`, going round to the first ones: where a fair
    /// claim looks next. One index seek per app.
    pub async fn apps_with_pending(&self, after: &str, max: usize) -> Result<Vec<AppId>> {
        // The worker's sessions on PostgreSQL, a reader on SQLite.
        let db = match &self.backend {
            Backend::Sqlite { read, .. } => Db::Sqlite(read),
            Backend::Postgres { worker, .. } => Db::Postgres(worker),
        };
        let scan = |after: String, max: usize| async move {
            db.scalar_all(APPS_WITH_PENDING, &[after.into(), (max as i64).into()]).await
        };
        let mut apps: Vec<AppId> = scan(after.to_string(), max).await?;
        if apps.len() < max && !after.is_empty() {
            let first: Vec<AppId> = scan(String::new(), max - apps.len()).await?;
            apps.extend(first.into_iter().filter(|a| a.as_str() <= after));
        }
        Ok(apps)
    }

    /// Of deliveries claimed (and committed) by one claim, gives back those of
    /// ordered endpoints that are not the head of their lane after all and
    /// answers the rest: on PostgreSQL, [`Store::claim_due`] does this itself
    /// (see [`postgres::CLAIM_POSTGRES`] for when a claim can take a row
    /// behind another); on SQLite, where claims run one at a time, it answers
    /// `claimed` as it is.
    pub async fn keep_lane_heads(&self, claimed: Vec<ClaimedDelivery>, now: Millis) -> Result<Vec<ClaimedDelivery>> {
        match &self.backend {
            Backend::Sqlite { .. } => Ok(claimed),
            Backend::Postgres { worker, .. } => postgres::keep_lane_heads(worker, claimed, now).await,
        }
    }

    /// Loads envelopes, endpoints and live secrets for a claimed batch, one query each.
    pub async fn batch_context(&self, claimed: &[ClaimedDelivery], now: Millis) -> Result<BatchContext> {
        let mut ctx = BatchContext::default();
        if claimed.is_empty() {
            return Ok(ctx);
        }
        let mut event_ids: Vec<&str> = claimed.iter().map(|c| c.event_id.as_str()).collect();
        event_ids.sort_unstable();
        event_ids.dedup();
        let mut endpoint_ids: Vec<&str> = claimed.iter().map(|c| c.endpoint_id.as_str()).collect();
        endpoint_ids.sort_unstable();
        endpoint_ids.dedup();
        let (events, endpoints, secrets) = match &self.backend {
            Backend::Sqlite { read, .. } => sqlite::batch_context(read, &event_ids, &endpoint_ids, now).await?,
            Backend::Postgres { pool, .. } => postgres::batch_context(pool, &event_ids, &endpoint_ids, now).await?,
        };
        for e in events {
            if let Some(traceparent) = e.trace_context {
                ctx.trace_contexts.insert(e.id.clone(), traceparent);
            }
            ctx.events.insert(e.id, (e.event_type, e.payload, e.created_at));
        }
        for e in endpoints {
            ctx.endpoints.insert(e.id.clone(), e);
        }
        for s in secrets {
            ctx.secrets.entry(s.endpoint_id.clone()).or_default().push(s);
        }
        Ok(ctx)
    }

    /// Writes a batch of outcomes in one transaction. An attempt is always kept
    /// (it happened) unless its delivery was deleted meanwhile; the delivery row
    /// changes only where our lease token still holds, so a worker that lost its
    /// lease never overwrites a newer outcome. Returns how many outcomes were
    /// discarded for a lost lease.
    pub async fn record_outcomes(&self, outcomes: &[Outcome], now: Millis) -> Result<usize> {
        Ok(outcomes.len() - self.record_outcomes_applied(outcomes, now).await?.len())
    }

    /// [`Store::record_outcomes`], answering the ids of the deliveries whose row
    /// was updated (the others lost their lease): side effects such as metrics
    /// and operator events follow only those.
    pub async fn record_outcomes_applied(&self, outcomes: &[Outcome], now: Millis) -> Result<HashSet<DeliveryId>> {
        if outcomes.is_empty() {
            return Ok(HashSet::new());
        }
        let attempts: Vec<&AttemptRecord> = outcomes.iter().filter_map(|o| o.attempt.as_ref()).collect();
        let health = Health::of(outcomes);
        match &self.backend {
            Backend::Sqlite { write, .. } => sqlite::record_outcomes(write, outcomes, &attempts, &health, now).await,
            Backend::Postgres { worker, .. } => {
                postgres::record_outcomes(worker, outcomes, &attempts, &health, now).await
            }
        }
    }

    /// Pushes the lease of deliveries still being worked on.
    pub async fn extend_leases(&self, leases: &[(DeliveryId, i64)], lease_until: Millis) -> Result<()> {
        self.update_leases(LeaseChange::Extend, leases, lease_until).await
    }

    /// Gives leased deliveries back (graceful shutdown, deferral): due again at `at`, attempt not counted.
    pub async fn release_leases(&self, leases: &[(DeliveryId, i64)], at: Millis) -> Result<()> {
        self.update_leases(LeaseChange::Release, leases, at).await
    }

    async fn update_leases(&self, change: LeaseChange, leases: &[(DeliveryId, i64)], at: Millis) -> Result<()> {
        if leases.is_empty() {
            return Ok(());
        }
        match &self.backend {
            Backend::Sqlite { write, .. } => sqlite::update_leases(write, change, leases, at).await,
            Backend::Postgres { worker, .. } => postgres::update_leases(worker, change, leases, at).await,
        }
    }
}

/// What a lease update does to rows whose lease token still matches.
#[derive(Debug, Clone, Copy)]
pub enum LeaseChange {
    /// `lease_until` moves to the given time.
    Extend,
    /// The lease ends; the row is due again at the given time.
    Release,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(endpoint: &EndpointId, status: DeliveryStatus, error: Option<ErrorClass>) -> Outcome {
        let delivery_id = DeliveryId::new();
        Outcome {
            delivery_id: delivery_id.clone(),
            endpoint_id: endpoint.clone(),
            app_id: AppId::new(),
            event_id: EventId::new(),
            lease_token: 1,
            attempt: Some(AttemptRecord {
                id: AttemptId::new(),
                delivery_id,
                endpoint_id: endpoint.clone(),
                attempt_number: 1,
                started_at: 0,
                duration_ms: 1,
                response_status: None,
                response_excerpt: None,
                error: error.map(|e| e.as_str().to_owned()),
                error_detail: None,
                signed_with: "[1]".into(),
            }),
            status,
            attempt_count: 1,
            next_attempt_at: None,
            last_attempt_at: Some(0),
            in_lane: false,
        }
    }

    #[test]
    fn a_failure_of_the_egress_proxy_starts_no_failure_run_of_the_endpoint() {
        let (down, proxied, fine) = (EndpointId::new(), EndpointId::new(), EndpointId::new());
        let outcomes = [
            outcome(&down, DeliveryStatus::Pending, Some(ErrorClass::Connect)),
            outcome(&proxied, DeliveryStatus::Pending, Some(ErrorClass::Proxy)),
            outcome(&fine, DeliveryStatus::Succeeded, None),
        ];
        let health = Health::of(&outcomes);
        assert_eq!(health.failing, vec![down.as_str()]);
        assert_eq!(health.healthy, vec![fine.as_str()]);
    }
}
