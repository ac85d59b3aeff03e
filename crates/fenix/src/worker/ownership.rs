//! Proof of endpoint ownership: the sender of verification challenges.
//!
//! With `FENIX_REQUIRE_ENDPOINT_VERIFICATION`, a new endpoint (or one whose
//! URL changed) is stored unverified with a random challenge
//! (`store::ownership`) and shows `pending_verification`; its deliveries are
//! skipped when due. This task, on the same runtime as the worker, claims due
//! challenges under a lease in the database (so several instances on one
//! PostgreSQL send each attempt once) and sends each a signed
//! `webhook.verification` request, through the worker's HTTP client (every
//! destination checked on every request) and the worker's signing path
//! (`attempt::signed_headers`). The endpoint is verified when it answers 2xx
//! with the challenge echoed (see [`echoed`]); anything else is a failed
//! attempt with its reason, retried after `FENIX_VERIFICATION_RETRY_SCHEDULE`'s
//! waits; after the last one the challenge expires (`POST …/verify` starts a
//! new one). So one challenge is at most 11 requests, and how many challenges
//! a tenant can start is bounded where they are started: every call that
//! starts one spends the budgets of `send_budgets` (per endpoint and per app,
//! in the database), and is answered 429 once they are spent.

use std::time::{Duration, Instant};

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use bytes::Bytes;
use rand::RngCore;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::{
    attempt::{self, AttemptResult, Message, Request},
    clients::Clients,
    signing_keys::{self, LiveSecret},
};
use crate::{
    endpoint_spec::EndpointSpec,
    envelope::build_envelope,
    error_class::ErrorClass,
    event_types::EventType,
    ids,
    state::SharedState,
    store::ownership::{ChallengeFailure, ClaimedChallenge, NewChallenge},
    time::{self, Millis},
};

/// The event type of a challenge request.
pub const VERIFICATION_TYPE: &str = "webhook.verification";
/// Random bytes in a challenge (from the operating system's CSPRNG).
const CHALLENGE_BYTES: usize = 32;
/// Challenges claimed at once by one instance.
const CLAIM_LIMIT: i64 = 16;
/// Longest idle wait between looks for due challenges.
const IDLE_POLL: Duration = Duration::from_secs(1);

/// A new challenge: 32 random bytes, base64url without padding (43 characters).
pub fn new_challenge() -> NewChallenge {
    let mut bytes = [0u8; CHALLENGE_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    NewChallenge { challenge: URL_SAFE_NO_PAD.encode(bytes), change_id: ids::StateChangeId::new().into_string() }
}

/// Sends due challenges until `shutdown`; woken early by
/// [`Wake::challenge_started`](crate::wake::Wake::challenge_started).
pub async fn run(state: SharedState, client: reqwest::Client, shutdown: CancellationToken) {
    let mut failures = 0u32;
    let clients = Clients::new(state.outbound.clone());
    while !shutdown.is_cancelled() {
        let now = time::now_ms();
        // A fresh token per claim: a result is written only under it.
        let token = (rand::rngs::OsRng.next_u64() >> 1) as i64;
        let lease_until = time::add(now, state.settings.lease_duration);
        let wait = match state.store.claim_challenges(now, lease_until, token, CLAIM_LIMIT).await {
            Ok(claimed) if !claimed.is_empty() => {
                failures = 0;
                let sends = claimed.into_iter().map(|c| send_and_record(&state, (&client, &clients), c));
                futures::future::join_all(sends).await;
                continue;
            }
            Ok(_) => {
                failures = 0;
                match state.store.next_challenge_due().await {
                    Ok(Some(at)) if at > now => Duration::from_millis((at - now) as u64).min(IDLE_POLL),
                    Ok(Some(_)) => Duration::from_millis(50),
                    _ => IDLE_POLL,
                }
            }
            Err(e) => {
                failures += 1;
                tracing::warn!(error = %e, "claiming verification challenges failed; retrying");
                Duration::from_millis(200 * u64::from(failures.min(25)))
            }
        };
        tokio::select! {
            _ = state.wake.challenge_notified() => {}
            _ = tokio::time::sleep(wait) => {}
            _ = shutdown.cancelled() => break,
        }
    }
}

/// One attempt of one challenge, its result written under its lease.
///
/// A challenge whose endpoint's stored spec cannot be read is not sent (not
/// under a scheme or headers its owner did not choose): the error is logged,
/// naming the endpoint, and the challenge is claimed again when its lease ends.
async fn send_and_record(state: &SharedState, client: (&reqwest::Client, &Clients), c: ClaimedChallenge) {
    let spec = match &c.spec {
        Ok(spec) => spec,
        Err(e) => {
            tracing::error!(endpoint_id = %c.endpoint_id, error = %e, "an endpoint's stored spec cannot be read; its challenge is not sent");
            return;
        }
    };
    let global = state.settings.attempt_timeout;
    let timeout = spec.attempt_timeout.map_or(global, |t| t.min(global));
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + timeout;
    let result = tokio::time::timeout_at(deadline, check_sign_send(state, client, &c, spec, deadline))
        .await
        .unwrap_or_else(|_| attempt::timed_out(timeout));
    let now = time::now_ms();
    let recorded = match judge(&result, &c.challenge) {
        Ok(()) => {
            let change_id = ids::StateChangeId::new().into_string();
            let done =
                state.store.challenge_answered(&c.endpoint_id, &c.challenge, c.lease_token, &change_id, now).await;
            if matches!(done, Ok(true)) {
                tracing::info!(endpoint_id = %c.endpoint_id, "endpoint ownership verified");
            }
            done
        }
        Err((error, detail)) => {
            let failure = ChallengeFailure {
                status: result.facts.status.map(i64::from),
                error: error.as_str().to_owned(),
                detail: attempt::storable_detail(&detail),
                next_attempt_at: next_attempt_at(&state.settings.verification_retry_schedule, c.attempts + 1, now),
            };
            tracing::info!(
                endpoint_id = %c.endpoint_id,
                error = error.as_str(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                expired = failure.next_attempt_at.is_none(),
                "verification attempt failed"
            );
            state.store.challenge_failed(&c.endpoint_id, c.lease_token, &failure, now).await
        }
    };
    if let Err(e) = recorded {
        // The lease runs out and the challenge is sent again.
        tracing::warn!(endpoint_id = %c.endpoint_id, error = %e, "could not record a verification attempt");
    }
}

/// When attempt `made + 1` goes, after `made` failed ones; `None`: the schedule
/// is spent and the challenge expires.
fn next_attempt_at(schedule: &[Duration], made: i64, now: Millis) -> Option<Millis> {
    let index = usize::try_from(made - 1).ok()?;
    schedule.get(index).map(|wait| time::add(now, *wait))
}

/// The destination check, the signed request, the answer.
async fn check_sign_send(
    state: &SharedState,
    (client, clients): (&reqwest::Client, &Clients),
    c: &ClaimedChallenge,
    spec: &EndpointSpec,
    deadline: tokio::time::Instant,
) -> AttemptResult {
    let checked = state.policy.check_url(&c.url);
    let url = match attempt::check_destination(state, &checked).await {
        Ok(url) => url.clone(),
        Err(e) => return attempt::refused(ErrorClass::of_destination(&e), e.to_string()),
    };
    let now = time::now_ms();
    let rows = match state.store.live_secrets(&c.endpoint_id, now).await {
        Ok(rows) => rows,
        Err(e) => {
            return attempt::refused(ErrorClass::NoSecret, format!("the endpoint's secrets could not be read: {e}"))
        }
    };
    let secrets = signing_keys::open(&state.keyring, c.endpoint_id.as_str(), Some(&rows));
    let live: Vec<&LiveSecret> = secrets.iter().filter(|s| s.is_live(now)).collect();
    if live.is_empty() {
        return attempt::refused(ErrorClass::NoSecret, "the endpoint has no usable signing secret".into());
    }
    let Ok(custom) = spec.headers.open(&state.keyring, c.endpoint_id.as_str()) else {
        return attempt::refused(
            ErrorClass::SealedHeader,
            "a sensitive custom header of the endpoint could not be opened".into(),
        );
    };
    let id = ids::VerificationId::new().into_string();
    let body = Bytes::from(challenge_body(&id, &c.challenge, now));
    let message = Message {
        endpoint_id: c.endpoint_id.as_str(),
        id: &id,
        event_type: VERIFICATION_TYPE,
        attempt_id: &id,
        body: &body,
    };
    let mut headers = match attempt::signed_headers(&live, spec.signature_scheme, &message, now) {
        Ok(headers) => headers,
        Err(refusal) => return refusal,
    };
    attempt::add_custom_headers(&mut headers, &custom);
    let own = clients.for_endpoint(&c.endpoint_id, spec.tls.as_ref(), &state.keyring, now);
    let auth = spec.auth.as_ref();
    attempt::send_with(
        &own,
        client,
        Request { method: reqwest::Method::POST, url, headers, body },
        |client, request| attempt::send_authorized(state, client, &c.endpoint_id, auth, deadline, request),
    )
    .await
}

/// The request body: an envelope like an event's, `data` carrying the challenge.
pub fn challenge_body(id: &str, challenge: &str, now: Millis) -> Vec<u8> {
    let event_type = EventType::parse(VERIFICATION_TYPE).expect("a valid type");
    let data = serde_json::json!({ "challenge": challenge }).to_string();
    let data = RawValue::from_string(data).expect("JSON from serde_json");
    build_envelope(id, &event_type, now, &data)
}

/// Whether the attempt proved ownership; otherwise the error class and reason recorded.
fn judge(result: &AttemptResult, challenge: &str) -> Result<(), (ErrorClass, String)> {
    if let Some(error) = result.error {
        return Err((error, result.detail.clone().unwrap_or_default()));
    }
    let status = result.facts.status.unwrap_or_default();
    if echoed(result.excerpt.as_deref().unwrap_or(""), challenge) {
        return Ok(());
    }
    Err((
        ErrorClass::ChallengeMismatch,
        format!(
            "the receiver answered {status} without echoing the challenge: answer with a JSON body \
             {{\"challenge\":\"<the challenge>\"}} or with the challenge alone as the body"
        ),
    ))
}

/// The answer's contract: the body is the JSON object `{"challenge": "<c>"}`
/// (other members are ignored), or the challenge alone (whitespace around it
/// is ignored). Only the first 4 KiB of the answer are read.
pub fn echoed(body: &str, challenge: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Echo {
        challenge: String,
    }
    if body.trim() == challenge {
        return true;
    }
    serde_json::from_str::<Echo>(body).is_ok_and(|e| e.challenge == challenge)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_is_the_challenge_as_json_or_alone() {
        assert!(echoed(r#"{"challenge":"abc"}"#, "abc"));
        assert!(echoed(r#"{ "ok": true, "challenge": "abc" }"#, "abc"));
        assert!(echoed("abc\n", "abc"));
        assert!(!echoed(r#"{"challenge":"abd"}"#, "abc"));
        assert!(!echoed("", "abc"));
        assert!(!echoed("ok", "abc"));
        assert!(!echoed(r#"{"challenge":["abc"]}"#, "abc"));
    }

    #[test]
    fn challenges_are_random_and_43_characters() {
        let (a, b) = (new_challenge(), new_challenge());
        assert_eq!(a.challenge.len(), 43);
        assert_ne!(a.challenge, b.challenge);
    }

    #[test]
    fn the_schedule_gives_one_attempt_more_than_its_waits_then_expires() {
        let schedule = [Duration::from_secs(10), Duration::from_secs(60)];
        assert_eq!(next_attempt_at(&schedule, 1, 1_000), Some(11_000));
        assert_eq!(next_attempt_at(&schedule, 2, 1_000), Some(61_000));
        assert_eq!(next_attempt_at(&schedule, 3, 1_000), None);
    }

    #[test]
    fn the_body_carries_the_challenge_in_an_envelope() {
        let body = challenge_body("vrf_1", "abc", 0);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["type"], VERIFICATION_TYPE);
        assert_eq!(v["data"]["challenge"], "abc");
        assert_eq!(v["id"], "vrf_1");
    }
}
