-- Content filters per endpoint (issue 32, "Routing").
-- The endpoint's filter: a CEL expression over the event (type, data,
-- channels, tags), checked against the filter module's bounds when saved;
-- the fan-out creates a delivery only for an event it is true for.
-- NULL: no filter (every event the other routing rules let through).
ALTER TABLE endpoints ADD COLUMN filter TEXT;
