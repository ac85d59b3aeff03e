//! The delivery log and the event log: filters, newest first, and cursor pages
//! that add up to the whole list without gaps or repeats.

use fenix::ids::{AppId, DeliveryId, EndpointId, EventId};
use std::collections::HashSet;

use fenix::store::{events::EventFilter, DeliveryFilter};

use super::fixtures::{Fixture, T0};
use crate::support::Backend;

/// A delivery as the test knows it.
#[derive(Debug, Clone)]
struct Known {
    id: DeliveryId,
    event_id: EventId,
    event_type: &'static str,
    endpoint_id: EndpointId,
    status: &'static str,
    created_at: i64,
}

/// One app, endpoints `every` (all types) and `booking` (`booking.*`), 30 events
/// a second apart cycling through three types, and deliveries settled to
/// failed / succeeded / pending by event.
struct Log {
    fx: Fixture,
    app: AppId,
    every: EndpointId,
    booking: EndpointId,
    events: Vec<(EventId, &'static str, i64)>,
    deliveries: Vec<Known>,
}

const TYPES: [&str; 3] = ["booking.confirmed", "invoice.paid", "booking.cancelled"];

impl Log {
    async fn new(backend: Backend) -> Log {
        let fx = Fixture::new(backend).await;
        let app = fx.app("acme").await;
        let every = fx.endpoint(&app, &[]).await;
        let booking = fx.endpoint(&app, &["booking.*"]).await;
        // Noise in another app, which no list of `app` may show.
        let other = fx.app("globex").await;
        fx.endpoint(&other, &[]).await;
        fx.event(&other, "booking.confirmed", T0 + 15_500).await;

        let raw = fx.raw().await;
        let (mut events, mut deliveries) = (Vec::new(), Vec::new());
        let mut by_status: [Vec<DeliveryId>; 2] = Default::default();
        for i in 0..30_i64 {
            let at = T0 + i * 1_000;
            let t = TYPES[i as usize % 3];
            let (ing, made) = fx.event(&app, t, at).await;
            events.push((ing.event.id.clone(), t, at));
            let status = match i % 5 {
                0 => "failed",
                1 => "succeeded",
                _ => "pending",
            };
            for id in made {
                let endpoint_id = EndpointId::from_stored(
                    raw.text("SELECT endpoint_id FROM deliveries WHERE id = $1", &[(&id).into()]).await.unwrap(),
                );
                match status {
                    "failed" => by_status[0].push(id.clone()),
                    "succeeded" => by_status[1].push(id.clone()),
                    _ => {}
                }
                let event_id = ing.event.id.clone();
                deliveries.push(Known { id, event_id, event_type: t, endpoint_id, status, created_at: at });
            }
        }
        let later = T0 + 1_000_000;
        fx.settle(&by_status[0], "failed", 5, later).await;
        fx.settle(&by_status[1], "succeeded", 1, later).await;
        Log { fx, app, every, booking, events, deliveries }
    }

    /// Every page of the delivery log under `f`, `page` rows at a time.
    async fn delivery_pages(&self, f: &DeliveryFilter, page: i64) -> Vec<DeliveryId> {
        let mut out = Vec::new();
        let mut cursor = None;
        loop {
            let rows = self
                .fx
                .store
                .list_deliveries(&self.app, &DeliveryFilter { cursor, limit: page, ..f.clone() })
                .await
                .unwrap();
            assert!(rows.len() as i64 <= page);
            for pair in rows.windows(2) {
                assert!(pair[0].created_at >= pair[1].created_at, "newest first within a page");
            }
            out.extend(rows.iter().map(|r| r.id.clone()));
            if (rows.len() as i64) < page {
                return out;
            }
            cursor = rows.last().map(|r| r.id.to_string());
        }
    }

    /// The ids the log should show for `keep`, newest first.
    fn expected(&self, keep: impl Fn(&Known) -> bool) -> Vec<DeliveryId> {
        let mut ids: Vec<DeliveryId> = self.deliveries.iter().filter(|d| keep(d)).map(|d| d.id.clone()).collect();
        ids.sort_by(|a, b| b.cmp(a));
        ids
    }

    fn filter(&self) -> DeliveryFilter {
        DeliveryFilter { limit: 7, ..Default::default() }
    }
}

fn assert_whole(pages: &[DeliveryId], expected: &[DeliveryId], what: &str) {
    let unique: HashSet<&DeliveryId> = pages.iter().collect();
    assert_eq!(unique.len(), pages.len(), "{what}: a delivery repeated across pages");
    assert_eq!(pages, expected, "{what}: every matching row, newest first");
}

async fn the_delivery_log_pages_newest_first_without_gaps_or_repeats(backend: Backend) {
    let log = Log::new(backend).await;
    assert_eq!(log.deliveries.len(), 50, "20 booking events to two endpoints, 10 invoices to one");
    let all = log.expected(|_| true);
    for page in [1, 7, 50, 100] {
        assert_whole(&log.delivery_pages(&log.filter(), page).await, &all, &format!("pages of {page}"));
    }
    // Page boundaries fall between the two deliveries of one event too.
    let first =
        log.fx.store.list_deliveries(&log.app, &DeliveryFilter { limit: 3, ..Default::default() }).await.unwrap();
    assert_eq!(first.iter().map(|d| d.id.clone()).collect::<Vec<_>>(), all[..3]);
}

async fn the_delivery_log_filters_by_endpoint_event_status_and_time(backend: Backend) {
    let log = Log::new(backend).await;
    let f = log.filter();

    let by_endpoint = DeliveryFilter { endpoint_id: Some(log.booking.clone()), ..f.clone() };
    let want = log.expected(|d| d.endpoint_id == log.booking);
    assert_eq!(want.len(), 20);
    assert_whole(&log.delivery_pages(&by_endpoint, 7).await, &want, "by endpoint");

    let event = &log.events[12].0;
    let by_event = DeliveryFilter { event_id: Some(event.clone()), ..f.clone() };
    assert_whole(&log.delivery_pages(&by_event, 7).await, &log.expected(|d| &d.event_id == event), "by event");

    for status in ["failed", "succeeded", "pending"] {
        let by_status = DeliveryFilter { status: Some(status.parse().unwrap()), ..f.clone() };
        let want = log.expected(|d| d.status == status);
        assert!(!want.is_empty());
        assert_whole(&log.delivery_pages(&by_status, 4).await, &want, status);
    }
    let none = DeliveryFilter { status: Some(fenix::lifecycle::DeliveryStatus::InFlight), ..f.clone() };
    assert!(log.delivery_pages(&none, 7).await.is_empty());

    // since is inclusive, until exclusive.
    let window = DeliveryFilter { since: Some(T0 + 10_000), until: Some(T0 + 20_000), ..f.clone() };
    let want = log.expected(|d| d.created_at >= T0 + 10_000 && d.created_at < T0 + 20_000);
    assert_whole(&log.delivery_pages(&window, 7).await, &want, "time window");

    // By the event's type, exactly (issue 16: what a receiver reported is found by type).
    for t in TYPES {
        let by_type = DeliveryFilter { event_type: Some(t.into()), ..f.clone() };
        let want = log.expected(|d| d.event_type == t);
        assert!(!want.is_empty());
        assert_whole(&log.delivery_pages(&by_type, 4).await, &want, t);
        let rows = log.fx.store.list_deliveries(&log.app, &DeliveryFilter { limit: 100, ..by_type }).await.unwrap();
        assert!(rows.iter().all(|r| r.event_type == t), "each delivery shows its event's type");
    }
    let prefix = DeliveryFilter { event_type: Some("booking".into()), ..f.clone() };
    assert!(log.delivery_pages(&prefix, 7).await.is_empty(), "the type filter is exact, not a prefix");
    let typed_window = DeliveryFilter {
        event_type: Some("invoice.paid".into()),
        endpoint_id: Some(log.every.clone()),
        until: Some(T0 + 20_000),
        ..f.clone()
    };
    let want =
        log.expected(|d| d.event_type == "invoice.paid" && d.endpoint_id == log.every && d.created_at < T0 + 20_000);
    assert!(!want.is_empty());
    assert_whole(&log.delivery_pages(&typed_window, 2).await, &want, "type, endpoint and time");

    let combined = DeliveryFilter {
        endpoint_id: Some(log.every.clone()),
        status: Some(fenix::lifecycle::DeliveryStatus::Pending),
        since: Some(T0 + 5_000),
        ..f.clone()
    };
    let want = log.expected(|d| d.endpoint_id == log.every && d.status == "pending" && d.created_at >= T0 + 5_000);
    assert_whole(&log.delivery_pages(&combined, 3).await, &want, "combined");
}

async fn the_event_log_filters_by_type_and_time_and_pages_newest_first(backend: Backend) {
    let log = Log::new(backend).await;
    let (store, app) = (&log.fx.store, &log.app);
    let pages = |f: EventFilter| async move {
        let mut out = Vec::new();
        let mut cursor = None;
        loop {
            let rows = store.list_events(app, &EventFilter { cursor, ..f.clone() }).await.unwrap();
            out.extend(rows.iter().map(|r| (r.id.clone(), r.payload.is_some())));
            if (rows.len() as i64) < f.limit {
                return out;
            }
            cursor = rows.last().map(|r| r.id.to_string());
        }
    };
    let expected = |keep: &dyn Fn(&str, i64) -> bool| -> Vec<EventId> {
        log.events.iter().rev().filter(|(_, t, at)| keep(t, *at)).map(|(id, _, _)| id.clone()).collect()
    };
    let ids = |v: Vec<(EventId, bool)>| v.into_iter().map(|(id, _)| id).collect::<Vec<_>>();

    let all = pages(EventFilter { limit: 4, ..Default::default() }).await;
    assert!(all.iter().all(|(_, has)| !has), "no payload unless asked for");
    assert_eq!(ids(all), expected(&|_, _| true), "newest first (made a second apart), each once");

    let typed = pages(EventFilter { limit: 4, event_type: Some("invoice.paid".into()), ..Default::default() }).await;
    assert_eq!(ids(typed), expected(&|t, _| t == "invoice.paid"));

    let window = EventFilter { limit: 4, since: Some(T0 + 3_000), until: Some(T0 + 9_000), ..Default::default() };
    assert_eq!(ids(pages(window).await), expected(&|_, at| (T0 + 3_000..T0 + 9_000).contains(&at)));

    let with_payload = pages(EventFilter { limit: 100, include_payload: true, ..Default::default() }).await;
    assert_eq!(with_payload.len(), 30);
    assert!(with_payload.iter().all(|(_, has)| *has), "payloads when asked for");
}

crate::on_both_backends!(
    the_delivery_log_pages_newest_first_without_gaps_or_repeats,
    the_delivery_log_filters_by_endpoint_event_status_and_time,
    the_event_log_filters_by_type_and_time_and_pages_newest_first,
);
