//! The `routing` phase (issue 32): what routing costs, in two comparisons,
//! the two variants of each run back to back in the same phase so that their
//! ratio is fair on a machine whose speed drifts:
//!
//! 1. **Fan-out ingestion** (`wrk_ingest`'s protocol and check, 10 endpoints):
//!    every endpoint lists `channels` and has a CEL `filter`, both matching
//!    the bench's events (so every endpoint still gets its delivery, and the
//!    check that every `202`'s event is stored with 10 deliveries holds),
//!    against the same endpoints without either. The events are the same
//!    bytes in both runs (channels, tags and the `amount`/`currency` the
//!    filter reads), so the difference is what routing costs at fan-out.
//! 2. **Delivery** (`phases::backlog`'s drain to the sink, 10 endpoints): a
//!    small JavaScript transformation on every endpoint (a field added to
//!    the payload, a header, the path changed) against the same backlog
//!    without: deliveries/s and the worker's CPU per delivery.
//!
//! A probe runs first, on a database of its own and the verifying receiver:
//! it asks the API to take each feature, then checks that Fenix honours it
//! (an event on a channel the endpoint does not list, or one the filter
//! rejects, is not delivered; a transformed request arrives at the changed
//! path, signed). A feature the API refuses, or whose matching event is not
//! delivered, is reported as missing and its comparison is left out; one that
//! is taken but whose effect the probe did not see is measured and reported
//! as unconfirmed. The phase never fails because a feature is missing.

use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{json, Value};

use crate::ctx::{Ctx, ProcUsage, Target};
use crate::db::{Databases, Log};
use crate::drain::{backlog_with, Drain};
use crate::fenix::{self, Api, Fenix, Role};
use crate::progress;
use crate::wrk_ingest::{ingestion_of, IngestRun, Ingestion};

/// Endpoints of every run of the phase (the issue's fan-out of 10).
pub const ENDPOINTS: u64 = 10;

/// The transformed drain's label: `FENIX_BENCH_PERF` profiles its worker.
pub use crate::drain::ROUTING_PERF_LABEL as PERF_LABEL;

/// Every routed endpoint's filter; the bench's events pass it.
pub const FILTER: &str = r#"data.amount > 100 && data.currency == "EUR""#;

/// Every transformed endpoint's script: a field in the payload, a header,
/// another path (the sink answers `204` on every path).
pub const TRANSFORMATION: &str = r#"function handler(webhook) {
  webhook.payload.data.routed = true;
  webhook.headers["X-Bench-Transformed"] = "1";
  webhook.url = webhook.url + "/t";
  return webhook;
}"#;

/// The events' channels: each routed endpoint lists the first.
const EVENT_CHANNELS: [&str; 2] = ["bench.orders", "bench.eu"];
const EVENT_TAGS: [&str; 2] = ["bench", "vip"];

/// Endpoint `i`'s channels: one of its own and the events' first.
fn channels_of(i: u64) -> Value {
    json!([format!("bench.region{i}"), EVENT_CHANNELS[0]])
}

/// Whether Fenix honours one feature, as the probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Taken by the API, and the probe saw its effect.
    Works,
    /// Taken by the API, but the probe did not see its effect (measured, flagged).
    Unconfirmed(String),
    /// Refused by the API (the feature has not landed): not measured.
    Refused(String),
    /// Taken, but an event it should let through was not delivered: not measured.
    Broken(String),
    /// Not probed (it depends on another feature that is missing).
    NotProbed,
}

impl Support {
    /// Whether the phase measures with the feature on.
    pub fn measurable(&self) -> bool {
        matches!(self, Support::Works | Support::Unconfirmed(_))
    }

    /// One line for the progress and the table (no `|`, at most about 200 characters).
    pub fn describe(&self) -> String {
        let (word, why) = match self {
            Support::Works => return "works".into(),
            Support::NotProbed => return "not probed".into(),
            Support::Unconfirmed(m) => ("taken, effect unconfirmed", m),
            Support::Refused(m) => ("**missing** (refused)", m),
            Support::Broken(m) => ("**not working**", m),
        };
        let mut why: String = why.replace(['|', '\n', '\r'], " ");
        if why.chars().count() > 200 {
            why = why.chars().take(200).collect::<String>() + "…";
        }
        format!("{word}: {why}")
    }
}

/// What the probe found for each feature.
#[derive(Debug, Clone)]
pub struct Features {
    /// `channels` and `tags` in an ingestion body.
    pub event_channels: Support,
    /// An endpoint's `channels` (an event on none of them is not delivered).
    pub endpoint_channels: Support,
    /// An endpoint's CEL `filter`.
    pub filter: Support,
    /// An endpoint's JavaScript `transformation`.
    pub transformation: Support,
}

impl Features {
    pub fn describe(&self) -> String {
        format!(
            "event channels and tags: {}; endpoint channels: {}; filter: {}; transformation: {}",
            self.event_channels.describe(),
            self.endpoint_channels.describe(),
            self.filter.describe(),
            self.transformation.describe()
        )
    }

    /// Whether the routed endpoints list channels (events must carry them too).
    fn channels(&self) -> bool {
        self.event_channels.measurable() && self.endpoint_channels.measurable()
    }
}

/// The phase's result; a comparison whose feature is missing is `None`.
#[derive(Debug, Clone)]
pub struct Routing {
    pub features: Features,
    /// What the routed endpoints had: `channels + filter`, `channels`, `filter`.
    pub routed_with: String,
    pub ingest_plain: Option<Ingestion>,
    pub ingest_routed: Option<Ingestion>,
    pub drain_plain: Option<Drain>,
    pub drain_transformed: Option<Drain>,
    /// The probe's fenix process.
    pub procs: Vec<ProcUsage>,
}

impl Routing {
    /// Routed ÷ plain fan-out ingestion (`routing_ingest_ratio`; target ≥ 0.8).
    pub fn ingest_ratio(&self) -> Option<f64> {
        ratio(self.ingest_routed.as_ref().map(|i| i.per_s), self.ingest_plain.as_ref().map(|i| i.per_s))
    }

    /// Transformed ÷ plain deliveries/s (`transform_ratio`; target ≥ 0.6).
    pub fn transform_ratio(&self) -> Option<f64> {
        ratio(self.drain_transformed.as_ref().map(|d| d.per_s), self.drain_plain.as_ref().map(|d| d.per_s))
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// The `data` of the routed events: what the filter reads, padded to about
/// `--payload-bytes` like every other phase's.
fn routed_data(ctx: &Ctx, seq: u64, amount: u32) -> String {
    let fixed = r#"{"seq":0000000,"amount":000,"currency":"EUR","pad":""}"#.len();
    let pad = "x".repeat(ctx.sizes.payload_bytes.saturating_sub(fixed));
    format!(r#"{{"seq":{},"amount":{amount},"currency":"EUR","pad":"{pad}"}}"#, 1_000_000 + seq)
}

/// An ingestion body: `data` from [`routed_data`], with `channels` and `tags`
/// when `channels` is given.
fn routed_body(ctx: &Ctx, seq: u64, amount: u32, channels: Option<&[&str]>) -> String {
    let data = routed_data(ctx, seq, amount);
    match channels {
        Some(channels) => format!(
            r#"{{"type":"bench.event","channels":{},"tags":{},"data":{data}}}"#,
            json!(channels),
            json!(EVENT_TAGS)
        ),
        None => format!(r#"{{"type":"bench.event","data":{data}}}"#),
    }
}

pub async fn routing(ctx: &mut Ctx, dbs: &mut Databases) -> anyhow::Result<Routing> {
    let (features, probe_usage) = probe(&*ctx, dbs).await.context("routing probe")?;
    progress(&format!("routing: {}", features.describe()));
    let mut r = Routing {
        routed_with: routed_with(&features).to_string(),
        features,
        ingest_plain: None,
        ingest_routed: None,
        drain_plain: None,
        drain_transformed: None,
        procs: vec![ProcUsage { role: "api+worker (probe)", usage: probe_usage }],
    };
    compare_ingestion(ctx, dbs, &mut r).await?;
    compare_delivery(ctx, dbs, &mut r).await?;
    Ok(r)
}

/// What the routed endpoints have, as the table names it.
fn routed_with(features: &Features) -> &'static str {
    match (features.channels(), features.filter.measurable()) {
        (true, true) => "channels + filter",
        (true, false) => "channels",
        (false, true) => "filter",
        (false, false) => "nothing",
    }
}

/// Comparison 1: fan-out ingestion to plain endpoints, then to endpoints with
/// the channels and filter the probe found working.
async fn compare_ingestion(ctx: &mut Ctx, dbs: &mut Databases, r: &mut Routing) -> anyhow::Result<()> {
    let (channels, filter) = (r.features.channels(), r.features.filter.measurable());
    if !(channels || filter) {
        progress("routing: neither channels nor a filter can be measured; no fan-out comparison");
        return Ok(());
    }
    // The same bytes in both runs: channels and tags whenever events can carry them.
    let body = routed_body(ctx, 0, 250, r.features.event_channels.measurable().then_some(&EVENT_CHANNELS[..]));
    let extras: Vec<Value> = (0..ENDPOINTS)
        .map(|i| {
            let mut m = serde_json::Map::new();
            if channels {
                m.insert("channels".into(), channels_of(i));
            }
            if filter {
                m.insert("filter".into(), FILTER.into());
            }
            Value::Object(m)
        })
        .collect();
    let plain = IngestRun { label: "routing-plain", endpoints: ENDPOINTS, extras: &[], body: body.clone() };
    r.ingest_plain = Some(ingestion_of(ctx, dbs, plain).await.context("routing: fan-out ingestion, plain")?);
    let routed = IngestRun { label: "routing-routed", endpoints: ENDPOINTS, extras: &extras, body };
    r.ingest_routed = Some(ingestion_of(ctx, dbs, routed).await.context("routing: fan-out ingestion, routed")?);
    if let Some(x) = r.ingest_ratio() {
        progress(&format!("routing: fan-out ingestion with {} = {x:.3} × without (target ≥ 0.80)", r.routed_with));
    }
    Ok(())
}

/// Comparison 2: a backlog drained to the sink without, then with, a
/// transformation on every endpoint.
async fn compare_delivery(ctx: &mut Ctx, dbs: &mut Databases, r: &mut Routing) -> anyhow::Result<()> {
    if !r.features.transformation.measurable() {
        progress("routing: the transformation cannot be measured; no delivery comparison");
        return Ok(());
    }
    let events = ctx.sizes.routing_events;
    let extras = vec![json!({ "transformation": TRANSFORMATION }); ENDPOINTS as usize];
    let plain = backlog_with(ctx, dbs, "routing-untransformed", (events, ENDPOINTS), Target::Sink, &[]).await;
    r.drain_plain = Some(plain.context("routing: delivery without transformation")?);
    let transformed = backlog_with(ctx, dbs, PERF_LABEL, (events, ENDPOINTS), Target::Sink, &extras).await;
    r.drain_transformed = Some(transformed.context("routing: delivery with a transformation")?);
    if let (Some(x), Some(a), Some(b)) = (r.transform_ratio(), &r.drain_transformed, &r.drain_plain) {
        progress(&format!(
            "routing: delivery with a transformation = {x:.3} × without (target ≥ 0.60); worker {:.1} µs CPU per delivery, {:.1} without",
            a.cpu_us_per_delivery(),
            b.cpu_us_per_delivery()
        ));
    }
    Ok(())
}

/// The probe's fenix (`serve`, both roles) and its admin client.
struct Probe<'a> {
    ctx: &'a Ctx,
    proc: Fenix,
    api: Api,
    client: reqwest::Client,
    log: Log,
}

impl Probe<'_> {
    /// Posts an event; the answer's error text when it was not `202`.
    async fn send(&self, app: &str, body: String) -> Result<(), String> {
        let url = format!("{}/v1/apps/{app}/events", self.api.base);
        fenix::send_event(&self.client, &url, &self.ctx.launch.admin_token, body)
            .await
            .map(|_| ())
            .map_err(|e| format!("{e:#}"))
    }

    /// Waits until no delivery is pending (at most 15 s): the receiver's
    /// `(received, failed verification)` since its reset, or `None` on time-out.
    async fn settle(&mut self) -> anyhow::Result<Option<(u64, u64)>> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            self.proc.check_alive()?;
            if self.log.unfinished().await? == 0 {
                let s = self.ctx.receiver.stats().await?;
                return Ok(Some((s.received, s.verified_failures)));
            }
            if Instant::now() > deadline {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Whether the API takes an endpoint with `name: value` (on `app`, to the
    /// sink); the refusal's text otherwise.
    async fn taken(&self, app: &str, name: &str, value: Value) -> Result<(), String> {
        let url = format!("{}/routing-probe/spare", self.ctx.sink.base());
        let mut extra = serde_json::Map::new();
        extra.insert(name.into(), value);
        let created = self.api.create_endpoint(app, &url, Some(&Value::Object(extra))).await;
        created.map(|_| ()).map_err(|e| format!("{e:#}"))
    }

    /// Creates an endpoint on the receiver's `path` with `extra`, registering
    /// its secret at `register` (the transformed path, for the transformation).
    async fn endpoint(&self, app: &str, path: &str, extra: &Value, register: &str) -> anyhow::Result<()> {
        let url = format!("{}{path}", self.ctx.receiver.base);
        let secret = self.api.create_endpoint(app, &url, Some(extra)).await?;
        self.ctx.receiver.register(register, &[secret]).await
    }
}

/// Finds what Fenix honours (see the module's comment): each feature's
/// support and the probe process's usage.
async fn probe(ctx: &Ctx, dbs: &mut Databases) -> anyhow::Result<(Features, fenix::Usage)> {
    let label = "routing-probe";
    let url = dbs.fresh(label).await?;
    let proc = Fenix::start(&ctx.launch, Role::Both, &url, label).await?;
    let api = Api::new(&proc, &ctx.launch)?;
    let log = Log::open(&url).await?;
    let mut p = Probe { ctx, proc, api, client: fenix::event_client()?, log };
    let mut features = p.fields().await?;
    p.route(&mut features).await?;
    if features.transformation == Support::Works {
        features.transformation = p.transformed().await?;
    }
    let Probe { proc, log, .. } = p;
    log.close().await;
    let usage = proc.stop().await?;
    Ok((features, usage))
}

impl Probe<'_> {
    /// The probe's first step: does the API take each field? Endpoints of an
    /// app no event is sent to, and an event for an app without endpoints. A
    /// field taken `Works` until the next steps see otherwise.
    async fn fields(&self) -> anyhow::Result<Features> {
        let spare = self.api.create_app("bench routing probe, fields").await?;
        let endpoint_channels = self.taken(&spare, "channels", channels_of(0)).await;
        let filter = self.taken(&spare, "filter", FILTER.into()).await;
        let transformation = self.taken(&spare, "transformation", TRANSFORMATION.into()).await;
        let alone = self.api.create_app("bench routing probe, an event").await?;
        let event_channels = match self.send(&alone, routed_body(self.ctx, 0, 250, Some(&EVENT_CHANNELS[..]))).await {
            Ok(()) => Support::Works,
            Err(e) => Support::Refused(e),
        };
        let endpoint_channels = match endpoint_channels {
            Err(e) => Support::Refused(e),
            Ok(()) if event_channels != Support::Works => Support::NotProbed,
            Ok(()) => Support::Works,
        };
        let taken = |answer: Result<(), String>| match answer {
            Err(e) => Support::Refused(e),
            Ok(()) => Support::Works,
        };
        Ok(Features { event_channels, endpoint_channels, filter: taken(filter), transformation: taken(transformation) })
    }

    /// The second step, routing: one endpoint with what was taken; a matching
    /// event must arrive, one on another channel and one the filter rejects must not.
    async fn route(&mut self, f: &mut Features) -> anyhow::Result<()> {
        let (channels_on, filter_on) = (f.endpoint_channels == Support::Works, f.filter == Support::Works);
        if !(channels_on || filter_on) {
            return Ok(());
        }
        let app = self.api.create_app("bench routing probe").await?;
        let mut extra = serde_json::Map::new();
        if channels_on {
            extra.insert("channels".into(), channels_of(0));
        }
        if filter_on {
            extra.insert("filter".into(), FILTER.into());
        }
        self.endpoint(&app, "/routing-probe/r", &Value::Object(extra), "/routing-probe/r").await?;
        self.ctx.receiver.reset(false).await?;
        let on = (f.event_channels == Support::Works).then_some(&EVENT_CHANNELS[..]);
        self.send(&app, routed_body(self.ctx, 1, 250, on)).await.map_err(anyhow::Error::msg)?;
        match self.settle().await? {
            Some((1, 0)) => {
                let mut seen = 1;
                if channels_on {
                    let body = routed_body(self.ctx, 2, 250, Some(&["bench.elsewhere"][..]));
                    self.send(&app, body).await.map_err(anyhow::Error::msg)?;
                    seen = check_not_delivered(self, seen, &mut f.endpoint_channels, "an event on another channel")
                        .await?;
                }
                if filter_on {
                    self.send(&app, routed_body(self.ctx, 3, 50, on)).await.map_err(anyhow::Error::msg)?;
                    check_not_delivered(self, seen, &mut f.filter, "an event with amount 50").await?;
                }
            }
            other => not_routed(other, [&mut f.endpoint_channels, &mut f.filter]),
        }
        Ok(())
    }

    /// The third step, the transformation: the request must arrive at the
    /// changed path, signed.
    async fn transformed(&mut self) -> anyhow::Result<Support> {
        let app = self.api.create_app("bench routing probe, transformation").await?;
        let extra = json!({ "transformation": TRANSFORMATION });
        self.endpoint(&app, "/routing-probe/t", &extra, "/routing-probe/t/t").await?;
        self.ctx.receiver.reset(false).await?;
        self.send(&app, routed_body(self.ctx, 4, 250, None)).await.map_err(anyhow::Error::msg)?;
        Ok(match self.settle().await? {
            Some((1, 0)) => Support::Works,
            Some((0, _)) => Support::Broken("the transformed endpoint's delivery finished without a request".into()),
            Some((n, bad)) => Support::Unconfirmed(format!(
                "{n} request(s) arrived, {bad} not signed as the bench expects at the changed path \
                 (the path unchanged, or the signature not over the body sent)"
            )),
            None => Support::Broken(format!(
                "the transformed endpoint's delivery was still pending after 15 s; fenix log: {}",
                fenix::tail(&self.proc.log_path).lines().last().unwrap_or("")
            )),
        })
    }
}

/// The matching event was not delivered once (`settled` is what the receiver
/// saw, `None` on time-out): each feature of `supports` that seemed to work
/// is broken.
fn not_routed(settled: Option<(u64, u64)>, supports: [&mut Support; 2]) {
    let seen = match settled {
        Some((n, bad)) => format!("{n} requests arrived ({bad} failed verification)"),
        None => "its delivery was still pending after 15 s".into(),
    };
    let why = format!("an event the endpoint's channels and filter match was not delivered once: {seen}");
    for s in supports {
        if *s == Support::Works {
            *s = Support::Broken(why.clone());
        }
    }
}

/// After an event the endpoint should not get: the receiver must still have
/// `seen` requests once nothing is pending; otherwise `support` becomes
/// unconfirmed. The count to expect next.
async fn check_not_delivered(p: &mut Probe<'_>, seen: u64, support: &mut Support, what: &str) -> anyhow::Result<u64> {
    match p.settle().await? {
        Some((n, _)) if n == seen => Ok(seen),
        Some((n, _)) => {
            *support = Support::Unconfirmed(format!("{what} was delivered all the same"));
            Ok(n)
        }
        None => {
            *support = Support::Unconfirmed(format!("{what}: its delivery was still pending after 15 s"));
            Ok(seen)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_described_on_one_line_without_table_bars() {
        let s = Support::Refused("POST /v1/apps/a/endpoints answered 422 | x\nunknown field `filter`".into());
        let d = s.describe();
        assert!(d.starts_with("**missing** (refused): POST"), "{d}");
        assert!(!d.contains('|') && !d.contains('\n'), "{d}");
    }

    #[test]
    fn only_working_or_unconfirmed_features_are_measured() {
        assert!(Support::Works.measurable());
        assert!(Support::Unconfirmed("x".into()).measurable());
        assert!(!Support::Refused("x".into()).measurable());
        assert!(!Support::Broken("x".into()).measurable());
        assert!(!Support::NotProbed.measurable());
    }
}
