//! The application state: what the admin API, the worker, the maintenance loop
//! and the operator events share (store, settings, keys, destination policy,
//! ingestion queue, metrics, alerts, wake-ups). It knows nothing of HTTP, so
//! every part of Fenix can take it without reaching into the API.

use std::{
    collections::HashMap,
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use crate::{
    secrets::Keyring,
    settings::Settings,
    store::{apps::AppRow, Store},
};

/// Shared by every handler and the worker.
pub struct AppState {
    pub store: Store,
    pub settings: Settings,
    pub keyring: Keyring,
    pub destinations: fenix_destination::CheckingResolver,
    /// The outbound HTTP clients' shared rules and the common client.
    pub outbound: crate::outbound::Outbound,
    /// The URL policy, re-checked before every attempt.
    pub policy: fenix_destination::Policy,
    /// Group-commit queue of ingestion.
    pub ingestor: crate::ingest::Ingestor,
    /// Counters behind `/metrics`.
    pub metrics: crate::metrics::Metrics,
    /// What the operator webhook may have to report.
    pub alerts: crate::alerts::OperatorAlerts,
    /// The internal operator app, when `FENIX_OPERATOR_WEBHOOK_URL` is set.
    pub operator_app_id: Option<crate::ids::AppId>,
    /// Woken after an ingestion commits, so fresh events are sent at once.
    pub wake: crate::wake::Wake,
    /// The event-type catalogue's compiled schemas, for ingestion's checks.
    pub catalogue: crate::catalogue::Catalogue,
    /// Where those checks run: off the runtime, few at once, within budgets.
    pub schema_checks: crate::catalogue::Checks,
    /// Recently resolved apps (id or uid → app), for the ingestion hot path.
    app_cache: RwLock<HashMap<String, (AppRow, Instant)>>,
    /// Batches (`POST …/events/batch`) past reading their body: parsed,
    /// checked and written a few at a time ([`batches_at_once`]).
    pub batches: Arc<tokio::sync::Semaphore>,
    /// Bytes the answers carrying payloads may hold at once (`FENIX_ANSWER_BYTES`).
    pub answers: crate::answer_bytes::AnswerBytes,
    /// Endpoints' OAuth2 access tokens, one fetch per endpoint at a time.
    pub oauth_tokens: crate::oauth::cache::TokenCache,
    /// The threads endpoints' transformations run on (`transform`).
    pub transforms: crate::transform::Transforms,
    /// Stores the worker's transformed requests, several per transaction.
    pub transformed_requests: crate::store::transformed::RequestWriter,
    /// OpenTelemetry traces of deliveries; off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
    pub traces: crate::traces::Traces,
}

/// How many batches are parsed, checked and written at once. A batch's
/// events take several times its body in memory (parsed values, envelopes,
/// the statement's arguments), and more at once would not go faster: SQLite
/// has one writer, and on a machine's few cores the parsing of two batches
/// already keeps the writer busy. PostgreSQL writes batches side by side, so
/// it takes a few more. Bodies are read before waiting here, so a client
/// sending its body slowly holds no turn.
fn batches_at_once(store: &Store) -> usize {
    if store.concurrent_writes() {
        4
    } else {
        2
    }
}

/// The state as handlers and tasks receive it.
pub type SharedState = Arc<AppState>;

/// How long ingestion trusts a resolved app without asking the database again.
const APP_CACHE_TTL: Duration = Duration::from_secs(2);

impl AppState {
    /// Assembles the state.
    pub fn new(
        store: Store,
        settings: Settings,
        keyring: Keyring,
        policy: fenix_destination::Policy,
        destinations: fenix_destination::CheckingResolver,
        outbound: crate::outbound::Outbound,
        wake: crate::wake::Wake,
    ) -> AppState {
        AppState {
            batches: Arc::new(tokio::sync::Semaphore::new(batches_at_once(&store))),
            answers: crate::answer_bytes::AnswerBytes::new(settings.answer_bytes),
            ingestor: crate::ingest::Ingestor::start(store.clone(), wake.clone()),
            transformed_requests: crate::store::transformed::RequestWriter::start(store.clone()),
            transforms: crate::transform::Transforms::start(
                settings.transform_threads,
                settings.transform_timeout,
                settings.transform_memory,
            ),
            schema_checks: crate::catalogue::Checks::new(
                settings.schema_concurrency,
                settings.schema_budget,
                settings.schema_request_budget,
            ),
            store,
            settings,
            keyring,
            policy,
            destinations,
            outbound,
            metrics: Default::default(),
            alerts: Default::default(),
            operator_app_id: None,
            wake,
            catalogue: Default::default(),
            app_cache: RwLock::new(HashMap::new()),
            oauth_tokens: Default::default(),
            traces: crate::traces::Traces::off(),
        }
    }

    /// The app `id_or_uid` names, through a short-lived cache (for ingestion).
    /// An app deleted meanwhile (by another instance) makes the insert fail on
    /// its foreign key, which the caller answers like an unknown app.
    pub async fn find_app_cached(&self, id_or_uid: &str) -> crate::store::Result<Option<AppRow>> {
        if let Some((app, at)) = self.app_cache.read().expect("app cache lock").get(id_or_uid) {
            if at.elapsed() < APP_CACHE_TTL {
                return Ok(Some(app.clone()));
            }
        }
        let Some(app) = self.store.find_app(id_or_uid).await? else { return Ok(None) };
        let mut cache = self.app_cache.write().expect("app cache lock");
        if cache.len() > 10_000 {
            cache.clear();
        }
        cache.insert(id_or_uid.to_string(), (app.clone(), Instant::now()));
        Ok(Some(app))
    }

    /// Forgets every cached app (after an app is renamed, re-uid'd or deleted).
    pub fn forget_cached_apps(&self) {
        self.app_cache.write().expect("app cache lock").clear();
    }
}
