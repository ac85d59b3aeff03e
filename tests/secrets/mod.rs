//! Secrets end-to-end suite: a secret is shown once and found nowhere else,
//! sealed under the master key, rotated without downtime; and every receiver
//! of `docs/receiving.md` verifies real deliveries.

use crate::support;

mod client_key_rekey;
mod common;
mod ed25519;
mod file_modes;
mod header_rekey;
mod key_canary;
mod master_key;
mod ownership_snippets;
mod queued;
mod receivers;
mod rotation;
mod rust_ed25519_receiver;
mod rust_receiver;
mod shown_once;
mod snippets;
