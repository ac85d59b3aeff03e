//! The event log: `GET /v1/apps/{app}/events` and `GET /v1/apps/{app}/events/{evt}`.

use axum::{
    extract::State,
    response::{IntoResponse, Response},
    Json,
};
use serde::Deserialize;

use super::EventOut;
use crate::{
    api::{
        code::{Code, Resource},
        error::{ApiError, ErrorBody},
        extract::{decode_cursor, page_limit, ApiPath, ApiQuery, AppPath, EventPath, ListScope},
        lookup,
        sized_page::{self, SizedPage},
    },
    state::SharedState,
    store::events::EventFilter,
    time,
};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(super) struct ListQuery {
    /// Items per page, 1–250 (default 50).
    #[param(minimum = 1, maximum = 250)]
    limit: Option<i64>,
    /// `next_cursor` of the previous page of the same list, with the same filters.
    cursor: Option<String>,
    event_type: Option<String>,
    #[serde(rename = "type")]
    type_alias: Option<String>,
    #[param(format = DateTime)]
    since: Option<String>,
    #[param(format = DateTime)]
    until: Option<String>,
    /// `payload` adds each event's `data`.
    #[param(pattern = "^payload$")]
    include: Option<String>,
    /// Only events carrying this channel.
    #[param(
        min_length = 1,
        max_length = 128,
        pattern = "^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,126}[A-Za-z0-9_:-]$|^[A-Za-z0-9_:-]$"
    )]
    channel: Option<String>,
    /// Only events carrying this tag.
    #[param(
        min_length = 1,
        max_length = 128,
        pattern = "^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,126}[A-Za-z0-9_:-]$|^[A-Za-z0-9_:-]$"
    )]
    tag: Option<String>,
}

/// A log's `channel` and `tag` filters, each a valid name (`labels`) if given.
pub fn label_filters(
    channel: Option<String>,
    tag: Option<String>,
) -> Result<(Option<String>, Option<String>), ApiError> {
    for (name, v) in [("channel", &channel), ("tag", &tag)] {
        if let Some(v) = v.as_deref().filter(|v| !crate::labels::valid(v)) {
            return Err(ApiError::new(
                Code::InvalidQuery,
                format!(
                    "{name} must be 1-128 characters of A-Z a-z 0-9 _ - . : without a leading or trailing dot \
                     ({} bytes given)",
                    v.len()
                ),
            ));
        }
    }
    Ok((channel, tag))
}

/// Parses `since`/`until` (RFC 3339).
pub fn parse_window(since: Option<&str>, until: Option<&str>) -> Result<(Option<i64>, Option<i64>), ApiError> {
    let parse = |name: &str, v: Option<&str>| -> Result<Option<i64>, ApiError> {
        v.map(|v| {
            time::parse_rfc3339(v).ok_or_else(|| {
                ApiError::new(
                    Code::InvalidTime,
                    format!(
                        "{name} must be an RFC 3339 time such as 2026-11-29T21:04:19Z or 2026-11-29T22:04:19+01:00"
                    ),
                )
            })
        })
        .transpose()
    };
    Ok((parse("since", since)?, parse("until", until)?))
}

fn include_payload(include: Option<&str>) -> Result<bool, ApiError> {
    match include {
        None | Some("") => Ok(false),
        Some("payload") => Ok(true),
        Some(_) => Err(ApiError::new(Code::InvalidInclude, "include accepts only \"payload\"")),
    }
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/events", tag = "events", operation_id = "list_events",
    summary = "List an app's events",
    security(("bearer" = ["app:read"])),
    description = "Newest first, `limit` (1-250, default 50) per page. Filter by `event_type` (or `type`), \
        creation time (`since`, `until`: RFC 3339), `channel` and `tag` (events carrying that name); `include=payload` adds each event's `data`. A page also \
        stops before `FENIX_MAX_PAGE_BYTES` (default 4 MiB) of items: then `cut_by_size` is `true` and \
        `next_cursor` continues after its last item; a page holds at least one item, however large. Answers \
        with payloads share the instance's `FENIX_ANSWER_BYTES`: when it stays full for 5 s, `503 overloaded` \
        with `Retry-After`.",
    params(AppPath, ListQuery),
    responses(
        (status = 200, description = "A page of events", body = SizedPage<EventOut>),
        (status = 400, description = "`invalid_path`, `invalid_limit`, `invalid_cursor`, `invalid_time`, `invalid_include`, `invalid_query`",
            body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 503, description = "`overloaded`: answers with payloads hold the instance's `FENIX_ANSWER_BYTES`; \
            retry after `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub(super) async fn list(
    State(s): State<SharedState>,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Response, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let limit = page_limit(q.limit)?;
    let (since, until) = parse_window(q.since.as_deref(), q.until.as_deref())?;
    let include = include_payload(q.include.as_deref())?;
    let event_type = q.event_type.or(q.type_alias);
    let (channel, tag) = label_filters(q.channel, q.tag)?;
    let (since_ms, until_ms) = (since.map(|t| t.to_string()), until.map(|t| t.to_string()));
    let mut scope = vec![Some(app.id.as_str()), event_type.as_deref(), since_ms.as_deref(), until_ms.as_deref()];
    if channel.is_some() || tag.is_some() {
        // Only then, so the cursors of lists without them stay as they were.
        scope.extend([channel.as_deref(), tag.as_deref()]);
    }
    let list = ListScope::new("evt", &scope);
    let cursor = decode_cursor(&list, q.cursor.as_deref())?;
    let filter =
        EventFilter { event_type, since, until, cursor, limit: limit + 1, include_payload: include, channel, tag };
    let mut rows = s.store.list_event_sizes(&app.id, &filter).await?;
    // The page's items are chosen by their stored sizes, and only theirs
    // are loaded, once the process has room for them.
    let sizes = rows.iter().map(|r| EventOut::most_bytes(r, include));
    let (count, bytes) = crate::answer_bytes::fitting(sizes, limit as usize, s.settings.max_page_bytes);
    let more = rows.len() > count;
    rows.truncate(count);
    let next_cursor = if more { rows.last().map(|r| list.encode(r.event.id.as_str())) } else { None };
    let cut_by_size = more && count < limit as usize;
    let (rows, share) = if include {
        let share = sized_page::take(&s, bytes).await?;
        (s.store.with_payloads(&app.id, rows).await?, share)
    } else {
        (rows.into_iter().map(|r| r.event).collect(), None)
    };
    Ok(sized_page::page_answer(rows, move |r| EventOut::from_row(r, include), next_cursor, cut_by_size, share))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(super) struct ReadQuery {
    /// `payload` adds the event's `data`.
    #[param(pattern = "^payload$")]
    include: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/events/{evt}", tag = "events", operation_id = "get_event",
    summary = "Read an event",
    security(("bearer" = ["app:read"])),
    params(EventPath, ReadQuery),
    responses(
        (status = 200, description = "The event", body = EventOut),
        (status = 400, description = "`invalid_path`, `invalid_include`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `event_not_found`", body = ErrorBody),
        (status = 503, description = "`overloaded` (with `include=payload`): answers with payloads hold the \
            instance's `FENIX_ANSWER_BYTES`; retry after `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub(super) async fn read(
    State(s): State<SharedState>,
    ApiPath(EventPath { app, evt }): ApiPath<EventPath>,
    ApiQuery(q): ApiQuery<ReadQuery>,
) -> Result<Response, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let include = include_payload(q.include.as_deref())?;
    let evt = evt.known(Resource::Event)?;
    if !include {
        let row = s.store.get_event(&app.id, &evt, false).await?.ok_or_else(|| ApiError::not_found(Resource::Event))?;
        return Ok(Json(EventOut::from_row(row, false)).into_response());
    }
    // The payload (as large as a batch allowed) is loaded once the process has room for it.
    let sized = s.store.get_event_size(&app.id, &evt).await?.ok_or_else(|| ApiError::not_found(Resource::Event))?;
    let share = sized_page::take(&s, EventOut::most_bytes(&sized, true)).await?;
    let row = s.store.with_payloads(&app.id, vec![sized]).await?.pop().expect("one event in, one out");
    Ok(sized_page::item_answer(&EventOut::from_row(row, true), share))
}
