//! destination end-to-end suite: the SSRF policy of DESIGN §2 as a user meets it,
//! against the real `fenix` binary whose resolver asks a DNS server the test runs
//! on 127.0.0.1 (`FENIX_DNS_SERVERS`). No packet leaves loopback: refused
//! destinations are refused before any connection, and the names that answer
//! public addresses are only ever registered, never sent to.

mod common;
mod deny_list;
mod disclosure;
mod rebinding;
mod recheck;
mod registration;
mod resolution;
