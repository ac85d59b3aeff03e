//! destination end-to-end suite.

#[path = "../support/mod.rs"]
mod support;
