-- Refunds through the payment providers: a refund is written (and what the order gave taken
-- back) before the provider is asked, as `pending`; it becomes `succeeded` when the provider
-- says the money went back. Refunds written before this kept no state: they were done.
ALTER TABLE order_refunds ADD COLUMN status TEXT NOT NULL DEFAULT 'succeeded';
ALTER TABLE order_refunds ADD COLUMN provider_refund_no TEXT;
ALTER TABLE order_refunds ADD COLUMN error TEXT;
ALTER TABLE order_refunds ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX order_refunds_status ON order_refunds (status);
