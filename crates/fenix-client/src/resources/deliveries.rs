//! The delivery log: one delivery per event and endpoint, its attempts, and
//! replays (`/v1/apps/{app}/deliveries`).

use futures::Stream;

use super::{list, list_all, push};
use crate::generated::{operations, Delivery, DeliveryStatus, NoOptions, PageAttempt, PageDelivery};
use crate::transport::{Call, Transport};
use crate::Error;

/// Which deliveries to list, and which page; every field is optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeliveryFilter {
    /// Only deliveries in this status.
    pub status: Option<DeliveryStatus>,
    /// Only deliveries to this endpoint (`ep_…`).
    pub endpoint_id: Option<String>,
    /// Only deliveries of this event (`evt_…`).
    pub event_id: Option<String>,
    /// Only deliveries of events of this type, exactly.
    pub event_type: Option<String>,
    /// Created at or after this time (RFC 3339).
    pub since: Option<String>,
    /// Created before this time (RFC 3339).
    pub until: Option<String>,
    /// Items per page, 1 to 250 (default 50).
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page (with the same filters).
    pub cursor: Option<String>,
}

impl DeliveryFilter {
    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        push(&mut pairs, "status", self.status);
        push(&mut pairs, "endpoint_id", self.endpoint_id.as_ref());
        push(&mut pairs, "event_id", self.event_id.as_ref());
        push(&mut pairs, "event_type", self.event_type.as_ref());
        push(&mut pairs, "since", self.since.as_ref());
        push(&mut pairs, "until", self.until.as_ref());
        push(&mut pairs, "limit", self.limit);
        push(&mut pairs, "cursor", self.cursor.as_ref());
        pairs
    }
}

/// `fenix.deliveries()`.
#[derive(Debug, Clone, Copy)]
pub struct Deliveries<'a> {
    transport: &'a Transport,
}

impl<'a> Deliveries<'a> {
    pub(crate) fn new(transport: &'a Transport) -> Deliveries<'a> {
        Deliveries { transport }
    }

    /// One page of the app's deliveries, newest first.
    pub async fn list(&self, app: &str, filter: &DeliveryFilter) -> Result<PageDelivery, Error> {
        list(self.transport, operations::LIST_DELIVERIES, &[app], filter.pairs()).await
    }

    /// Every delivery `filter` selects, page after page (its `cursor` is the first page's).
    pub fn list_all(&self, app: &str, filter: &DeliveryFilter) -> impl Stream<Item = Result<Delivery, Error>> + 'a {
        let operation = operations::LIST_DELIVERIES;
        list_all::<PageDelivery>(self.transport, operation, vec![app.to_owned()], filter.pairs())
    }

    /// One delivery (`dlv_…`).
    pub async fn get(&self, app: &str, delivery: &str) -> Result<Delivery, Error> {
        self.transport.send(Call::new(operations::GET_DELIVERY, &[app, delivery])).await
    }

    /// The delivery's attempts (HTTP requests), oldest first.
    pub async fn attempts(&self, app: &str, delivery: &str) -> Result<PageAttempt, Error> {
        self.transport.send(Call::new(operations::LIST_DELIVERY_ATTEMPTS, &[app, delivery])).await
    }

    /// Sends a delivery again (a failed or skipped one, or a succeeded one
    /// the receiver lost): it is pending again, with a fresh attempt schedule.
    pub async fn replay(&self, app: &str, delivery: &str) -> Result<Delivery, Error> {
        self.transport.send(Call::new(operations::REPLAY_DELIVERY, &[app, delivery]).json(&NoOptions {})).await
    }
}
