//! The storage suite: the same scenarios against SQLite and PostgreSQL, calling
//! the store directly (no HTTP), each on a fresh database.

mod fixtures;

mod apps;
mod claims;
mod deletion;
mod event_types;
mod ingest;
mod isolation;
mod lanes;
mod limits;
mod lock_order;
mod log;
mod migrations;
mod outcomes;
mod plans;
mod replay;
mod secrets;
mod send_budgets;
mod tasks;
mod tokens;
