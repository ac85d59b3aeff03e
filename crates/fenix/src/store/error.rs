//! The store's error: what a caller can tell apart about a failed storage
//! call, decided once when the driver's error comes back.
//!
//! Callers above the store never see `sqlx::Error`: they match the kind they
//! answer differently (an outage is a 503 with nothing stored, a full disk a
//! 503 the operator must act on (`disk_full.rs`), a taken unique
//! value a 409, a value the database refuses the client's 422, a row gone
//! meanwhile a 404) and let everything else be [`Error::Internal`]. The
//! driver's error stays inside as the source, for the log.

/// What a storage call returns. The second parameter defaults to the store's
/// error, so `Result<Result<(), Refusal>>` reads as "a storage outcome
/// holding a domain outcome".
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A storage call that failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database could not be reached or cannot take writes right now (a
    /// closed pool, a lost connection, a timeout, SQLite's `BUSY` outlasting
    /// its timeout): nothing was stored, retry later.
    #[error(transparent)]
    Unavailable(sqlx::Error),
    /// The database refused a write for lack of disk space (SQLite's `FULL`,
    /// PostgreSQL's `53100 disk_full`, or an I/O error saying "No space left
    /// on device"): nothing was stored. Unavailable too (callers that retry
    /// an outage retry this), but it does not pass by itself: someone must
    /// free space, so it is answered and reported apart (`disk_full.rs`).
    #[error(transparent)]
    StorageFull(sqlx::Error),
    /// The task that writes for this process (ingestion's batch writer) has
    /// stopped: the process is shutting down, nothing was stored.
    #[error("the store's writer has stopped")]
    Stopped,
    /// A unique constraint refused the row: the value is taken.
    #[error(transparent)]
    UniqueViolation(sqlx::Error),
    /// A foreign key refused the row: the parent it names (an app, an
    /// endpoint) was deleted meanwhile.
    #[error(transparent)]
    ForeignKeyViolation(sqlx::Error),
    /// The database refused a value (PostgreSQL SQLSTATE class 22, data
    /// exception: a NUL in text, a number out of range, …). The request
    /// carried something the API should have refused first: the client's
    /// error, never an outage.
    #[error(transparent)]
    Data(sqlx::Error),
    /// PostgreSQL aborted the transaction to break a cycle of lock waits
    /// (`40P01`) or for a serialization failure (`40001`): it did nothing,
    /// and running it again whole is correct ([`super::Conflicts`]).
    #[error(transparent)]
    Conflict(sqlx::Error),
    /// The row the write needed is not there (deleted meanwhile).
    #[error("no such row")]
    NotFound,
    /// Anything else: a bad query, a stored value the code cannot decode.
    #[error(transparent)]
    Internal(sqlx::Error),
}

impl Error {
    /// A stored value the code cannot read (`context` names the row).
    pub(crate) fn decode(context: String) -> Error {
        Error::Internal(sqlx::Error::Decode(context.into()))
    }

    /// True when nothing could be stored because the database (or this
    /// process's writer) is unavailable, its disk full included: answered
    /// 503, retried later.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable(_) | Error::StorageFull(_) | Error::Stopped)
    }

    /// True when the database refused the write for lack of disk space.
    pub fn is_storage_full(&self) -> bool {
        matches!(self, Error::StorageFull(_))
    }

    /// True for a unique-constraint violation.
    pub fn is_unique_violation(&self) -> bool {
        matches!(self, Error::UniqueViolation(_))
    }

    /// True when the database refused a value of the request.
    pub fn is_data_error(&self) -> bool {
        matches!(self, Error::Data(_))
    }

    /// The database's own code for the error (a SQLSTATE, a SQLite code), for the log.
    pub fn database_code(&self) -> Option<String> {
        match self.source_sqlx()? {
            sqlx::Error::Database(d) => d.code().map(|c| c.into_owned()),
            _ => None,
        }
    }

    fn source_sqlx(&self) -> Option<&sqlx::Error> {
        match self {
            Error::Unavailable(e)
            | Error::StorageFull(e)
            | Error::UniqueViolation(e)
            | Error::ForeignKeyViolation(e)
            | Error::Data(e)
            | Error::Conflict(e)
            | Error::Internal(e) => Some(e),
            Error::Stopped | Error::NotFound => None,
        }
    }
}

impl From<sqlx::Error> for Error {
    /// Classifies the driver's error; a full disk is also noted for this
    /// process's readiness and metrics ([`super::disk_full`]).
    fn from(e: sqlx::Error) -> Error {
        let e = classify(e);
        if e.is_storage_full() {
            super::disk_full::refused(&e);
        }
        e
    }
}

/// The kind of a driver's error, and nothing else.
fn classify(e: sqlx::Error) -> Error {
    if is_storage_full(&e) {
        return Error::StorageFull(e);
    }
    if is_unavailable(&e) {
        return Error::Unavailable(e);
    }
    match &e {
        sqlx::Error::RowNotFound => Error::NotFound,
        sqlx::Error::Database(d) if d.is_unique_violation() => Error::UniqueViolation(e),
        sqlx::Error::Database(d) if d.is_foreign_key_violation() => Error::ForeignKeyViolation(e),
        _ if is_conflict(&e) => Error::Conflict(e),
        _ if is_data_error(&e) => Error::Data(e),
        _ => Error::Internal(e),
    }
}

/// A write refused for lack of space. PostgreSQL answers `53100 disk_full`
/// when a table cannot grow, and `58030 io_error` when another file cannot
/// be written (its message then ends in the OS's "No space left on device");
/// SQLite answers `FULL` ("database or disk is full") when `write()` says
/// `ENOSPC`. Read before [`is_unavailable`], which counts all of class 53.
fn is_storage_full(e: &sqlx::Error) -> bool {
    const ENOSPC: &str = "No space left on device";
    match e {
        sqlx::Error::Io(io) => io.kind() == std::io::ErrorKind::StorageFull,
        sqlx::Error::Database(d) => {
            let code = d.code().unwrap_or_default();
            if d.try_downcast_ref::<sqlx::postgres::PgDatabaseError>().is_some() {
                return code == "53100" || d.message().contains(ENOSPC);
            }
            if d.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                // FULL is 13 (primary code = low byte of the extended code).
                return matches!(code.parse::<i32>().map(|c| c & 0xff), Ok(13)) || d.message().contains(ENOSPC);
            }
            false
        }
        _ => false,
    }
}

/// Each backend's codes are read only for its own errors: PostgreSQL's
/// SQLSTATEs are five characters that often parse as numbers (`22021`, a
/// character the encoding refuses, has the low byte 5, SQLite's BUSY), so
/// reading them as SQLite codes answered a data error as an outage.
fn is_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(d) => {
            let code = d.code().unwrap_or_default();
            if d.try_downcast_ref::<sqlx::postgres::PgDatabaseError>().is_some() {
                // Connection exceptions (08…), operator intervention (57P…), insufficient resources (53…),
                // and a write on a server that is a standby now (25006, read_only_sql_transaction: the
                // primary moved; `primary.rs` follows it).
                return code.starts_with("08") || code.starts_with("57P") || code.starts_with("53") || code == "25006";
            }
            if d.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                // BUSY, LOCKED, IOERR, CANTOPEN (primary code = low byte of the extended code).
                return matches!(code.parse::<i32>().map(|c| c & 0xff), Ok(5 | 6 | 10 | 14));
            }
            false
        }
        _ => false,
    }
}

/// Never true on SQLite, whose one writer cannot wait in a cycle (and whose
/// `BUSY`, from another process, is waited out by its busy timeout, then
/// answered as an outage).
fn is_conflict(e: &sqlx::Error) -> bool {
    pg_code(e).is_some_and(|c| matches!(c.as_str(), "40P01" | "40001"))
}

fn is_data_error(e: &sqlx::Error) -> bool {
    pg_code(e).is_some_and(|c| c.starts_with("22"))
}

/// The SQLSTATE of a PostgreSQL error.
fn pg_code(e: &sqlx::Error) -> Option<String> {
    match e {
        sqlx::Error::Database(d) if d.try_downcast_ref::<sqlx::postgres::PgDatabaseError>().is_some() => {
            d.code().map(|c| c.into_owned())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use sqlx::{Connection, SqliteConnection};

    use super::{classify, Error};

    #[tokio::test]
    async fn the_drivers_errors_become_the_kinds_callers_tell_apart() {
        let mut db = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE TABLE t (id TEXT PRIMARY KEY)").execute(&mut db).await.unwrap();
        sqlx::query("INSERT INTO t VALUES ('a')").execute(&mut db).await.unwrap();
        let taken = sqlx::query("INSERT INTO t VALUES ('a')").execute(&mut db).await.unwrap_err();
        assert!(Error::from(taken).is_unique_violation());
        let missing =
            sqlx::query_scalar::<_, String>("SELECT id FROM t WHERE id = 'b'").fetch_one(&mut db).await.unwrap_err();
        assert!(matches!(Error::from(missing), Error::NotFound));
        let closed = Error::from(sqlx::Error::PoolClosed);
        assert!(closed.is_unavailable() && !closed.is_data_error());
        assert!(Error::Stopped.is_unavailable());
        let bad = sqlx::query("SELECT nope FROM t").execute(&mut db).await.unwrap_err();
        assert!(matches!(Error::from(bad), Error::Internal(_)));
    }

    #[tokio::test]
    async fn a_database_that_cannot_grow_is_storage_full_which_is_unavailable_too() {
        // SQLite answers a database at its page limit as it answers a full disk: `FULL`.
        let mut db = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE TABLE t (v BLOB)").execute(&mut db).await.unwrap();
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&mut db).await.unwrap();
        sqlx::query(&format!("PRAGMA max_page_count = {pages}")).execute(&mut db).await.unwrap();
        let full = sqlx::query("INSERT INTO t VALUES (zeroblob(100000))").execute(&mut db).await.unwrap_err();
        assert!(full.to_string().contains("full"), "{full}");
        // `classify`, not `Error::from`: this test must not report a full disk for the whole test process.
        let e = classify(full);
        assert!(e.is_storage_full() && e.is_unavailable(), "{e:?}");
        assert_eq!(e.database_code().as_deref(), Some("13"));
        let taken = classify(sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::StorageFull)));
        assert!(taken.is_storage_full());
        assert!(!classify(sqlx::Error::PoolClosed).is_storage_full());
    }
}
