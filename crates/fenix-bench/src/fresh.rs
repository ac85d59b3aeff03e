//! Fresh events at a fixed rate and their latency: the offer (each event from
//! its own task, shed events counted), the wait for the receiver, and the
//! matching of receipts to acknowledgements. The latency phase uses it alone,
//! the tasks phase beside a bulk replay.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::bail;

use crate::ctx::{event_body, Ctx};
use crate::fenix::{self, Fenix};
use crate::now_us;

pub(crate) fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Offers `total` events at `rate` per second, each from its own task: the
/// acknowledged events (id, when the client had the `202`, µs), how many were
/// shed (refused or dropped), the seconds the offer took and when it started (µs).
pub(crate) async fn offer(
    ctx: &Ctx,
    events_url: String,
    rate: u64,
    total: u64,
) -> anyhow::Result<(Vec<(String, u64)>, u64, f64, u64)> {
    let client = fenix::event_client()?;
    let events_url = Arc::new(events_url);
    let token = Arc::new(ctx.launch.admin_token.clone());
    let acks: Arc<Mutex<Vec<(String, u64)>>> = Arc::new(Mutex::new(Vec::with_capacity(total as usize)));
    let shed = Arc::new(AtomicU64::new(0));
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut tasks = tokio::task::JoinSet::new();
    let start = Instant::now();
    let start_us = now_us();
    for n in 0..total {
        ticker.tick().await;
        let (client, url, token, acks, shed) =
            (client.clone(), events_url.clone(), token.clone(), acks.clone(), shed.clone());
        let body = event_body(&ctx.pad, n);
        tasks.spawn(async move {
            // An overloaded Fenix refuses (503) or drops the connection:
            // both are counted as shed, not retried, and do not end the run.
            match fenix::send_event_or_shed(&client, &url, &token, body).await {
                Ok(Some((id, at))) => acks.lock().unwrap_or_else(|e| e.into_inner()).push((id, at)),
                Ok(None) => {
                    shed.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) if e.chain().any(|c| c.downcast_ref::<reqwest::Error>().is_some()) => {
                    shed.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => return Err(e),
            }
            anyhow::Ok(())
        });
    }
    let offered_secs = start.elapsed().as_secs_f64();
    while let Some(r) = tasks.join_next().await {
        r??;
    }
    let acks = std::mem::take(&mut *acks.lock().unwrap_or_else(|e| e.into_inner()));
    Ok((acks, shed.load(Ordering::Relaxed), offered_secs, start_us))
}

/// Waits until the receiver got `accepted` events (at most 120 s).
pub(crate) async fn wait_received(ctx: &Ctx, proc: &mut Fenix, label: &str, accepted: u64) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        proc.check_alive()?;
        let stats = ctx.receiver.stats().await?;
        if stats.received >= accepted {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{label}: only {}/{accepted} events reached the receiver within 120 s", stats.received);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Each event's latency (ms) once, receipt minus acknowledgement; how many
/// arrived before their `202`; how many took over 100 ms and when (s into
/// the phase) the first and last of those were sent.
pub(crate) fn match_latencies(
    records: Vec<(String, u64)>,
    acked: &std::collections::HashMap<String, u64>,
    start_us: u64,
) -> (Vec<f64>, u64, u64, Option<(f64, f64)>) {
    let mut seen = std::collections::HashSet::new();
    let mut lat = Vec::with_capacity(records.len());
    let mut before_ack = 0;
    let mut slow = 0;
    let mut slow_span: Option<(f64, f64)> = None;
    for (id, at) in records {
        if !seen.insert(id.clone()) {
            continue;
        }
        let Some(&t0) = acked.get(&id) else { continue };
        if at < t0 {
            before_ack += 1;
        }
        if at.saturating_sub(t0) > 100_000 {
            slow += 1;
            let when = t0.saturating_sub(start_us) as f64 / 1e6;
            slow_span = Some(slow_span.map_or((when, when), |(a, b)| (a.min(when), b.max(when))));
        }
        lat.push(at.saturating_sub(t0) as f64 / 1000.0);
    }
    (lat, before_ack, slow, slow_span)
}
