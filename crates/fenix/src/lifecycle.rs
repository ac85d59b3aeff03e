//! The lifecycle's closed sets as types: a delivery's [`DeliveryStatus`] and an
//! endpoint's [`EndpointState`].
//!
//! Each is stored, answered and logged as the same lowercase text it always
//! was (the schemas' `CHECK` constraints list it), so nothing is migrated and
//! the API's JSON is unchanged; the text is written here once, in `as_str()`,
//! and everything else (serde, the OpenAPI schema, sqlx on both backends)
//! goes through it. Text read from the database that is not one of the
//! variants is an error ([`UnknownText`]), never a panic.
//!
//! The rules about the sets live here too: which statuses a replay may
//! re-queue, which are final, and how a `pending` row is *shown* (`in_flight`
//! while leased, `scheduled` while its event's time is ahead) — in Rust and in
//! the SQL fragments the store splices into its queries. This module depends on nothing else in the crate, so any module
//! may use it.

use std::{fmt, str::FromStr};

/// Where a delivery is in its life.
///
/// Stored statuses are `pending`, `succeeded`, `failed` and `skipped`; a claim
/// leases a `pending` row without changing its status, and the API *shows* such
/// a row as `in_flight` ([`SHOWN_STATUS_SQL`]); a `pending` row of a scheduled
/// event shows `scheduled` until its time ([`shown_status_at`]). (Databases from before leases
/// had their own columns stored `in_flight`; a migration turned those rows back
/// into `pending`, and the schemas still accept the text.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    /// Shown only: `pending`, of an event sent with `deliver_at` or `delay`
    /// whose time is still ahead (its row's `deliver_at` and
    /// `next_attempt_at`); it becomes `pending` when the time comes.
    Scheduled,
    /// Waiting for its next attempt (its first, or a retry).
    Pending,
    /// Shown only: `pending` and leased by a worker that is attempting it now.
    InFlight,
    /// A 2xx answered; done.
    Succeeded,
    /// Attempt budget spent, 410 Gone, or payload purged before sending: the dead letter.
    Failed,
    /// Not sent: the endpoint was paused, disabled or deleted when it came due.
    Skipped,
}

impl DeliveryStatus {
    /// Every status, in the order the API documents them.
    pub const ALL: [DeliveryStatus; 6] = [
        DeliveryStatus::Scheduled,
        DeliveryStatus::Pending,
        DeliveryStatus::InFlight,
        DeliveryStatus::Succeeded,
        DeliveryStatus::Failed,
        DeliveryStatus::Skipped,
    ];

    /// The statuses a delivery ends in; counted per app by the metrics, and the
    /// only ones retention may delete.
    pub const FINAL: [DeliveryStatus; 3] = [DeliveryStatus::Succeeded, DeliveryStatus::Failed, DeliveryStatus::Skipped];

    /// The statuses a replay re-queues (and the default of an endpoint replay):
    /// a delivery that succeeded, or is still waiting or being sent, is never replayed.
    pub const REPLAYABLE: [DeliveryStatus; 2] = [DeliveryStatus::Failed, DeliveryStatus::Skipped];

    /// The text stored in `deliveries.status` and answered by the API.
    pub const fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Scheduled => "scheduled",
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::InFlight => "in_flight",
            DeliveryStatus::Succeeded => "succeeded",
            DeliveryStatus::Failed => "failed",
            DeliveryStatus::Skipped => "skipped",
        }
    }

    /// True for `failed` and `skipped` ([`DeliveryStatus::REPLAYABLE`]).
    pub fn is_replayable(self) -> bool {
        DeliveryStatus::REPLAYABLE.contains(&self)
    }

    /// True for `succeeded`, `failed` and `skipped` ([`DeliveryStatus::FINAL`]).
    pub fn is_final(self) -> bool {
        DeliveryStatus::FINAL.contains(&self)
    }

    /// True while an attempt is coming (`scheduled`, `pending`, `in_flight`):
    /// only then does the API show when.
    pub fn is_open(self) -> bool {
        !self.is_final()
    }

    /// The status a row shows: a leased `pending` row is `in_flight`; an
    /// unleased one whose scheduled time is still ahead (`waits_for_its_time`:
    /// its `deliver_at` and its `next_attempt_at` are both later than now) is
    /// `scheduled`. The same rule as [`shown_status_at`].
    pub fn shown(stored: DeliveryStatus, leased: bool, waits_for_its_time: bool) -> DeliveryStatus {
        match stored {
            DeliveryStatus::Pending if leased => DeliveryStatus::InFlight,
            DeliveryStatus::Pending if waits_for_its_time => DeliveryStatus::Scheduled,
            other => other,
        }
    }

    /// The SQL condition, on a `deliveries` row's own columns, that holds
    /// exactly when the row shows `self` ([`DeliveryStatus::shown`]), for the
    /// statuses the lease and the time decide (`scheduled`, `pending`,
    /// `in_flight`); `now` is the placeholder the statement binds the time
    /// to (`"$1"`). `None` for the others: a row shows them when it stores
    /// them (`status = $n`, bound).
    pub fn shown_condition(self, now: &str) -> Option<String> {
        match self {
            DeliveryStatus::Scheduled => {
                Some(format!("status = 'pending' AND lease_until IS NULL AND {}", waits_for_its_time(now)))
            }
            DeliveryStatus::Pending => {
                Some(format!("status = 'pending' AND lease_until IS NULL AND NOT ({})", waits_for_its_time(now)))
            }
            DeliveryStatus::InFlight => Some("status = 'pending' AND lease_until IS NOT NULL".into()),
            DeliveryStatus::Succeeded | DeliveryStatus::Failed | DeliveryStatus::Skipped => None,
        }
    }
}

/// The status a `deliveries` row shows, without the time: a leased
/// `pending` row is `in_flight`, and a scheduled one shows `pending` (for
/// statements that only ask whether a row is final or replayable; the log
/// reads [`shown_status_at`]).
pub const SHOWN_STATUS_SQL: &str =
    "CASE WHEN lease_until IS NOT NULL AND status = 'pending' THEN 'in_flight' ELSE status END";

/// The status a `deliveries` row shows at the time bound to the placeholder
/// `now` (`"$1"`), as an SQL expression on its own columns
/// ([`DeliveryStatus::shown`]): a leased `pending` row is `in_flight`, an
/// unleased one waiting for its scheduled time is `scheduled`.
pub fn shown_status_at(now: &str) -> String {
    format!(
        "CASE WHEN lease_until IS NOT NULL AND status = 'pending' THEN 'in_flight' \
         WHEN status = 'pending' AND {} THEN 'scheduled' ELSE status END",
        waits_for_its_time(now)
    )
}

/// An unleased `pending` row waits for its scheduled time: its event's
/// `deliver_at` and its own `next_attempt_at` are both after `now` (a row
/// deferred or parked has no `deliver_at` ahead; a replayed one is due now).
/// False, never NULL, for a row sent at once (no `deliver_at`), so that
/// `NOT (…)` holds for it.
fn waits_for_its_time(now: &str) -> String {
    format!("COALESCE(deliver_at, 0) > {now} AND COALESCE(next_attempt_at, 0) > {now}")
}

/// The SQL condition, on a `deliveries` row's own columns, that holds when the
/// row's stored status is replayable ([`DeliveryStatus::REPLAYABLE`]).
pub const REPLAYABLE_SQL: &str = "status IN ('failed', 'skipped')";

/// Whether an endpoint is sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndpointState {
    /// Deliveries are made and sent.
    Active,
    /// By an operator: deliveries are still made, and skipped when due.
    Paused,
    /// After a 410 Gone or a long run of failures: as paused, until resumed.
    Disabled,
    /// Shown only: stored `active` but its owner has not proved control of
    /// its URL yet (`ownership`); deliveries are made and skipped when due.
    PendingVerification,
}

impl EndpointState {
    /// Every state.
    pub const ALL: [EndpointState; 4] =
        [EndpointState::Active, EndpointState::Paused, EndpointState::Disabled, EndpointState::PendingVerification];

    /// The text stored in `endpoints.state` (and `endpoint_state_changes.state`) and answered by the API.
    pub const fn as_str(self) -> &'static str {
        match self {
            EndpointState::Active => "active",
            EndpointState::Paused => "paused",
            EndpointState::Disabled => "disabled",
            EndpointState::PendingVerification => "pending_verification",
        }
    }

    /// The state an endpoint shows: stored `active` and not verified yet is
    /// `pending_verification`; paused and disabled show as stored (the
    /// operator's choice, or the failure, says more). The same rule as
    /// [`SHOWN_ENDPOINT_STATE_SQL`].
    pub fn shown(stored: EndpointState, unverified: bool) -> EndpointState {
        match stored {
            EndpointState::Active if unverified => EndpointState::PendingVerification,
            other => other,
        }
    }

    /// True when its due deliveries are sent (otherwise they are `skipped`).
    pub fn sends(self) -> bool {
        self == EndpointState::Active
    }
}

/// The state an `endpoints` row shows, as an SQL expression on its own
/// columns ([`EndpointState::shown`]). The worker's batch context reads the
/// same expression (`store::queue::TARGET_COLUMNS`), so an unverified
/// endpoint's due deliveries are skipped like a paused one's.
pub const SHOWN_ENDPOINT_STATE_SQL: &str =
    "CASE WHEN state = 'active' AND unverified THEN 'pending_verification' ELSE state END";

/// Text that names none of a closed set's members, e.g. a row written by a
/// newer version of Fenix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownText {
    /// What the text should have named: `delivery status`, `endpoint state`.
    pub set: &'static str,
    /// The text found.
    pub text: String,
}

impl fmt::Display for UnknownText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} {:?}", self.set, self.text)
    }
}

impl std::error::Error for UnknownText {}

/// Implements text conversions, serde, the OpenAPI schema and sqlx (SQLite and
/// PostgreSQL, arrays included) for a closed set, all through its `ALL` and
/// `as_str()`.
macro_rules! closed_set_as_text {
    ($ty:ident, $set:literal) => {
        impl FromStr for $ty {
            type Err = UnknownText;

            fn from_str(s: &str) -> Result<Self, UnknownText> {
                $ty::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| UnknownText { set: $set, text: s.into() })
            }
        }

        impl TryFrom<String> for $ty {
            type Error = UnknownText;

            fn try_from(s: String) -> Result<Self, UnknownText> {
                s.parse()
            }
        }

        impl TryFrom<&str> for $ty {
            type Error = UnknownText;

            fn try_from(s: &str) -> Result<Self, UnknownText> {
                s.parse()
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }

        impl utoipa::PartialSchema for $ty {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some($ty::ALL.map($ty::as_str)))
                    .into()
            }
        }

        impl utoipa::ToSchema for $ty {}

        impl<DB: sqlx::Database> sqlx::Type<DB> for $ty
        where
            str: sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <str as sqlx::Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <str as sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'q, DB: sqlx::Database> sqlx::Encode<'q, DB> for $ty
        where
            &'q str: sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut <DB as sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <&'q str as sqlx::Encode<'q, DB>>::encode(self.as_str(), buf)
            }
        }

        impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for $ty
        where
            &'r str: sqlx::Decode<'r, DB>,
        {
            fn decode(value: <DB as sqlx::Database>::ValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                Ok(<&'r str as sqlx::Decode<'r, DB>>::decode(value)?.parse()?)
            }
        }

        impl sqlx::postgres::PgHasArrayType for $ty {
            fn array_type_info() -> sqlx::postgres::PgTypeInfo {
                <&str as sqlx::postgres::PgHasArrayType>::array_type_info()
            }

            fn array_compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
                <&str as sqlx::postgres::PgHasArrayType>::array_compatible(ty)
            }
        }
    };
}

closed_set_as_text!(DeliveryStatus, "delivery status");
closed_set_as_text!(EndpointState, "endpoint state");

/// What an ordered endpoint's lane does when its head is dead-lettered (`failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnDeadLetter {
    /// The next delivery of the lane goes: the dead letter stays in the log.
    #[default]
    Continue,
    /// The lane waits until an operator replays the dead letter (it then goes
    /// first) or skips it.
    Block,
}

impl OnDeadLetter {
    /// Both choices.
    pub const ALL: [OnDeadLetter; 2] = [OnDeadLetter::Continue, OnDeadLetter::Block];

    /// The text stored in `endpoints.on_dead_letter` and answered by the API.
    pub const fn as_str(self) -> &'static str {
        match self {
            OnDeadLetter::Continue => "continue",
            OnDeadLetter::Block => "block",
        }
    }
}

closed_set_as_text!(OnDeadLetter, "on_dead_letter choice");

/// What an endpoint's current key signs with. Orthogonal to the header
/// format (`signature_scheme`): each scheme has an HMAC (`v1`) and an
/// Ed25519 (`v1a`) form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SigningAlgorithm {
    /// HMAC-SHA256 with a shared `whsec_` secret.
    #[default]
    Hmac,
    /// Ed25519: Fenix keeps the private key, receivers verify with the public one.
    Ed25519,
}

impl SigningAlgorithm {
    /// Both choices.
    pub const ALL: [SigningAlgorithm; 2] = [SigningAlgorithm::Hmac, SigningAlgorithm::Ed25519];

    /// The text stored in `endpoints.signing_algorithm` and answered by the API.
    pub const fn as_str(self) -> &'static str {
        match self {
            SigningAlgorithm::Hmac => "hmac",
            SigningAlgorithm::Ed25519 => "ed25519",
        }
    }
}

closed_set_as_text!(SigningAlgorithm, "signing_algorithm");

/// What a task (a bulk operation over deliveries, `/v1/apps/{app}/tasks`) does to each delivery it selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskKind {
    /// Re-queue a `failed` or `skipped` delivery with a fresh attempt budget, as a replay does.
    Replay,
    /// Stop a delivery not sent yet: it becomes `skipped` with `skip_reason: cancelled`, as an event cancel does.
    Cancel,
    /// The same as `cancel`, named for operators who think of it as skipping.
    Skip,
    /// Erase a deleted app's log, events and endpoints, then the app (`DELETE /v1/apps/{app}`).
    DeleteApp,
}

impl TaskKind {
    /// Every kind.
    pub const ALL: [TaskKind; 4] = [TaskKind::Replay, TaskKind::Cancel, TaskKind::Skip, TaskKind::DeleteApp];

    /// The text stored in `tasks.kind` and answered by the API.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskKind::Replay => "replay",
            TaskKind::Cancel => "cancel",
            TaskKind::Skip => "skip",
            TaskKind::DeleteApp => "delete_app",
        }
    }

    /// The statuses (as shown) a task of this kind may select, the first
    /// ones its default when a filter names none.
    pub const fn selectable(self) -> &'static [DeliveryStatus] {
        match self {
            TaskKind::Replay => &DeliveryStatus::REPLAYABLE,
            TaskKind::Cancel | TaskKind::Skip => &[DeliveryStatus::Scheduled, DeliveryStatus::Pending],
            TaskKind::DeleteApp => &[],
        }
    }
}

closed_set_as_text!(TaskKind, "task kind");

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// Created, its deliveries selected; no runner has taken it yet.
    Queued,
    /// A runner holds its lease and works through its batches.
    Running,
    /// Every selected delivery was looked at.
    Succeeded,
    /// It could not go on (kept for a runner's unrecoverable error).
    Failed,
    /// Cancelled by a caller: it stopped at its next batch.
    Cancelled,
}

impl TaskState {
    /// Every state.
    pub const ALL: [TaskState; 5] =
        [TaskState::Queued, TaskState::Running, TaskState::Succeeded, TaskState::Failed, TaskState::Cancelled];

    /// The text stored in `tasks.state` and answered by the API.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskState::Queued => "queued",
            TaskState::Running => "running",
            TaskState::Succeeded => "succeeded",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }
}

closed_set_as_text!(TaskState, "task state");

/// The class of a delivery's latest attempt's result, a task filter's `last_status_class`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusClass {
    /// The receiver answered 400–499.
    Client,
    /// The receiver answered 500–599.
    Server,
    /// No answer: a connection, TLS or time-out error.
    Network,
}

impl StatusClass {
    /// Every class.
    pub const ALL: [StatusClass; 3] = [StatusClass::Client, StatusClass::Server, StatusClass::Network];

    /// The text of the API.
    pub const fn as_str(self) -> &'static str {
        match self {
            StatusClass::Client => "4xx",
            StatusClass::Server => "5xx",
            StatusClass::Network => "network",
        }
    }
}

closed_set_as_text!(StatusClass, "status class");

#[cfg(test)]
mod tests {
    use sqlx::{Connection, SqliteConnection};

    use super::*;

    #[test]
    fn every_delivery_status_round_trips_through_its_text_and_json() {
        let texts: Vec<&str> = DeliveryStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(texts, ["scheduled", "pending", "in_flight", "succeeded", "failed", "skipped"]);
        for s in DeliveryStatus::ALL {
            assert_eq!(s.as_str().parse::<DeliveryStatus>(), Ok(s));
            assert_eq!(DeliveryStatus::try_from(s.to_string()), Ok(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<DeliveryStatus>(&json).unwrap(), s);
        }
    }

    #[test]
    fn every_endpoint_state_round_trips_through_its_text_and_json() {
        let texts: Vec<&str> = EndpointState::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(texts, ["active", "paused", "disabled", "pending_verification"]);
        for s in EndpointState::ALL {
            assert_eq!(s.as_str().parse::<EndpointState>(), Ok(s));
            assert_eq!(EndpointState::try_from(s.to_string()), Ok(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<EndpointState>(&json).unwrap(), s);
        }
    }

    #[test]
    fn unknown_text_is_refused_not_guessed() {
        for text in ["", "Pending", "pending ", "inflight", "dead", "active"] {
            let err = text.parse::<DeliveryStatus>().unwrap_err();
            assert_eq!(err, UnknownText { set: "delivery status", text: text.into() });
        }
        for text in ["", "Active", "enabled", "failed"] {
            assert!(EndpointState::try_from(text.to_string()).is_err(), "{text:?}");
        }
        assert_eq!("dead".parse::<DeliveryStatus>().unwrap_err().to_string(), "unknown delivery status \"dead\"");
        assert!(serde_json::from_str::<DeliveryStatus>("\"dead\"").is_err());
        assert!(serde_json::from_str::<EndpointState>("\"gone\"").is_err());
    }

    #[test]
    fn only_failed_and_skipped_are_replayable_and_only_unfinished_ones_are_open() {
        let replayable: Vec<_> = DeliveryStatus::ALL.into_iter().filter(|s| s.is_replayable()).collect();
        assert_eq!(replayable, DeliveryStatus::REPLAYABLE);
        let open: Vec<_> = DeliveryStatus::ALL.into_iter().filter(|s| s.is_open()).collect();
        assert_eq!(open, [DeliveryStatus::Scheduled, DeliveryStatus::Pending, DeliveryStatus::InFlight]);
        let quoted: Vec<String> = DeliveryStatus::REPLAYABLE.iter().map(|s| format!("'{s}'")).collect();
        assert_eq!(REPLAYABLE_SQL, format!("status IN ({})", quoted.join(", ")));
        assert!(EndpointState::Active.sends());
        assert!(!EndpointState::Paused.sends() && !EndpointState::Disabled.sends());
        assert!(!EndpointState::PendingVerification.sends());
    }

    /// A database of 72 deliveries: every stored status, leased or not,
    /// scheduled ahead of `now`, before it or not at all, due after it, at it
    /// or not at all.
    async fn deliveries_in_every_stored_shape(now: i64) -> SqliteConnection {
        let mut db = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::query(
            "CREATE TABLE deliveries (status TEXT NOT NULL, lease_until INTEGER, deliver_at INTEGER, \
             next_attempt_at INTEGER)",
        )
        .execute(&mut db)
        .await
        .unwrap();
        let stored =
            [DeliveryStatus::Pending, DeliveryStatus::Succeeded, DeliveryStatus::Failed, DeliveryStatus::Skipped];
        for status in stored {
            for lease_until in [None, Some(5_i64)] {
                for deliver_at in [None, Some(now - 1), Some(now + 1)] {
                    for next_attempt_at in [None, Some(now), Some(now + 1)] {
                        sqlx::query(
                            "INSERT INTO deliveries (status, lease_until, deliver_at, next_attempt_at) \
                             VALUES ($1, $2, $3, $4)",
                        )
                        .bind(status)
                        .bind(lease_until)
                        .bind(deliver_at)
                        .bind(next_attempt_at)
                        .execute(&mut db)
                        .await
                        .unwrap();
                    }
                }
            }
        }
        db
    }

    /// The shown-status rule in SQL ([`shown_status_at`], each status's
    /// [`DeliveryStatus::shown_condition`]) agrees with the one in Rust, on a
    /// real database, for every stored status, leased or not, scheduled
    /// ahead, in the past or not at all, due ahead or now.
    #[tokio::test]
    async fn the_shown_status_is_the_same_in_rust_and_in_sql() {
        let now = 1_000_i64;
        let mut db = deliveries_in_every_stored_shape(now).await;
        type Row = (DeliveryStatus, Option<i64>, Option<i64>, Option<i64>);
        let in_rust = |(status, lease, deliver_at, next): &Row| {
            let waits = deliver_at.is_some_and(|t| t > now) && next.is_some_and(|t| t > now);
            DeliveryStatus::shown(*status, lease.is_some(), waits)
        };
        let columns = "status, lease_until, deliver_at, next_attempt_at";
        // A row, and the status SQL shows it.
        type Shown = (DeliveryStatus, Option<i64>, Option<i64>, Option<i64>, DeliveryStatus);
        let rows: Vec<Shown> = sqlx::query_as(&format!("SELECT {columns}, {} FROM deliveries", shown_status_at("$1")))
            .bind(now)
            .fetch_all(&mut db)
            .await
            .unwrap();
        assert_eq!(rows.len(), 72);
        for (status, lease, deliver_at, next, shown) in &rows {
            let row = (*status, *lease, *deliver_at, *next);
            assert_eq!(*shown, in_rust(&row), "{row:?}");
        }
        assert!(rows.iter().any(|r| r.4 == DeliveryStatus::Scheduled));
        for wanted in DeliveryStatus::ALL {
            let condition = wanted.shown_condition("$2").unwrap_or("status = $1".into());
            let matching: Vec<Row> = sqlx::query_as(&format!("SELECT {columns} FROM deliveries WHERE {condition}"))
                .bind(wanted)
                .bind(now)
                .fetch_all(&mut db)
                .await
                .unwrap();
            let expected = rows.iter().filter(|r| r.4 == wanted).count();
            assert_eq!(matching.len(), expected, "{wanted}");
            assert!(matching.iter().all(|r| in_rust(r) == wanted), "{wanted}");
        }
        let replayable: Vec<DeliveryStatus> = sqlx::query_scalar(&format!(
            "SELECT DISTINCT status FROM deliveries WHERE {REPLAYABLE_SQL} ORDER BY status"
        ))
        .fetch_all(&mut db)
        .await
        .unwrap();
        assert_eq!(replayable, DeliveryStatus::REPLAYABLE);
    }

    /// The shown endpoint state in SQL agrees with the one in Rust for every
    /// stored state, verified or not.
    #[tokio::test]
    async fn the_shown_endpoint_state_is_the_same_in_rust_and_in_sql() {
        let mut db = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE TABLE endpoints (state TEXT NOT NULL, unverified INTEGER NOT NULL)")
            .execute(&mut db)
            .await
            .unwrap();
        for state in [EndpointState::Active, EndpointState::Paused, EndpointState::Disabled] {
            for unverified in [false, true] {
                sqlx::query("INSERT INTO endpoints (state, unverified) VALUES ($1, $2)")
                    .bind(state)
                    .bind(unverified)
                    .execute(&mut db)
                    .await
                    .unwrap();
            }
        }
        let rows: Vec<(EndpointState, bool, EndpointState)> =
            sqlx::query_as(&format!("SELECT state, unverified, {SHOWN_ENDPOINT_STATE_SQL} FROM endpoints"))
                .fetch_all(&mut db)
                .await
                .unwrap();
        assert_eq!(rows.len(), 6);
        for (stored, unverified, shown) in rows {
            assert_eq!(shown, EndpointState::shown(stored, unverified), "{stored} {unverified}");
        }
        assert_eq!(EndpointState::shown(EndpointState::Active, true), EndpointState::PendingVerification);
        assert_eq!(EndpointState::shown(EndpointState::Paused, true), EndpointState::Paused);
    }

    #[tokio::test]
    async fn text_the_database_holds_that_names_no_status_is_a_decoding_error() {
        let mut db = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        let read = sqlx::query_scalar::<_, DeliveryStatus>("SELECT 'dead'").fetch_one(&mut db).await;
        let err = read.unwrap_err();
        assert!(matches!(err, sqlx::Error::ColumnDecode { .. }), "{err:?}");
        assert!(err.to_string().contains("unknown delivery status"), "{err}");
        let state: EndpointState = sqlx::query_scalar("SELECT 'paused'").fetch_one(&mut db).await.unwrap();
        assert_eq!(state, EndpointState::Paused);
    }
}
