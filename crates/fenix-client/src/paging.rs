//! Lists: every list answers one page (`data`, `next_cursor`); `list_all`
//! walks them all as a stream, asking for the next page only when the items
//! of this one are used up.

use std::future::Future;

use futures::stream::{self, Stream, TryStreamExt as _};

use crate::Error;

/// A page of a list: the generated page models (`PageDelivery`, …) all are.
pub trait Paged {
    /// What the page lists.
    type Item;
    /// Its items and the cursor of the next page (`None` on the last).
    fn into_parts(self) -> (Vec<Self::Item>, Option<String>);
}

/// Every item of every page: `fetch(cursor)` answers one page, from `start`
/// (`None`: the first) until a page without `next_cursor`. Stops at the first error.
pub(crate) fn walk<'a, P, F, Fut>(start: Option<String>, fetch: F) -> impl Stream<Item = Result<P::Item, Error>> + 'a
where
    P: Paged + 'a,
    P::Item: 'a,
    F: FnMut(Option<String>) -> Fut + 'a,
    Fut: Future<Output = Result<P, Error>> + 'a,
{
    // The state: the cursor to ask with next, or `Done` after the last page.
    enum Next {
        Cursor(Option<String>),
        Done,
    }
    let pages = stream::try_unfold((Next::Cursor(start), fetch), |(next, mut fetch)| async move {
        let Next::Cursor(cursor) = next else { return Ok::<_, Error>(None) };
        let (items, cursor) = fetch(cursor).await?.into_parts();
        let next = cursor.map_or(Next::Done, |cursor| Next::Cursor(Some(cursor)));
        Ok(Some((stream::iter(items.into_iter().map(Ok)), (next, fetch))))
    });
    pages.try_flatten()
}
