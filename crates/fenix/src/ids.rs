//! Prefixed, sortable, random identifiers (`app_`, `ep_`, `evt_`, `dlv_`, `att_`).
//!
//! A ULID after the prefix sorts by creation time, so "newest first" lists and
//! cursors can use the primary key alone.

/// Makes a new id with `prefix` (e.g. `"evt"`).
fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::new())
}

/// Makes a new id with `prefix` whose time part is `at_ms`: a delivery's id
/// sorts with its event's creation time, whenever the batch is written.
fn new_id_at(prefix: &str, at_ms: i64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(at_ms.max(0) as u64);
    format!("{prefix}_{}", ulid::Ulid::from_datetime(at))
}

/// `n` ids with `prefix` whose time part is `at_ms`, in increasing order and
/// following the last block of this kind when it was made in the same
/// millisecond (a monotonic ULID: the random part counts up instead of being
/// drawn afresh). Why: the rows of a batch are inserted in id order into
/// B-trees keyed by id (the primary key, and the `(app_id, id)`-like indexes),
/// so consecutive ids append at the right edge instead of splitting pages in
/// the middle; random ids of one millisecond landed all over the index's last
/// pages (`docs/benchmarks.md`, batch ingestion). An older `at_ms` than the
/// last block's (a batch written out of order) draws a fresh random start and
/// leaves the sequence alone. Ids stay unique across processes as ULIDs do:
/// a block starts at 79 random bits, so it cannot run past the 80-bit field.
fn new_ids_at(prefix: &'static str, at_ms: i64, n: usize) -> impl Iterator<Item = String> {
    use rand::Rng;
    /// Per kind of id, the millisecond and random part of the last id of the last block.
    static LAST: std::sync::Mutex<Vec<(&'static str, u64, u128)>> = std::sync::Mutex::new(Vec::new());
    const FRESH: u128 = 1 << 79;
    let ms = at_ms.max(0) as u64;
    let n128 = n as u128;
    let start = {
        let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        let i = match last.iter().position(|(p, _, _)| *p == prefix) {
            Some(i) => i,
            None => {
                last.push((prefix, 0, 0));
                last.len() - 1
            }
        };
        let (_, last_ms, last_random) = last[i];
        if ms == last_ms && last_random + n128 < (1 << 80) {
            last[i].2 = last_random + n128;
            last_random + 1
        } else {
            let start = rand::thread_rng().gen_range(0..FRESH);
            if ms > last_ms {
                last[i] = (prefix, ms, start + n128.saturating_sub(1));
            }
            start
        }
    };
    (0..n128).map(move |k| format!("{prefix}_{}", ulid::Ulid::from_parts(ms, start + k)))
}

/// The smallest id of kind `prefix` made at `at_ms`: every id of that kind
/// below it was made earlier (retention walks the primary key with it).
fn id_floor(prefix: &str, at_ms: i64) -> String {
    format!("{prefix}_{}", ulid::Ulid::from_parts(at_ms.max(0) as u64, 0))
}

/// True when `id` looks like an id of this kind (used to tell ids from app `uid`s).
pub fn has_prefix(id: &str, prefix: &str) -> bool {
    id.len() == prefix.len() + 27 && id.starts_with(prefix) && id.as_bytes()[prefix.len()] == b'_'
}

/// The characters of a ULID as Fenix writes them (Crockford's base 32, upper case).
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Why a text is not an id of the kind asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an id of kind `{prefix}_`: expected `{prefix}_` and 26 base-32 characters")]
pub struct BadId {
    /// The kind's prefix (`evt`, `dlv`, …).
    pub prefix: &'static str,
}

/// One newtype per kind of id. Each holds the text as stored and served
/// (`evt_01J…`), so encoding to sqlx and serde is the text itself
/// (`transparent`), while the compiler keeps an event id from being passed
/// where a delivery id is expected. [`parse`](EventId::parse) is the edge's
/// check (path, body, cursor): the prefix and a ULID's 26 characters. Values
/// read back from the database are trusted as they are (the store wrote them).
macro_rules! id_kinds {
    ($($(#[$doc:meta])* $name:ident = $prefix:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize, sqlx::Type)]
        #[serde(transparent)]
        #[sqlx(transparent)]
        pub struct $name(String);

        impl $name {
            /// The prefix of this kind, written here only.
            pub const PREFIX: &'static str = $prefix;

            /// A new, random id of this kind, sorting by the current time.
            pub fn new() -> $name {
                $name(new_id($prefix))
            }

            /// A new id whose time part is `at_ms`.
            pub fn new_at(at_ms: i64) -> $name {
                $name(new_id_at($prefix, at_ms))
            }

            /// `n` increasing ids made at `at_ms` ([`new_ids_at`]).
            pub fn new_block(at_ms: i64, n: usize) -> impl Iterator<Item = $name> {
                new_ids_at($prefix, at_ms, n).map($name)
            }

            /// The smallest id of this kind made at `at_ms` ([`id_floor`]).
            pub fn floor(at_ms: i64) -> $name {
                $name(id_floor($prefix, at_ms))
            }

            /// Checks a text received from outside: prefix, `_`, 26 base-32 characters.
            pub fn parse(text: &str) -> Result<$name, BadId> {
                let ulid = text.strip_prefix($prefix).and_then(|t| t.strip_prefix('_'));
                match ulid {
                    Some(u) if u.len() == 26
                        && u.bytes().all(|b| CROCKFORD.contains(&b))
                        && ulid::Ulid::from_string(u).is_ok() => Ok($name(text.to_owned())),
                    _ => Err(BadId { prefix: $prefix }),
                }
            }

            /// A value the store wrote (a row, a fixture), taken as it is.
            pub fn from_stored(text: String) -> $name {
                $name(text)
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id's text, owned.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl Default for $name {
            fn default() -> $name {
                $name::new()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::str::FromStr for $name {
            type Err = BadId;
            fn from_str(text: &str) -> Result<$name, BadId> {
                $name::parse(text)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    // A ULID, or the fixed id of the operator's own app and
                    // endpoint (`operator.rs`), which instances agree on.
                    .pattern(Some(concat!("^", $prefix, "_([0-9A-HJKMNP-TV-Z]{26}|0{19}FENX0P)$")))
                    .examples([concat!($prefix, "_01JF3Q8Z6V7W2X9Y4K5M0N1P2R")])
                    .build()
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}
    )*};
}

id_kinds! {
    /// An app (a tenant).
    AppId = "app";
    /// An endpoint of an app.
    EndpointId = "ep";
    /// An ingested event.
    EventId = "evt";
    /// A delivery: one event to one endpoint.
    DeliveryId = "dlv";
    /// One attempt of a delivery.
    AttemptId = "att";
    /// An endpoint's state change (pause, resume, disable, …).
    StateChangeId = "esc";
    /// An event type of the catalogue.
    EventTypeId = "etype";
    /// An API token.
    TokenId = "tok";
    /// A portal session link.
    PortalSessionId = "ps";
    /// A console session.
    ConsoleSessionId = "cs";
    /// An ownership verification of an endpoint.
    VerificationId = "vrf";
    /// A bulk operation over deliveries (replay, cancel, skip), run in the background.
    TaskId = "tsk";
}

#[cfg(test)]
mod tests {
    #[test]
    fn typed_ids_carry_their_kind_and_parse_only_their_own() {
        let evt = EventId::new();
        assert!(evt.as_str().starts_with("evt_") && has_prefix(evt.as_str(), EventId::PREFIX));
        assert_eq!(EventId::parse(evt.as_str()), Ok(evt.clone()));
        assert_eq!(DeliveryId::parse(evt.as_str()), Err(BadId { prefix: "dlv" }));
        for bad in [
            "evt_",
            "evt_short",
            "evt-01JF3Q8Z6V7W2X9Y4K5M0N1P2R",
            "evt_01JF3Q8Z6V7W2X9Y4K5M0N1P2RX",
            "evt_01JF3Q8Z6V7W2X9Y4K5M0N1P2!",
            "evt_01jf3q8z6v7w2x9y4k5m0n1p2r",
        ] {
            assert!(EventId::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(serde_json::to_string(&evt).unwrap(), format!("\"{evt}\""));
        let back: EventId = serde_json::from_str(&format!("\"{evt}\"")).unwrap();
        assert_eq!(back, evt);
        let block: Vec<DeliveryId> = DeliveryId::new_block(crate::time::now_ms(), 3).collect();
        assert!(block.windows(2).all(|w| w[0] < w[1]));
        assert!(DeliveryId::floor(0) < block[0]);
    }

    use super::*;

    #[test]
    fn ids_carry_their_prefix_and_sort_by_time() {
        let a = new_id("evt");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = new_id("evt");
        assert!(has_prefix(&a, "evt"));
        assert!(!has_prefix(&a, "ep"));
        assert!(a < b);
    }

    #[test]
    fn a_block_of_ids_counts_up_and_the_next_block_of_the_same_millisecond_follows_it() {
        let at = crate::time::now_ms();
        let a: Vec<String> = new_ids_at("tst", at, 3).collect();
        let b: Vec<String> = new_ids_at("tst", at, 2).collect();
        let all: Vec<&String> = a.iter().chain(&b).collect();
        assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
        assert!(all.iter().all(|id| has_prefix(id, "tst")));
        // An older millisecond: still unique and of its own time, the sequence left alone.
        let old: Vec<String> = new_ids_at("tst", at - 5, 2).collect();
        assert!(old[0] < old[1] && old[1] < a[0]);
        let c: Vec<String> = new_ids_at("tst", at, 1).collect();
        assert!(b[1] < c[0]);
    }

    #[test]
    fn the_floor_of_a_time_sorts_between_ids_made_before_and_after_it() {
        let before = new_id("dlv");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let floor = id_floor("dlv", crate::time::now_ms());
        let after = new_id("dlv");
        assert!(before < floor && floor <= after, "{before} < {floor} <= {after}");
        assert!(has_prefix(&floor, "dlv"));
    }
}
