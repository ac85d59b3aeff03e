//! Budgets of tenant-triggered requests as stored (`send_budgets`): one GCRA
//! bucket per key, kept as its theoretical arrival time (`tat`, milliseconds).
//!
//! The rules (how much, per what) are `crate::send_budgets`'s; this file only
//! takes from buckets, all or nothing, in one write transaction. The take is a
//! conditional upsert: on PostgreSQL it locks the row, so two instances taking
//! the last unit at once cannot both get it; SQLite's writer is alone.

use super::Store;
use crate::store::Result;
use crate::time::Millis;

/// One bucket to take a unit from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetTake {
    /// `<action>/<rule>/<app or endpoint id>`.
    pub key: String,
    /// Units that may be taken at once from a full bucket.
    pub burst: i64,
    /// Milliseconds that refill one unit.
    pub interval_ms: i64,
}

/// Moves the bucket `$1` on by one interval (`$3`) from `max(tat, now)` if
/// that stays within `burst × interval` (`$4`) of now (`$2`); a new key is a
/// full bucket. Answers the new `tat`, or no row when the bucket is empty.
const TAKE: &str = "INSERT INTO send_budgets (key, tat) VALUES ($1, $2 + $3) \
     ON CONFLICT (key) DO UPDATE \
     SET tat = (CASE WHEN send_budgets.tat > $2 THEN send_budgets.tat ELSE $2 END) + $3 \
     WHERE (CASE WHEN send_budgets.tat > $2 THEN send_budgets.tat ELSE $2 END) + $3 <= $2 + $4 \
     RETURNING tat";

const READ: &str = "SELECT tat FROM send_budgets WHERE key = $1";

impl Store {
    /// Takes one unit from every bucket in `takes`, or from none: `Err(at)`
    /// when one is empty, `at` being when all of them would allow it.
    /// Take keys in one order everywhere (apps before endpoints), so two
    /// takes on PostgreSQL never wait for each other's rows in a circle.
    pub async fn take_budgets(&self, takes: &[BudgetTake], now: Millis) -> Result<Result<(), Millis>> {
        let mut tx = self.writes().begin_write().await?;
        let mut refused_until: Option<Millis> = None;
        for t in takes {
            let values =
                [(&t.key).into(), now.into(), t.interval_ms.into(), t.burst.saturating_mul(t.interval_ms).into()];
            let taken: Option<Millis> = tx.scalar_optional(TAKE, &values).await?;
            if taken.is_none() {
                let tat: Millis = tx.scalar(READ, &[(&t.key).into()]).await?;
                let at = allowed_at(tat, t);
                refused_until = Some(refused_until.map_or(at, |r| r.max(at)));
            }
        }
        match refused_until {
            // Dropping the transaction rolls back what was taken from the others.
            Some(at) => Ok(Err(at)),
            None => {
                tx.commit().await?;
                Ok(Ok(()))
            }
        }
    }

    /// Forgets buckets that are full again (`tat` passed before `now`): they
    /// read exactly like no row. Answers how many went.
    pub async fn purge_spent_budgets(&self, now: Millis) -> Result<u64> {
        self.writes().execute("DELETE FROM send_budgets WHERE tat < $1", &[now.into()]).await
    }
}

/// When a bucket at `tat` allows its next take: once
/// `tat + interval - now <= burst × interval`.
fn allowed_at(tat: Millis, t: &BudgetTake) -> Millis {
    tat.saturating_add(t.interval_ms).saturating_sub(t.burst.saturating_mul(t.interval_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_bucket_allows_its_next_take_one_interval_after_its_oldest_unit() {
        let t = BudgetTake { key: "k".into(), burst: 3, interval_ms: 1_000 };
        // Three taken at 0: tat = 3000; the fourth is allowed at 1000.
        assert_eq!(allowed_at(3_000, &t), 1_000);
        let cooldown = BudgetTake { key: "k".into(), burst: 1, interval_ms: 30_000 };
        assert_eq!(allowed_at(30_000, &cooldown), 30_000);
    }
}
