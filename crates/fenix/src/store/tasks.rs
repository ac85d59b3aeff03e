//! Bulk operations as tasks (migration 0025): a task selects its deliveries
//! once, when it is created (`task_deliveries`), then a runner holding its
//! lease walks them in delivery id order, a batch per transaction. The
//! cursor, `done` and `failed` move in the same transaction as the batch's
//! changes, and only while the runner's lease still holds: a task stopped
//! halfway (a crash, a kill) goes on from its cursor under a new lease, and
//! acts on each selected delivery exactly once.

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

/// Which deliveries of an app a task selects. Its statuses are those the
/// kind may select ([`TaskKind::selectable`]), checked by the caller.
#[derive(Debug, Clone)]
pub struct TaskSelection {
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
    pub app_id: AppId,
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
    pub app_id: &'a AppId,
    pub selection: &'a TaskSelection,
    pub filter_json: &'a str,
    pub created_by: &'a str,
    pub rate_per_s: i64,
}

/// A task whose lease a runner took ([`Store::claim_task`]).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedTask {
    pub id: TaskId,
    pub app_id: AppId,
    pub kind: TaskKind,
    pub rate_per_s: i64,
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

/// The selection's `FROM … WHERE …` over deliveries `d` of `app_id`.
/// A replay looks only at deliveries whose payload is kept (others cannot be
/// sent again); a cancel or skip only at rows still `pending` (shown
/// `scheduled`, `pending`, or `in_flight` before their request starts).
fn push_selection<'a>(q: &mut Built<'a>, app_id: &'a AppId, sel: &'a TaskSelection, now: Millis) {
    q.push(" FROM deliveries d WHERE d.app_id = ").bind(app_id);
    match sel.kind {
        TaskKind::Replay => {
            q.push(" AND d.status IN ").bind_list(sel.statuses.iter().copied());
            q.push(" AND EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id AND e.payload IS NOT NULL)");
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

/// [`Store::unclaimed_due_of_app`]: rows a claim may take, as the claim says.
static UNCLAIMED_DUE_OF_APP: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT COUNT(*) FROM (SELECT 1 FROM deliveries d WHERE d.app_id = $1 AND {} LIMIT $3) AS due",
        super::queue::lane::due_and_unclaimed("d", "$2")
    )
});

/// How long a runner's claim on a task holds without a batch renewing it.
pub const TASK_LEASE_MS: i64 = 10_000;

impl Store {
    /// How many deliveries a task with this selection would act on if created now (a dry run).
    pub async fn count_task_selection(&self, app_id: &AppId, sel: &TaskSelection, now: Millis) -> Result<i64> {
        let mut q = Built::new("SELECT COUNT(*)");
        push_selection(&mut q, app_id, sel, now);
        self.writes().scalar(&q.sql, &q.values).await
    }

    /// Creates a `queued` task and selects its deliveries, in one transaction.
    pub async fn create_task(&self, new: &NewTask<'_>, now: Millis) -> Result<TaskRow> {
        let id = TaskId::new();
        let mut tx = self.writes().begin_write().await?;
        let insert =
            "INSERT INTO tasks (id, app_id, kind, state, filter, created_by, selected, rate_per_s, created_at) \
             VALUES ($1, $2, $3, 'queued', $4, $5, 0, $6, $7)";
        let values = [
            (&id).into(),
            new.app_id.into(),
            new.selection.kind.into(),
            new.filter_json.into(),
            new.created_by.into(),
            new.rate_per_s.into(),
            now.into(),
        ];
        tx.execute(insert, &values).await?;
        let mut q = Built::new("INSERT INTO task_deliveries (task_id, delivery_id) SELECT ");
        q.bind(&id).push(", d.id");
        push_selection(&mut q, new.app_id, new.selection, now);
        let selected = tx.execute(&q.sql, &q.values).await? as i64;
        tx.execute("UPDATE tasks SET selected = $2 WHERE id = $1", &[(&id).into(), selected.into()]).await?;
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1");
        let row: TaskRow = tx.fetch_optional(&sql, &[(&id).into()]).await?.expect("the task just inserted");
        tx.commit().await?;
        Ok(row)
    }

    /// One task of one app.
    pub async fn task(&self, app_id: &AppId, id: &TaskId) -> Result<Option<TaskRow>> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1 AND app_id = $2");
        self.writes().fetch_optional(&sql, &[id.into(), app_id.into()]).await
    }

    /// An app's tasks, newest first: up to `limit` before the id `before` (`None`: from the newest).
    pub async fn list_tasks(&self, app_id: &AppId, before: Option<&str>, limit: i64) -> Result<Vec<TaskRow>> {
        let mut q = Built::new(format!("SELECT {TASK_COLUMNS} FROM tasks WHERE app_id = "));
        q.bind(app_id);
        if let Some(before) = before {
            q.push(" AND id < ").bind(before);
        }
        q.push(" ORDER BY id DESC LIMIT ").bind(limit);
        self.reads().fetch_all(&q.sql, &q.values).await
    }

    /// Cancels a task still `queued` or `running`: its runner stops at its
    /// next batch (what the batches before did stays done). `Ok(None)` when
    /// unknown; `Err(state)` when it had ended already.
    pub async fn cancel_task(
        &self,
        app_id: &AppId,
        id: &TaskId,
        now: Millis,
    ) -> Result<Option<std::result::Result<TaskRow, TaskState>>> {
        let sql = "UPDATE tasks SET state = 'cancelled', finished_at = $3, lease_owner = NULL, lease_until = NULL \
             WHERE id = $1 AND app_id = $2 AND state IN ('queued', 'running')";
        let changed = self.writes().execute(sql, &[id.into(), app_id.into(), now.into()]).await?;
        Ok(self.task(app_id, id).await?.map(|row| if changed == 1 { Ok(row) } else { Err(row.state) }))
    }

    /// Takes the lease of the oldest task waiting for a runner (queued, or
    /// running under a lease that ended), or `None`.
    pub async fn claim_task(&self, owner: &str, now: Millis) -> Result<Option<ClaimedTask>> {
        let sql = "UPDATE tasks SET state = 'running', started_at = COALESCE(started_at, $2), lease_owner = $1, \
             lease_until = $3 WHERE id = (SELECT id FROM tasks WHERE state IN ('queued', 'running') \
             AND (lease_until IS NULL OR lease_until < $2) ORDER BY id LIMIT 1) \
             AND state IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < $2) \
             RETURNING id, app_id, kind, rate_per_s";
        self.writes().fetch_optional(sql, &[owner.into(), now.into(), (now + TASK_LEASE_MS).into()]).await
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
        let sql = "SELECT kind, cursor FROM tasks WHERE id = $1 AND state = 'running' AND lease_owner = $2";
        let Some((kind, cursor)): Option<(TaskKind, String)> =
            tx.fetch_optional(sql, &[id.into(), owner.into()]).await?
        else {
            tx.rollback().await?;
            return Ok(TaskBatch::Stopped);
        };
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

/// Acts on the deliveries `ids` in `tx` as a task of `kind` does: a replay
/// re-queues those still `failed` or `skipped` whose payload is kept; a
/// cancel or skip ends those still `pending` (and lets an ordered lane
/// parked behind one go on). How many it changed.
async fn act_on(tx: &mut Tx<'_>, kind: TaskKind, ids: &[String], now: Millis) -> Result<u64> {
    Ok(match kind {
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
