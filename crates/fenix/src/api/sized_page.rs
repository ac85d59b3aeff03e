//! Answers bounded in bytes, as HTTP (the budgets are [`crate::answer_bytes`]):
//! a page written item by item as the connection takes it, each stored row
//! dropped once written, and the process's bytes held by the answer given back
//! only when the last byte of it has been freed (every chunk owns a share of
//! them), so a client that reads slowly keeps its answer counted.

use crate::api::code::Code;
use std::{convert::Infallible, sync::Arc};

use axum::{
    body::{Body, Bytes},
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use utoipa::ToSchema;

use super::error::ApiError;
use crate::answer_bytes::{Held, WAIT};

/// One page of a list whose items can be large (events with their payloads),
/// newest first. Pass `next_cursor` as `cursor` for the next page.
#[derive(Debug, Serialize, ToSchema)]
pub struct SizedPage<T> {
    pub data: Vec<T>,
    /// Opaque; absent (null) on the last page.
    pub next_cursor: Option<String>,
    /// `true` when the page stopped before `limit` items because the next
    /// item would have taken it past `FENIX_MAX_PAGE_BYTES` (4 MiB by
    /// default) of items; `next_cursor` then continues after its last item.
    /// A page always holds at least one item, however large.
    pub cut_by_size: bool,
}

/// Bytes of the answer's budget taken (`None`: an answer too small to count).
pub type Share = Option<Arc<Held>>;

/// Takes `bytes` of the process's budget for an answer, waiting a bounded
/// time ([`WAIT`]); over it, `503 overloaded` with `Retry-After`.
pub async fn take(s: &crate::state::AppState, bytes: usize) -> Result<Share, ApiError> {
    match s.answers.take(bytes, WAIT).await {
        Some(held) => Ok(Some(Arc::new(held))),
        None => Err(ApiError {
            retry_after: Some(1),
            ..ApiError::new(
                Code::Overloaded,
                "answers with payloads already hold FENIX_ANSWER_BYTES in this instance; retry in a second, \
                 or ask for fewer items (limit)",
            )
        }),
    }
}

/// The answer `{"data":[…],"next_cursor":…,"cut_by_size":…}` of `rows`, each
/// made into its item by `item` only when the connection is ready for it.
pub fn page_answer<R, T>(
    rows: Vec<R>,
    mut item: impl FnMut(R) -> T + Send + 'static,
    next_cursor: Option<String>,
    cut_by_size: bool,
    share: Share,
) -> Response
where
    R: Send + 'static,
    T: Serialize,
{
    let tail = serde_json::to_vec(&Tail { next_cursor, cut_by_size }).expect("a page's tail serializes");
    let (head_share, tail_share) = (share.clone(), share.clone());
    let mut first = true;
    let items = rows.into_iter().map(move |row| {
        let mut buf = if std::mem::take(&mut first) { Vec::new() } else { vec![b','] };
        serde_json::to_writer(&mut buf, &item(row)).expect("an item serializes");
        chunk(buf, &share)
    });
    let head = std::iter::once(chunk(b"{\"data\":[".to_vec(), &head_share));
    // `],` then the tail object without its opening brace.
    let mut end = b"],".to_vec();
    end.extend_from_slice(&tail[1..]);
    let end = std::iter::once_with(move || chunk(end, &tail_share));
    let body = futures::stream::iter(head.chain(items).chain(end).map(Ok::<_, Infallible>));
    json_response(Body::from_stream(body))
}

/// One item as a whole answer (an event with its payload), counted under `share`.
pub fn item_answer<T: Serialize>(item: &T, share: Share) -> Response {
    let buf = serde_json::to_vec(item).expect("an item serializes");
    json_response(Body::from(chunk(buf, &share)))
}

#[derive(Serialize)]
struct Tail {
    next_cursor: Option<String>,
    cut_by_size: bool,
}

/// Bytes that keep their share of the budget until they are freed.
fn chunk(buf: Vec<u8>, share: &Share) -> Bytes {
    struct Owned(Vec<u8>, #[allow(dead_code)] Share);
    impl AsRef<[u8]> for Owned {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }
    match share {
        None => Bytes::from(buf),
        Some(_) => Bytes::from_owner(Owned(buf, share.clone())),
    }
}

fn json_response(body: Body) -> Response {
    let mut resp = (StatusCode::OK, body).into_response();
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}
