-- When the reconciler may next ask the provider about a pending order: the older an unpaid
-- order, the less often it is asked (a real provider limits how often one merchant queries).
ALTER TABLE orders ADD COLUMN next_query_at BIGINT NOT NULL DEFAULT 0;
-- A refund attempt in flight holds its refund until `attempt_until`, so no other process asks
-- the provider at the same moment and no operator gives it up meanwhile.
ALTER TABLE order_refunds ADD COLUMN attempt_until BIGINT NOT NULL DEFAULT 0;
-- What writing the refund took back (a top-up's balance, a package's uses): exactly what giving
-- it up restores. Refunds written before this were all made.
ALTER TABLE order_refunds ADD COLUMN taken_fen BIGINT NOT NULL DEFAULT 0;
ALTER TABLE order_refunds ADD COLUMN taken_uses BIGINT NOT NULL DEFAULT 0;
-- A task paid by scanning starts when it is paid, even when its page was closed: the submission
-- its page would have made (endpoint, form, the price the dialog showed), taken once.
ALTER TABLE orders ADD COLUMN submit_after_paid TEXT;
