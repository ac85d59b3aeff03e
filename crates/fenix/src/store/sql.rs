//! Shared SQL, run on either backend: the one place that chooses a backend
//! for a statement written once.
//!
//! The two schemas use the same column names and units, so most of the
//! store's statements are one text with `$n` placeholders. A store method
//! writes it once and hands its values over as [`Value`]s:
//!
//! ```ignore
//! self.reads().fetch_optional::<AppRow>("SELECT … FROM apps WHERE id = $1", &[id.into()]).await
//! ```
//!
//! [`Conn`] binds them onto the right driver's query, one `match` per
//! operation; [`Db`] (a pool: the reads' or the writes') and [`Tx`] (a write
//! transaction, `BEGIN IMMEDIATE` on SQLite) run their statements through
//! it. Driver errors become the store's [`Error`] here. Where the backends'
//! statements differ (the delivery queue), each backend's code is its own
//! file under `queue/`, on the connection [`Conn`] hands out.

use sqlx::{
    pool::PoolConnection, postgres::PgRow, sqlite::SqliteRow, Arguments, Decode, FromRow, PgConnection, PgPool,
    Postgres, Sqlite, SqliteConnection, SqlitePool, Transaction, Type,
};

use super::{Error, Result};

/// A value bound to a `$n` placeholder of shared SQL.
#[derive(Clone, Debug)]
pub(crate) enum Value<'a> {
    Text(&'a str),
    /// Text made for the statement (a cursor's bound, a time's id floor).
    String(String),
    OptText(Option<&'a str>),
    Int(i64),
    OptInt(Option<i64>),
    Bool(bool),
    OptBool(Option<bool>),
    Bytes(&'a [u8]),
    OptBytes(Option<&'a [u8]>),
}

/// What is bound as text: strings and the typed ids of [`crate::ids`].
pub(crate) trait Text {
    fn text(&self) -> &str;
}

impl Text for str {
    fn text(&self) -> &str {
        self
    }
}

impl Text for String {
    fn text(&self) -> &str {
        self
    }
}

impl<T: Text + ?Sized> Text for &T {
    fn text(&self) -> &str {
        (**self).text()
    }
}

/// Each id kind binds as its text.
macro_rules! text_ids {
    ($($kind:ident),*) => {$(
        impl Text for crate::ids::$kind {
            fn text(&self) -> &str {
                self.as_str()
            }
        }
    )*};
}
text_ids!(
    AppId,
    EndpointId,
    EventId,
    DeliveryId,
    AttemptId,
    StateChangeId,
    EventTypeId,
    TokenId,
    PortalSessionId,
    ConsoleSessionId,
    TaskId
);

impl<'a, T: Text + ?Sized> From<&'a T> for Value<'a> {
    fn from(v: &'a T) -> Value<'a> {
        Value::Text(v.text())
    }
}

impl<'a, T: Text> From<&'a Option<T>> for Value<'a> {
    fn from(v: &'a Option<T>) -> Value<'a> {
        Value::OptText(v.as_ref().map(Text::text))
    }
}

impl<'a, T: Text + ?Sized> From<Option<&'a T>> for Value<'a> {
    fn from(v: Option<&'a T>) -> Value<'a> {
        Value::OptText(v.map(Text::text))
    }
}

/// The closed sets of [`crate::lifecycle`] bind as their stored text.
macro_rules! text_sets {
    ($($set:ident),*) => {$(
        impl From<crate::lifecycle::$set> for Value<'_> {
            fn from(v: crate::lifecycle::$set) -> Self {
                Value::Text(v.as_str())
            }
        }
    )*};
}
text_sets!(DeliveryStatus, EndpointState, OnDeadLetter, SigningAlgorithm, TaskKind, TaskState);

impl From<String> for Value<'_> {
    fn from(v: String) -> Self {
        Value::String(v)
    }
}

impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<Option<i64>> for Value<'_> {
    fn from(v: Option<i64>) -> Self {
        Value::OptInt(v)
    }
}

impl From<bool> for Value<'_> {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<Option<bool>> for Value<'_> {
    fn from(v: Option<bool>) -> Self {
        Value::OptBool(v)
    }
}

impl<'a> From<&'a [u8]> for Value<'a> {
    fn from(v: &'a [u8]) -> Self {
        Value::Bytes(v)
    }
}

impl<'a> From<&'a Vec<u8>> for Value<'a> {
    fn from(v: &'a Vec<u8>) -> Self {
        Value::Bytes(v)
    }
}

impl<'a> From<&'a Option<Vec<u8>>> for Value<'a> {
    fn from(v: &'a Option<Vec<u8>>) -> Self {
        Value::OptBytes(v.as_deref())
    }
}

/// A statement built piece by piece (a log's optional filters, a list of
/// ids): its text, with a `$n` placeholder for each value as it is bound.
#[derive(Debug, Default)]
pub(crate) struct Built<'a> {
    pub sql: String,
    pub values: Vec<Value<'a>>,
}

impl<'a> Built<'a> {
    pub(crate) fn new(sql: impl Into<String>) -> Built<'a> {
        Built { sql: sql.into(), values: Vec::new() }
    }

    /// Appends text.
    pub(crate) fn push(&mut self, sql: &str) -> &mut Self {
        self.sql.push_str(sql);
        self
    }

    /// Appends the placeholder of `value`.
    pub(crate) fn bind(&mut self, value: impl Into<Value<'a>>) -> &mut Self {
        self.values.push(value.into());
        self.sql.push_str(&format!("${}", self.values.len()));
        self
    }

    /// Appends `(v1, v2, …)`, one placeholder each.
    pub(crate) fn bind_list<V: Into<Value<'a>>>(&mut self, values: impl IntoIterator<Item = V>) -> &mut Self {
        self.push("(");
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.bind(v);
        }
        self.push(")")
    }
}

/// A row a statement of shared SQL reads: `derive(FromRow)` structs and
/// tuples read on both backends.
pub(crate) trait Row: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin {}
impl<T: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin> Row for T {}

/// One column's value that both backends decode.
pub(crate) trait Scalar:
    for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres> + Send + Unpin
{
}
impl<T> Scalar for T where
    T: for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres> + Send + Unpin
{
}

fn sqlite_args<'q>(values: &[Value<'q>]) -> Result<sqlx::sqlite::SqliteArguments<'q>> {
    let mut args = sqlx::sqlite::SqliteArguments::default();
    for v in values {
        match *v {
            Value::Text(t) => args.add(t),
            Value::String(ref t) => args.add(t.clone()),
            Value::OptText(t) => args.add(t),
            Value::Int(n) => args.add(n),
            Value::OptInt(n) => args.add(n),
            Value::Bool(b) => args.add(b),
            Value::OptBool(b) => args.add(b),
            Value::Bytes(b) => args.add(b),
            Value::OptBytes(b) => args.add(b),
        }
        .map_err(|e| Error::Internal(sqlx::Error::Encode(e)))?;
    }
    Ok(args)
}

fn pg_args<'q>(values: &[Value<'q>]) -> Result<sqlx::postgres::PgArguments> {
    let mut args = sqlx::postgres::PgArguments::default();
    for v in values {
        match *v {
            Value::Text(t) => args.add(t),
            Value::String(ref t) => args.add(t.clone()),
            Value::OptText(t) => args.add(t),
            Value::Int(n) => args.add(n),
            Value::OptInt(n) => args.add(n),
            Value::Bool(b) => args.add(b),
            Value::OptBool(b) => args.add(b),
            Value::Bytes(b) => args.add(b),
            Value::OptBytes(b) => args.add(b),
        }
        .map_err(|e| Error::Internal(sqlx::Error::Encode(e)))?;
    }
    Ok(args)
}

/// A connection of either backend: a pool's, or a transaction's.
pub enum Conn<'c> {
    Sqlite(&'c mut SqliteConnection),
    Postgres(&'c mut PgConnection),
}

impl Conn<'_> {
    /// Runs a statement; answers the rows it affected.
    pub(crate) async fn execute(&mut self, sql: &str, values: &[Value<'_>]) -> Result<u64> {
        Ok(match self {
            Conn::Sqlite(c) => sqlx::query_with(sql, sqlite_args(values)?).execute(&mut **c).await?.rows_affected(),
            Conn::Postgres(c) => sqlx::query_with(sql, pg_args(values)?).execute(&mut **c).await?.rows_affected(),
        })
    }

    /// The first row, if any.
    pub(crate) async fn fetch_optional<T: Row>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Option<T>> {
        Ok(match self {
            Conn::Sqlite(c) => sqlx::query_as_with(sql, sqlite_args(values)?).fetch_optional(&mut **c).await?,
            Conn::Postgres(c) => sqlx::query_as_with(sql, pg_args(values)?).fetch_optional(&mut **c).await?,
        })
    }

    /// Every row.
    pub(crate) async fn fetch_all<T: Row>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Vec<T>> {
        Ok(match self {
            Conn::Sqlite(c) => sqlx::query_as_with(sql, sqlite_args(values)?).fetch_all(&mut **c).await?,
            Conn::Postgres(c) => sqlx::query_as_with(sql, pg_args(values)?).fetch_all(&mut **c).await?,
        })
    }

    /// The first row; none is [`Error::NotFound`].
    pub(crate) async fn fetch_one<T: Row>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<T> {
        self.fetch_optional(sql, values).await?.ok_or(Error::NotFound)
    }

    /// The first column of the first row, if any.
    pub(crate) async fn scalar_optional<T: Scalar>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Option<T>> {
        Ok(self.fetch_optional::<(T,)>(sql, values).await?.map(|(v,)| v))
    }

    /// The first column of the first row; none is [`Error::NotFound`].
    pub(crate) async fn scalar<T: Scalar>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<T> {
        self.scalar_optional(sql, values).await?.ok_or(Error::NotFound)
    }

    /// The first column of every row.
    pub(crate) async fn scalar_all<T: Scalar>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Vec<T>> {
        Ok(self.fetch_all::<(T,)>(sql, values).await?.into_iter().map(|(v,)| v).collect())
    }
}

/// A pool: the one that serves reads, or the one that serves writes
/// ([`super::Store::reads`], [`super::Store::writes`]).
#[derive(Clone, Copy)]
pub(crate) enum Db<'a> {
    Sqlite(&'a SqlitePool),
    Postgres(&'a PgPool),
}

impl Db<'_> {
    /// A connection of the pool, held until dropped.
    pub(crate) async fn acquire(self) -> Result<Held> {
        Ok(match self {
            Db::Sqlite(p) => Held::Sqlite(p.acquire().await?),
            Db::Postgres(p) => Held::Postgres(p.acquire().await?),
        })
    }

    /// Starts a write transaction. On SQLite it is `BEGIN IMMEDIATE`: the
    /// write lock is taken up front, so a transaction that reads before it
    /// writes cannot fail to upgrade when another process (a CLI command)
    /// wrote meanwhile.
    pub(crate) async fn begin_write(self) -> Result<Tx<'static>> {
        Ok(match self {
            Db::Sqlite(p) => Tx::Sqlite(p.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(p) => Tx::Postgres(p.begin().await?),
        })
    }

    /// [`Conn::execute`] on a connection of the pool.
    pub(crate) async fn execute(self, sql: &str, values: &[Value<'_>]) -> Result<u64> {
        self.acquire().await?.conn().execute(sql, values).await
    }

    /// [`Conn::fetch_optional`] on a connection of the pool.
    pub(crate) async fn fetch_optional<T: Row>(self, sql: &str, values: &[Value<'_>]) -> Result<Option<T>> {
        self.acquire().await?.conn().fetch_optional(sql, values).await
    }

    /// [`Conn::fetch_all`] on a connection of the pool.
    pub(crate) async fn fetch_all<T: Row>(self, sql: &str, values: &[Value<'_>]) -> Result<Vec<T>> {
        self.acquire().await?.conn().fetch_all(sql, values).await
    }

    /// [`Conn::fetch_one`] on a connection of the pool.
    pub(crate) async fn fetch_one<T: Row>(self, sql: &str, values: &[Value<'_>]) -> Result<T> {
        self.acquire().await?.conn().fetch_one(sql, values).await
    }

    /// [`Conn::scalar_optional`] on a connection of the pool.
    pub(crate) async fn scalar_optional<T: Scalar>(self, sql: &str, values: &[Value<'_>]) -> Result<Option<T>> {
        self.acquire().await?.conn().scalar_optional(sql, values).await
    }

    /// [`Conn::scalar`] on a connection of the pool.
    pub(crate) async fn scalar<T: Scalar>(self, sql: &str, values: &[Value<'_>]) -> Result<T> {
        self.acquire().await?.conn().scalar(sql, values).await
    }

    /// [`Conn::scalar_all`] on a connection of the pool.
    pub(crate) async fn scalar_all<T: Scalar>(self, sql: &str, values: &[Value<'_>]) -> Result<Vec<T>> {
        self.acquire().await?.conn().scalar_all(sql, values).await
    }

    /// Whether several connections can write at the same time: true on
    /// PostgreSQL; false on SQLite, whose one writer takes writes in turn.
    pub(crate) fn concurrent_writes(self) -> bool {
        matches!(self, Db::Postgres(_))
    }
}

/// A connection taken out of its pool until dropped: the ingestion queue
/// holds the writer's across batches ([`super::HeldWriter`]).
pub enum Held {
    Sqlite(PoolConnection<Sqlite>),
    Postgres(PoolConnection<Postgres>),
}

impl Held {
    /// The connection, to run statements on.
    pub fn conn(&mut self) -> Conn<'_> {
        match self {
            Held::Sqlite(c) => Conn::Sqlite(c),
            Held::Postgres(c) => Conn::Postgres(c),
        }
    }
}

/// A write transaction of either backend ([`Db::begin_write`]); dropped
/// without [`Tx::commit`], it rolls back.
pub(crate) enum Tx<'c> {
    Sqlite(Transaction<'c, Sqlite>),
    Postgres(Transaction<'c, Postgres>),
}

impl Tx<'_> {
    /// The transaction's connection, to run statements on.
    pub(crate) fn conn(&mut self) -> Conn<'_> {
        match self {
            Tx::Sqlite(t) => Conn::Sqlite(t),
            Tx::Postgres(t) => Conn::Postgres(t),
        }
    }

    /// [`Conn::execute`] in the transaction.
    pub(crate) async fn execute(&mut self, sql: &str, values: &[Value<'_>]) -> Result<u64> {
        self.conn().execute(sql, values).await
    }

    /// [`Conn::fetch_optional`] in the transaction.
    pub(crate) async fn fetch_optional<T: Row>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Option<T>> {
        self.conn().fetch_optional(sql, values).await
    }

    /// [`Conn::scalar_optional`] in the transaction.
    pub(crate) async fn scalar_optional<T: Scalar>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Option<T>> {
        self.conn().scalar_optional(sql, values).await
    }

    /// [`Conn::scalar`] in the transaction.
    pub(crate) async fn scalar<T: Scalar>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<T> {
        self.conn().scalar(sql, values).await
    }

    /// [`Conn::scalar_all`] in the transaction.
    pub(crate) async fn scalar_all<T: Scalar>(&mut self, sql: &str, values: &[Value<'_>]) -> Result<Vec<T>> {
        self.conn().scalar_all(sql, values).await
    }

    /// Rolls the transaction back now (dropping it does so too, later).
    pub(crate) async fn rollback(self) -> Result<()> {
        match self {
            Tx::Sqlite(t) => t.rollback().await?,
            Tx::Postgres(t) => t.rollback().await?,
        }
        Ok(())
    }

    /// Commits the transaction.
    pub(crate) async fn commit(self) -> Result<()> {
        match self {
            Tx::Sqlite(t) => t.commit().await?,
            Tx::Postgres(t) => t.commit().await?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use sqlx::{Connection, SqliteConnection};

    use super::{Built, Conn, Value};

    #[test]
    fn a_built_statement_numbers_its_placeholders_in_the_order_values_are_bound() {
        let mut q = Built::new("SELECT 1 WHERE a = ");
        q.bind("x").push(" AND b IN ").bind_list([1i64, 2]);
        assert_eq!(q.sql, "SELECT 1 WHERE a = $1 AND b IN ($2, $3)");
        assert_eq!(q.values.len(), 3);
    }

    #[tokio::test]
    async fn shared_sql_binds_each_kind_of_value_and_reads_it_back() {
        let mut db = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        let mut conn = Conn::Sqlite(&mut db);
        conn.execute("CREATE TABLE t (s TEXT, o TEXT, n INTEGER, b BOOLEAN, x BLOB)", &[]).await.unwrap();
        let bytes = vec![1u8, 2];
        let values = ["a".into(), Value::OptText(None), 7i64.into(), true.into(), (&bytes).into()];
        assert_eq!(conn.execute("INSERT INTO t VALUES ($1, $2, $3, $4, $5)", &values).await.unwrap(), 1);
        let row: (String, Option<String>, i64, bool, Vec<u8>) =
            conn.fetch_one("SELECT s, o, n, b, x FROM t WHERE n = $1", &[7i64.into()]).await.unwrap();
        assert_eq!(row, ("a".into(), None, 7, true, bytes));
        let none: Option<i64> = conn.scalar_optional("SELECT n FROM t WHERE s = $1", &["z".into()]).await.unwrap();
        assert!(none.is_none());
        let missing = conn.scalar::<i64>("SELECT n FROM t WHERE s = $1", &["z".into()]).await.unwrap_err();
        assert!(matches!(missing, crate::store::Error::NotFound));
    }
}
