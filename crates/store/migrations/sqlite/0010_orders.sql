-- Packages (套餐), orders paid through a payment provider, the provider's notifications, what
-- packages grant, and refunds. Amounts are fen; times Unix milliseconds.
CREATE TABLE products (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    price_fen BIGINT NOT NULL,
    -- What one purchase grants: check | aigc | rewrite_chars | paper | ppt, and how many.
    grant_kind TEXT NOT NULL,
    grant_amount BIGINT NOT NULL,
    valid_days BIGINT NOT NULL,
    sort_order BIGINT NOT NULL DEFAULT 0,
    active BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE orders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Our own order number, sent to the provider and quoted in every notification.
    out_trade_no TEXT NOT NULL UNIQUE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- package | top_up | task
    kind TEXT NOT NULL,
    channel TEXT NOT NULL,
    title TEXT NOT NULL,
    amount_fen BIGINT NOT NULL,
    -- Top-up: what the balance receives (amount and bonus). Task: the amount.
    credit_fen BIGINT NOT NULL DEFAULT 0,
    -- Package: what was bought, as it was sold (later edits of the product change nothing).
    product_id BIGINT,
    grant_kind TEXT,
    grant_amount BIGINT NOT NULL DEFAULT 0,
    grant_days BIGINT NOT NULL DEFAULT 0,
    task_id BIGINT,
    -- pending | paid | closed | refunded
    status TEXT NOT NULL,
    provider_trade_no TEXT,
    pay_url TEXT,
    refunded_fen BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    paid_at BIGINT,
    closed_at BIGINT,
    updated_at BIGINT NOT NULL
);
CREATE INDEX orders_user ON orders(user_id, id);
CREATE INDEX orders_status ON orders(status, expires_at);

-- Every notification a provider sent, once: its id is the key, so a duplicate is seen as one.
CREATE TABLE payment_events (
    provider TEXT NOT NULL,
    event_id TEXT NOT NULL,
    out_trade_no TEXT NOT NULL,
    amount_fen BIGINT NOT NULL,
    -- paid | already_paid | unknown_order | amount_mismatch
    outcome TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (provider, event_id)
);

CREATE TABLE account_grants (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    order_id BIGINT NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    total BIGINT NOT NULL,
    remaining BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX account_grants_user ON account_grants(user_id, kind, expires_at);

CREATE TABLE order_refunds (
    refund_no TEXT PRIMARY KEY,
    order_id BIGINT NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
    amount_fen BIGINT NOT NULL,
    reason TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
