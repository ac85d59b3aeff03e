//! Bulk operations as tasks (migrations 0025, 0026): a task selects its
//! deliveries once, when it is created (`task_deliveries`), then a runner
//! holding its lease walks them in delivery id order, a batch per
//! transaction. The cursor, `done` and `failed` move in the same transaction
//! as the batch's changes, and only while the runner's lease still holds: a
//! task stopped halfway (a crash, a kill) goes on from its cursor under a
//! new lease, and acts on each selected delivery exactly once.
//!
//! The selection itself is made in batches too ([`Store::select_task_batch`]),
//! each a short transaction over a bounded range of delivery ids, so that
//! selecting a million deliveries never holds the writer for long. The
//! creator holds the task's lease while it selects; a creator that vanished
//! halfway leaves the rest of the selection to the runner that takes the
//! task up when that lease ends.

use super::{
    queue::PARKED,
    sql::{Built, Tx},
    Store,
};
use crate::{
    ids::{AppId, EndpointId, TaskId},
    lifecycle::{shown_status_at, DeliveryStatus, StatusClass, TaskKind, TaskState},
    store::Result,
    time::Millis,
};

/// Whose deliveries a task selects.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskScope {
    /// One app's: a task of `/v1/apps/{app}/tasks`.
    App(AppId),
    /// An operator's task: every app's, or only these apps' when there are any.
    Apps(Vec<AppId>),
}

impl TaskScope {
    /// The app a task of this scope belongs to (`None`: an operator's task).
    pub fn app_id(&self) -> Option<&AppId> {
        match self {
            TaskScope::App(id) => Some(id),
            TaskScope::Apps(_) => None,
        }
    }
}

/// Which deliveries a task selects. Its statuses are those the kind may
/// select ([`TaskKind::selectable`]), checked by the caller. Stored with the
/// task (JSON), for the runner that finishes a selection stopped halfway.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TaskSelection {
    pub scope: TaskScope,
    pub kind: TaskKind,
    pub endpoint_id: Option<EndpointId>,
    /// On the delivery's `created_at`: from `since` (included) to `until` (excluded).
    pub since: Option<Millis>,
    pub until: Option<Millis>,
    pub statuses: Vec<DeliveryStatus>,
    /// Empty: every type.
    pub event_types: Vec<String>,
    pub last_status_class: Option<StatusClass>,
}

/// A task as stored: its audit record and its progress.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TaskRow {
    pub id: TaskId,
    /// `None`: an operator's task across apps.
    pub app_id: Option<AppId>,
    pub kind: TaskKind,
    pub state: TaskState,
    /// The filter as the caller gave it (JSON).
    pub filter: String,
    /// `admin`, `app_token` or `portal_customer`.
    pub created_by: String,
    pub selected: i64,
    pub done: i64,
    pub failed: i64,
    pub rate_per_s: i64,
    pub created_at: Millis,
    pub started_at: Option<Millis>,
    pub finished_at: Option<Millis>,
}

const TASK_COLUMNS: &str = "id, app_id, kind, state, filter, created_by, selected, done, failed, rate_per_s, \
     created_at, started_at, finished_at";

/// A new task: what the caller asked, and who.
#[derive(Debug)]
pub struct NewTask<'a> {
    pub selection: &'a TaskSelection,
    pub filter_json: &'a str,
    pub created_by: &'a str,
    pub rate_per_s: i64,
}

/// A task whose lease a runner took ([`Store::claim_task`]).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedTask {
    pub id: TaskId,
    pub app_id: Option<AppId>,
    pub kind: TaskKind,
    pub rate_per_s: i64,
    /// Not `None` while its selection is not finished ([`Store::select_task_batch`]).
    pub selecting: Option<String>,
}

/// What one batch of a selection did ([`Store::select_task_batch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectBatch {
    /// It selected this many more deliveries; more may follow.
    Selected(u64),
    /// The selection is whole.
    Complete,
    /// The task is no longer this caller's: cancelled, or its lease was lost.
    Stopped,
}

/// What one batch of a runner did ([`Store::run_task_batch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskBatch {
    /// It acted on this many deliveries (changed or found changed meanwhile); more may follow.
    Progressed(u64),
    /// Every selected delivery was looked at: the task is `succeeded`.
    Finished,
    /// The task is no longer this runner's: cancelled, or its lease was lost.
    Stopped,
}

/// The selection's `FROM … WHERE …` over deliveries `d` of its scope.
/// A replay looks only at deliveries whose payload is kept (others cannot be
/// sent again); a cancel or skip only at rows still `pending` (shown
/// `scheduled`, `pending`, or `in_flight` before their request starts).
fn push_selection<'a>(q: &mut Built<'a>, sel: &'a TaskSelection, now: Millis) {
    push_scope(q, &sel.scope);
    match sel.kind {
        TaskKind::Replay => {
            q.push(" AND d.status IN ").bind_list(sel.statuses.iter().copied());
            q.push(" AND EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id AND e.payload IS NOT NULL)");
        }
        // An app's deletion selects nothing: it erases everything of the app ([`erase_app_batch`]).
        TaskKind::DeleteApp => {
            q.push(" AND 1 = 0");
        }
        TaskKind::Cancel | TaskKind::Skip => {
            q.push(" AND d.status = 'pending'");
            if !TaskKind::Cancel.selectable().iter().all(|s| sel.statuses.contains(s)) {
                q.bind(now);
                let now_at = format!("${}", q.values.len());
                // The placeholder was appended by `bind`: take it back, it is used inside the expression.
                q.sql.truncate(q.sql.len() - now_at.len());
                q.push(" AND (").push(&shown_status_at(&now_at));
                q.push(") IN ").bind_list(sel.statuses.iter().copied());
            }
        }
    }
    if let Some(endpoint_id) = &sel.endpoint_id {
        q.push(" AND d.endpoint_id = ").bind(endpoint_id);
    }
    if let Some(since) = sel.since {
        q.push(" AND d.created_at >= ").bind(since);
    }
    if let Some(until) = sel.until {
        q.push(" AND d.created_at < ").bind(until);
    }
    if !sel.event_types.is_empty() {
        q.push(" AND d.event_type IN ").bind_list(sel.event_types.iter());
    }
    if let Some(class) = sel.last_status_class {
        let latest = "(SELECT a.response_status FROM attempts a WHERE a.delivery_id = d.id \
             ORDER BY a.attempt_number DESC, a.started_at DESC LIMIT 1)";
        let cond = match class {
            StatusClass::Client => format!(" AND {latest} BETWEEN 400 AND 499"),
            StatusClass::Server => format!(" AND {latest} BETWEEN 500 AND 599"),
            StatusClass::Network => {
                format!(" AND EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = d.id) AND {latest} IS NULL")
            }
        };
        q.push(&cond);
    }
}

/// ` FROM deliveries d WHERE ` the scope's apps.
fn push_scope<'a>(q: &mut Built<'a>, scope: &'a TaskScope) {
    q.push(" FROM deliveries d WHERE ");
    match scope {
        TaskScope::App(app_id) => q.push("d.app_id = ").bind(app_id),
        TaskScope::Apps(apps) if apps.is_empty() => q.push("1 = 1"),
        TaskScope::Apps(apps) => q.push("d.app_id IN ").bind_list(apps.iter()),
    };
}

/// How many deliveries' ids one batch of a selection looks at, at most.
pub const SELECT_BATCH: i64 = 2_000;

/// [`Store::unclaimed_due_of_app`]: rows a claim may take, as the claim says.
static UNCLAIMED_DUE_OF_APP: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT COUNT(*) FROM (SELECT 1 FROM deliveries d WHERE d.app_id = $1 AND {} LIMIT $3) AS due",
        super::queue::lane::due_and_unclaimed("d", "$2")
    )
});

/// [`Store::unclaimed_due`]: the same over every app.
static UNCLAIMED_DUE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT COUNT(*) FROM (SELECT 1 FROM deliveries d WHERE {} LIMIT $2) AS due",
        super::queue::lane::due_and_unclaimed("d", "$1")
    )
});

/// How long a runner's claim on a task holds without a batch renewing it.
pub const TASK_LEASE_MS: i64 = 10_000;

impl Store {
    /// How many deliveries a task with this selection would act on if created now (a dry run).
    pub async fn count_task_selection(&self, sel: &TaskSelection, now: Millis) -> Result<i64> {
        let mut q = Built::new("SELECT COUNT(*)");
        push_selection(&mut q, sel, now);
        self.writes().scalar(&q.sql, &q.values).await
    }

    /// Creates a `queued` task and selects its deliveries, a batch per
    /// transaction ([`Store::select_task_batch`]) under a lease of the
    /// creator's, which it lets go when the selection is whole: only then may
    /// a runner take the task. If the creator stops halfway, the runner that
    /// takes the task once that lease ends finishes the selection.
    pub async fn create_task(&self, new: &NewTask<'_>, now: Millis) -> Result<TaskRow> {
        let owner = format!("create-{}", ulid::Ulid::new());
        let id = self.begin_task(new, &owner, now).await?;
        while let SelectBatch::Selected(_) = self.select_task_batch(&id, &owner, crate::time::now_ms()).await? {}
        let release = "UPDATE tasks SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2";
        self.writes().execute(release, &[(&id).into(), (&owner).into()]).await?;
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1");
        Ok(self.writes().fetch_optional(&sql, &[(&id).into()]).await?.expect("the task just inserted"))
    }

    /// The first step of [`Store::create_task`]: a `queued` task that has
    /// selected nothing yet, under `owner`'s lease.
    pub async fn begin_task(&self, new: &NewTask<'_>, owner: &str, now: Millis) -> Result<TaskId> {
        let id = TaskId::new();
        let selection = serde_json::to_string(new.selection).expect("a selection serializes");
        let insert = "INSERT INTO tasks (id, app_id, kind, state, filter, created_by, selected, rate_per_s, \
             created_at, selection, selecting, lease_owner, lease_until) \
             VALUES ($1, $2, $3, 'queued', $4, $5, 0, $6, $7, $8, '', $9, $10)";
        let values = [
            (&id).into(),
            new.selection.scope.app_id().into(),
            new.selection.kind.into(),
            new.filter_json.into(),
            new.created_by.into(),
            new.rate_per_s.into(),
            now.into(),
            (&selection).into(),
            owner.into(),
            (now + TASK_LEASE_MS).into(),
        ];
        self.writes().execute(insert, &values).await?;
        Ok(id)
    }

    /// Selects the deliveries of task `id` among the next [`SELECT_BATCH`]
    /// deliveries of its scope after its selection's cursor (in delivery id
    /// order), if `owner` holds its lease, and moves the cursor and
    /// `selected` in the same transaction (renewing the lease). Statuses are
    /// read as shown when the task was created.
    pub async fn select_task_batch(&self, id: &TaskId, owner: &str, now: Millis) -> Result<SelectBatch> {
        let mut tx = self.writes().begin_write().await?;
        let sql = "SELECT selection, selecting, created_at FROM tasks WHERE id = $1 AND lease_owner = $2 \
             AND state IN ('queued', 'running')";
        let Some((selection, selecting, created_at)): Option<(Option<String>, Option<String>, Millis)> =
            tx.fetch_optional(sql, &[id.into(), owner.into()]).await?
        else {
            tx.rollback().await?;
            return Ok(SelectBatch::Stopped);
        };
        let (Some(selection), Some(after)) = (selection, selecting) else {
            tx.rollback().await?;
            return Ok(SelectBatch::Complete);
        };
        let sel: TaskSelection = serde_json::from_str(&selection).map_err(|e| {
            super::Error::Internal(sqlx::Error::Decode(format!("task {id}: its stored selection: {e}").into()))
        })?;
        // The last of the next SELECT_BATCH ids of the scope (none: fewer are left).
        let mut bound = Built::new("SELECT d.id");
        match &sel.scope {
            TaskScope::App(_) => push_scope(&mut bound, &sel.scope),
            TaskScope::Apps(_) => {
                bound.push(" FROM deliveries d WHERE 1 = 1");
            }
        }
        bound.push(" AND d.id > ").bind(&after).push(" ORDER BY d.id LIMIT 1 OFFSET ").bind(SELECT_BATCH - 1);
        let upto: Option<String> = tx.fetch_optional(&bound.sql, &bound.values).await?.map(|(id,): (String,)| id);
        let mut q = Built::new("INSERT INTO task_deliveries (task_id, delivery_id) SELECT ");
        q.bind(id).push(", d.id");
        push_selection(&mut q, &sel, created_at);
        q.push(" AND d.id > ").bind(&after);
        if let Some(upto) = &upto {
            q.push(" AND d.id <= ").bind(upto);
        }
        let selected = tx.execute(&q.sql, &q.values).await?;
        let sql = "UPDATE tasks SET selected = selected + $3, selecting = $4, lease_until = $5 \
             WHERE id = $1 AND lease_owner = $2";
        let values =
            [id.into(), owner.into(), (selected as i64).into(), upto.as_deref().into(), (now + TASK_LEASE_MS).into()];
        tx.execute(sql, &values).await?;
        tx.commit().await?;
        Ok(if upto.is_some() { SelectBatch::Selected(selected) } else { SelectBatch::Complete })
    }

    /// Begins the deletion of an app, in one short transaction: the app is
    /// no longer found (`deleted_at`, its uid free again), its tokens and console sessions go,
    /// its endpoints are disabled (the worker sends nothing more for them),
    /// its tasks still going are cancelled, and a `delete_app` task (of no
    /// app, so that it outlives the app) is queued to erase the rest in
    /// batches. `selected` is what it will erase, counted before: the app's
    /// deliveries, events and endpoints. `None` when the app is unknown or
    /// being deleted already.
    pub async fn begin_app_deletion(
        &self,
        app_id: &AppId,
        created_by: &str,
        rate_per_s: i64,
        now: Millis,
    ) -> Result<Option<TaskRow>> {
        let count = "SELECT (SELECT COUNT(*) FROM deliveries WHERE app_id = $1) + \
             (SELECT COUNT(*) FROM events WHERE app_id = $1) + (SELECT COUNT(*) FROM endpoints WHERE app_id = $1)";
        let selected: i64 = self.reads().scalar(count, &[app_id.into()]).await?;
        let id = TaskId::new();
        let selection = TaskSelection {
            scope: TaskScope::Apps(vec![app_id.clone()]),
            kind: TaskKind::DeleteApp,
            endpoint_id: None,
            since: None,
            until: None,
            statuses: Vec::new(),
            event_types: Vec::new(),
            last_status_class: None,
        };
        let selection = serde_json::to_string(&selection).expect("a selection serializes");
        let filter = serde_json::json!({ "app_id": app_id }).to_string();
        let mut tx = self.writes().begin_write().await?;
        // Its uid is given up at once: a new app may take it while this one is erased.
        let marked = "UPDATE apps SET deleted_at = $2, uid = NULL WHERE id = $1 AND deleted_at IS NULL";
        if tx.execute(marked, &[app_id.into(), now.into()]).await? == 0 {
            tx.rollback().await?;
            return Ok(None);
        }
        tx.execute("DELETE FROM admin_tokens WHERE app_id = $1", &[app_id.into()]).await?;
        tx.execute("DELETE FROM console_sessions WHERE app_id = $1", &[app_id.into()]).await?;
        let disable = "UPDATE endpoints SET state = 'disabled', state_reason = 'app deleted', state_changed_at = $2 \
             WHERE app_id = $1";
        tx.execute(disable, &[app_id.into(), now.into()]).await?;
        let cancel = "UPDATE tasks SET state = 'cancelled', finished_at = $2, lease_owner = NULL, lease_until = NULL \
             WHERE app_id = $1 AND state IN ('queued', 'running')";
        tx.execute(cancel, &[app_id.into(), now.into()]).await?;
        let insert = "INSERT INTO tasks (id, app_id, kind, state, filter, created_by, selected, rate_per_s, \
             created_at, selection) VALUES ($1, NULL, 'delete_app', 'queued', $2, $3, $4, $5, $6, $7)";
        let values = [
            (&id).into(),
            (&filter).into(),
            created_by.into(),
            selected.into(),
            rate_per_s.into(),
            now.into(),
            (&selection).into(),
        ];
        tx.execute(insert, &values).await?;
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1");
        let row: TaskRow = tx.fetch_optional(&sql, &[(&id).into()]).await?.expect("the task just inserted");
        tx.commit().await?;
        Ok(Some(row))
    }

    /// One task: of the app `app_id`, or of any (an operator's view, `None`).
    pub async fn task(&self, app_id: Option<&AppId>, id: &TaskId) -> Result<Option<TaskRow>> {
        let mut q = Built::new(format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = "));
        q.bind(id);
        if let Some(app_id) = app_id {
            q.push(" AND app_id = ").bind(app_id);
        }
        self.writes().fetch_optional(&q.sql, &q.values).await
    }

    /// Tasks newest first, of the app `app_id` or of every app and none
    /// (`None`, an operator's view): up to `limit` before the id `before`
    /// (`None`: from the newest).
    pub async fn list_tasks(&self, app_id: Option<&AppId>, before: Option<&str>, limit: i64) -> Result<Vec<TaskRow>> {
        let mut q = Built::new(format!("SELECT {TASK_COLUMNS} FROM tasks WHERE 1 = 1"));
        if let Some(app_id) = app_id {
            q.push(" AND app_id = ").bind(app_id);
        }
        if let Some(before) = before {
            q.push(" AND id < ").bind(before);
        }
        q.push(" ORDER BY id DESC LIMIT ").bind(limit);
        self.reads().fetch_all(&q.sql, &q.values).await
    }

    /// Cancels a task still `queued` or `running` (of the app `app_id`, or
    /// any with `None`): its runner stops at its next batch (what the
    /// batches before did stays done). `Ok(None)` when unknown; `Err(state)`
    /// when it had ended already.
    pub async fn cancel_task(
        &self,
        app_id: Option<&AppId>,
        id: &TaskId,
        now: Millis,
    ) -> Result<Option<std::result::Result<TaskRow, TaskState>>> {
        let mut q = Built::new("UPDATE tasks SET state = 'cancelled', finished_at = ");
        q.bind(now).push(", lease_owner = NULL, lease_until = NULL WHERE state IN ('queued', 'running') ");
        q.push("AND kind <> 'delete_app' AND id = ");
        q.bind(id);
        if let Some(app_id) = app_id {
            q.push(" AND app_id = ").bind(app_id);
        }
        let changed = self.writes().execute(&q.sql, &q.values).await?;
        Ok(self.task(app_id, id).await?.map(|row| if changed == 1 { Ok(row) } else { Err(row.state) }))
    }

    /// Takes the lease of the oldest task waiting for a runner (queued, or
    /// running under a lease that ended), or `None`.
    pub async fn claim_task(&self, owner: &str, now: Millis) -> Result<Option<ClaimedTask>> {
        let sql = "UPDATE tasks SET state = 'running', started_at = COALESCE(started_at, $2), lease_owner = $1, \
             lease_until = $3 WHERE id = (SELECT id FROM tasks WHERE state IN ('queued', 'running') \
             AND (lease_until IS NULL OR lease_until < $2) ORDER BY id LIMIT 1) \
             AND state IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < $2) \
             RETURNING id, app_id, kind, rate_per_s, selecting";
        self.writes().fetch_optional(sql, &[owner.into(), now.into(), (now + TASK_LEASE_MS).into()]).await
    }

    /// How many deliveries of every app are due at `now` and claimed by no
    /// worker, counted up to `cap`: [`Store::unclaimed_due_of_app`] for an
    /// operator's task across apps.
    pub async fn unclaimed_due(&self, now: Millis, cap: i64) -> Result<i64> {
        self.reads().scalar(&UNCLAIMED_DUE, &[now.into(), cap.into()]).await
    }

    /// How many of `app_id`'s deliveries are due at `now` and claimed by no
    /// worker, counted up to `cap` (one walk of the app's due index, on a
    /// reader): the backlog that a task's re-queued deliveries leave in
    /// front of the fresh ones.
    pub async fn unclaimed_due_of_app(&self, app_id: &AppId, now: Millis, cap: i64) -> Result<i64> {
        self.reads().scalar(&UNCLAIMED_DUE_OF_APP, &[app_id.into(), now.into(), cap.into()]).await
    }

    /// Acts on the next `batch` selected deliveries of task `id` after its
    /// cursor, if `owner` still holds its lease, and moves the cursor and
    /// counts in the same transaction (renewing the lease).
    pub async fn run_task_batch(&self, id: &TaskId, owner: &str, now: Millis, batch: i64) -> Result<TaskBatch> {
        let mut tx = self.writes().begin_write().await?;
        let sql = "SELECT kind, cursor, selection FROM tasks WHERE id = $1 AND state = 'running' AND lease_owner = $2";
        let Some((kind, cursor, selection)): Option<(TaskKind, String, Option<String>)> =
            tx.fetch_optional(sql, &[id.into(), owner.into()]).await?
        else {
            tx.rollback().await?;
            return Ok(TaskBatch::Stopped);
        };
        if kind == TaskKind::DeleteApp {
            let Some(TaskScope::Apps(apps)) =
                selection.as_deref().and_then(|s| serde_json::from_str(s).ok()).map(|s: TaskSelection| s.scope)
            else {
                return Err(super::Error::Internal(sqlx::Error::Decode(format!("task {id}: no app to delete").into())));
            };
            return erase_app_batch(tx, id, owner, &apps[0], now, batch).await;
        }
        let sql = "SELECT delivery_id FROM task_deliveries WHERE task_id = $1 AND delivery_id > $2 \
             ORDER BY delivery_id LIMIT $3";
        let ids: Vec<String> = tx.scalar_all(sql, &[id.into(), (&cursor).into(), batch.into()]).await?;
        let Some(last) = ids.last() else {
            let sql = "UPDATE tasks SET state = 'succeeded', finished_at = $3, lease_owner = NULL, lease_until = NULL \
                 WHERE id = $1 AND lease_owner = $2 AND state = 'running'";
            let ended = tx.execute(sql, &[id.into(), owner.into(), now.into()]).await?;
            tx.commit().await?;
            return Ok(if ended == 1 { TaskBatch::Finished } else { TaskBatch::Stopped });
        };
        let changed = act_on(&mut tx, kind, &ids, now).await?;
        let failed = ids.len() as i64 - changed as i64;
        let sql = "UPDATE tasks SET cursor = $3, done = done + $4, failed = failed + $5, lease_until = $6 \
             WHERE id = $1 AND lease_owner = $2 AND state = 'running' AND cursor = $7";
        let values = [
            id.into(),
            owner.into(),
            last.into(),
            (changed as i64).into(),
            failed.into(),
            (now + TASK_LEASE_MS).into(),
            (&cursor).into(),
        ];
        if tx.execute(sql, &values).await? != 1 {
            tx.rollback().await?;
            return Ok(TaskBatch::Stopped);
        }
        tx.commit().await?;
        Ok(TaskBatch::Progressed(ids.len() as u64))
    }
}

/// What an app's deletion erases, a bounded batch at a time, in this order:
/// its deliveries not sent yet first (nothing more is sent for them), then
/// the rest of its log (attempts go with their deliveries), its events,
/// their labels, and its endpoints (with their secrets and records).
const ERASE_STEPS: [&str; 5] = [
    "DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE app_id = $1 AND status = 'pending' LIMIT $2)",
    "DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE app_id = $1 LIMIT $2)",
    "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE app_id = $1 LIMIT $2)",
    "DELETE FROM event_labels WHERE event_id IN (SELECT event_id FROM event_labels WHERE app_id = $1 LIMIT $2) \
     AND app_id = $1",
    "DELETE FROM endpoints WHERE id IN (SELECT id FROM endpoints WHERE app_id = $1 LIMIT $2)",
];

/// One batch of an app's deletion, in `tx`: the first [`ERASE_STEPS`] with
/// rows left erases up to `batch` of them; once none is left, the app's row
/// goes (with what a late ingestion may still have added), and the task
/// has succeeded, in the same transaction.
async fn erase_app_batch(
    mut tx: Tx<'_>,
    id: &TaskId,
    owner: &str,
    app_id: &AppId,
    now: Millis,
    batch: i64,
) -> Result<TaskBatch> {
    let mut erased = 0;
    for step in ERASE_STEPS {
        erased = tx.execute(step, &[app_id.into(), batch.into()]).await?;
        if erased > 0 {
            break;
        }
    }
    let sql = if erased > 0 {
        "UPDATE tasks SET done = done + $3, lease_until = $4 WHERE id = $1 AND lease_owner = $2 AND state = 'running' \
         AND $5 > 0"
    } else {
        tx.execute("DELETE FROM apps WHERE id = $1", &[app_id.into()]).await?;
        tx.execute("DELETE FROM deliveries WHERE app_id = $1", &[app_id.into()]).await?;
        tx.execute("DELETE FROM event_labels WHERE app_id = $1", &[app_id.into()]).await?;
        "UPDATE tasks SET done = done + $3, state = 'succeeded', finished_at = $5, lease_owner = NULL, \
         lease_until = NULL WHERE id = $1 AND lease_owner = $2 AND state = 'running'"
    };
    let values = [id.into(), owner.into(), (erased as i64).into(), (now + TASK_LEASE_MS).into(), now.into()];
    if tx.execute(sql, &values).await? != 1 {
        tx.rollback().await?;
        return Ok(TaskBatch::Stopped);
    }
    tx.commit().await?;
    Ok(if erased > 0 { TaskBatch::Progressed(erased) } else { TaskBatch::Finished })
}

/// Acts on the deliveries `ids` in `tx` as a task of `kind` does: a replay
/// re-queues those still `failed` or `skipped` whose payload is kept; a
/// cancel or skip ends those still `pending` (and lets an ordered lane
/// parked behind one go on). How many it changed.
async fn act_on(tx: &mut Tx<'_>, kind: TaskKind, ids: &[String], now: Millis) -> Result<u64> {
    Ok(match kind {
        TaskKind::DeleteApp => 0,
        TaskKind::Replay => {
            let mut q = Built::new("UPDATE deliveries SET status = 'pending', budget_start = attempt_count, ");
            q.push("next_attempt_at = ").bind(now).push(", updated_at = ").bind(now);
            q.push(" WHERE status IN ('failed', 'skipped') AND EXISTS (SELECT 1 FROM events e ");
            q.push("WHERE e.id = deliveries.event_id AND e.payload IS NOT NULL) AND id IN ");
            q.bind_list(ids.iter());
            tx.execute(&q.sql, &q.values).await?
        }
        TaskKind::Cancel | TaskKind::Skip => {
            let mut q = Built::new("UPDATE deliveries SET status = 'skipped', skip_reason = 'cancelled', ");
            q.push("lease_until = NULL, lease_owner = NULL, updated_at = ").bind(now);
            q.push(" WHERE status = 'pending' AND id IN ").bind_list(ids.iter());
            q.push(" RETURNING id, lane_seq");
            let cancelled: Vec<(String, Option<i64>)> = tx.conn().fetch_all(&q.sql, &q.values).await?;
            // An ordered lane parked behind a cancelled delivery goes on, as after an event cancel.
            for (delivery, _) in cancelled.iter().filter(|(_, lane_seq)| lane_seq.is_some()) {
                tx.execute(super::queue::PROMOTE_NEXT, &[delivery.into(), now.into(), PARKED.into()]).await?;
            }
            cancelled.len() as u64
        }
    })
}
