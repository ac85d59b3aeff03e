//! Group commit for ingestion: many events, each with its deliveries, written
//! in ONE transaction (on PostgreSQL one statement). Every event still gets the
//! all-or-nothing guarantee (the batch commits or nothing does) and its caller
//! is answered only after the commit; the database does one commit's work for
//! the whole batch.

use std::collections::HashMap;

use sqlx::QueryBuilder;

use super::{
    events::{EventRow, Ingested, NewEvent, EVENT_BY_KEY},
    on_held, HeldWriter, Store,
};

#[derive(sqlx::FromRow)]
struct Target {
    id: String,
    event_types: String,
}

impl Store {
    /// Ingests `events` in one transaction (PostgreSQL: the endpoint and
    /// idempotency-key reads, then one statement that writes; reads in the same
    /// transaction would guard nothing more at READ COMMITTED, and a key
    /// stored meanwhile fails the write on its unique index). `matches(filter_json, event_type)`
    /// decides the fan-out. An idempotency key already stored (or repeated
    /// within the batch) yields the original event with `created = false`.
    /// Any error fails the whole batch (nothing is stored); callers may then
    /// retry events one by one. `writer` is a write connection the caller
    /// holds, possibly across batches.
    pub async fn ingest_batch(
        &self,
        writer: &mut HeldWriter,
        events: &[NewEvent],
        matches: fn(&str, &str) -> bool,
        new_delivery_id: fn() -> String,
    ) -> sqlx::Result<Vec<Ingested>> {
        on_held!(writer, |tx| {
            async {
            let mut targets: HashMap<&str, Vec<Target>> = HashMap::new();
            let mut seen: HashMap<(&str, &str), EventRow> = HashMap::new();
            let mut out = Vec::with_capacity(events.len());
            let mut rows: Vec<DeliveryRow<'_>> = Vec::new();
            let mut any = false;
            let mut new_events: Vec<(&NewEvent, i64)> = Vec::with_capacity(events.len());
            for ev in events {
                if let Some(key) = ev.idempotency_key.as_deref() {
                    if let Some(original) = seen.get(&(ev.app_id.as_str(), key)) {
                        out.push(Ingested::existing(original.clone()));
                        continue;
                    }
                    let existing: Option<EventRow> =
                        sqlx::query_as(EVENT_BY_KEY).bind(&ev.app_id).bind(key).fetch_optional(&mut *tx).await?;
                    if let Some(event) = existing {
                        out.push(Ingested::existing(event));
                        continue;
                    }
                }
                if !targets.contains_key(ev.app_id.as_str()) {
                    let t: Vec<Target> = sqlx::query_as(
                        "SELECT id, event_types FROM endpoints WHERE app_id = $1 AND state IN ('active', 'paused') ORDER BY id",
                    )
                    .bind(&ev.app_id)
                    .fetch_all(&mut *tx)
                    .await?;
                    targets.insert(ev.app_id.as_str(), t);
                }
                let chosen: Vec<String> = targets[ev.app_id.as_str()]
                    .iter()
                    .filter(|t| matches(&t.event_types, &ev.event_type))
                    .map(|t| t.id.clone())
                    .collect();
                if chosen.len() > ev.max_fanout {
                    out.push(Ingested::refused(ev, chosen.len()));
                    continue;
                }
                let count = chosen.len() as i64;
                new_events.push((ev, count));
                for ep in chosen {
                    rows.push((new_delivery_id(), ev.app_id.as_str(), ev.id.as_str(), ep, ev.created_at));
                }
                any |= count > 0;
                let row = ev.stored_row(count);
                if let Some(key) = ev.idempotency_key.as_deref() {
                    seen.insert((ev.app_id.as_str(), key), row.clone());
                }
                out.push(Ingested::created(row));
            }
            WriteBatch::write_batch(&mut *tx, &new_events, &rows, any).await?;
            Ok::<_, sqlx::Error>(out)
        }
        .await
        })
    }
}

/// A delivery row to insert: (id, app, event, endpoint, created at).
type DeliveryRow<'a> = (String, &'a str, &'a str, String, i64);

/// Writes a batch's new events and deliveries, each backend its own way;
/// `notify`: wake the workers of other instances (PostgreSQL).
trait WriteBatch {
    async fn write_batch(
        &mut self,
        events: &[(&NewEvent, i64)],
        deliveries: &[DeliveryRow<'_>],
        notify: bool,
    ) -> sqlx::Result<()>;
}

impl WriteBatch for sqlx::SqliteConnection {
    /// Multi-row inserts (8 and 7 parameters a row: well under SQLite's limit).
    async fn write_batch(
        &mut self,
        events: &[(&NewEvent, i64)],
        deliveries: &[DeliveryRow<'_>],
        _notify: bool,
    ) -> sqlx::Result<()> {
        for chunk in events.chunks(500) {
            let mut qb = QueryBuilder::new(
                "INSERT INTO events (id, app_id, event_type, idempotency_key, payload, payload_sha256, delivery_count, created_at) ",
            );
            qb.push_values(chunk, |mut b, (ev, count)| {
                b.push_bind(ev.id.as_str())
                    .push_bind(ev.app_id.as_str())
                    .push_bind(ev.event_type.as_str())
                    .push_bind(ev.idempotency_key.as_deref())
                    .push_bind(ev.envelope.as_slice())
                    .push_bind(ev.payload_sha256.as_str())
                    .push_bind(*count)
                    .push_bind(ev.created_at);
            });
            qb.build().execute(&mut *self).await?;
        }
        for chunk in deliveries.chunks(1000) {
            let mut qb = QueryBuilder::new(
                "INSERT INTO deliveries (id, app_id, event_id, endpoint_id, status, attempt_count, next_attempt_at, created_at, updated_at) ",
            );
            qb.push_values(chunk, |mut b, (id, app, evt, ep, at)| {
                b.push_bind(id.as_str())
                    .push_bind(*app)
                    .push_bind(*evt)
                    .push_bind(ep.as_str())
                    .push("'pending'")
                    .push("0")
                    .push_bind(*at)
                    .push_bind(*at)
                    .push_bind(*at);
            });
            qb.build().execute(&mut *self).await?;
        }
        Ok(())
    }
}

/// PostgreSQL: the events, their deliveries and the wake-up of other instances
/// in ONE statement (one round trip, one prepared statement whatever the batch
/// size). The deliveries' foreign key to their event is checked at the end of
/// the statement, when the events are in.
const INSERT_BATCH_POSTGRES: &str = "WITH e AS ( \
       INSERT INTO events (id, app_id, event_type, idempotency_key, payload, payload_sha256, delivery_count, created_at) \
       SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::text[], $7::int8[], $8::int8[]) \
     ), d AS ( \
       INSERT INTO deliveries (id, app_id, event_id, endpoint_id, status, attempt_count, next_attempt_at, created_at, updated_at) \
       SELECT u.id, u.app_id, u.event_id, u.endpoint_id, 'pending', 0, u.at, u.at, u.at \
       FROM UNNEST($9::text[], $10::text[], $11::text[], $12::text[], $13::int8[]) AS u(id, app_id, event_id, endpoint_id, at) \
       RETURNING 1 \
     ) \
     SELECT pg_notify($14, '') FROM (SELECT 1 FROM d LIMIT 1) AS any_delivery WHERE $15";

impl WriteBatch for sqlx::PgConnection {
    async fn write_batch(
        &mut self,
        events: &[(&NewEvent, i64)],
        deliveries: &[DeliveryRow<'_>],
        notify: bool,
    ) -> sqlx::Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        sqlx::query(INSERT_BATCH_POSTGRES)
            .bind(events.iter().map(|(e, _)| e.id.as_str()).collect::<Vec<_>>())
            .bind(events.iter().map(|(e, _)| e.app_id.as_str()).collect::<Vec<_>>())
            .bind(events.iter().map(|(e, _)| e.event_type.as_str()).collect::<Vec<_>>())
            .bind(events.iter().map(|(e, _)| e.idempotency_key.as_deref()).collect::<Vec<_>>())
            .bind(events.iter().map(|(e, _)| e.envelope.as_slice()).collect::<Vec<_>>())
            .bind(events.iter().map(|(e, _)| e.payload_sha256.as_str()).collect::<Vec<_>>())
            .bind(events.iter().map(|(_, n)| *n).collect::<Vec<_>>())
            .bind(events.iter().map(|(e, _)| e.created_at).collect::<Vec<_>>())
            .bind(deliveries.iter().map(|d| d.0.as_str()).collect::<Vec<_>>())
            .bind(deliveries.iter().map(|d| d.1).collect::<Vec<_>>())
            .bind(deliveries.iter().map(|d| d.2).collect::<Vec<_>>())
            .bind(deliveries.iter().map(|d| d.3.as_str()).collect::<Vec<_>>())
            .bind(deliveries.iter().map(|d| d.4).collect::<Vec<_>>())
            .bind(super::WAKE_CHANNEL)
            .bind(notify)
            .execute(&mut *self)
            .await?;
        Ok(())
    }
}
