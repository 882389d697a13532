//! Abuse throttles.
//!
//! Login lockouts (per IP and username, per username from any IP, per IP for all usernames) and
//! the rate limits on registration and QR codes are kept in the store (`throttles` table), so
//! every process behind a load balancer sees the same counts and a restart forgets nothing.
//! [`MemoryLimiter`] is an in-process variant for low-stakes guessing (report verification codes);
//! its table is bounded.

use crate::config::Config;
use crate::envelope::ApiError;
use axum::http::StatusCode;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use store::{RateDecision, Store, StoreError};

/// "N 秒" for short waits, "N 秒（约 M 分钟）" for longer ones.
pub fn wait_text(secs: u64) -> String {
    if secs >= 120 {
        format!("{secs} 秒（约 {} 分钟）", secs.div_ceil(60))
    } else {
        format!("{secs} 秒")
    }
}

/// A 429 with a stable code, `Retry-After` and the wait in the message.
fn too_many(code: &'static str, secs: u64, what: &str) -> ApiError {
    ApiError {
        retry_after_secs: Some(secs),
        ..ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            code,
            format!("{what}，请 {} 后再试", wait_text(secs)),
        )
    }
}

fn ms_to_secs(ms: i64) -> u64 {
    u64::try_from(ms.max(1)).unwrap_or(1).div_ceil(1000).max(1)
}

/// Failed-login lockouts kept in the database. A failure counts in three buckets: the IP and
/// username together (`login_max_failures`), the username from any address
/// (`login_max_failures_per_account`, so rotating addresses does not help a guesser), and the
/// IP for every username (`login_max_failures_per_ip`). Any locked bucket refuses the attempt,
/// right password or not, for `login_lock_minutes`.
pub struct LoginGuard {
    store: Store,
    per_pair: u32,
    per_account: u32,
    per_ip: u32,
    lock_ms: i64,
}

impl LoginGuard {
    pub fn new(store: Store, config: &Config) -> Self {
        LoginGuard {
            store,
            per_pair: config.login_max_failures,
            per_account: config.login_max_failures_per_account,
            per_ip: config.login_max_failures_per_ip,
            lock_ms: i64::try_from(config.login_lock_minutes.saturating_mul(60_000))
                .unwrap_or(i64::MAX / 4),
        }
    }

    /// The three buckets of a login attempt: pair, account, IP. Names compare ignoring case, as
    /// logins do.
    fn buckets(ip: &str, username: &str) -> [String; 3] {
        let name = username.trim().to_lowercase();
        [
            format!("login:pair:{ip}|{name}"),
            format!("login:acct:{name}"),
            format!("login:ip:{ip}"),
        ]
    }

    /// `Err(429 too_many_attempts)` while any bucket of this attempt is locked.
    pub async fn check(&self, ip: &str, username: &str) -> Result<(), ApiError> {
        let buckets = Self::buckets(ip, username);
        let refs: Vec<&str> = buckets.iter().map(String::as_str).collect();
        match self.store.lockout_remaining(&refs).await? {
            Some(ms) => {
                let secs = ms_to_secs(ms);
                Err(ApiError::too_many_requests(
                    secs,
                    format!(
                        "登录失败次数过多，请 {} 分钟后再试（{secs} 秒）",
                        secs.div_ceil(60)
                    ),
                ))
            }
            None => Ok(()),
        }
    }

    /// A wrong password (at login, or the old password when changing it).
    pub async fn record_failure(&self, ip: &str, username: &str) -> Result<(), StoreError> {
        let [pair, account, ip_bucket] = Self::buckets(ip, username);
        for (bucket, limit) in [
            (pair, self.per_pair),
            (account, self.per_account),
            (ip_bucket, self.per_ip),
        ] {
            self.store
                .lockout_fail(&bucket, limit, self.lock_ms, self.lock_ms)
                .await?;
        }
        Ok(())
    }

    /// A right password clears the failures of this IP with this name and of the name itself;
    /// the IP's count for all names stays.
    pub async fn record_success(&self, ip: &str, username: &str) -> Result<(), StoreError> {
        let [pair, account, _] = Self::buckets(ip, username);
        self.store.throttle_clear(&pair).await?;
        self.store.throttle_clear(&account).await
    }
}

/// Registrations: at most `register_max_per_ip_per_hour` from one address per hour and
/// `register_max_per_minute` from everyone together per minute; 429 `too_many_registrations`.
pub async fn check_registration(store: &Store, config: &Config, ip: &str) -> Result<(), ApiError> {
    for (bucket, limit, window_ms) in [
        (
            format!("register:ip:{ip}"),
            config.register_max_per_ip_per_hour,
            3_600_000,
        ),
        (
            "register:all".to_string(),
            config.register_max_per_minute,
            60_000,
        ),
    ] {
        if let RateDecision::Refused { retry_after_ms } =
            store.rate_take(&bucket, limit, window_ms).await?
        {
            tracing::warn!(bucket, "registration rate limit reached");
            return Err(too_many(
                "too_many_registrations",
                ms_to_secs(retry_after_ms),
                "注册过于频繁",
            ));
        }
    }
    Ok(())
}

/// QR login codes: at most `qr_max_per_ip_per_minute` from one address per minute; 429
/// `too_many_qr_codes`.
pub async fn check_qr_creation(store: &Store, config: &Config, ip: &str) -> Result<(), ApiError> {
    match store
        .rate_take(
            &format!("qr:ip:{ip}"),
            config.qr_max_per_ip_per_minute,
            60_000,
        )
        .await?
    {
        RateDecision::Allowed => Ok(()),
        RateDecision::Refused { retry_after_ms } => Err(too_many(
            "too_many_qr_codes",
            ms_to_secs(retry_after_ms),
            "获取二维码过于频繁",
        )),
    }
}

/// 我已支付 checks of one order: one every 5 seconds (each asks the provider); 429
/// `too_many_checks`.
pub async fn check_paid_query(store: &Store, order_id: i64) -> Result<(), ApiError> {
    match store
        .rate_take(&format!("paid-check:order:{order_id}"), 1, 5_000)
        .await?
    {
        RateDecision::Allowed => Ok(()),
        RateDecision::Refused { retry_after_ms } => Err(too_many(
            "too_many_checks",
            ms_to_secs(retry_after_ms),
            "查询过于频繁",
        )),
    }
}

/// Word counts of uploads by visitors who are not signed in: at most
/// `anonymous_counts_per_hour` from one address an hour (reading a file costs a child process);
/// 429 `too_many_requests`.
pub async fn check_visitor_counts(
    store: &Store,
    config: &Config,
    ip: &str,
) -> Result<(), ApiError> {
    match store
        .rate_take(
            &format!("count:ip:{ip}"),
            config.anonymous_counts_per_hour,
            3_600_000,
        )
        .await?
    {
        RateDecision::Allowed => Ok(()),
        RateDecision::Refused { retry_after_ms } => Err(too_many(
            "too_many_requests",
            ms_to_secs(retry_after_ms),
            &format!(
                "未登录时每小时最多统计 {} 次字数，请登录后继续",
                config.anonymous_counts_per_hour
            ),
        )),
    }
}

#[derive(Debug)]
struct Window {
    started: Instant,
    failures: u32,
    locked_until: Option<Instant>,
}

/// In-memory failure throttling, per IP and key and per IP alone, holding at most `max_keys`
/// entries: ended windows are dropped first, then the oldest.
pub struct MemoryLimiter {
    per_pair: u32,
    per_ip: u32,
    lock: Duration,
    max_keys: usize,
    windows: Mutex<HashMap<String, Window>>,
}

impl MemoryLimiter {
    pub fn new(per_pair: u32, per_ip: u32, lock: Duration) -> Self {
        Self::with_capacity(per_pair, per_ip, lock, 10_000)
    }

    pub fn with_capacity(per_pair: u32, per_ip: u32, lock: Duration, max_keys: usize) -> Self {
        MemoryLimiter {
            per_pair,
            per_ip,
            lock,
            max_keys: max_keys.max(2),
            windows: Mutex::new(HashMap::new()),
        }
    }

    fn keys(ip: &str, username: &str) -> [String; 2] {
        [
            format!("pair:{ip}|{}", username.to_lowercase()),
            format!("ip:{ip}"),
        ]
    }

    /// `Err(seconds)` while either key is locked.
    pub fn check(&self, ip: &str, username: &str) -> Result<(), u64> {
        let now = Instant::now();
        let windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let wait = Self::keys(ip, username)
            .iter()
            .filter_map(|k| windows.get(k)?.locked_until)
            .filter(|until| *until > now)
            .map(|until| (until - now).as_secs().max(1))
            .max();
        match wait {
            Some(secs) => Err(secs),
            None => Ok(()),
        }
    }

    /// Makes room for two new keys: forgets ended windows, then the oldest ones.
    fn make_room(&self, windows: &mut HashMap<String, Window>, now: Instant) {
        if windows.len() + 2 <= self.max_keys {
            return;
        }
        let lock = self.lock;
        windows.retain(|_, w| {
            now.duration_since(w.started) < lock || w.locked_until.is_some_and(|u| u > now)
        });
        if windows.len() + 2 <= self.max_keys {
            return;
        }
        // Still full of live windows: drop the oldest tenth (at least two) in one go.
        let mut by_age: Vec<(Instant, String)> = windows
            .iter()
            .map(|(k, w)| (w.started, k.clone()))
            .collect();
        by_age.sort();
        let drop = (self.max_keys / 10).max(2);
        for (_, key) in by_age.into_iter().take(drop) {
            windows.remove(&key);
        }
    }

    pub fn record_failure(&self, ip: &str, username: &str) {
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        self.make_room(&mut windows, now);
        let [pair, ip_key] = Self::keys(ip, username);
        for (key, limit) in [(pair, self.per_pair), (ip_key, self.per_ip)] {
            let w = windows.entry(key).or_insert(Window {
                started: now,
                failures: 0,
                locked_until: None,
            });
            if now.duration_since(w.started) > self.lock && w.locked_until.is_none_or(|u| u <= now)
            {
                *w = Window {
                    started: now,
                    failures: 0,
                    locked_until: None,
                };
            }
            w.failures += 1;
            if w.failures >= limit {
                w.locked_until = Some(now + self.lock);
            }
        }
    }

    pub fn record_success(&self, ip: &str, username: &str) {
        let [pair, _] = Self::keys(ip, username);
        self.windows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&pair);
    }

    /// Keys held now.
    pub fn len(&self) -> usize {
        self.windows.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use store::testing::TestDb;

    fn guard(store: &Store) -> LoginGuard {
        LoginGuard::new(
            store.clone(),
            &Config {
                login_max_failures: 3,
                login_max_failures_per_account: 4,
                login_max_failures_per_ip: 5,
                login_lock_minutes: 1,
                ..Config::default()
            },
        )
    }

    /// Per pair, per account across addresses and per IP; the lock outlives the process's
    /// memory (a second guard over the same database sees it).
    #[tokio::test]
    async fn database_lockouts_per_pair_account_and_ip() {
        let db = TestDb::sqlite().await;
        let l = guard(&db.store);
        for _ in 0..2 {
            l.record_failure("1.1.1.1", "amy").await.unwrap();
        }
        assert!(l.check("1.1.1.1", "amy").await.is_ok());
        l.record_failure("1.1.1.1", "AMY").await.unwrap();
        let err = l.check("1.1.1.1", "amy").await.unwrap_err();
        assert_eq!((err.status.as_u16(), err.code), (429, "too_many_attempts"));
        assert!(err.retry_after_secs.is_some_and(|s| s <= 60));
        assert!(
            l.check("2.2.2.2", "amy").await.is_ok(),
            "another IP is not locked by the pair (3 of 4 account failures so far)"
        );
        l.record_failure("2.2.2.2", "amy").await.unwrap();
        assert!(
            l.check("3.3.3.3", "amy").await.is_err(),
            "four failures from any addresses lock the account"
        );
        assert!(
            l.check("1.1.1.1", "ben").await.is_ok(),
            "another name from this IP is not yet locked"
        );
        l.record_failure("1.1.1.1", "ben").await.unwrap();
        l.record_failure("1.1.1.1", "cat").await.unwrap();
        assert!(
            l.check("1.1.1.1", "dan").await.is_err(),
            "five failures lock the IP"
        );
        let restarted = guard(&Store::open(&db.url).await.unwrap());
        assert!(restarted.check("1.1.1.1", "dan").await.is_err());
        assert!(restarted.check("3.3.3.3", "amy").await.is_err());
        db.cleanup().await;
    }

    #[tokio::test]
    async fn success_clears_the_pair_and_account() {
        let db = TestDb::sqlite().await;
        let l = guard(&db.store);
        l.record_failure("ip", "amy").await.unwrap();
        l.record_failure("ip", "amy").await.unwrap();
        l.record_success("ip", "amy").await.unwrap();
        l.record_failure("ip", "amy").await.unwrap();
        assert!(l.check("ip", "amy").await.is_ok());
        db.cleanup().await;
    }

    #[test]
    fn memory_limiter_locks_and_clears() {
        let l = MemoryLimiter::new(3, 5, Duration::from_secs(60));
        for _ in 0..2 {
            l.record_failure("1.1.1.1", "k");
        }
        assert!(l.check("1.1.1.1", "k").is_ok());
        l.record_failure("1.1.1.1", "K");
        assert!(l.check("1.1.1.1", "k").is_err());
        assert!(l.check("2.2.2.2", "k").is_ok());
        l.record_success("1.1.1.1", "k");
        assert!(l.check("1.1.1.1", "k").is_ok());
    }

    #[test]
    fn memory_limiter_is_bounded() {
        let l = MemoryLimiter::with_capacity(20, 20, Duration::from_secs(900), 1_000);
        for i in 0..20_000 {
            l.record_failure(&format!("10.0.{}.{}", i / 256, i % 256), "report");
        }
        assert!(l.len() <= 1_000, "{} keys", l.len());
        // The newest address is still counted.
        for _ in 0..19 {
            l.record_failure("10.0.78.31", "report");
        }
        assert!(l.check("10.0.78.31", "report").is_err());
    }

    #[test]
    fn wait_text_reads_in_seconds_and_minutes() {
        assert_eq!(wait_text(30), "30 秒");
        assert_eq!(wait_text(3600), "3600 秒（约 60 分钟）");
    }
}
