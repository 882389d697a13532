-- How much of a running task's paid output its draft has already shown, in thousandths: a
-- cancellation refunds only the rest (streamed text that was read is paid for).
ALTER TABLE tasks ADD COLUMN delivered_permille BIGINT NOT NULL DEFAULT 0;
