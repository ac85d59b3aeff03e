//! Operations end-to-end suite: what operators do during an incident (pause,
//! resume, replay), failure handling beyond the schedule (410, Retry-After,
//! automatic disabling, operational events), payload privacy and retention,
//! stats, metrics and per-endpoint pacing — the real binary, both backends.

mod adaptive;
mod app_retention;
mod claimed;
mod common;
mod expunge;
mod failures;
mod fairness;
mod observability;
mod pacing;
mod pause;
mod privacy;
mod replay;
mod retention;
mod tasks;
mod traces;
