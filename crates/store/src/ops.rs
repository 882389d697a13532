//! What an operator watches: the queue's depth and age, the workers that are alive, and how
//! long finished tasks took — for `/api/health`, the Prometheus metrics and the console.

use crate::{Result, Store, now_ms};

/// One queue's jobs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueDepth {
    pub queue: String,
    /// Waiting to be claimed (`ready`, whether due or backing off before a retry).
    pub waiting: i64,
    /// Claimed by a worker whose lease has not run out.
    pub running: i64,
    /// Claimed by a worker whose lease ran out (a dead worker): the next claim takes them.
    pub stalled: i64,
    /// Age of the oldest job waiting and due, in milliseconds (0 when none).
    pub oldest_waiting_ms: i64,
}

/// A worker process as it last reported itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerPresence {
    /// `<host>-<pid>`, as the worker names its leases.
    pub name: String,
    pub host: String,
    /// The queues it takes jobs from, comma-separated.
    pub queues: String,
    pub per_queue: i64,
    pub started_at: i64,
    pub seen_at: i64,
}

/// How long finished tasks of one kind took, from creation to the end, over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskLatency {
    pub kind: String,
    /// `done`, `failed` or `cancelled`.
    pub status: String,
    pub count: usize,
    pub p50_ms: i64,
    pub p95_ms: i64,
    pub max_ms: i64,
}

/// Rows read for the latency figures at most (the most recent ones).
const LATENCY_ROWS: i64 = 20_000;

impl Store {
    /// Records that the worker process `name` is alive (called every few seconds).
    pub async fn worker_seen(
        &self,
        name: &str,
        host: &str,
        queues: &str,
        per_queue: i64,
    ) -> Result<()> {
        let now = now_ms();
        sqlx::query(
            "INSERT INTO workers (name, host, queues, per_queue, started_at, seen_at) \
             VALUES ($1, $2, $3, $4, $5, $5) \
             ON CONFLICT (name) DO UPDATE SET host = excluded.host, queues = excluded.queues, \
             per_queue = excluded.per_queue, seen_at = excluded.seen_at",
        )
        .bind(name)
        .bind(host)
        .bind(queues)
        .bind(per_queue)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Removes a worker that stopped cleanly, and forgets those not seen since `stale_before`
    /// (Unix ms) — killed ones.
    pub async fn worker_gone(&self, name: &str, stale_before: i64) -> Result<()> {
        sqlx::query("DELETE FROM workers WHERE name = $1 OR seen_at < $2")
            .bind(name)
            .bind(stale_before)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Workers seen at or after `since` (Unix ms), by name.
    pub async fn live_workers(&self, since: i64) -> Result<Vec<WorkerPresence>> {
        let rows: Vec<(String, String, String, i64, i64, i64)> = sqlx::query_as(
            "SELECT name, host, queues, per_queue, started_at, seen_at FROM workers \
             WHERE seen_at >= $1 ORDER BY name",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(name, host, queues, per_queue, started_at, seen_at)| WorkerPresence {
                    name,
                    host,
                    queues,
                    per_queue,
                    started_at,
                    seen_at,
                },
            )
            .collect())
    }

    /// Every queue that has unfinished jobs, by name.
    pub async fn queue_depths(&self) -> Result<Vec<QueueDepth>> {
        let now = now_ms();
        let rows: Vec<(String, i64, i64, i64, Option<i64>)> = sqlx::query_as(
            "SELECT queue, \
               SUM(CASE WHEN state = 'ready' THEN 1 ELSE 0 END), \
               SUM(CASE WHEN state = 'leased' AND lease_until >= $1 THEN 1 ELSE 0 END), \
               SUM(CASE WHEN state = 'leased' AND lease_until < $1 THEN 1 ELSE 0 END), \
               MIN(CASE WHEN state = 'ready' AND run_after <= $1 THEN created_at END) \
             FROM jobs WHERE state <> 'finished' GROUP BY queue ORDER BY queue",
        )
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(queue, waiting, running, stalled, oldest)| QueueDepth {
                queue,
                waiting,
                running,
                stalled,
                oldest_waiting_ms: oldest.map_or(0, |t| (now - t).max(0)),
            })
            .collect())
    }

    /// How long tasks that ended at or after `since` (Unix ms) took, per kind and outcome.
    pub async fn task_latencies(&self, since: i64) -> Result<Vec<TaskLatency>> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT kind, status, finished_at - created_at FROM tasks \
             WHERE finished_at IS NOT NULL AND finished_at >= $1 \
             ORDER BY finished_at DESC LIMIT $2",
        )
        .bind(since)
        .bind(LATENCY_ROWS)
        .fetch_all(&self.pool)
        .await?;
        let mut groups: std::collections::BTreeMap<(String, String), Vec<i64>> =
            std::collections::BTreeMap::new();
        for (kind, status, took) in rows {
            groups.entry((kind, status)).or_default().push(took.max(0));
        }
        Ok(groups
            .into_iter()
            .map(|((kind, status), mut took)| {
                took.sort_unstable();
                let at = |q: f64| took[((took.len() - 1) as f64 * q).round() as usize];
                TaskLatency {
                    kind,
                    status,
                    count: took.len(),
                    p50_ms: at(0.5),
                    p95_ms: at(0.95),
                    max_ms: *took.last().unwrap_or(&0),
                }
            })
            .collect())
    }
}

impl Store {
    /// Takes (or renews) the lease `name` for `holder` until `ttl_ms` from now, when nobody else
    /// holds it; true when `holder` holds it afterwards.
    pub async fn take_named_lease(&self, name: &str, holder: &str, ttl_ms: i64) -> Result<bool> {
        let now = now_ms();
        let taken = sqlx::query(
            "INSERT INTO named_leases (name, holder, until_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms \
             WHERE named_leases.holder = excluded.holder OR named_leases.until_ms < $4",
        )
        .bind(name)
        .bind(holder)
        .bind(now + ttl_ms)
        .bind(now)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(taken == 1)
    }

    /// Gives the lease `name` back, if `holder` still holds it.
    pub async fn release_named_lease(&self, name: &str, holder: &str) -> Result<()> {
        sqlx::query("DELETE FROM named_leases WHERE name = $1 AND holder = $2")
            .bind(name)
            .bind(holder)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
