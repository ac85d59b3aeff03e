//! Prefixed, sortable, random identifiers (`app_`, `ep_`, `evt_`, `dlv_`, `att_`).
//!
//! A ULID after the prefix sorts by creation time, so "newest first" lists and
//! cursors can use the primary key alone.

/// Makes a new id with `prefix` (e.g. `"evt"`).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::new())
}

/// Makes a new id with `prefix` whose time part is `at_ms`: a delivery's id
/// sorts with its event's creation time, whenever the batch is written.
pub fn new_id_at(prefix: &str, at_ms: i64) -> String {
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
pub fn new_ids_at(prefix: &'static str, at_ms: i64, n: usize) -> impl Iterator<Item = String> {
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
pub fn id_floor(prefix: &str, at_ms: i64) -> String {
    format!("{prefix}_{}", ulid::Ulid::from_parts(at_ms.max(0) as u64, 0))
}

/// True when `id` looks like an id of this kind (used to tell ids from app `uid`s).
pub fn has_prefix(id: &str, prefix: &str) -> bool {
    id.len() == prefix.len() + 27 && id.starts_with(prefix) && id.as_bytes()[prefix.len()] == b'_'
}

#[cfg(test)]
mod tests {
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
