//! The event-type catalogue (`/v1/event-types`).

use futures::Stream;

use super::{list, list_all, ListOptions};
use crate::generated::{operations, CreateEventType, EventType, PageEventType, PatchEventType};
use crate::transport::{Call, Transport};
use crate::Error;

/// `fenix.event_types()`.
#[derive(Debug, Clone, Copy)]
pub struct EventTypes<'a> {
    transport: &'a Transport,
}

impl<'a> EventTypes<'a> {
    pub(crate) fn new(transport: &'a Transport) -> EventTypes<'a> {
        EventTypes { transport }
    }

    /// Adds a type to the catalogue (`CreateEventType::builder().name(…)…`).
    pub async fn create(&self, event_type: &CreateEventType) -> Result<EventType, Error> {
        self.transport.send(Call::new(operations::CREATE_EVENT_TYPE, &[]).json(event_type)).await
    }

    /// One type, by name.
    pub async fn get(&self, name: &str) -> Result<EventType, Error> {
        self.transport.send(Call::new(operations::GET_EVENT_TYPE, &[name])).await
    }

    /// One page of the catalogue.
    pub async fn list(&self, options: &ListOptions) -> Result<PageEventType, Error> {
        list(self.transport, operations::LIST_EVENT_TYPES, &[], options.pairs()).await
    }

    /// The whole catalogue, page after page.
    pub fn list_all(&self) -> impl Stream<Item = Result<EventType, Error>> + 'a {
        list_all::<PageEventType>(self.transport, operations::LIST_EVENT_TYPES, Vec::new(), Vec::new())
    }

    /// Changes the fields `patch` holds.
    pub async fn update(&self, name: &str, patch: &PatchEventType) -> Result<EventType, Error> {
        self.transport.send(Call::new(operations::UPDATE_EVENT_TYPE, &[name]).json(patch)).await
    }

    /// Removes a type from the catalogue.
    pub async fn delete(&self, name: &str) -> Result<(), Error> {
        self.transport.send_empty(Call::new(operations::DELETE_EVENT_TYPE, &[name])).await
    }
}
