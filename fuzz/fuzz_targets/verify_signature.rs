//! Receiver-side verification on arbitrary headers, secrets, bodies, clocks
//! and tolerances: it must answer, never panic.

#![no_main]

use std::time::Duration;

use fenix_signing::{verify, Scheme, SignedRequest};
use libfuzzer_sys::fuzz_target;

type Input<'a> = (bool, &'a str, &'a str, Option<&'a str>, Vec<&'a str>, &'a [u8], u64, i64);

fuzz_target!(|input: Input<'_>| {
    let (fenix, timestamp, signature_header, msg_id, secrets, body, tolerance, now) = input;
    let scheme = if fenix { Scheme::FenixV1 } else { Scheme::StandardWebhooks };
    let req = SignedRequest { scheme, timestamp, signature_header, msg_id, body };
    let _ = verify(&req, &secrets, Duration::from_secs(tolerance), now);
});
