-- Ordered delivery (opt-in per endpoint). An ordered endpoint's deliveries
-- form lanes, one per (endpoint, ordering_key) (no key: one lane for the
-- endpoint, ordering_key = ''), and only the head of a lane is ever attempted.
-- `lane_next` is the endpoint's lane counter: ingestion takes the next
-- numbers under the endpoint row's lock, so within an endpoint `lane_seq`
-- follows commit order (the order Fenix accepted the events) and a batch's
-- request order. Deliveries of unordered endpoints keep `lane_seq` NULL and
-- pay nothing: the claim checks the lane only where `lane_seq` is set.
ALTER TABLE endpoints ADD COLUMN ordered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN on_dead_letter TEXT NOT NULL DEFAULT 'continue';
ALTER TABLE endpoints ADD COLUMN lane_next INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN ordering_key TEXT;
ALTER TABLE deliveries ADD COLUMN lane_seq INTEGER;
-- The lane condition of the claim ("no earlier unfinished delivery in my
-- lane") and `blocked_by` read this: the rows of a lane that can still hold
-- it up (`pending`, and `failed` for lanes that block on a dead letter).
CREATE INDEX deliveries_lane ON deliveries(endpoint_id, ordering_key, lane_seq)
    WHERE lane_seq IS NOT NULL AND status IN ('pending', 'failed');
-- The deliveries of a lane that are not parked (`next_attempt_at` below the
-- largest 64-bit integer: `store::queue::PARKED`): the head, a retry, a
-- replayed delivery, whatever is being sent. "Is another delivery of my lane
-- being sent?" reads these few rows, not the lane's whole backlog.
CREATE INDEX deliveries_lane_live ON deliveries(endpoint_id, ordering_key)
    WHERE lane_seq IS NOT NULL AND status = 'pending' AND next_attempt_at < 9223372036854775807;
