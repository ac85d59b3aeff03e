//! Bulk operations as tasks: `POST /v1/apps/{app}/tasks` (a replay, cancel
//! or skip of many deliveries, or its dry run), reading and cancelling them,
//! `POST …/endpoints/{ep}/recover` (replay an endpoint's deliveries that
//! did not succeed during an outage), and the operator's `/v1/tasks` (the
//! same across apps, and every task). A task selects its deliveries when it
//! is created, so a dry run counts exactly what the task then acts on; the
//! runner (`worker/tasks.rs`) acts on them at `FENIX_TASK_RATE` at most.
//! The task's row is the audit record: who asked, when, what selection.

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    Extension, Json,
};
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    auth::Actor,
    code::{Code, Resource},
    error::{ApiError, ErrorBody},
    extract::{
        optional_json, ApiJson, ApiPath, ApiQuery, AppPath, EndpointPath, ListScope, NoQuery, Page, PageQuery, RawBody,
    },
    lookup::{self, IdParam},
};
use crate::{
    ids::{AppId, EndpointId, TaskId},
    lifecycle::{DeliveryStatus, StatusClass, TaskKind, TaskState},
    state::SharedState,
    store::tasks::{NewTask, TaskRow, TaskScope, TaskSelection},
    time,
};

/// Task routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(create_task, list_tasks))
        .routes(routes!(get_task))
        .routes(routes!(cancel_task))
        .routes(routes!(recover_endpoint))
        .routes(routes!(create_operator_task, list_all_tasks))
        .routes(routes!(get_any_task))
        .routes(routes!(cancel_any_task))
}

/// Which deliveries of the app a task selects; every field narrows it.
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TaskFilter)]
pub struct FilterIn {
    /// Only this endpoint's deliveries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endpoint_id: Option<String>,
    /// Deliveries created at or after this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    since: Option<String>,
    /// Deliveries created before this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    until: Option<String>,
    /// Statuses as shown. `replay`: `failed`, `skipped` (default both);
    /// `cancel`, `skip`: `scheduled`, `pending` (default both, and then also
    /// `in_flight` deliveries whose request has not started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    statuses: Option<Vec<String>>,
    /// Only these event types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    event_types: Option<Vec<String>>,
    /// Only deliveries whose latest attempt answered 4xx, 5xx, or no answer (`network`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<StatusClass>)]
    last_status_class: Option<String>,
}

/// A task to create, or to count (`dry_run`).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TaskRequest)]
struct CreateIn {
    /// `replay`, `cancel` or `skip`.
    #[schema(value_type = TaskRequestKind)]
    kind: String,
    /// True: create nothing, answer how many deliveries the task would act on.
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    filter: FilterIn,
}

/// How many deliveries a task would act on now.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = TaskDryRun)]
struct DryRunOut {
    #[schema(example = 312)]
    count: i64,
}

/// A task: its progress and its audit record.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Task)]
pub struct TaskOut {
    id: TaskId,
    /// The app whose deliveries it selects; `null` for an operator's task across apps (`/v1/tasks`).
    #[schema(value_type = Option<String>, example = "app_01JD3Z6N4VQK1T9S0W5X2Y8R7M")]
    app_id: Option<AppId>,
    kind: TaskKind,
    state: TaskState,
    /// Deliveries selected when the task was created (`delete_app`: the
    /// app's deliveries, events and endpoints when its deletion was asked).
    selected: i64,
    /// Selected deliveries it changed (re-queued, or made `skipped`; `delete_app`: rows erased).
    done: i64,
    /// Selected deliveries it looked at and left: their status changed
    /// meanwhile (sent, replayed, cancelled by another call), or, for a
    /// replay, their payload was purged or erased since.
    failed: i64,
    /// Deliveries per second it acts on, at most.
    rate_per_s: i64,
    /// The selection, as given.
    #[schema(value_type = FilterRecord)]
    filter: serde_json::Value,
    /// Who created it: `admin` (an admin token or an operator's session), `app_token` or `portal_customer`.
    created_by: String,
    #[schema(format = DateTime)]
    created_at: String,
    #[schema(format = DateTime)]
    started_at: Option<String>,
    #[schema(format = DateTime)]
    finished_at: Option<String>,
}

/// A task's selection as it was given: an app's task's filter, an
/// operator's (`app_ids`), or the app an app's deletion erases (`app_id`).
#[derive(utoipa::ToSchema)]
#[schema(as = TaskFilterRecord)]
#[allow(dead_code)]
struct FilterRecord {
    /// An app's task: only this endpoint's deliveries.
    endpoint_id: Option<String>,
    /// An operator's task: only these apps (ids or uids, as given).
    app_ids: Option<Vec<String>>,
    /// An app's deletion (`delete_app`): the app it erases.
    app_id: Option<String>,
    /// Deliveries created at or after this time (RFC 3339).
    #[schema(format = DateTime)]
    since: Option<String>,
    /// Deliveries created before this time (RFC 3339).
    #[schema(format = DateTime)]
    until: Option<String>,
    /// Statuses as given.
    statuses: Option<Vec<String>>,
    /// Only these event types.
    event_types: Option<Vec<String>>,
    /// Only deliveries whose latest attempt answered 4xx, 5xx, or no answer (`network`).
    #[schema(value_type = Option<StatusClass>)]
    last_status_class: Option<String>,
}

/// What a created task does (an app's deletion, `delete_app`, is made by `DELETE /v1/apps/{app}`).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
enum TaskRequestKind {
    Replay,
    Cancel,
    Skip,
}

impl From<TaskRow> for TaskOut {
    fn from(row: TaskRow) -> TaskOut {
        TaskOut {
            id: row.id,
            app_id: row.app_id,
            kind: row.kind,
            state: row.state,
            selected: row.selected,
            done: row.done,
            failed: row.failed,
            rate_per_s: row.rate_per_s,
            filter: serde_json::from_str(&row.filter).unwrap_or(serde_json::Value::Null),
            created_by: row.created_by,
            created_at: time::rfc3339_ms(row.created_at),
            started_at: row.started_at.map(time::rfc3339_ms),
            finished_at: row.finished_at.map(time::rfc3339_ms),
        }
    }
}

fn invalid(field: &str, message: impl std::fmt::Display) -> ApiError {
    ApiError::new(Code::InvalidTaskFilter, format!("filter.{field}: {message}"))
}

pub(super) fn created_by(actor: Actor) -> &'static str {
    match actor {
        Actor::Operator => "admin",
        Actor::AppToken => "app_token",
        Actor::PortalCustomer => "portal_customer",
    }
}

/// Parses a filter into a selection of the deliveries of `scope`: 422
/// naming the field for bad values, 404 for an endpoint its app does not have.
async fn selection(s: &SharedState, scope: TaskScope, kind: TaskKind, f: &FilterIn) -> Result<TaskSelection, ApiError> {
    let time = |field: &str, v: &Option<String>| -> Result<Option<i64>, ApiError> {
        v.as_deref()
            .map(|v| {
                time::parse_rfc3339(v)
                    .ok_or_else(|| invalid(field, "must be an RFC 3339 time such as 2026-11-29T21:04:19Z"))
            })
            .transpose()
    };
    let (since, until) = (time("since", &f.since)?, time("until", &f.until)?);
    if let (Some(since), Some(until)) = (since, until) {
        if since >= until {
            return Err(invalid("until", "must be after since"));
        }
    }
    let selectable = kind.selectable();
    let statuses = match &f.statuses {
        None => selectable.to_vec(),
        Some(given) if given.is_empty() => return Err(invalid("statuses", "must name at least one status")),
        Some(given) => given
            .iter()
            .map(|st| st.parse().ok().filter(|s: &DeliveryStatus| selectable.contains(s)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                let names: Vec<_> = selectable.iter().map(|s| format!("\"{}\"", s.as_str())).collect();
                ApiError::new(
                    Code::InvalidStatuses,
                    format!("filter.statuses: a {} task accepts only {}", kind.as_str(), names.join(" and ")),
                )
            })?,
    };
    let event_types = f.event_types.clone().unwrap_or_default();
    if event_types.iter().any(|t| t.is_empty() || t.len() > 256) {
        return Err(invalid("event_types", "each must be a non-empty event type"));
    }
    let last_status_class = f
        .last_status_class
        .as_deref()
        .map(|c| {
            c.parse::<StatusClass>()
                .map_err(|_| invalid("last_status_class", "must be \"4xx\", \"5xx\" or \"network\""))
        })
        .transpose()?;
    let endpoint_id = match (&f.endpoint_id, scope.app_id()) {
        (None, _) => None,
        (Some(text), app_id) => {
            let id = EndpointId::parse(text).map_err(|e| invalid("endpoint_id", e))?;
            let app_id = app_id.ok_or_else(|| invalid("endpoint_id", "an endpoint's task is its app's"))?;
            s.store.get_endpoint(app_id, &id).await?.ok_or_else(|| ApiError::not_found(Resource::Endpoint))?;
            Some(id)
        }
    };
    Ok(TaskSelection { scope, kind, endpoint_id, since, until, statuses, event_types, last_status_class })
}

/// Creates a task with this selection; `filter` is what the caller gave, for the record.
async fn start(
    s: &SharedState,
    actor: Actor,
    sel: &TaskSelection,
    filter: &impl Serialize,
) -> Result<TaskRow, ApiError> {
    let filter_json = serde_json::to_string(filter).expect("a filter serializes");
    let rate_per_s = s.settings.task_rate as i64;
    let new = NewTask { selection: sel, filter_json: &filter_json, created_by: created_by(actor), rate_per_s };
    let row = s.store.create_task(&new, time::now_ms()).await?;
    let app_id = row.app_id.as_ref().map_or("(every app)", |a| a.as_str());
    tracing::info!(app_id, task_id = %row.id, kind = row.kind.as_str(), selected = row.selected,
        created_by = row.created_by, "task created");
    Ok(row)
}

/// A dry run's answer, or the task created.
async fn count_or_start(
    s: &SharedState,
    actor: Actor,
    dry_run: bool,
    sel: &TaskSelection,
    filter: &impl Serialize,
) -> Result<Response, ApiError> {
    if dry_run {
        let count = s.store.count_task_selection(sel, time::now_ms()).await?;
        return Ok(Json(DryRunOut { count }).into_response());
    }
    let row = start(s, actor, sel, filter).await?;
    Ok((StatusCode::ACCEPTED, Json(TaskOut::from(row))).into_response())
}

fn task_kind(text: &str) -> Result<TaskKind, ApiError> {
    text.parse()
        .ok()
        .filter(|k| *k != TaskKind::DeleteApp)
        .ok_or_else(|| ApiError::new(Code::InvalidTaskKind, "kind must be \"replay\", \"cancel\" or \"skip\""))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/tasks", tag = "tasks", operation_id = "create_task",
    summary = "Replay, cancel or skip many deliveries, in the background (or count them: dry run)",
    security(("bearer" = ["app:manage"])),
    description = "Selects the app's deliveries that match `filter` now, and acts on them in the background, in \
        delivery id order, at most `FENIX_TASK_RATE` per second. `replay` re-queues `failed` and `skipped` \
        deliveries (whose payload is kept) with their original event id and a fresh attempt budget; `cancel` and \
        `skip` (the same) make deliveries not sent yet (`scheduled`, `pending`, or `in_flight` before their request \
        starts) `skipped` with `skip_reason: cancelled`. A delivery whose status changed between the selection and \
        its batch is left as it is and counted in `failed`. With `dry_run: true` nothing is created: the answer is \
        the number of deliveries a task created instead would select.",
    params(AppPath),
    request_body = CreateIn,
    responses(
        (status = 200, description = "Dry run: how many deliveries the task would act on", body = DryRunOut),
        (status = 202, description = "Created; it runs in the background", body = TaskOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_task_kind`, `invalid_task_filter`, `invalid_statuses`", body = ErrorBody),
    )
)]
async fn create_task(
    State(s): State<SharedState>,
    Extension(actor): Extension<Actor>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiJson(body): ApiJson<CreateIn>,
) -> Result<Response, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let kind = task_kind(&body.kind)?;
    let sel = selection(&s, TaskScope::App(app.id), kind, &body.filter).await?;
    count_or_start(&s, actor, body.dry_run, &sel, &body.filter).await
}

/// `{app}/tasks/{task}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct TaskPath {
    /// The app's id (`app_…`) or its uid.
    app: String,
    /// The task's id (`tsk_…`).
    #[param(value_type = String)]
    task: IdParam<TaskId>,
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/tasks/{task}", tag = "tasks", operation_id = "get_task",
    summary = "A task: its state, progress and audit record",
    security(("bearer" = ["app:read"])),
    params(TaskPath),
    responses(
        (status = 200, description = "The task", body = TaskOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `task_not_found`", body = ErrorBody),
    )
)]
async fn get_task(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(TaskPath { app, task }): ApiPath<TaskPath>,
) -> Result<Json<TaskOut>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let task = task.known(Resource::Task)?;
    let row = s.store.task(Some(&app.id), &task).await?.ok_or_else(|| ApiError::not_found(Resource::Task))?;
    Ok(Json(row.into()))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/tasks", tag = "tasks", operation_id = "list_tasks",
    summary = "An app's tasks, newest first",
    security(("bearer" = ["app:read"])),
    params(AppPath, PageQuery),
    responses(
        (status = 200, description = "A page of tasks", body = Page<TaskOut>),
        (status = 400, description = "`invalid_path`, `invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
    )
)]
async fn list_tasks(
    State(s): State<SharedState>,
    ApiQuery(q): ApiQuery<PageQuery>,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
) -> Result<Json<Page<TaskOut>>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let list = ListScope::new(TaskId::PREFIX, &[Some(app.id.as_str())]);
    let limit = q.limit()?;
    let before = q.cursor(&list)?;
    let rows = s.store.list_tasks(Some(&app.id), before.as_deref(), limit + 1).await?;
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.as_str().to_string(), TaskOut::from)))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/tasks/{task}/cancel", tag = "tasks", operation_id = "cancel_task",
    summary = "Stop a task",
    security(("bearer" = ["app:manage"])),
    description = "A `queued` or `running` task becomes `cancelled`: its runner stops before its next batch. \
        What its batches did before stays done (`done`, `failed`).",
    params(TaskPath),
    request_body(content = Option<super::extract::NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 200, description = "Cancelled", body = TaskOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `task_not_found`", body = ErrorBody),
        (status = 409, description = "`task_ended`: it had succeeded, failed or been cancelled already", body = ErrorBody),
    )
)]
async fn cancel_task(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(TaskPath { app, task }): ApiPath<TaskPath>,
    RawBody(body): RawBody,
) -> Result<Json<TaskOut>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    cancel(&s, Some(&app.id), task, &body).await
}

/// Cancels a task (of `app_id`, or any).
async fn cancel(
    s: &SharedState,
    app_id: Option<&AppId>,
    task: IdParam<TaskId>,
    body: &[u8],
) -> Result<Json<TaskOut>, ApiError> {
    let super::extract::NoOptions {} = optional_json(body)?;
    let task = task.known(Resource::Task)?;
    match s.store.cancel_task(app_id, &task, time::now_ms()).await? {
        None => Err(ApiError::not_found(Resource::Task)),
        Some(Err(_)) if s.store.task(app_id, &task).await?.is_some_and(|t| t.kind == TaskKind::DeleteApp) => {
            Err(ApiError::new(Code::TaskNotCancellable, "an app's deletion cannot be stopped: its app is gone already"))
        }
        Some(Err(state)) => Err(ApiError::new(Code::TaskEnded, format!("the task is {} already", state.as_str()))),
        Some(Ok(row)) => {
            tracing::info!(app_id = app_id.map_or("(any)", |a| a.as_str()), task_id = %task, "task cancelled");
            Ok(Json(row.into()))
        }
    }
}

/// The outage window of an endpoint's recovery.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = RecoverRequest)]
struct RecoverIn {
    /// Start of the outage (RFC 3339), on the deliveries' `created_at`.
    #[schema(format = DateTime)]
    since: Option<String>,
    /// End of the outage (RFC 3339); default: now.
    #[schema(format = DateTime)]
    until: Option<String>,
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/recover", tag = "tasks", operation_id = "recover_endpoint",
    summary = "Replay what an endpoint did not receive during an outage, as one task",
    security(("bearer" = ["app:manage"])),
    description = "A `replay` task of the endpoint's `failed` and `skipped` deliveries created between `since` \
        and `until`: the same as `POST /v1/apps/{app}/tasks` with `{\"kind\": \"replay\", \"filter\": \
        {\"endpoint_id\", \"since\", \"until\"}}`. Deliveries still retrying are not selected: they are sent \
        anyway.",
    params(EndpointPath),
    request_body = RecoverIn,
    responses(
        (status = 202, description = "Created; it runs in the background", body = TaskOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_task_filter`: `since` missing or not a time", body = ErrorBody),
    )
)]
async fn recover_endpoint(
    State(s): State<SharedState>,
    Extension(actor): Extension<Actor>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Response, ApiError> {
    let endpoint = lookup::endpoint(&s, &app, &ep).await?;
    let body: RecoverIn = optional_json(&body)?;
    if body.since.is_none() {
        return Err(invalid("since", "is required: the start of the outage"));
    }
    let filter = FilterIn {
        endpoint_id: Some(endpoint.id.as_str().to_string()),
        since: body.since,
        until: body.until,
        ..FilterIn::default()
    };
    let sel = selection(&s, TaskScope::App(endpoint.app_id.clone()), TaskKind::Replay, &filter).await?;
    let row = start(&s, actor, &sel, &filter).await?;
    Ok((StatusCode::ACCEPTED, Json(TaskOut::from(row))).into_response())
}

/// Which deliveries of which apps an operator's task selects; every field narrows it.
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = OperatorTaskFilter)]
struct OperatorFilterIn {
    /// Only these apps' deliveries (ids or uids); default: every app's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    app_ids: Option<Vec<String>>,
    /// Deliveries created at or after this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    since: Option<String>,
    /// Deliveries created before this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    until: Option<String>,
    /// Statuses as shown, as in an app's task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    statuses: Option<Vec<String>>,
    /// Only these event types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    event_types: Option<Vec<String>>,
    /// Only deliveries whose latest attempt answered 4xx, 5xx, or no answer (`network`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<StatusClass>)]
    last_status_class: Option<String>,
}

/// An operator's task to create across apps, or to count (`dry_run`).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = OperatorTaskRequest)]
struct OperatorCreateIn {
    /// `replay`, `cancel` or `skip`.
    #[schema(value_type = TaskRequestKind)]
    kind: String,
    /// True: create nothing, answer how many deliveries the task would act on.
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    filter: OperatorFilterIn,
}

/// At most this many apps in an operator's task's `app_ids`.
const MAX_TASK_APPS: usize = 100;

#[utoipa::path(
    post, path = "/v1/tasks", tag = "tasks", operation_id = "create_operator_task",
    summary = "Replay, cancel or skip many deliveries of every app (or of some), in the background (or count them)",
    security(("bearer" = ["admin"])),
    description = "An app's task (`POST /v1/apps/{app}/tasks`) across apps: the deliveries of every app, or of \
        the apps named in `filter.app_ids` (at most 100), that match the filter now. The task belongs to no app \
        (`app_id: null`); it is read and cancelled under `/v1/tasks`. A replay goes no faster than the worker \
        takes what it re-queued.",
    request_body = OperatorCreateIn,
    responses(
        (status = 200, description = "Dry run: how many deliveries the task would act on", body = DryRunOut),
        (status = 202, description = "Created; it runs in the background", body = TaskOut),
        (status = 404, description = "`app_not_found`: an app of `filter.app_ids`", body = ErrorBody),
        (status = 422, description = "`invalid_task_kind`, `invalid_task_filter`, `invalid_statuses`", body = ErrorBody),
    )
)]
async fn create_operator_task(
    State(s): State<SharedState>,
    Extension(actor): Extension<Actor>,
    _: NoQuery,
    ApiJson(body): ApiJson<OperatorCreateIn>,
) -> Result<Response, ApiError> {
    let kind = task_kind(&body.kind)?;
    let f = &body.filter;
    let mut apps = Vec::new();
    if let Some(given) = &f.app_ids {
        if given.is_empty() || given.len() > MAX_TASK_APPS {
            return Err(invalid(
                "app_ids",
                format!("must name 1 to {MAX_TASK_APPS} apps, or be left out for every app"),
            ));
        }
        for named in given {
            let id = lookup::app(&s.store, named).await?.id;
            if !apps.contains(&id) {
                apps.push(id);
            }
        }
    }
    let common = FilterIn {
        endpoint_id: None,
        since: f.since.clone(),
        until: f.until.clone(),
        statuses: f.statuses.clone(),
        event_types: f.event_types.clone(),
        last_status_class: f.last_status_class.clone(),
    };
    let sel = selection(&s, TaskScope::Apps(apps), kind, &common).await?;
    count_or_start(&s, actor, body.dry_run, &sel, f).await
}

/// `/v1/tasks/{task}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct AnyTaskPath {
    /// The task's id (`tsk_…`).
    #[param(value_type = String)]
    task: IdParam<TaskId>,
}

#[utoipa::path(
    get, path = "/v1/tasks/{task}", tag = "tasks", operation_id = "get_any_task",
    summary = "Any task, an app's or an operator's: its state, progress and audit record",
    security(("bearer" = ["admin"])),
    params(AnyTaskPath),
    responses(
        (status = 200, description = "The task", body = TaskOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`task_not_found`", body = ErrorBody),
    )
)]
async fn get_any_task(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AnyTaskPath { task }): ApiPath<AnyTaskPath>,
) -> Result<Json<TaskOut>, ApiError> {
    let task = task.known(Resource::Task)?;
    let row = s.store.task(None, &task).await?.ok_or_else(|| ApiError::not_found(Resource::Task))?;
    Ok(Json(row.into()))
}

#[utoipa::path(
    get, path = "/v1/tasks", tag = "tasks", operation_id = "list_all_tasks",
    summary = "Every task, of every app and the operator's, newest first",
    security(("bearer" = ["admin"])),
    params(PageQuery),
    responses(
        (status = 200, description = "A page of tasks", body = Page<TaskOut>),
        (status = 400, description = "`invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
    )
)]
async fn list_all_tasks(
    State(s): State<SharedState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<TaskOut>>, ApiError> {
    let list = ListScope::new(TaskId::PREFIX, &[None]);
    let limit = q.limit()?;
    let before = q.cursor(&list)?;
    let rows = s.store.list_tasks(None, before.as_deref(), limit + 1).await?;
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.as_str().to_string(), TaskOut::from)))
}

#[utoipa::path(
    post, path = "/v1/tasks/{task}/cancel", tag = "tasks", operation_id = "cancel_any_task",
    summary = "Stop any task, an app's or an operator's",
    security(("bearer" = ["admin"])),
    description = "As `POST /v1/apps/{app}/tasks/{task}/cancel`, for any task.",
    params(AnyTaskPath),
    request_body(content = Option<super::extract::NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 200, description = "Cancelled", body = TaskOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`task_not_found`", body = ErrorBody),
        (status = 409, description = "`task_ended`: it had succeeded, failed or been cancelled already; \
            `task_not_cancellable`: an app's deletion", body = ErrorBody),
    )
)]
async fn cancel_any_task(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AnyTaskPath { task }): ApiPath<AnyTaskPath>,
    RawBody(body): RawBody,
) -> Result<Json<TaskOut>, ApiError> {
    cancel(&s, None, task, &body).await
}
