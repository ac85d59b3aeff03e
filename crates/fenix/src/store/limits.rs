//! Limits shared by every instance on one PostgreSQL: concurrency slots
//! leased in blocks, and rate-limit send times taken in runs (migration 0013).
//!
//! Both are asked for by the worker's gate only when its own holding runs
//! short (never per delivery while it holds enough), so an endpoint without a
//! rate limit costs one grant per busy period, not a round trip per request.
//! SQLite is one instance: its gate keeps every limit in memory and never
//! calls these (they answer "nothing granted" there).

use crate::store::Result;
use sqlx::PgPool;

use super::{Backend, Store};
use crate::time::Millis;

/// Which limit a block of concurrency slots belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SlotKind {
    /// `FENIX_ENDPOINT_CONCURRENCY`, keyed by endpoint id.
    Endpoint,
    /// `FENIX_HOST_CONCURRENCY`, keyed by destination host.
    Host,
}

impl SlotKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SlotKind::Endpoint => "endpoint",
            SlotKind::Host => "host",
        }
    }
}

/// A request for more slots of one limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotAsk {
    pub kind: SlotKind,
    pub key: String,
    /// Slots wanted on top of `mine`.
    pub want: i64,
    /// The limit over all instances.
    pub limit: i64,
    /// Slots this instance holds now.
    pub mine: i64,
}

/// A block of slots this instance holds, for renewal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotHolding {
    pub kind: SlotKind,
    pub key: String,
    pub slots: i64,
}

/// A run of send times of a rate-limited endpoint, or when the next one frees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendRun {
    pub endpoint_id: String,
    /// Microseconds from the database's "now" to the first send time of the
    /// run (0 or more), or, when nothing was granted, to the endpoint's next
    /// free send time.
    pub starts_in_us: i64,
    /// Whether the run was granted (false: the endpoint's times are taken
    /// too far ahead by other instances).
    pub granted: bool,
}

/// Rows this long past their use are dropped by the renewals.
const STALE_MS: i64 = 3_600_000;

/// Grants slots up to each limit: the others' live leases plus ours never
/// exceed it. Advisory locks per (kind, key), taken in key order, make
/// concurrent grants of one limit take turns.
const GRANT: &str = "\
WITH ask AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])
        AS a(kind, key, want, cap, mine)
), sized AS (
    SELECT a.kind, a.key, a.mine + GREATEST(0, LEAST(a.want, a.cap - a.mine - (
        SELECT COALESCE(SUM(s.slots), 0)::bigint FROM limit_slots s
        WHERE s.kind = a.kind AND s.key = a.key AND s.owner <> $1 AND s.lease_until > $7
    ))) AS slots
    FROM ask a
)
INSERT INTO limit_slots (kind, key, owner, slots, lease_until)
SELECT kind, key, $1, slots, $8 FROM sized WHERE slots > 0
ON CONFLICT (kind, key, owner) DO UPDATE SET slots = EXCLUDED.slots, lease_until = EXCLUDED.lease_until
RETURNING kind, key, slots";

/// Takes a run of send times per endpoint where the next free one is within
/// the horizon ($3, microseconds): `next_at_us` moves past the run. `now()`
/// is the statement's start on the database's clock, the same for every row.
const TAKE_SEND_TIMES: &str = "\
INSERT INTO endpoint_send_slots AS s (endpoint_id, next_at_us)
SELECT a.id, (extract(epoch FROM now()) * 1000000)::bigint + a.span
FROM unnest($1::text[], $2::bigint[]) AS a(id, span)
ON CONFLICT (endpoint_id) DO UPDATE
    SET next_at_us = GREATEST(s.next_at_us, (extract(epoch FROM now()) * 1000000)::bigint)
        + (EXCLUDED.next_at_us - (extract(epoch FROM now()) * 1000000)::bigint)
    WHERE s.next_at_us <= (extract(epoch FROM now()) * 1000000)::bigint + $3
RETURNING s.endpoint_id, s.next_at_us - (extract(epoch FROM now()) * 1000000)::bigint";

impl Store {
    /// Grants more concurrency slots where the limits allow, each block leased
    /// to `owner` until `lease_until`. Answers, per ask, how many slots
    /// `owner` holds now (at least `mine`). Nothing on SQLite.
    pub async fn lease_slots(
        &self,
        owner: &str,
        asks: &[SlotAsk],
        now: Millis,
        lease_until: Millis,
    ) -> Result<Vec<i64>> {
        let Backend::Postgres { pool, .. } = &self.backend else {
            return Ok(asks.iter().map(|a| a.mine).collect());
        };
        if asks.is_empty() {
            return Ok(Vec::new());
        }
        grant(pool, owner, asks, now, lease_until).await
    }

    /// Renews the blocks `owner` holds (`held`, all of them) until
    /// `lease_until` and drops its rows of every other limit (slots given
    /// back). Nothing on SQLite.
    pub async fn renew_slots(&self, owner: &str, held: &[SlotHolding], lease_until: Millis) -> Result<()> {
        let Backend::Postgres { pool, .. } = &self.backend else { return Ok(()) };
        let kinds: Vec<&str> = held.iter().map(|h| h.kind.as_str()).collect();
        let keys: Vec<&str> = held.iter().map(|h| h.key.as_str()).collect();
        let slots: Vec<i64> = held.iter().map(|h| h.slots).collect();
        let mut tx = pool.begin().await?;
        // Rows only shrink or go here, so no lock is needed: another instance
        // counting meanwhile sees the old (larger) holding or the new one.
        sqlx::query(
            "DELETE FROM limit_slots WHERE owner = $1 AND (kind, key) NOT IN \
             (SELECT * FROM unnest($2::text[], $3::text[]))",
        )
        .bind(owner)
        .bind(&kinds)
        .bind(&keys)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE limit_slots s SET slots = h.slots, lease_until = $5 \
             FROM unnest($2::text[], $3::text[], $4::bigint[]) AS h(kind, key, slots) \
             WHERE s.owner = $1 AND s.kind = h.kind AND s.key = h.key",
        )
        .bind(owner)
        .bind(&kinds)
        .bind(&keys)
        .bind(&slots)
        .bind(lease_until)
        .execute(&mut *tx)
        .await?;
        // Blocks of instances gone for good (their leases long over) are
        // dropped, and the send times of endpoints not sent to for an hour
        // (deleted, or their limit removed): no row means the same.
        sqlx::query("DELETE FROM limit_slots WHERE lease_until < $1")
            .bind(lease_until - STALE_MS)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "DELETE FROM endpoint_send_slots WHERE next_at_us < (extract(epoch FROM now()) * 1000000)::bigint - $1",
        )
        .bind(STALE_MS * 1000)
        .execute(&mut *tx)
        .await?;
        Ok(tx.commit().await?)
    }

    /// Gives back every slot `owner` holds (the worker stopped).
    pub async fn release_slots(&self, owner: &str) -> Result<()> {
        let Backend::Postgres { pool, .. } = &self.backend else { return Ok(()) };
        sqlx::query("DELETE FROM limit_slots WHERE owner = $1").bind(owner).execute(pool).await?;
        Ok(())
    }

    /// Takes, for each `(endpoint id, span in µs)`, a run of send times that
    /// long, if the endpoint's next free time is at most `horizon_us` away;
    /// otherwise tells when it is. Nothing is granted on SQLite.
    pub async fn take_send_times(&self, asks: &[(String, i64)], horizon_us: i64) -> Result<Vec<SendRun>> {
        let Backend::Postgres { pool, .. } = &self.backend else { return Ok(Vec::new()) };
        if asks.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<&str> = asks.iter().map(|(id, _)| id.as_str()).collect();
        let spans: Vec<i64> = asks.iter().map(|(_, span)| *span).collect();
        let taken: Vec<(String, i64)> =
            sqlx::query_as(TAKE_SEND_TIMES).bind(&ids).bind(&spans).bind(horizon_us).fetch_all(pool).await?;
        let mut runs: Vec<SendRun> = taken
            .into_iter()
            .map(|(endpoint_id, end_in_us)| {
                let span = asks.iter().find(|(id, _)| *id == endpoint_id).map_or(0, |(_, s)| *s);
                SendRun { endpoint_id, starts_in_us: (end_in_us - span).max(0), granted: true }
            })
            .collect();
        let refused: Vec<&str> = ids.iter().copied().filter(|id| !runs.iter().any(|r| r.endpoint_id == *id)).collect();
        if !refused.is_empty() {
            let next: Vec<(String, i64)> = sqlx::query_as(
                "SELECT endpoint_id, next_at_us - (extract(epoch FROM now()) * 1000000)::bigint \
                 FROM endpoint_send_slots WHERE endpoint_id = ANY($1)",
            )
            .bind(&refused)
            .fetch_all(pool)
            .await?;
            runs.extend(next.into_iter().map(|(endpoint_id, in_us)| SendRun {
                endpoint_id,
                starts_in_us: in_us.max(0),
                granted: false,
            }));
        }
        Ok(runs)
    }
}

async fn grant(pool: &PgPool, owner: &str, asks: &[SlotAsk], now: Millis, lease_until: Millis) -> Result<Vec<i64>> {
    let kinds: Vec<&str> = asks.iter().map(|a| a.kind.as_str()).collect();
    let keys: Vec<&str> = asks.iter().map(|a| a.key.as_str()).collect();
    let wants: Vec<i64> = asks.iter().map(|a| a.want).collect();
    let caps: Vec<i64> = asks.iter().map(|a| a.limit).collect();
    let mine: Vec<i64> = asks.iter().map(|a| a.mine).collect();
    let mut locks: Vec<String> = asks.iter().map(|a| format!("{}:{}", a.kind.as_str(), a.key)).collect();
    locks.sort();
    locks.dedup();
    let mut tx = pool.begin().await?;
    // In key order, so two grants over the same limits cannot deadlock.
    sqlx::query("SELECT count(pg_advisory_xact_lock(hashtextextended(k, 17))) FROM unnest($1::text[]) AS k")
        .bind(&locks)
        .execute(&mut *tx)
        .await?;
    let rows: Vec<(String, String, i64)> = sqlx::query_as(GRANT)
        .bind(owner)
        .bind(&kinds)
        .bind(&keys)
        .bind(&wants)
        .bind(&caps)
        .bind(&mine)
        .bind(now)
        .bind(lease_until)
        .fetch_all(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(asks
        .iter()
        .map(|a| {
            rows.iter()
                .find(|(kind, key, _)| kind == a.kind.as_str() && *key == a.key)
                .map_or(a.mine, |(_, _, slots)| *slots)
        })
        .collect())
}
