//! scaleout end-to-end suite: several `fenix` processes on one PostgreSQL
//! (a private server per test, so stopping it disturbs no other test), real
//! faults (SIGKILL, SIGTERM, PostgreSQL stopped and started, a locked SQLite
//! file, a full disk under either backend, producers outpacing receivers),
//! loopback receivers, and counts of
//! accepted, delivered and duplicated events printed by every scenario.

mod burst;
mod catalogue;
mod common;
mod crash;
mod drain;
mod failover;
mod full_disk;
mod limits;
mod ordered;
mod outage;
mod overload;
mod roles;
mod sqlite_faults;
