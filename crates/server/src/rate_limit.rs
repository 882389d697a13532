//! Failed-login throttling, per IP and username and per IP alone. Kept in memory: one server
//! process enforces it; a fleet behind a load balancer would move this table into the store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug)]
struct Window {
    started: Instant,
    failures: u32,
    locked_until: Option<Instant>,
}

pub struct LoginLimiter {
    per_pair: u32,
    per_ip: u32,
    lock: Duration,
    windows: Mutex<HashMap<String, Window>>,
}

impl LoginLimiter {
    pub fn new(per_pair: u32, per_ip: u32, lock: Duration) -> Self {
        LoginLimiter {
            per_pair,
            per_ip,
            lock,
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

    pub fn record_failure(&self, ip: &str, username: &str) {
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        // Forget windows that ended long ago so the table cannot grow without bound.
        if windows.len() > 10_000 {
            let lock = self.lock;
            windows.retain(|_, w| now.duration_since(w.started) < lock);
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_after_limit_per_pair_and_per_ip() {
        let l = LoginLimiter::new(3, 5, Duration::from_secs(60));
        for _ in 0..2 {
            l.record_failure("1.1.1.1", "amy");
        }
        assert!(l.check("1.1.1.1", "amy").is_ok());
        l.record_failure("1.1.1.1", "AMY");
        assert!(l.check("1.1.1.1", "amy").is_err());
        assert!(
            l.check("2.2.2.2", "amy").is_ok(),
            "another IP is not locked"
        );
        assert!(
            l.check("1.1.1.1", "ben").is_ok(),
            "another name from this IP is not yet locked"
        );
        l.record_failure("1.1.1.1", "ben");
        l.record_failure("1.1.1.1", "cat");
        assert!(
            l.check("1.1.1.1", "dan").is_err(),
            "five failures lock the IP"
        );
    }

    #[test]
    fn success_clears_the_pair() {
        let l = LoginLimiter::new(3, 100, Duration::from_secs(60));
        l.record_failure("ip", "amy");
        l.record_failure("ip", "amy");
        l.record_success("ip", "amy");
        l.record_failure("ip", "amy");
        assert!(l.check("ip", "amy").is_ok());
    }
}
