//! Prefixed, sortable, random identifiers (`app_`, `ep_`, `evt_`, `dlv_`, `att_`).
//!
//! A ULID after the prefix sorts by creation time, so "newest first" lists and
//! cursors can use the primary key alone.

/// Makes a new id with `prefix` (e.g. `"evt"`).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::new())
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
}
