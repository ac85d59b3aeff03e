//! Group commit for ingestion: many events, each with its deliveries, written
//! in ONE transaction. Every event still gets the all-or-nothing guarantee (the
//! batch commits or nothing does) and its caller is answered only after the
//! commit; the database does one commit's work for the whole batch.

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
    /// Ingests `events` in one transaction. `matches(filter_json, event_type)`
    /// decides the fan-out. An idempotency key already stored (or repeated
    /// within the batch) yields the original event with `created = false`.
    /// Any error fails the whole batch (nothing is stored); callers may then
    /// retry events one by one.
    pub async fn ingest_batch(
        &self,
        events: &[NewEvent],
        matches: fn(&str, &str) -> bool,
        new_delivery_id: fn() -> String,
    ) -> sqlx::Result<Vec<Ingested>> {
        let mut writer = self.hold_writer().await?;
        self.ingest_batch_on(&mut writer, events, matches, new_delivery_id).await
    }

    /// [`Store::ingest_batch`] on a write connection the caller holds across batches.
    pub async fn ingest_batch_on(
        &self,
        writer: &mut HeldWriter,
        events: &[NewEvent],
        matches: fn(&str, &str) -> bool,
        new_delivery_id: fn() -> String,
    ) -> sqlx::Result<Vec<Ingested>> {
        let is_pg = self.is_postgres();
        on_held!(writer, |tx| {
            async {
            let mut targets: HashMap<&str, Vec<Target>> = HashMap::new();
            let mut seen: HashMap<(&str, &str), EventRow> = HashMap::new();
            let mut out = Vec::with_capacity(events.len());
            let mut rows: Vec<(String, &str, &str, String, i64)> = Vec::new();
            let mut any = false;
            let mut new_events: Vec<(&NewEvent, i64)> = Vec::with_capacity(events.len());
            for ev in events {
                if let Some(key) = ev.idempotency_key.as_deref() {
                    if let Some(original) = seen.get(&(ev.app_id.as_str(), key)) {
                        out.push(Ingested { event: original.clone(), created: false });
                        continue;
                    }
                    let existing: Option<EventRow> =
                        sqlx::query_as(EVENT_BY_KEY).bind(&ev.app_id).bind(key).fetch_optional(&mut *tx).await?;
                    if let Some(event) = existing {
                        out.push(Ingested { event, created: false });
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
                out.push(Ingested { event: row, created: true });
            }
            // All new events in multi-row statements (8 parameters a row).
            for chunk in new_events.chunks(500) {
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
                qb.build().execute(&mut *tx).await?;
            }
            // 9 values a row (7 parameters); well under SQLite's parameter limit.
            for chunk in rows.chunks(1000) {
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
                qb.build().execute(&mut *tx).await?;
            }
            if any && is_pg {
                sqlx::query("SELECT pg_notify($1, '')").bind(super::WAKE_CHANNEL).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            Ok(out)
        }
        .await
        })
    }
}
