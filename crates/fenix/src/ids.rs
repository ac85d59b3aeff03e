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
    fn the_floor_of_a_time_sorts_between_ids_made_before_and_after_it() {
        let before = new_id("dlv");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let floor = id_floor("dlv", crate::time::now_ms());
        let after = new_id("dlv");
        assert!(before < floor && floor <= after, "{before} < {floor} <= {after}");
        assert!(has_prefix(&floor, "dlv"));
    }
}
