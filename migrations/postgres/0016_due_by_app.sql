-- Due deliveries per app, in due order (issue 26, fair claims). When one
-- app holds its share of the worker, a claim looks for the others' due
-- deliveries without walking the first app's backlog: it visits the apps
-- with pending deliveries one index seek each (a loose scan of this index)
-- and takes each app's earliest due rows from it. Partial, like
-- `deliveries_due`: only `pending` rows are queued.
CREATE INDEX deliveries_due_by_app ON deliveries(app_id, next_attempt_at) WHERE status = 'pending';
