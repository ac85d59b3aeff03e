//! The storage suite: the same scenarios against SQLite and PostgreSQL.

#[path = "../support/mod.rs"]
mod support;
