//! One resource per noun of the API, each a borrowed view of the client
//! (`fenix.apps()`), with methods named for what they do. Every method is a
//! single [`Call`] of an operation of the API document; the models it sends
//! and answers are the generated ones.

mod apps;
mod deliveries;
mod endpoints;
mod event_types;
mod events;
mod portal_sessions;
mod tokens;

use futures::Stream;
use serde::de::DeserializeOwned;

pub use apps::Apps;
pub use deliveries::{Deliveries, DeliveryFilter};
pub use endpoints::Endpoints;
pub use event_types::EventTypes;
pub use events::Events;
pub use portal_sessions::PortalSessions;
pub use tokens::Tokens;

use crate::transport::{Call, Transport};
use crate::{paging, Error, Operation, Paged};

/// Which page of a list to answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// Items per page, 1 to 250 (Fenix's default is 50).
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page of the same list.
    pub cursor: Option<String>,
}

impl ListOptions {
    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        push(&mut pairs, "limit", self.limit);
        push(&mut pairs, "cursor", self.cursor.as_ref());
        pairs
    }
}

/// Adds `name=value` to a query when there is a value.
fn push(pairs: &mut Vec<(&'static str, String)>, name: &'static str, value: Option<impl ToString>) {
    if let Some(value) = value {
        pairs.push((name, value.to_string()));
    }
}

/// One page of `operation`.
async fn list<P: DeserializeOwned>(
    transport: &Transport,
    operation: Operation,
    params: &[&str],
    query: Vec<(&'static str, String)>,
) -> Result<P, Error> {
    transport.send(Call::new(operation, params).query_pairs(query)).await
}

/// Every item of `operation`, page after page, with `query` on each page.
fn list_all<'a, P>(
    transport: &'a Transport,
    operation: Operation,
    params: Vec<String>,
    query: Vec<(&'static str, String)>,
) -> impl Stream<Item = Result<P::Item, Error>> + 'a
where
    P: Paged + DeserializeOwned + 'a,
    P::Item: 'a,
{
    let (start, query): (Vec<_>, Vec<_>) = query.into_iter().partition(|(name, _)| *name == "cursor");
    let start = start.into_iter().next().map(|(_, cursor)| cursor);
    paging::walk(start, move |cursor: Option<String>| {
        let (params, mut query) = (params.clone(), query.clone());
        query.extend(cursor.map(|cursor| ("cursor", cursor)));
        async move {
            let params: Vec<&str> = params.iter().map(String::as_str).collect();
            list::<P>(transport, operation, &params, query).await
        }
    })
}
