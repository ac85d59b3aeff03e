//! The plan of an ingest batch, the same on both backends: which events are
//! repeats of an idempotency key, which endpoints each new event fans out to
//! (the one fan-out query), which events are refused for their fan-out, and
//! the delivery rows to insert. The backend then writes the plan its own way.

use crate::store::Result;
use std::collections::HashMap;

use crate::ids::{AppId, DeliveryId, EndpointId, EventId};

use super::LANE_BUSY;
pub use crate::store::sql::Conn;

use crate::{
    endpoint_spec,
    event_types::EventTypeFilter,
    ids,
    store::events::{EventRow, Ingested, NewEvent, EVENT_BY_KEY},
    time::Millis,
};

/// The endpoints an event of an app fans out to: all of them, whatever their
/// state. A paused or disabled endpoint's delivery is skipped when it comes
/// due (the worker reads the state then, so a resume racing the ingestion
/// cannot strand it), which keeps it in the log for a resume with replay;
/// an endpoint left out here would lose the event for good.
const FANOUT_TARGETS: &str =
    "SELECT id, event_types, ordered, channels, filter FROM endpoints WHERE app_id = $1 ORDER BY id";

#[derive(sqlx::FromRow)]
struct TargetRow {
    id: EndpointId,
    event_types: String,
    ordered: bool,
    channels: String,
    filter: Option<String>,
}

/// A fan-out target with its filter parsed once per batch, not once per event.
struct Target {
    id: EndpointId,
    filter: EventTypeFilter,
    ordered: bool,
    /// Its channels (`labels`): only events sharing one; empty: every event.
    channels: Vec<String>,
    /// Its content filter (`crate::filter`), compiled once per text.
    content: Content,
}

/// An endpoint's content filter as the fan-out holds it.
enum Content {
    /// No filter: every event the other rules let through.
    Any,
    Filter(std::sync::Arc<crate::filter::Filter>),
    /// A stored filter the code cannot compile (it was checked when saved):
    /// no event passes it, rather than events its owner meant to keep away
    /// from the receiver; counted as a filter error of the app.
    Unreadable,
}

impl Target {
    /// A filter the code cannot read matches every type (the error logged):
    /// the deliveries it makes fail visibly, naming the endpoint, where a
    /// filter matching nothing would drop the app's events for it unseen.
    fn of(r: TargetRow) -> Target {
        let filter = endpoint_spec::event_types(r.id.as_str(), &r.event_types).unwrap_or_else(|e| {
            tracing::error!(error = %e, "an endpoint's stored event types cannot be read; it is sent every type");
            EventTypeFilter::default()
        });
        // Unreadable channels likewise take every event, for the same reason.
        let channels = endpoint_spec::channels(r.id.as_str(), &r.channels).unwrap_or_else(|e| {
            tracing::error!(error = %e, "an endpoint's stored channels cannot be read; it is sent every event");
            Vec::new()
        });
        let content = match r.filter.as_deref().map(crate::filter::cached) {
            None => Content::Any,
            Some(Ok(f)) => Content::Filter(f),
            Some(Err(e)) => {
                tracing::error!(endpoint_id = %r.id, error = %e, "an endpoint's stored filter cannot be compiled; no event passes it");
                Content::Unreadable
            }
        };
        Target { filter, id: r.id, ordered: r.ordered, channels, content }
    }

    /// True when an event (not a test event) goes to this endpoint: its type
    /// passes the type filter, it shares a channel if the endpoint lists
    /// any, and its content passes the endpoint's filter if it has one
    /// (`subject`: the event as filters see it, built at most once per event).
    fn wants(&self, ev: &NewEvent, subject: &mut Option<crate::filter::Subject>) -> bool {
        if !(self.filter.matches(&ev.event_type) && crate::labels::routes(&self.channels, &ev.channels)) {
            return false;
        }
        let filter = match &self.content {
            Content::Any => return true,
            Content::Unreadable => {
                crate::filter::count_error(ev.app_id.as_str());
                return false;
            }
            Content::Filter(f) => f,
        };
        let subject = subject.get_or_insert_with(|| {
            crate::filter::Subject::of_envelope(&ev.envelope, &ev.event_type, &ev.channels, &ev.tags)
        });
        filter.matches(subject).unwrap_or_else(|_| {
            // Never logged: the error may quote the event's values.
            crate::filter::count_error(ev.app_id.as_str());
            false
        })
    }
}

/// A delivery row to insert.
pub struct NewDelivery<'a> {
    pub id: DeliveryId,
    pub app_id: &'a AppId,
    pub event_id: &'a EventId,
    /// The event's type, kept on the delivery for the log's `event_type` filter.
    pub event_type: &'a str,
    pub endpoint_id: EndpointId,
    pub at: Millis,
    /// When it is first due: `at` (or the scheduled event's `deliver_at`), or
    /// [`super::PARKED`] for a delivery of an ordered lane that waits behind
    /// another (made due when that one is final, not before its `deliver_at`).
    pub due: Millis,
    /// The scheduled event's time (`NewEvent::deliver_at`), kept on the row:
    /// the log shows it `scheduled` until then, and a parked one made due
    /// is not due before it.
    pub deliver_at: Option<Millis>,
    /// The delivery's lane on an ordered endpoint (`""`: the keyless lane);
    /// `None` for an unordered endpoint.
    pub ordering_key: Option<&'a str>,
    /// Its place in the endpoint's lanes: in the plan, its rank among the
    /// batch's deliveries to that endpoint (1, 2, …); the backend adds the
    /// endpoint's counter ([`Plan::take_lane_numbers`]) under the endpoint
    /// row's lock. `None` for an unordered endpoint.
    pub lane_seq: Option<i64>,
    /// Inserted leased to the worker of the batch's [`super::FreshLease`]
    /// ([`Plan::lease_fresh`]).
    pub leased: bool,
}

/// What a batch writes, and what each of its events is answered.
pub struct Plan<'a> {
    /// One answer per event of the batch, in order. A new event is answered
    /// `created` until the write says otherwise (an idempotency key another
    /// instance stored meanwhile, on PostgreSQL).
    pub answers: Vec<Ingested>,
    /// The events to insert, with their delivery counts.
    pub events: Vec<(&'a NewEvent, i64)>,
    pub deliveries: Vec<NewDelivery<'a>>,
}

impl Plan<'_> {
    /// The ordered endpoints this batch writes to, in id order (the order
    /// their rows are locked in, so two writers never wait on each other in a
    /// cycle), with how many lane numbers each needs.
    pub fn lane_counts(&self) -> std::collections::BTreeMap<EndpointId, i64> {
        let mut counts = std::collections::BTreeMap::new();
        for d in self.deliveries.iter().filter(|d| d.lane_seq.is_some()) {
            *counts.entry(d.endpoint_id.clone()).or_insert(0) += 1;
        }
        counts
    }

    /// Turns the ranks of the ordered deliveries into lane numbers: `base`
    /// is, per endpoint, the counter's value before this batch took its numbers.
    pub fn take_lane_numbers(&mut self, base: &HashMap<EndpointId, i64>) {
        for d in self.deliveries.iter_mut() {
            if let (Some(rank), Some(b)) = (d.lane_seq, base.get(&d.endpoint_id)) {
                d.lane_seq = Some(b + rank);
            }
        }
    }

    /// The endpoints this batch writes deliveries to, each once, in id order.
    pub fn endpoint_ids(&self) -> Vec<&str> {
        let ids: std::collections::BTreeSet<&str> = self.deliveries.iter().map(|d| d.endpoint_id.as_str()).collect();
        ids.into_iter().collect()
    }

    /// The lanes (endpoint, ordering key) this batch adds deliveries to.
    pub fn lanes(&self) -> std::collections::BTreeSet<(EndpointId, String)> {
        self.deliveries.iter().filter_map(|d| Some((d.endpoint_id.clone(), d.ordering_key?.to_string()))).collect()
    }

    /// Parks every ordered delivery that will wait behind another: all of a
    /// lane in `busy` (it has an unfinished delivery already), and all but the
    /// first of the batch's deliveries in any other lane.
    pub fn park(&mut self, busy: &std::collections::BTreeSet<(EndpointId, String)>) {
        let mut headed: std::collections::BTreeSet<(EndpointId, String)> = std::collections::BTreeSet::new();
        for d in self.deliveries.iter_mut() {
            let Some(key) = d.ordering_key else { continue };
            let lane = (d.endpoint_id.clone(), key.to_string());
            if busy.contains(&lane) || !headed.insert(lane) {
                d.due = super::PARKED;
            }
        }
    }

    /// Marks the deliveries inserted leased to `fresh`'s worker
    /// ([`super::FreshLease`]): the first `fresh.max` unordered ones due at
    /// once (an ordered one waits for its lane's claim, a scheduled one for
    /// its time).
    pub fn lease_fresh(&mut self, fresh: Option<&super::FreshLease>) {
        let max = fresh.map_or(0, |f| f.max);
        for d in self.deliveries.iter_mut().filter(|d| d.lane_seq.is_none() && d.due <= d.at).take(max) {
            d.leased = true;
        }
    }

    /// True when the batch creates due work (workers should hear of it).
    pub fn makes_deliveries(&self) -> bool {
        !self.deliveries.is_empty()
    }

    /// True when the batch is to be stored whole or not at all and one of its
    /// events was refused: then nothing of it is written.
    pub fn refused_whole(&self, whole: Whole) -> bool {
        whole == Whole::AllOrNothing && self.answers.iter().any(|a| a.fanout_refused)
    }

    /// Answers the new events whose idempotency key another writer stored
    /// first, and their repeats within the batch, with the event that writer
    /// stored (`existing`: (app, key) → stored event).
    pub fn lost_keys_to(&mut self, existing: &HashMap<(AppId, String), EventRow>) {
        for answer in self.answers.iter_mut().filter(|a| !a.fanout_refused) {
            let Some(key) = answer.event.idempotency_key.clone() else { continue };
            if let Some(stored) = existing.get(&(answer.event.app_id.clone(), key)) {
                if stored.id != answer.event.id {
                    *answer = Ingested::existing(stored.clone());
                }
            }
        }
    }
}

/// Whether an event refused for its fan-out refuses its whole batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whole {
    /// Independent events grouped for speed (the ingestion queue): the others are stored.
    EachOnItsOwn,
    /// One producer's batch (`POST …/events/batch`): nothing is stored.
    AllOrNothing,
}

/// What a plan reads, on the connection a batch is planned on (inside the
/// batch's transaction on SQLite): the statements are the same text on both
/// backends.
impl Conn<'_> {
    /// The stored event with this idempotency key, if any.
    pub async fn event_by_key(&mut self, app_id: &crate::ids::AppId, key: &str) -> Result<Option<EventRow>> {
        self.fetch_optional(EVENT_BY_KEY, &[app_id.into(), key.into()]).await
    }

    /// Takes `n` lane numbers from an ordered endpoint's counter
    /// ([`TAKE_LANE_NUMBERS`]): its value before, `None` for an endpoint
    /// deleted since the plan read it.
    async fn take_lane_numbers(&mut self, endpoint_id: &crate::ids::EndpointId, n: i64) -> Result<Option<i64>> {
        self.scalar_optional(TAKE_LANE_NUMBERS, &[endpoint_id.into(), n.into()]).await
    }

    /// Whether a lane has a delivery that new ones must wait behind ([`LANE_BUSY`]).
    async fn lane_busy(&mut self, endpoint_id: &crate::ids::EndpointId, key: &str) -> Result<bool> {
        Ok(self.scalar::<i64>(LANE_BUSY, &[endpoint_id.into(), key.into()]).await? > 0)
    }

    async fn fanout_targets(&mut self, app_id: &crate::ids::AppId) -> Result<Vec<Target>> {
        let rows: Vec<TargetRow> = self.fetch_all(FANOUT_TARGETS, &[app_id.into()]).await?;
        Ok(rows.into_iter().map(Target::of).collect())
    }
}

/// Takes lane numbers for ordered endpoints ($1, in id order, $2 each);
/// answers each counter's value before. On PostgreSQL it also locks their rows
/// until the ingestion commits, so a later batch to the same endpoint waits
/// and numbers after this one; SQLite has one writer at a time. Either way
/// lane order is commit order.
const TAKE_LANE_NUMBERS: &str = "UPDATE endpoints SET lane_next = lane_next + $2 WHERE id = $1 \
     RETURNING lane_next - $2";

/// Numbers the plan's ordered deliveries in their lanes and parks those that
/// will wait behind another, on `conn` inside the batch's write transaction,
/// before its inserts. The lanes are read after the endpoints' counters are
/// taken (and, on PostgreSQL, their rows locked), so an outcome of those lanes
/// written before is seen.
pub async fn order_lanes(mut conn: Conn<'_>, plan: &mut Plan<'_>) -> Result<()> {
    let mut base = HashMap::new();
    for (endpoint_id, n) in plan.lane_counts() {
        // An endpoint deleted since the plan read it gets no deliveries (its
        // row is gone when the insert locks the batch's endpoints).
        let before = conn.take_lane_numbers(&endpoint_id, n).await?;
        base.insert(endpoint_id, before.unwrap_or(0));
    }
    plan.take_lane_numbers(&base);
    let mut busy = std::collections::BTreeSet::new();
    for (endpoint_id, key) in plan.lanes() {
        if conn.lane_busy(&endpoint_id, &key).await? {
            busy.insert((endpoint_id, key));
        }
    }
    plan.park(&busy);
    Ok(())
}

/// Plans `events` reading on `conn`: the keys already stored, the endpoints
/// of each app (read once per app), the fan-out of each event.
pub async fn plan<'a>(mut conn: Conn<'_>, events: &'a [NewEvent]) -> Result<Plan<'a>> {
    let mut targets: HashMap<&str, Vec<Target>> = HashMap::new();
    let mut seen: HashMap<(&str, &str), EventRow> = HashMap::new();
    // Per ordered endpoint, the rank of its last delivery in this batch.
    let mut ranks: HashMap<EndpointId, i64> = HashMap::new();
    let mut plan = Plan { answers: Vec::with_capacity(events.len()), events: Vec::new(), deliveries: Vec::new() };
    for ev in events {
        if let Some(key) = ev.idempotency_key.as_deref() {
            if let Some(original) = seen.get(&(ev.app_id.as_str(), key)) {
                plan.answers.push(Ingested::existing(original.clone()));
                continue;
            }
            if let Some(event) = conn.event_by_key(&ev.app_id, key).await? {
                plan.answers.push(Ingested::existing(event));
                continue;
            }
        }
        if !targets.contains_key(ev.app_id.as_str()) {
            let t = conn.fanout_targets(&ev.app_id).await?;
            targets.insert(ev.app_id.as_str(), t);
        }
        let of_app = targets[ev.app_id.as_str()].iter();
        let chosen: Vec<&Target> = match ev.only_endpoint.as_ref() {
            // A test event: that endpoint (if it still exists), whatever its filter.
            Some(only) => of_app.filter(|t| &t.id == only).collect(),
            None => {
                let mut subject = None;
                of_app.filter(|t| t.wants(ev, &mut subject)).collect()
            }
        };
        if chosen.len() > ev.max_fanout {
            plan.answers.push(Ingested::refused(ev, chosen.len()));
            continue;
        }
        let count = chosen.len() as i64;
        plan.events.push((ev, count));
        plan.deliveries.extend(chosen.into_iter().map(|t| new_delivery(ev, t, &mut ranks)));
        let row = ev.stored_row(count);
        if let Some(key) = ev.idempotency_key.as_deref() {
            seen.insert((ev.app_id.as_str(), key), row.clone());
        }
        plan.answers.push(Ingested::created(row));
    }
    delivery_ids(&mut plan.deliveries);
    Ok(plan)
}

/// The delivery of `ev` to `t`; on an ordered endpoint it takes the next
/// rank of the batch's deliveries to that endpoint (`ranks`).
fn new_delivery<'a>(ev: &'a NewEvent, t: &Target, ranks: &mut HashMap<EndpointId, i64>) -> NewDelivery<'a> {
    let lane_seq = t.ordered.then(|| {
        let rank = ranks.entry(t.id.clone()).or_insert(0);
        *rank += 1;
        *rank
    });
    NewDelivery {
        ordering_key: t.ordered.then(|| ev.ordering_key.as_deref().unwrap_or("")),
        lane_seq,
        // Given by `delivery_ids`, for all the batch's deliveries at once.
        id: DeliveryId::from_stored(String::new()),
        app_id: &ev.app_id,
        event_id: &ev.id,
        event_type: &ev.event_type,
        endpoint_id: t.id.clone(),
        at: ev.created_at,
        due: ev.due_at(),
        deliver_at: ev.deliver_at,
        leased: false,
    }
}

/// The `event_labels` rows of `ev` (app, kind, name, event): one per channel
/// and per tag, written with the event on both backends.
pub fn label_rows(ev: &NewEvent) -> impl Iterator<Item = (&str, &'static str, &str, &str)> {
    use crate::labels::Kind;
    let channels = ev.channels.iter().map(|n| (Kind::Channel, n));
    let tags = ev.tags.iter().map(|n| (Kind::Tag, n));
    channels.chain(tags).map(|(kind, n)| (ev.app_id.as_str(), kind.as_str(), n.as_str(), ev.id.as_str()))
}

/// Gives the deliveries their ids: each starts with its event's creation
/// time, and the deliveries of events made in the same millisecond (all of a
/// `POST …/events/batch`) take one block of consecutive ids in insertion
/// order, so the inserts append to every index keyed by id
/// ([`ids::DeliveryId::new_block`]).
fn delivery_ids(deliveries: &mut [NewDelivery<'_>]) {
    for run in deliveries.chunk_by_mut(|a, b| a.at == b.at) {
        let ids = ids::DeliveryId::new_block(run[0].at, run.len());
        for (d, id) in run.iter_mut().zip(ids) {
            d.id = id;
        }
    }
}
