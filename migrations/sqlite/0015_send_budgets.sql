-- Budgets of the requests a tenant's own calls make Fenix send (issue 26):
-- ownership challenges (create, URL change, `POST …/verify`), test events
-- and replays. Each budget is a GCRA bucket kept as one number, its
-- "theoretical arrival time": a take moves `tat` to max(tat, now) + the
-- rule's interval, and is allowed while that stays within burst × interval
-- of now (crates/fenix/src/send_budgets.rs). Kept in the database, not in
-- memory, so a restart does not refill it (and, on PostgreSQL, every
-- instance spends the same budget).
--
-- `key` is `<action>/<rule>/<app or endpoint id>`. No foreign key on
-- purpose: deleting an endpoint (or re-creating one) must not hand out a
-- fresh budget; a row whose `tat` has passed is an unused budget and is
-- removed by maintenance (`send_budgets_spent`).
CREATE TABLE send_budgets (
    key TEXT PRIMARY KEY,
    tat INTEGER NOT NULL
);
CREATE INDEX send_budgets_spent ON send_budgets(tat);
