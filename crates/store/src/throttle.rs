//! Counting windows and lockouts kept in the database (table `throttles`), so that every server
//! process sees the same counts and a restart forgets nothing. Each row is one bucket (a name
//! such as `login:acct:alice` or `register:ip:1.2.3.4`) with the hits of its current window and,
//! for lockouts, the time its lock ends. Every change is a single upsert, atomic on SQLite and
//! PostgreSQL alike, so concurrent requests cannot slip past a limit.

use crate::sessions::truncate;
use crate::{Result, Store, now_ms};
use sqlx::Row;

/// Bucket names are built from client input (user names, addresses); longer ones are cut.
const MAX_BUCKET_CHARS: usize = 200;

/// Expired QR rows are kept this long after they expire, so a late poll still reads "expired".
pub const QR_SWEEP_GRACE_MS: i64 = 3_600_000;

/// Daily free-check grants per IP are kept this many days for operators to look at.
const BONUS_GRANT_KEEP_DAYS: i64 = 90;

/// Whether an attempt counted against a rate limit may go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateDecision {
    Allowed,
    /// Over the limit; the window ends in this many milliseconds.
    Refused {
        retry_after_ms: i64,
    },
}

/// What one sweep removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    pub qr_logins: u64,
    pub sessions: u64,
    pub throttles: u64,
    pub qr_bonus_grants: u64,
}

impl Swept {
    pub fn total(&self) -> u64 {
        self.qr_logins + self.sessions + self.throttles + self.qr_bonus_grants
    }
}

/// The day number (China Standard Time) of a Unix-millisecond time.
pub(crate) fn cst_day(ms: i64) -> i64 {
    (ms + 8 * 3_600_000).div_euclid(86_400_000)
}

impl Store {
    /// Counts one attempt in `bucket`'s fixed window of `window_ms` and says whether it is within
    /// `limit`. Refused attempts are counted too but do not extend the window.
    pub async fn rate_take(
        &self,
        bucket: &str,
        limit: u32,
        window_ms: i64,
    ) -> Result<RateDecision> {
        let now = now_ms();
        let row = sqlx::query(
            "INSERT INTO throttles (bucket, hits, window_ends) VALUES ($1, 1, $3) \
             ON CONFLICT (bucket) DO UPDATE SET \
             hits = CASE WHEN throttles.window_ends <= $2 THEN 1 ELSE throttles.hits + 1 END, \
             window_ends = CASE WHEN throttles.window_ends <= $2 THEN $3 ELSE throttles.window_ends END \
             RETURNING hits, window_ends",
        )
        .bind(truncate(bucket, MAX_BUCKET_CHARS))
        .bind(now)
        .bind(now + window_ms.max(1))
        .fetch_one(&self.pool)
        .await?;
        let hits: i64 = row.try_get("hits")?;
        let window_ends: i64 = row.try_get("window_ends")?;
        Ok(if hits <= i64::from(limit) {
            RateDecision::Allowed
        } else {
            RateDecision::Refused {
                retry_after_ms: (window_ends - now).max(1),
            }
        })
    }

    /// The milliseconds left on the longest active lock among `buckets`, if any is locked.
    pub async fn lockout_remaining(&self, buckets: &[&str]) -> Result<Option<i64>> {
        let now = now_ms();
        let mut longest: Option<i64> = None;
        for bucket in buckets {
            let until: Option<i64> = sqlx::query(
                "SELECT locked_until FROM throttles WHERE bucket = $1 AND locked_until > $2",
            )
            .bind(truncate(bucket, MAX_BUCKET_CHARS))
            .bind(now)
            .fetch_optional(&self.pool)
            .await?
            .map(|row| row.try_get("locked_until"))
            .transpose()?;
            if let Some(until) = until {
                longest = Some(longest.unwrap_or(0).max(until - now));
            }
        }
        Ok(longest)
    }

    /// Records one failure in `bucket`. Failures are counted in a window of `window_ms` from the
    /// first one; the `limit`-th failure within it locks the bucket for `lock_ms`. Returns whether
    /// the bucket is locked now.
    pub async fn lockout_fail(
        &self,
        bucket: &str,
        limit: u32,
        window_ms: i64,
        lock_ms: i64,
    ) -> Result<bool> {
        let now = now_ms();
        let limit = i64::from(limit.max(1));
        // A window starts afresh once it has ended and no lock is running.
        const FRESH: &str =
            "(throttles.window_ends <= $2 AND COALESCE(throttles.locked_until, 0) <= $2)";
        let sql = format!(
            "INSERT INTO throttles (bucket, hits, window_ends, locked_until) VALUES ($1, 1, $3, $5) \
             ON CONFLICT (bucket) DO UPDATE SET \
             hits = CASE WHEN {FRESH} THEN 1 ELSE throttles.hits + 1 END, \
             window_ends = CASE WHEN {FRESH} THEN $3 ELSE throttles.window_ends END, \
             locked_until = CASE WHEN (CASE WHEN {FRESH} THEN 1 ELSE throttles.hits + 1 END) >= $4 \
             THEN $6 ELSE throttles.locked_until END \
             RETURNING locked_until"
        );
        let lock_until = now + lock_ms.max(1);
        let row = sqlx::query(&sql)
            .bind(truncate(bucket, MAX_BUCKET_CHARS))
            .bind(now)
            .bind(now + window_ms.max(1))
            .bind(limit)
            .bind((limit <= 1).then_some(lock_until))
            .bind(lock_until)
            .fetch_one(&self.pool)
            .await?;
        let locked_until: Option<i64> = row.try_get("locked_until")?;
        Ok(locked_until.is_some_and(|until| until > now))
    }

    /// Forgets a bucket's failures and lock (after a successful login, for instance).
    pub async fn throttle_clear(&self, bucket: &str) -> Result<()> {
        sqlx::query("DELETE FROM throttles WHERE bucket = $1")
            .bind(truncate(bucket, MAX_BUCKET_CHARS))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Deletes what has stopped meaning anything as of `now`: QR logins an hour after they
    /// expired, expired sessions (their tokens no longer work), ended throttle windows with no
    /// running lock, and daily free-check grants older than 90 days.
    pub async fn sweep_expired(&self, now: i64) -> Result<Swept> {
        let qr_logins = sqlx::query("DELETE FROM qr_logins WHERE expires_at <= $1")
            .bind(now - QR_SWEEP_GRACE_MS)
            .execute(&self.pool)
            .await?
            .rows_affected();
        let sessions = sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
            .bind(now)
            .execute(&self.pool)
            .await?
            .rows_affected();
        let throttles = sqlx::query(
            "DELETE FROM throttles WHERE window_ends <= $1 \
             AND (locked_until IS NULL OR locked_until <= $1)",
        )
        .bind(now)
        .execute(&self.pool)
        .await?
        .rows_affected();
        let qr_bonus_grants = sqlx::query("DELETE FROM qr_bonus_grants WHERE day < $1")
            .bind(cst_day(now) - BONUS_GRANT_KEEP_DAYS)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(Swept {
            qr_logins,
            sessions,
            throttles,
            qr_bonus_grants,
        })
    }
}
