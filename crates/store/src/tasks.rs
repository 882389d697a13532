//! Tasks and the durable job queue.
//!
//! `submit_task` moves a draft task to `queued`, debits the account and inserts its job in one
//! transaction. Workers `claim_job` with a lease (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite:
//! one atomic UPDATE, writers being serialised), `heartbeat` to keep it, report `task_progress`,
//! and end with `complete_job` or `fail_job`. A job whose worker died is claimed again once its
//! lease has run out; after `max_attempts` the task fails. Failed and cancelled tasks are refunded
//! in the same transaction that ends them, so a charge is refunded at most once.

use crate::accounts::{LedgerKind, Movement, apply_movement};
use crate::orders::GrantKind;
use crate::{Backend, Result, Store, StoreError, now_ms};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    Pending,
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Queued => "queued",
            TaskStatus::Running => "running",
            TaskStatus::Done => "done",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> TaskStatus {
        match s {
            "queued" => TaskStatus::Queued,
            "running" => TaskStatus::Running,
            "done" => TaskStatus::Done,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => TaskStatus::Pending,
        }
    }

    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Done | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub id: i64,
    pub user_id: i64,
    pub kind: String,
    pub title: String,
    pub status: TaskStatus,
    pub progress: i64,
    pub phase: String,
    /// JSON.
    pub input: String,
    /// JSON, once done.
    pub result: Option<String>,
    /// Why it failed, in Chinese.
    pub error: Option<String>,
    pub charged_fen: i64,
    pub charged_free: i64,
    /// What a package paid: uses, or characters for rewriting (see `grant_uses`).
    pub charged_units: i64,
    pub created_at: i64,
    pub updated_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// JSON: what the running task has produced so far (a rewrite streaming in).
    pub draft: Option<String>,
}

pub(crate) const TASK_COLUMNS: &str = "id, user_id, kind, title, status, progress, phase, input, result, error, charged_fen, \
    charged_free, charged_units, created_at, updated_at, started_at, finished_at, draft";

pub(crate) fn task_from_row(row: &AnyRow) -> Result<Task> {
    Ok(Task {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        kind: row.try_get("kind")?,
        title: row.try_get("title")?,
        status: TaskStatus::parse(&row.try_get::<String, _>("status")?),
        progress: row.try_get("progress")?,
        phase: row.try_get("phase")?,
        input: row.try_get("input")?,
        result: row.try_get("result")?,
        error: row.try_get("error")?,
        charged_fen: row.try_get("charged_fen")?,
        charged_free: row.try_get("charged_free")?,
        charged_units: row.try_get("charged_units")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        draft: row.try_get("draft")?,
    })
}

/// A task's first run (from `pending`) or another (from an ended state), with the input that
/// replaces the task's when given.
enum Run<'a> {
    First(Option<&'a str>),
    Again(Option<&'a str>),
}

/// What a submission costs: balance in fen, free check credits and/or a package's units.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Charge {
    pub fen: i64,
    pub free_checks: i64,
    pub grant: Option<GrantCharge>,
    pub reason: String,
}

/// Units taken from the account's packages of one kind, those that expire first first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrantCharge {
    pub kind: GrantKind,
    pub units: i64,
}

/// The share of a task's charge given back when part of the work could not be done
/// (`part` of `whole`): money and package units alike, rounded down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Share {
    pub part: i64,
    pub whole: i64,
}

impl Share {
    pub const NONE: Share = Share { part: 0, whole: 1 };

    pub fn of(self, amount: i64) -> i64 {
        if self.whole <= 0 || self.part <= 0 || amount <= 0 {
            return 0;
        }
        (i128::from(amount) * i128::from(self.part.min(self.whole)) / i128::from(self.whole)) as i64
    }
}

/// A job handed to a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedJob {
    pub job_id: i64,
    pub task_id: i64,
    pub kind: String,
    pub input: String,
    /// 1 for the first run.
    pub attempt: i64,
}

/// Delay before retry n (1-based): 5 s, 10 s, 20 s, … capped at 10 minutes.
pub fn backoff_ms(attempt: i64) -> i64 {
    (5_000i64 << (attempt - 1).clamp(0, 7)).min(600_000)
}

/// Refunds what a task was charged, less the share of its output already delivered
/// (`delivered_permille`, rounded in the user's favour by a fen at most).
async fn refund_task(
    conn: &mut AnyConnection,
    task: &Task,
    why: &str,
    delivered_permille: i64,
) -> Result<()> {
    let delivered_permille = delivered_permille.clamp(0, 1000);
    let kept = |amount: i64| amount * delivered_permille / 1000;
    let (fen, free) = if delivered_permille == 0 {
        (task.charged_fen, task.charged_free)
    } else {
        (task.charged_fen - kept(task.charged_fen), 0)
    };
    // Package units are kept rounded up: a one-paper package pays for a paper stopped at 99 %.
    let kept_units = (task.charged_units * delivered_permille + 999) / 1000;
    let units = task.charged_units - kept_units;
    if fen == 0 && free == 0 && units <= 0 {
        return Ok(());
    }
    let reason = if delivered_permille == 0 {
        format!("退款：{}（{}）", task.title, why)
    } else {
        format!(
            "部分退款：{}（{}；已输出 {}.{}% 的内容，按比例计费）",
            task.title,
            why,
            delivered_permille / 10,
            delivered_permille % 10
        )
    };
    let mut reason = reason;
    if units > 0 {
        let (kind, restorable) = crate::orders::returnable_units(conn, task.id).await?;
        let unit = kind.map_or("", GrantKind::unit);
        reason.push_str(&if restorable >= units {
            format!("；套餐退回 {units} {unit}")
        } else {
            format!("；{units} {unit}所属套餐已退款，额度不再退回")
        });
    }
    if fen != 0 || free != 0 || units > 0 {
        let id = task.id.to_string();
        // The account row first, then the grants, as when the task was charged: the same lock
        // order on every path (PostgreSQL would otherwise deadlock two of one user's tasks).
        apply_movement(
            conn,
            Movement {
                user_id: task.user_id,
                kind: LedgerKind::TaskRefund,
                delta_fen: fen,
                delta_free_checks: free,
                reason: &reason,
                reference: Some(("task", &id)),
            },
        )
        .await?;
    }
    if units > 0 {
        crate::orders::return_grant_units(conn, task.id, units).await?;
    }
    // What stays charged: a record never shows money or units that came back.
    sqlx::query(
        "UPDATE tasks SET charged_fen = charged_fen - $1, charged_free = charged_free - $2, \
         charged_units = charged_units - $3 WHERE id = $4",
    )
    .bind(fen)
    .bind(free)
    .bind(units.max(0))
    .bind(task.id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Puts a task's job on its queue, due now.
pub(crate) async fn enqueue_job(
    conn: &mut AnyConnection,
    task_id: i64,
    queue: &str,
    max_attempts: i64,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO jobs (task_id, queue, state, max_attempts, run_after, created_at) VALUES ($1, $2, 'ready', $3, $4, $4)",
    )
    .bind(task_id)
    .bind(queue)
    .bind(max_attempts.max(1))
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Before a task runs again: its issued report stays verifiable under its code (detached from
/// the task), and an unissued one goes; the new run gets its own.
pub(crate) async fn detach_report_snapshots(conn: &mut AnyConnection, task_id: i64) -> Result<()> {
    sqlx::query(
        "UPDATE report_snapshots SET task_id = NULL WHERE task_id = $1 AND issued_at IS NOT NULL",
    )
    .bind(task_id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM report_snapshots WHERE task_id = $1")
        .bind(task_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

pub(crate) async fn load_task(conn: &mut AnyConnection, task_id: i64) -> Result<Task> {
    let row = sqlx::query(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1"))
        .bind(task_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound)?;
    task_from_row(&row)
}

/// Ends a task as failed or cancelled, refunding it, if it is not final yet. Returns whether it changed.
pub(crate) async fn end_unsuccessfully(
    conn: &mut AnyConnection,
    task_id: i64,
    status: TaskStatus,
    why: &str,
) -> Result<bool> {
    let now = now_ms();
    let changed = sqlx::query(
        "UPDATE tasks SET status = $1, error = $2, updated_at = $3, finished_at = $3 \
         WHERE id = $4 AND status NOT IN ('done', 'failed', 'cancelled')",
    )
    .bind(status.as_str())
    .bind(why)
    .bind(now)
    .bind(task_id)
    .execute(&mut *conn)
    .await?;
    if changed.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query("UPDATE jobs SET state = 'finished', lease_owner = NULL, last_error = $1 WHERE task_id = $2 AND state <> 'finished'")
        .bind(why)
        .bind(task_id)
        .execute(&mut *conn)
        .await?;
    let task = load_task(conn, task_id).await?;
    // A failure is ours and refunds everything; a cancellation keeps what was already shown.
    let delivered_permille = if status == TaskStatus::Cancelled {
        sqlx::query_scalar::<_, i64>("SELECT delivered_permille FROM tasks WHERE id = $1")
            .bind(task_id)
            .fetch_one(&mut *conn)
            .await?
    } else {
        0
    };
    refund_task(conn, &task, why, delivered_permille).await?;
    Ok(true)
}

impl Store {
    /// A draft task (`pending`): not queued, not charged.
    pub async fn create_task(
        &self,
        user_id: i64,
        kind: &str,
        title: &str,
        input_json: &str,
    ) -> Result<Task> {
        let now = now_ms();
        let row = sqlx::query(&format!(
            "INSERT INTO tasks (user_id, kind, title, status, input, created_at, updated_at) \
             VALUES ($1, $2, $3, 'pending', $4, $5, $5) RETURNING {TASK_COLUMNS}"
        ))
        .bind(user_id)
        .bind(kind)
        .bind(title)
        .bind(input_json)
        .bind(now)
        .fetch_one(&self.pool)
        .await?;
        task_from_row(&row)
    }

    /// A user's own task; someone else's is `NotFound`.
    pub async fn task(&self, task_id: i64, user_id: i64) -> Result<Task> {
        let row = sqlx::query(&format!(
            "SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1 AND user_id = $2"
        ))
        .bind(task_id)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        task_from_row(&row)
    }

    /// A user's tasks of one kind, newest first, optionally of one status.
    pub async fn list_tasks(
        &self,
        user_id: i64,
        kind: &str,
        status: Option<TaskStatus>,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<Task>, i64)> {
        let status = status.map(|s| s.as_str()).unwrap_or("");
        let rows = sqlx::query(&format!(
            "SELECT {TASK_COLUMNS} FROM tasks WHERE user_id = $1 AND kind = $2 AND ($3 = '' OR status = $3) \
             ORDER BY id DESC LIMIT $4 OFFSET $5"
        ))
        .bind(user_id)
        .bind(kind)
        .bind(status)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        let total: i64 = sqlx::query("SELECT COUNT(*) AS n FROM tasks WHERE user_id = $1 AND kind = $2 AND ($3 = '' OR status = $3)")
            .bind(user_id)
            .bind(kind)
            .bind(status)
            .fetch_one(&self.pool)
            .await?
            .try_get("n")?;
        Ok((
            rows.iter().map(task_from_row).collect::<Result<_>>()?,
            total,
        ))
    }

    /// Queues a draft task and charges for it, all or nothing. Not enough balance or credits →
    /// `InsufficientFunds`, and the task stays a draft.
    pub async fn submit_task(
        &self,
        task_id: i64,
        user_id: i64,
        queue: &str,
        charge: &Charge,
        max_attempts: i64,
    ) -> Result<Task> {
        self.queue_task(
            task_id,
            user_id,
            queue,
            charge,
            max_attempts,
            Run::First(None),
        )
        .await
    }

    /// `submit_task` with the input chosen at submission (options that change the price) written
    /// in the same transaction as the charge, so concurrent submissions cannot be charged for
    /// one input and run another.
    pub async fn submit_task_with_input(
        &self,
        task_id: i64,
        user_id: i64,
        queue: &str,
        charge: &Charge,
        max_attempts: i64,
        input_json: &str,
    ) -> Result<Task> {
        self.queue_task(
            task_id,
            user_id,
            queue,
            charge,
            max_attempts,
            Run::First(Some(input_json)),
        )
        .await
    }

    /// Runs an ended task (done, failed or cancelled) again, charged anew, all or nothing: its
    /// earlier result and error are cleared when it is queued, and its input replaced by
    /// `new_input` when given (what to run again). Not enough → `InsufficientFunds` and the
    /// task is left as it was.
    pub async fn rerun_task(
        &self,
        task_id: i64,
        user_id: i64,
        queue: &str,
        charge: &Charge,
        max_attempts: i64,
        new_input: Option<&str>,
    ) -> Result<Task> {
        self.queue_task(
            task_id,
            user_id,
            queue,
            charge,
            max_attempts,
            Run::Again(new_input),
        )
        .await
    }

    async fn queue_task(
        &self,
        task_id: i64,
        user_id: i64,
        queue: &str,
        charge: &Charge,
        max_attempts: i64,
        run: Run<'_>,
    ) -> Result<Task> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let (rerun, new_input) = match run {
            Run::First(input) => (false, input),
            Run::Again(input) => (true, input),
        };
        let query = match rerun {
            true => sqlx::query(
                // After a failure or cancellation what stayed charged (the share delivered) is
                // kept with the new charge; a finished task run again is charged afresh.
                "UPDATE tasks SET status = 'queued', \
                 charged_fen = $1 + CASE WHEN status IN ('failed', 'cancelled') THEN charged_fen ELSE 0 END, \
                 charged_free = $2 + CASE WHEN status IN ('failed', 'cancelled') THEN charged_free ELSE 0 END, \
                 charged_units = $7 + CASE WHEN status IN ('failed', 'cancelled') THEN charged_units ELSE 0 END, \
                 updated_at = $3, \
                 result = NULL, error = NULL, progress = 0, phase = '', started_at = NULL, finished_at = NULL, \
                 input = COALESCE($6, input) \
                 WHERE id = $4 AND user_id = $5 AND status IN ('done', 'failed', 'cancelled')",
            ),
            false => sqlx::query(
                "UPDATE tasks SET status = 'queued', charged_fen = $1, charged_free = $2, updated_at = $3, \
                 input = COALESCE($6, input), charged_units = $7 \
                 WHERE id = $4 AND user_id = $5 AND status = 'pending'",
            ),
        };
        let query = query
            .bind(charge.fen)
            .bind(charge.free_checks)
            .bind(now)
            .bind(task_id)
            .bind(user_id);
        let query = query
            .bind(new_input.map(str::to_string))
            .bind(charge.grant.map_or(0, |g| g.units));
        let moved = query.execute(&mut *tx).await?;
        if moved.rows_affected() == 0 {
            let exists = sqlx::query("SELECT status FROM tasks WHERE id = $1 AND user_id = $2")
                .bind(task_id)
                .bind(user_id)
                .fetch_optional(&mut *tx)
                .await?;
            return Err(if exists.is_some() {
                StoreError::Conflict("task_already_submitted")
            } else {
                StoreError::NotFound
            });
        }
        if rerun {
            detach_report_snapshots(&mut tx, task_id).await?;
        }
        // A package's use shows in the ledger too, moving no money.
        if charge.fen != 0 || charge.free_checks != 0 || charge.grant.is_some() {
            let id = task_id.to_string();
            apply_movement(
                &mut tx,
                Movement {
                    user_id,
                    kind: LedgerKind::TaskCharge,
                    delta_fen: -charge.fen,
                    delta_free_checks: -charge.free_checks,
                    reason: &charge.reason,
                    reference: Some(("task", &id)),
                },
            )
            .await?;
        }
        if let Some(grant) = charge.grant.filter(|g| g.units > 0) {
            crate::orders::take_grant_units(&mut tx, user_id, task_id, grant, &charge.reason, now)
                .await?;
        }
        enqueue_job(&mut tx, task_id, queue, max_attempts, now).await?;
        let task = load_task(&mut tx, task_id).await?;
        tx.commit().await?;
        Ok(task)
    }

    /// Gives the next runnable job of `queue` to `worker` for `lease_ms`. Jobs whose lease ran
    /// out with no attempts left fail (and are refunded) first.
    pub async fn claim_job(
        &self,
        queue: &str,
        worker: &str,
        lease_ms: i64,
    ) -> Result<Option<ClaimedJob>> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let exhausted = sqlx::query(
            "SELECT task_id FROM jobs WHERE queue = $1 AND state = 'leased' AND lease_until < $2 AND attempts >= max_attempts",
        )
        .bind(queue)
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        for row in exhausted {
            let task_id: i64 = row.try_get("task_id")?;
            end_unsuccessfully(
                &mut tx,
                task_id,
                TaskStatus::Failed,
                "处理多次中断，任务失败，费用已退回",
            )
            .await?;
        }
        let lock = match self.backend {
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        };
        let row = sqlx::query(&format!(
            "UPDATE jobs SET state = 'leased', lease_owner = $1, lease_until = $2, attempts = attempts + 1 \
             WHERE id = (SELECT id FROM jobs WHERE queue = $3 AND attempts < max_attempts \
                AND ((state = 'ready' AND run_after <= $4) OR (state = 'leased' AND lease_until < $4)) \
                ORDER BY run_after, id LIMIT 1{lock}) \
             RETURNING id, task_id, attempts"
        ))
        .bind(worker)
        .bind(now + lease_ms)
        .bind(queue)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            tx.commit().await?;
            return Ok(None);
        };
        let job_id: i64 = row.try_get("id")?;
        let task_id: i64 = row.try_get("task_id")?;
        let attempt: i64 = row.try_get("attempts")?;
        sqlx::query(
            "UPDATE tasks SET status = 'running', started_at = COALESCE(started_at, $1), updated_at = $1 WHERE id = $2",
        )
        .bind(now)
        .bind(task_id)
        .execute(&mut *tx)
        .await?;
        let task = load_task(&mut tx, task_id).await?;
        tx.commit().await?;
        Ok(Some(ClaimedJob {
            job_id,
            task_id,
            kind: task.kind,
            input: task.input,
            attempt,
        }))
    }

    /// Extends a lease. `false` when the worker no longer holds it (it expired and another worker
    /// took the job, or the task was cancelled): the worker should stop.
    pub async fn heartbeat(&self, job_id: i64, worker: &str, lease_ms: i64) -> Result<bool> {
        let updated = sqlx::query(
            "UPDATE jobs SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND state = 'leased'",
        )
        .bind(now_ms() + lease_ms)
        .bind(job_id)
        .bind(worker)
        .execute(&self.pool)
        .await?;
        Ok(updated.rows_affected() == 1)
    }

    /// Progress 0–100 and a phrase for the user, while running.
    pub async fn task_progress(&self, task_id: i64, progress: i64, phase: &str) -> Result<()> {
        sqlx::query("UPDATE tasks SET progress = $1, phase = $2, updated_at = $3 WHERE id = $4 AND status = 'running'")
            .bind(progress.clamp(0, 100))
            .bind(phase)
            .bind(now_ms())
            .bind(task_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// What a running task has produced so far (JSON) and how much of its paid output that is
    /// (thousandths, never lowered); ignored once it has ended.
    pub async fn task_draft(
        &self,
        task_id: i64,
        draft_json: &str,
        delivered_permille: i64,
    ) -> Result<()> {
        sqlx::query(
            "UPDATE tasks SET draft = $1, \
             delivered_permille = CASE WHEN delivered_permille > $2 THEN delivered_permille ELSE $2 END \
             WHERE id = $3 AND status = 'running'",
        )
        .bind(draft_json)
        .bind(delivered_permille.clamp(0, 1000))
        .bind(task_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Finishes a job successfully; `false` when the worker no longer held it (nothing written).
    pub async fn complete_job(&self, job_id: i64, worker: &str, result_json: &str) -> Result<bool> {
        self.complete_job_refunding(job_id, worker, result_json, Share::NONE, "")
            .await
    }

    /// Completes a job and, in the same transaction, gives back `refund` of the task's charge
    /// (money and package units) for the part that could not be done.
    pub async fn complete_job_refunding(
        &self,
        job_id: i64,
        worker: &str,
        result_json: &str,
        refund: Share,
        why: &str,
    ) -> Result<bool> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "UPDATE jobs SET state = 'finished', lease_owner = NULL WHERE id = $1 AND lease_owner = $2 AND state = 'leased' \
             RETURNING task_id",
        )
        .bind(job_id)
        .bind(worker)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Ok(false);
        };
        let task_id: i64 = row.try_get("task_id")?;
        let done = sqlx::query(
            "UPDATE tasks SET status = 'done', progress = 100, phase = '已完成', result = $1, draft = NULL, updated_at = $2, finished_at = $2 \
             WHERE id = $3 AND status = 'running'",
        )
        .bind(result_json)
        .bind(now)
        .bind(task_id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() > 0 && refund.part > 0 {
            let task = load_task(&mut tx, task_id).await?;
            // `refund` takes it off what stays charged.
            let part = Task {
                charged_fen: refund.of(task.charged_fen),
                charged_free: 0,
                charged_units: refund.of(task.charged_units),
                ..task
            };
            refund_task(&mut tx, &part, why, 0).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// A task by id, whoever owns it (for workers).
    pub async fn task_by_id(&self, task_id: i64) -> Result<Task> {
        let mut conn = self.pool.acquire().await?;
        load_task(&mut conn, task_id).await
    }

    /// Records a failure. A retryable one with attempts left goes back to the queue after a
    /// backoff; otherwise the task fails with `why` and is refunded.
    pub async fn fail_job(
        &self,
        job_id: i64,
        worker: &str,
        why: &str,
        retryable: bool,
    ) -> Result<TaskStatus> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let row = sqlx::query("SELECT task_id, attempts, max_attempts FROM jobs WHERE id = $1 AND lease_owner = $2 AND state = 'leased'")
            .bind(job_id)
            .bind(worker)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Err(StoreError::Conflict("lease_lost"));
        };
        let task_id: i64 = row.try_get("task_id")?;
        let attempts: i64 = row.try_get("attempts")?;
        let max_attempts: i64 = row.try_get("max_attempts")?;
        let status = if retryable && attempts < max_attempts {
            sqlx::query("UPDATE jobs SET state = 'ready', lease_owner = NULL, lease_until = NULL, run_after = $1, last_error = $2 WHERE id = $3")
                .bind(now + backoff_ms(attempts))
                .bind(why)
                .bind(job_id)
                .execute(&mut *tx)
                .await?;
            sqlx::query("UPDATE tasks SET status = 'queued', phase = '等待重试', updated_at = $1 WHERE id = $2")
                .bind(now)
                .bind(task_id)
                .execute(&mut *tx)
                .await?;
            TaskStatus::Queued
        } else {
            end_unsuccessfully(&mut tx, task_id, TaskStatus::Failed, why).await?;
            TaskStatus::Failed
        };
        tx.commit().await?;
        Ok(status)
    }

    /// Replaces a finished task's result (a user's choices recorded in it); only `done` tasks.
    pub async fn update_task_result(
        &self,
        task_id: i64,
        user_id: i64,
        result_json: &str,
    ) -> Result<()> {
        let updated = sqlx::query(
            "UPDATE tasks SET result = $1, updated_at = $2 WHERE id = $3 AND user_id = $4 AND status = 'done'",
        )
        .bind(result_json)
        .bind(now_ms())
        .bind(task_id)
        .bind(user_id)
        .execute(&self.pool)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::Conflict("task_not_done"));
        }
        Ok(())
    }

    /// Replaces a finished task's result only if it is still `expected` (compare and swap):
    /// `false` when someone changed it since it was read, so no edit is lost silently.
    pub async fn replace_task_result(
        &self,
        task_id: i64,
        user_id: i64,
        expected_json: &str,
        result_json: &str,
    ) -> Result<bool> {
        let updated = sqlx::query(
            "UPDATE tasks SET result = $1, updated_at = $2 \
             WHERE id = $3 AND user_id = $4 AND status = 'done' AND result = $5",
        )
        .bind(result_json)
        .bind(now_ms())
        .bind(task_id)
        .bind(user_id)
        .bind(expected_json)
        .execute(&self.pool)
        .await?;
        Ok(updated.rows_affected() == 1)
    }

    pub async fn update_task_title(&self, task_id: i64, user_id: i64, title: &str) -> Result<()> {
        let updated = sqlx::query(
            "UPDATE tasks SET title = $1, updated_at = $2 WHERE id = $3 AND user_id = $4",
        )
        .bind(title)
        .bind(now_ms())
        .bind(task_id)
        .bind(user_id)
        .execute(&self.pool)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Replaces the title and input of a user's task that has not been submitted yet (a draft
    /// being edited). Returns false when it was submitted meanwhile (or is another user's).
    pub async fn update_pending_task(
        &self,
        task_id: i64,
        user_id: i64,
        title: &str,
        input_json: &str,
    ) -> Result<bool> {
        let updated = sqlx::query(
            "UPDATE tasks SET title = $1, input = $2, updated_at = $3 \
             WHERE id = $4 AND user_id = $5 AND status = 'pending'",
        )
        .bind(title)
        .bind(input_json)
        .bind(now_ms())
        .bind(task_id)
        .bind(user_id)
        .execute(&self.pool)
        .await?;
        Ok(updated.rows_affected() == 1)
    }

    /// Deletes a user's task; an unfinished one is cancelled (and refunded) first.
    pub async fn delete_task(&self, task_id: i64, user_id: i64) -> Result<()> {
        self.cancel_task(task_id, user_id).await?;
        let mut tx = self.begin_write().await?;
        // An issued report stays verifiable, marked as deleted by its owner; a snapshot whose
        // code was never shown goes with the record.
        sqlx::query(
            "UPDATE report_snapshots SET deleted_at = $1 WHERE source_task_id = $2 AND user_id = $3 AND issued_at IS NOT NULL",
        )
        .bind(now_ms())
        .bind(task_id)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM report_snapshots WHERE task_id = $1 AND user_id = $2 AND issued_at IS NULL",
        )
        .bind(task_id)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM tasks WHERE id = $1 AND user_id = $2")
            .bind(task_id)
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Cancels a user's unfinished task and refunds it. `false` when it had already ended.
    pub async fn cancel_task(&self, task_id: i64, user_id: i64) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let owned = sqlx::query("SELECT 1 FROM tasks WHERE id = $1 AND user_id = $2")
            .bind(task_id)
            .bind(user_id)
            .fetch_optional(&mut *tx)
            .await?;
        if owned.is_none() {
            return Err(StoreError::NotFound);
        }
        let changed =
            end_unsuccessfully(&mut tx, task_id, TaskStatus::Cancelled, "用户取消").await?;
        tx.commit().await?;
        Ok(changed)
    }
}
