//! What every phase is given and the pieces the phases share: the run's
//! context (`Ctx`), a process's usage, where deliveries go (`Target`), the
//! events' bodies and the app a phase sends to. A module of its own below
//! `phases`, `wrk_ingest` and `ordered`, so that none of them needs another.

use crate::fenix::{self, Api, Launch, Usage};
use crate::receiver::Receiver;
use crate::sink::Sink;
use crate::Sizes;

/// The run's context: the sizes asked, how fenix is started, and the targets.
pub struct Ctx {
    pub sizes: Sizes,
    pub launch: Launch,
    pub receiver: Receiver,
    /// Where the throughput phases deliver (nginx `204`, or the fallback).
    pub sink: Sink,
    /// The run's temporary directory (wrk's script).
    pub dir: std::path::PathBuf,
    /// The `pad` string that brings each event's `data` to about `payload_bytes`.
    pub(crate) pad: String,
}

impl Ctx {
    pub fn new(sizes: Sizes, launch: Launch, receiver: Receiver, sink: Sink, dir: std::path::PathBuf) -> Ctx {
        let pad = "x".repeat(sizes.payload_bytes.saturating_sub(r#"{"seq":0000000,"pad":""}"#.len()));
        Ctx { sizes, launch, receiver, sink, dir, pad }
    }

    /// The `data` object of event number `seq`.
    pub(crate) fn data(&self, seq: u64) -> String {
        data(&self.pad, seq)
    }

    /// The `pad` of every event's `data` (see `event_body`).
    pub(crate) fn pad(&self) -> &str {
        &self.pad
    }

    pub(crate) fn receiver_cpu(&self) -> f64 {
        self.receiver.pid().and_then(fenix::cpu_seconds).unwrap_or(0.0)
    }
}

/// One fenix process's usage in a phase.
#[derive(Debug, Clone)]
pub struct ProcUsage {
    pub role: &'static str,
    pub usage: Usage,
}

/// Where a phase's deliveries go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The near-free sink (nginx `204`): the throughput phases.
    Sink,
    /// The verifying receiver: the correctness phase (every request verified).
    Verifying,
}

/// The `data` object of event number `seq`: about `--payload-bytes` long.
fn data(pad: &str, seq: u64) -> String {
    format!(r#"{{"seq":{},"pad":"{pad}"}}"#, 1_000_000 + seq)
}

/// The ingestion request body of event number `seq`.
pub(crate) fn event_body(pad: &str, seq: u64) -> String {
    format!(r#"{{"type":"bench.event","data":{}}}"#, data(pad, seq))
}

/// Creates an app and `endpoints` endpoints pointing at `target` under
/// `/<label>/<i>`, registering each secret with the verifying receiver.
pub(crate) async fn app_with_endpoints(
    ctx: &Ctx,
    api: &Api,
    label: &str,
    endpoints: u64,
    target: Target,
) -> anyhow::Result<String> {
    app_with_endpoints_extra(ctx, api, label, endpoints, target, &[]).await
}

/// [`app_with_endpoints`], endpoint `i` created with `extras[i]`'s members in
/// its body (the routing phase's channels, filter or transformation; none
/// for the endpoints past the slice's end).
pub(crate) async fn app_with_endpoints_extra(
    ctx: &Ctx,
    api: &Api,
    label: &str,
    endpoints: u64,
    target: Target,
    extras: &[serde_json::Value],
) -> anyhow::Result<String> {
    let app = api.create_app(&format!("bench {label}")).await?;
    for i in 0..endpoints {
        let path = format!("/{label}/{i}");
        let base = match target {
            Target::Sink => ctx.sink.base(),
            Target::Verifying => ctx.receiver.base.as_str(),
        };
        let extra = usize::try_from(i).ok().and_then(|i| extras.get(i));
        let secret = api.create_endpoint(&app, &format!("{base}{path}"), extra).await?;
        if target == Target::Verifying {
            ctx.receiver.register(&path, &[secret]).await?;
        }
    }
    Ok(app)
}
