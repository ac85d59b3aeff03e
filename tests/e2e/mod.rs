//! End-to-end suites: the real `fenix` binary over HTTP, real receivers on
//! loopback, both storage backends.

mod abuse;
mod api;
mod batch;
mod catalogue;
mod cli;
mod common;
mod console_pages;
mod crash;
mod delivery;
mod deploy_files;
mod failing;
mod formats;
mod hostile;
mod http2;
mod ingestion;
mod inputs;
mod large_reads;
mod ordering;
mod ownership;
mod policy;
mod portal;
mod portal_listener;
mod quickstart;
mod receiver_reports;
mod retries;
mod scopes;
mod strict;
mod test_events;
mod tls;
