//! Tasks select their deliveries in batches, each a short transaction: the
//! selection of a task whose creator stopped halfway is finished by the
//! runner that takes it up, selecting each delivery once; an operator's task
//! selects across apps, or only the apps it names.

use fenix::ids::AppId;
use fenix::{
    lifecycle::{DeliveryStatus, TaskKind},
    store::tasks::{NewTask, SelectBatch, TaskBatch, TaskScope, TaskSelection, SELECT_BATCH, TASK_LEASE_MS},
};

use super::fixtures::{Fixture, Raw, T0};
use crate::support::Backend;

/// When every fixture delivery has come due.
const LATER: i64 = T0 + 10_000_000;

/// `n` failed deliveries of `app` (one per event), made beside the store.
async fn failed(fx: &Fixture, raw: &Raw, app: &AppId, n: i64) {
    fx.endpoint(app, &["order.*"]).await;
    for i in 0..n {
        fx.event(app, "order.paid", T0 + i).await;
    }
    let sql = "UPDATE deliveries SET status = 'failed', attempt_count = 1, next_attempt_at = NULL WHERE app_id = $1";
    assert_eq!(raw.exec(sql, &[app.into()]).await, n as u64);
}

fn replay_of(scope: TaskScope) -> TaskSelection {
    TaskSelection {
        scope,
        kind: TaskKind::Replay,
        endpoint_id: None,
        since: None,
        until: None,
        statuses: DeliveryStatus::REPLAYABLE.to_vec(),
        event_types: Vec::new(),
        last_status_class: None,
    }
}

fn new_task(selection: &TaskSelection) -> NewTask<'_> {
    NewTask { selection, filter_json: "{}", created_by: "admin", rate_per_s: 1000 }
}

async fn a_selection_stopped_halfway_is_finished_by_the_runner_each_delivery_once(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let raw = fx.raw().await;
    let app = fx.app("acme").await;
    let other = fx.app("globex").await;
    let n = SELECT_BATCH * 2 + 100;
    failed(&fx, &raw, &app, n).await;
    failed(&fx, &raw, &other, 30).await;
    let sel = replay_of(TaskScope::App(app.clone()));
    assert_eq!(fx.store.count_task_selection(&sel, LATER).await.unwrap(), n);

    // The creator selects one batch, then vanishes.
    let id = fx.store.begin_task(&new_task(&sel), "creator", LATER).await.unwrap();
    assert_eq!(
        fx.store.select_task_batch(&id, "creator", LATER).await.unwrap(),
        SelectBatch::Selected(SELECT_BATCH as u64)
    );
    assert!(fx.store.claim_task("runner", LATER + 1).await.unwrap().is_none(), "the creator's lease holds");
    let row = fx.store.task(Some(&app), &id).await.unwrap().unwrap();
    assert_eq!((row.selected, row.state.as_str()), (SELECT_BATCH, "queued"));

    // Its lease ends: the runner takes the task and finishes the selection.
    let later = LATER + TASK_LEASE_MS + 1;
    let claimed = fx.store.claim_task("runner", later).await.unwrap().expect("the task, once the lease ended");
    assert_eq!(claimed.id, id);
    assert!(claimed.selecting.is_some(), "its selection is not finished");
    assert_eq!(
        fx.store.select_task_batch(&id, "creator", later).await.unwrap(),
        SelectBatch::Stopped,
        "no longer the creator's"
    );
    let mut batches = 0;
    while let SelectBatch::Selected(_) = fx.store.select_task_batch(&id, "runner", later).await.unwrap() {
        batches += 1;
    }
    assert_eq!(batches, 1, "the second full batch; the rest came with the last one");
    let row = fx.store.task(Some(&app), &id).await.unwrap().unwrap();
    assert_eq!(row.selected, n, "every matching delivery once, none of the other app's");
    let listed = raw
        .int("SELECT COUNT(DISTINCT delivery_id) FROM task_deliveries WHERE task_id = $1", &[id.as_str().into()])
        .await;
    assert_eq!(listed, Some(n));

    loop {
        match fx.store.run_task_batch(&id, "runner", later, 500).await.unwrap() {
            TaskBatch::Progressed(_) => {}
            TaskBatch::Finished => break,
            TaskBatch::Stopped => panic!("the runner holds the task"),
        }
    }
    let row = fx.store.task(None, &id).await.unwrap().unwrap();
    assert_eq!((row.state.as_str(), row.done, row.failed), ("succeeded", n, 0));
    let pending =
        raw.int("SELECT COUNT(*) FROM deliveries WHERE status = 'pending' AND app_id = $1", &[(&app).into()]).await;
    assert_eq!(pending, Some(n), "each replayed");
    let untouched =
        raw.int("SELECT COUNT(*) FROM deliveries WHERE status = 'failed' AND app_id = $1", &[(&other).into()]).await;
    assert_eq!(untouched, Some(30));
}

async fn an_operators_task_selects_across_apps_or_only_those_it_names(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let raw = fx.raw().await;
    let (a, b, c) = (fx.app("a").await, fx.app("b").await, fx.app("c").await);
    failed(&fx, &raw, &a, 40).await;
    failed(&fx, &raw, &b, 25).await;
    failed(&fx, &raw, &c, 5).await;

    let every = replay_of(TaskScope::Apps(Vec::new()));
    assert_eq!(fx.store.count_task_selection(&every, LATER).await.unwrap(), 70);
    let two = replay_of(TaskScope::Apps(vec![b.clone(), c.clone()]));
    assert_eq!(fx.store.count_task_selection(&two, LATER).await.unwrap(), 30);

    let row = fx.store.create_task(&new_task(&two), LATER).await.unwrap();
    assert_eq!((row.app_id.as_ref(), row.selected, row.state.as_str()), (None, 30, "queued"));
    assert!(fx.store.task(Some(&b), &row.id).await.unwrap().is_none(), "not an app's task");
    let listed = fx.store.list_tasks(None, None, 10).await.unwrap();
    assert_eq!(listed.iter().map(|t| &t.id).collect::<Vec<_>>(), [&row.id]);
    assert!(fx.store.list_tasks(Some(&b), None, 10).await.unwrap().is_empty());

    let claimed = fx.store.claim_task("runner", LATER + 1).await.unwrap().expect("released by its creator");
    assert_eq!((claimed.app_id, claimed.selecting), (None, None));
    while let TaskBatch::Progressed(_) = fx.store.run_task_batch(&row.id, "runner", LATER + 1, 7).await.unwrap() {}
    let done = fx.store.task(None, &row.id).await.unwrap().unwrap();
    assert_eq!((done.state.as_str(), done.done), ("succeeded", 30));
    let still_failed = raw.int("SELECT COUNT(*) FROM deliveries WHERE status = 'failed'", &[]).await;
    assert_eq!(still_failed, Some(40), "app a's deliveries were not selected");
}

crate::on_both_backends!(
    a_selection_stopped_halfway_is_finished_by_the_runner_each_delivery_once,
    an_operators_task_selects_across_apps_or_only_those_it_names,
);
