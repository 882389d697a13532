-- When the reconciler may next ask the provider about a pending order: the older an unpaid
-- order, the less often it is asked (a real provider limits how often one merchant queries).
ALTER TABLE orders ADD COLUMN next_query_at BIGINT NOT NULL DEFAULT 0;
