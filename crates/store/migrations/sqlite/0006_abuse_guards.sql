-- Abuse guards (issue 18). `throttles` holds every counting window and lock the server keeps:
-- failed logins per account, per IP and per IP-and-account, registrations per IP and overall,
-- QR codes per IP. Rows are keyed by a bucket name such as `login:acct:alice`; a row whose window
-- has ended and whose lock (if any) has passed means nothing any more and is swept.
CREATE TABLE throttles (
    bucket TEXT PRIMARY KEY,
    hits BIGINT NOT NULL,
    window_ends BIGINT NOT NULL,
    locked_until BIGINT
);
CREATE INDEX throttles_window_ends ON throttles(window_ends);

-- The first-QR-login free check is granted at most once per requesting IP per day (China
-- Standard Time): the primary key makes the second grant of a day fail atomically.
CREATE TABLE qr_bonus_grants (
    requester_ip TEXT NOT NULL,
    day BIGINT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    granted_at BIGINT NOT NULL,
    PRIMARY KEY (requester_ip, day)
);

-- For the periodic sweep of expired rows.
CREATE INDEX qr_logins_expires_at ON qr_logins(expires_at);
CREATE INDEX sessions_expires_at ON sessions(expires_at);
