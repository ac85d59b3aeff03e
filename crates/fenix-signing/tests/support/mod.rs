//! Code shared by this crate's integration tests and examples.

pub mod vectors;
