-- Users, login sessions, QR-login sessions, accounts and the account ledger.
-- Times are Unix milliseconds (BIGINT) so one code path reads them on SQLite and PostgreSQL.
CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    login_name TEXT NOT NULL,
    login_name_key TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    avatar TEXT NOT NULL DEFAULT '',
    introduction TEXT NOT NULL DEFAULT '',
    is_operator BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    via TEXT NOT NULL,
    ip TEXT NOT NULL DEFAULT '',
    user_agent TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE qr_logins (
    id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    status TEXT NOT NULL,
    user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
    requester_ip TEXT NOT NULL DEFAULT '',
    requester_agent TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    confirmed_at BIGINT,
    consumed_at BIGINT
);

CREATE TABLE accounts (
    user_id BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    balance_fen BIGINT NOT NULL DEFAULT 0,
    free_checks BIGINT NOT NULL DEFAULT 0,
    qr_bonus_granted_at BIGINT,
    updated_at BIGINT NOT NULL
);

CREATE TABLE account_ledger (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    delta_fen BIGINT NOT NULL,
    delta_free_checks BIGINT NOT NULL,
    balance_after_fen BIGINT NOT NULL,
    free_checks_after BIGINT NOT NULL,
    reason TEXT NOT NULL,
    ref_type TEXT,
    ref_id TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX account_ledger_user ON account_ledger(user_id, id);
