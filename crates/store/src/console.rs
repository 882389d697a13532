//! What the operator console reads and changes: users across the site, every task, the
//! dashboard's counts, the public configuration entries, and the audit log that records each
//! change in the same transaction as the change itself.

use crate::accounts::{LedgerKind, Movement, apply_movement};
use crate::tasks::{TASK_COLUMNS, task_from_row};
use crate::users::{USER_COLUMNS, user_from_row};
use crate::{Account, Result, Store, StoreError, Task, User, now_ms};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AnyPool, Row};

/// Who did something in the console.
#[derive(Debug, Clone, Copy)]
pub struct Actor<'a> {
    pub id: i64,
    pub name: &'a str,
}

impl<'a> From<&'a User> for Actor<'a> {
    fn from(user: &'a User) -> Self {
        Actor {
            id: user.id,
            name: &user.login_name,
        }
    }
}

/// One console action as the audit log keeps it; `before` and `after` are JSON (empty when
/// there is nothing to show, e.g. a password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub id: i64,
    pub actor_id: i64,
    pub actor_name: String,
    pub action: String,
    pub target: String,
    pub before: String,
    pub after: String,
    pub created_at: i64,
}

/// What an operator changes of a user's access.
#[derive(Debug, Clone, Copy)]
enum UserChange {
    Disabled(bool),
    Operator(bool),
}

/// A user as the console lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSummary {
    pub user: User,
    pub balance_fen: i64,
    pub free_checks: i64,
    pub tasks: i64,
    pub paid_fen: i64,
}

/// A task with its owner's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSummary {
    pub task: Task,
    pub login_name: String,
    /// It was submitted (queued at least once), so it may be retried once it ends.
    pub submitted: bool,
}

/// What the console's tasks list filters by; empty strings and `None` mean any.
#[derive(Debug, Clone, Default)]
pub struct TaskFilter<'a> {
    pub status: &'a str,
    pub kind: &'a str,
    pub user_id: Option<i64>,
    /// Matched against the title.
    pub query: &'a str,
}

/// An order with its buyer's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderSummary {
    pub order: crate::Order,
    pub login_name: String,
}

/// What the console's orders list filters by; empty strings mean any.
#[derive(Debug, Clone, Default)]
pub struct OrderFilter<'a> {
    pub status: &'a str,
    pub channel: &'a str,
    /// Matched against our order number, the provider's and the buyer's login name.
    pub query: &'a str,
}

/// Counts for the dashboard.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteCounts {
    pub users_total: i64,
    pub users_today: i64,
    pub users_week: i64,
    /// (kind, status, count).
    pub tasks: Vec<(String, String, i64)>,
    /// (day start in Unix ms, paid fen, paid orders) for each day that had payments.
    pub revenue: Vec<(i64, i64, i64)>,
    /// Bytes of files kept in the database (0 when files live in a folder).
    pub database_file_bytes: i64,
}

/// One public configuration entry (`ai_sys_config_api`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    pub entity: String,
    pub id: String,
    /// JSON.
    pub value: String,
    pub updated_at: i64,
}

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// A package as the audit log shows it.
fn product_json(p: &crate::Product) -> String {
    serde_json::json!({
        "name": p.name,
        "description": p.description,
        "priceFen": p.price_fen,
        "grantKind": p.grant_kind.as_str(),
        "grantAmount": p.grant_amount,
        "validDays": p.valid_days,
        "sortOrder": p.sort_order,
    })
    .to_string()
}

fn audit_from_row(row: &AnyRow) -> Result<AuditEntry> {
    Ok(AuditEntry {
        id: row.try_get("id")?,
        actor_id: row.try_get("actor_id")?,
        actor_name: row.try_get("actor_name")?,
        action: row.try_get("action")?,
        target: row.try_get("target")?,
        before: row.try_get("before_json")?,
        after: row.try_get("after_json")?,
        created_at: row.try_get("created_at")?,
    })
}

fn config_from_row(row: &AnyRow) -> Result<ConfigEntry> {
    Ok(ConfigEntry {
        entity: row.try_get("entity")?,
        id: row.try_get("id")?,
        value: row.try_get("value_json")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// Appends one entry to the audit log inside the caller's transaction, so an action and its
/// record commit or roll back together. The actor is checked again here, in the change's own
/// transaction: a request that passed the role check just before the role was removed changes
/// nothing (`NotOperator`).
pub(crate) async fn audit(
    conn: &mut AnyConnection,
    actor: Actor<'_>,
    action: &str,
    target: &str,
    before: &str,
    after: &str,
) -> Result<()> {
    let still: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM users WHERE id = $1 AND is_operator = 1 AND disabled_at IS NULL",
    )
    .bind(actor.id)
    .fetch_optional(&mut *conn)
    .await?;
    if still.is_none() {
        return Err(StoreError::NotOperator);
    }
    sqlx::query(
        "INSERT INTO audit_log (actor_id, actor_name, action, target, before_json, after_json, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(actor.id)
    .bind(actor.name)
    .bind(action)
    .bind(target)
    .bind(before)
    .bind(after)
    .bind(now_ms())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Creates or replaces one configuration entry in the caller's transaction, logged with what it
/// was before (as `shown` shows values); saved as it was, nothing changes and nothing is logged.
async fn put_entry_in(
    conn: &mut AnyConnection,
    actor: Actor<'_>,
    entity: &str,
    id: &str,
    value: &str,
    action: &str,
    shown: &(dyn Fn(&str) -> String + Sync),
) -> Result<ConfigEntry> {
    let now = now_ms();
    let before: Option<(String, i64)> = sqlx::query_as(
        "SELECT value_json, updated_at FROM config_entries WHERE entity = $1 AND id = $2",
    )
    .bind(entity)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some((kept, updated_at)) = &before
        && kept == value
    {
        return Ok(ConfigEntry {
            entity: entity.into(),
            id: id.into(),
            value: value.into(),
            updated_at: *updated_at,
        });
    }
    sqlx::query(
        "INSERT INTO config_entries (entity, id, value_json, updated_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (entity, id) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at",
    )
    .bind(entity)
    .bind(id)
    .bind(value)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    audit(
        conn,
        actor,
        action,
        &format!("{entity}:{id}"),
        &before.as_ref().map(|(v, _)| shown(v)).unwrap_or_default(),
        &shown(value),
    )
    .await?;
    Ok(ConfigEntry {
        entity: entity.into(),
        id: id.into(),
        value: value.into(),
        updated_at: now,
    })
}

async fn user_in(conn: &mut AnyConnection, user_id: i64) -> Result<User> {
    let row = sqlx::query(&format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1"))
        .bind(user_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound)?;
    user_from_row(&row)
}

/// Users with their balance, task count and what they paid online (less refunds).
fn user_summary_select() -> String {
    format!(
        "SELECT {columns}, a.balance_fen, a.free_checks, \
         (SELECT COUNT(*) FROM tasks t WHERE t.user_id = users.id) AS task_count, \
         (SELECT CAST(COALESCE(SUM(o.amount_fen - o.refunded_fen), 0) AS BIGINT) FROM orders o \
          WHERE o.user_id = users.id AND o.status IN ('paid', 'refunded')) AS paid_fen \
         FROM users JOIN accounts a ON a.user_id = users.id",
        columns = USER_COLUMNS
            .split(", ")
            .map(|c| format!("users.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn user_summary_from_row(row: &AnyRow) -> Result<UserSummary> {
    Ok(UserSummary {
        user: user_from_row(row)?,
        balance_fen: row.try_get("balance_fen")?,
        free_checks: row.try_get("free_checks")?,
        tasks: row.try_get("task_count")?,
        paid_fen: row.try_get("paid_fen")?,
    })
}

/// Tasks with their owner's name and whether they were ever queued.
fn task_summary_select() -> String {
    let columns = TASK_COLUMNS
        .split(", ")
        .map(|c| format!("t.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "SELECT {columns}, u.login_name AS owner_name, \
         (SELECT COUNT(*) FROM jobs j WHERE j.task_id = t.id) AS job_count \
         FROM tasks t JOIN users u ON u.id = t.user_id"
    )
}

fn task_summary_from_row(row: &AnyRow) -> Result<TaskSummary> {
    Ok(TaskSummary {
        task: task_from_row(row)?,
        login_name: row.try_get("owner_name")?,
        submitted: row.try_get::<i64, _>("job_count")? > 0,
    })
}

async fn count(pool: &AnyPool, sql: &str, binds: &[i64]) -> Result<i64> {
    let mut query = sqlx::query_scalar::<_, i64>(sql);
    for b in binds {
        query = query.bind(*b);
    }
    Ok(query.fetch_one(pool).await?)
}

impl Store {
    /// Users whose login name contains `query` (any letter case; empty: everyone), newest
    /// first, with their balance, task count and what they paid online; and the total.
    pub async fn search_users(
        &self,
        query: &str,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<UserSummary>, i64)> {
        let pattern = crate::like_pattern(query);
        let rows = sqlx::query(&format!(
            "{} WHERE users.login_name_key LIKE $1 ESCAPE '\\' ORDER BY users.id DESC LIMIT $2 OFFSET $3",
            user_summary_select()
        ))
        .bind(&pattern)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM users WHERE login_name_key LIKE $1 ESCAPE '\\'",
        )
        .bind(&pattern)
        .fetch_one(&self.pool)
        .await?;
        let users = rows
            .iter()
            .map(user_summary_from_row)
            .collect::<Result<_>>()?;
        Ok((users, total))
    }

    /// One user as the console shows them.
    pub async fn user_summary(&self, user_id: i64) -> Result<UserSummary> {
        let row = sqlx::query(&format!("{} WHERE users.id = $1", user_summary_select()))
            .bind(user_id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::NotFound)?;
        user_summary_from_row(&row)
    }

    /// Locks the enabled operators' rows for this transaction (PostgreSQL; SQLite's write
    /// transaction is exclusive already) and returns how many there are, after checking that
    /// `actor` is still one of them: two operators removing each other at the same moment are
    /// served one after the other, and the second finds they are no longer an operator.
    async fn lock_operators(&self, conn: &mut AnyConnection, actor: Actor<'_>) -> Result<usize> {
        let lock = match self.backend {
            crate::Backend::Postgres => " FOR UPDATE",
            crate::Backend::Sqlite => "",
        };
        let ids: Vec<i64> = sqlx::query_scalar(&format!(
            "SELECT id FROM users WHERE is_operator = 1 AND disabled_at IS NULL ORDER BY id{lock}"
        ))
        .fetch_all(&mut *conn)
        .await?;
        if !ids.contains(&actor.id) {
            return Err(StoreError::NotOperator);
        }
        Ok(ids.len())
    }

    /// Disables or enables a user. Disabling ends every session of theirs at once, and no new
    /// one can start (`StoreError::Disabled`). An operator cannot disable themselves.
    pub async fn set_user_disabled(
        &self,
        actor: Actor<'_>,
        user_id: i64,
        disabled: bool,
    ) -> Result<User> {
        self.change_user(actor, user_id, UserChange::Disabled(disabled))
            .await
    }

    /// Grants or removes the operator role. An operator cannot remove their own, so a site is
    /// never left without one by accident.
    pub async fn set_user_operator(
        &self,
        actor: Actor<'_>,
        user_id: i64,
        operator: bool,
    ) -> Result<User> {
        self.change_user(actor, user_id, UserChange::Operator(operator))
            .await
    }

    /// One change of a user's access, checked, applied and logged in one transaction.
    async fn change_user(
        &self,
        actor: Actor<'_>,
        user_id: i64,
        change: UserChange,
    ) -> Result<User> {
        // Whether it takes an enabled operator away, and what refuses that.
        let (removes, own, last) = match change {
            UserChange::Disabled(on) => (
                on,
                "不能停用自己的账号",
                "这是最后一个可用的运营账号，不能停用",
            ),
            UserChange::Operator(on) => (
                !on,
                "不能取消自己的运营权限",
                "这是最后一个可用的运营账号，不能取消其权限",
            ),
        };
        if removes && actor.id == user_id {
            return Err(StoreError::Invalid(own.into()));
        }
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let operators = self.lock_operators(&mut tx, actor).await?;
        let before = user_in(&mut tx, user_id).await?;
        if removes && before.is_operator && !before.disabled && operators <= 1 {
            return Err(StoreError::Invalid(last.into()));
        }
        let (sql, value) = match change {
            UserChange::Disabled(on) => (
                "UPDATE users SET disabled_at = $1, updated_at = $2 WHERE id = $3",
                on.then_some(now),
            ),
            UserChange::Operator(on) => (
                "UPDATE users SET is_operator = $1, updated_at = $2 WHERE id = $3",
                Some(i64::from(on)),
            ),
        };
        sqlx::query(sql)
            .bind(value)
            .bind(now)
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        if let UserChange::Disabled(true) = change {
            sqlx::query(
                "UPDATE sessions SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL",
            )
            .bind(now)
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        }
        let after = user_in(&mut tx, user_id).await?;
        let (action, shown) = match change {
            UserChange::Disabled(true) => ("user.disable", "disabled"),
            UserChange::Disabled(false) => ("user.enable", "disabled"),
            UserChange::Operator(true) => ("user.grant_operator", "operator"),
            UserChange::Operator(false) => ("user.revoke_operator", "operator"),
        };
        let flag = |u: &User| match change {
            UserChange::Disabled(_) => u.disabled,
            UserChange::Operator(_) => u.is_operator,
        };
        audit(
            &mut tx,
            actor,
            action,
            &format!("user:{user_id} {}", after.login_name),
            &serde_json::json!({ shown: flag(&before) }).to_string(),
            &serde_json::json!({ shown: flag(&after) }).to_string(),
        )
        .await?;
        tx.commit().await?;
        Ok(after)
    }

    /// Sets a new password for a user and ends all their sessions; the log says that it
    /// happened, never the password.
    pub async fn operator_reset_password(
        &self,
        actor: Actor<'_>,
        user_id: i64,
        new_password: &str,
    ) -> Result<()> {
        let hash = crate::secrets::hash_password(new_password)?;
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let user = user_in(&mut tx, user_id).await?;
        sqlx::query("UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3")
            .bind(hash)
            .bind(now)
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "UPDATE sessions SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL",
        )
        .bind(now)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        audit(
            &mut tx,
            actor,
            "user.reset_password",
            &format!("user:{user_id} {}", user.login_name),
            "",
            "",
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Credits (positive) or debits (negative) a user's balance with a reason, in the ledger
    /// and the audit log together. A debit below zero is `InsufficientFunds`, and nothing moves.
    pub async fn operator_adjust_balance(
        &self,
        actor: Actor<'_>,
        user_id: i64,
        delta_fen: i64,
        reason: &str,
    ) -> Result<Account> {
        let mut tx = self.begin_write().await?;
        let user = user_in(&mut tx, user_id).await?;
        // The student sees the reason, not who the operator was (the audit log keeps that).
        let ledger_reason = format!("{reason}（运营调整）");
        let account = apply_movement(
            &mut tx,
            Movement {
                user_id,
                kind: LedgerKind::OperatorCredit,
                delta_fen,
                delta_free_checks: 0,
                reason: &ledger_reason,
                reference: None,
            },
        )
        .await?;
        audit(
            &mut tx,
            actor,
            if delta_fen >= 0 {
                "balance.credit"
            } else {
                "balance.debit"
            },
            &format!("user:{user_id} {}", user.login_name),
            &serde_json::json!({ "balanceFen": account.balance_fen - delta_fen }).to_string(),
            &serde_json::json!({ "balanceFen": account.balance_fen, "deltaFen": delta_fen, "reason": reason })
                .to_string(),
        )
        .await?;
        tx.commit().await?;
        Ok(account)
    }

    /// Every user's tasks, newest first, filtered; and how many match.
    pub async fn search_tasks(
        &self,
        filter: &TaskFilter<'_>,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<TaskSummary>, i64)> {
        let pattern = crate::like_pattern(filter.query);
        let user_id = filter.user_id.unwrap_or(0);
        let condition = "($1 = '' OR t.status = $1) AND ($2 = '' OR t.kind = $2) \
             AND ($3 = 0 OR t.user_id = $3) AND LOWER(t.title) LIKE $4 ESCAPE '\\'";
        let rows = sqlx::query(&format!(
            "{} WHERE {condition} ORDER BY t.id DESC LIMIT $5 OFFSET $6",
            task_summary_select()
        ))
        .bind(filter.status)
        .bind(filter.kind)
        .bind(user_id)
        .bind(&pattern)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        let total: i64 =
            sqlx::query_scalar(&format!("SELECT COUNT(*) FROM tasks t WHERE {condition}"))
                .bind(filter.status)
                .bind(filter.kind)
                .bind(user_id)
                .bind(&pattern)
                .fetch_one(&self.pool)
                .await?;
        let tasks = rows
            .iter()
            .map(task_summary_from_row)
            .collect::<Result<_>>()?;
        Ok((tasks, total))
    }

    /// One task as the console shows it.
    pub async fn task_summary(&self, task_id: i64) -> Result<TaskSummary> {
        let row = sqlx::query(&format!("{} WHERE t.id = $1", task_summary_select()))
            .bind(task_id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::NotFound)?;
        task_summary_from_row(&row)
    }

    /// Every user's orders, newest first, filtered; and how many match.
    pub async fn search_orders(
        &self,
        filter: &OrderFilter<'_>,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<OrderSummary>, i64)> {
        let pattern = crate::like_pattern(filter.query);
        let condition = "($1 = '' OR o.status = $1) AND ($2 = '' OR o.channel = $2) \
             AND (LOWER(o.out_trade_no) LIKE $3 ESCAPE '\\' OR LOWER(COALESCE(o.provider_trade_no, '')) LIKE $3 ESCAPE '\\' \
             OR u.login_name_key LIKE $3 ESCAPE '\\')";
        let columns = crate::orders::ORDER_COLUMNS
            .split(',')
            .map(|c| format!("o.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ");
        let rows = sqlx::query(&format!(
            "SELECT {columns}, u.login_name AS buyer_name FROM orders o JOIN users u ON u.id = o.user_id \
             WHERE {condition} ORDER BY o.id DESC LIMIT $4 OFFSET $5"
        ))
        .bind(filter.status)
        .bind(filter.channel)
        .bind(&pattern)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        let total: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM orders o JOIN users u ON u.id = o.user_id WHERE {condition}"
        ))
        .bind(filter.status)
        .bind(filter.channel)
        .bind(&pattern)
        .fetch_one(&self.pool)
        .await?;
        let orders = rows
            .iter()
            .map(|row| {
                Ok(OrderSummary {
                    order: crate::orders::order_from_row(row)?,
                    login_name: row.try_get("buyer_name")?,
                })
            })
            .collect::<Result<_>>()?;
        Ok((orders, total))
    }

    /// Queues a failed or cancelled task again at no new charge (the operator's retry).
    /// `Conflict("task_not_retryable")` for any other state, and for a draft never submitted.
    pub async fn operator_retry_task(
        &self,
        actor: Actor<'_>,
        task_id: i64,
        max_attempts: i64,
    ) -> Result<Task> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let before = crate::tasks::load_task(&mut tx, task_id).await?;
        // Only a task that was submitted (it has a job) runs again: a draft cancelled before it
        // was paid is not work to give away. What the earlier run kept charged (the share it
        // delivered) stays in the ledger and is settled: the free run's failure or cancellation
        // gives nothing back, and starts with nothing delivered.
        let changed = sqlx::query(
            "UPDATE tasks SET status = 'queued', result = NULL, error = NULL, progress = 0, phase = '', \
             started_at = NULL, finished_at = NULL, updated_at = $1, draft = NULL, delivered_permille = 0, \
             charged_fen = 0, charged_free = 0, charged_units = 0 \
             WHERE id = $2 AND status IN ('failed', 'cancelled') \
             AND EXISTS (SELECT 1 FROM jobs j WHERE j.task_id = $2)",
        )
        .bind(now)
        .bind(task_id)
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() == 0 {
            return Err(StoreError::Conflict("task_not_retryable"));
        }
        crate::tasks::detach_report_snapshots(&mut tx, task_id).await?;
        crate::tasks::enqueue_job(&mut tx, task_id, &before.kind, max_attempts, now).await?;
        audit(
            &mut tx,
            actor,
            "task.retry",
            &format!("task:{task_id} {}", before.title),
            &serde_json::json!({ "status": before.status.as_str(), "error": before.error })
                .to_string(),
            &serde_json::json!({ "status": "queued" }).to_string(),
        )
        .await?;
        let task = crate::tasks::load_task(&mut tx, task_id).await?;
        tx.commit().await?;
        Ok(task)
    }

    /// Queues a task of the operator's own (a library import or removal: work for the workers
    /// that charges nothing), audited in the same transaction.
    #[allow(clippy::too_many_arguments)]
    pub async fn operator_queue_task(
        &self,
        actor: Actor<'_>,
        kind: &str,
        title: &str,
        input_json: &str,
        max_attempts: i64,
        action: &str,
        after_json: &str,
    ) -> Result<Task> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let task_id: i64 = sqlx::query_scalar(
            "INSERT INTO tasks (user_id, kind, title, status, input, created_at, updated_at) \
             VALUES ($1, $2, $3, 'queued', $4, $5, $5) RETURNING id",
        )
        .bind(actor.id)
        .bind(kind)
        .bind(title)
        .bind(input_json)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?;
        crate::tasks::enqueue_job(&mut tx, task_id, kind, max_attempts, now).await?;
        audit(
            &mut tx,
            actor,
            action,
            &format!("task:{task_id} {title}"),
            "",
            after_json,
        )
        .await?;
        let task = crate::tasks::load_task(&mut tx, task_id).await?;
        tx.commit().await?;
        Ok(task)
    }

    /// Cancels any user's unfinished task, refunding it once (as the owner's cancel does).
    /// `false` when it had already ended.
    pub async fn operator_cancel_task(
        &self,
        actor: Actor<'_>,
        task_id: i64,
        reason: &str,
    ) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let before = crate::tasks::load_task(&mut tx, task_id).await?;
        let why = format!("运营取消：{reason}");
        let changed =
            crate::tasks::end_unsuccessfully(&mut tx, task_id, crate::TaskStatus::Cancelled, &why)
                .await?;
        if changed {
            audit(
                &mut tx,
                actor,
                "task.cancel",
                &format!("task:{task_id} {}", before.title),
                &serde_json::json!({ "status": before.status.as_str() }).to_string(),
                &serde_json::json!({ "status": "cancelled", "reason": reason }).to_string(),
            )
            .await?;
        }
        tx.commit().await?;
        Ok(changed)
    }

    /// The dashboard's counts; "today" starts at `day_start` (the site's midnight) and
    /// revenue covers the `days` days up to it.
    pub async fn site_counts(&self, day_start: i64, days: i64) -> Result<SiteCounts> {
        let week_start = day_start - 6 * DAY_MS;
        let users_total = count(&self.pool, "SELECT COUNT(*) FROM users", &[]).await?;
        let users_today = count(
            &self.pool,
            "SELECT COUNT(*) FROM users WHERE created_at >= $1",
            &[day_start],
        )
        .await?;
        let users_week = count(
            &self.pool,
            "SELECT COUNT(*) FROM users WHERE created_at >= $1",
            &[week_start],
        )
        .await?;
        let tasks = sqlx::query_as::<_, (String, String, i64)>(
            "SELECT kind, status, COUNT(*) FROM tasks GROUP BY kind, status ORDER BY kind, status",
        )
        .fetch_all(&self.pool)
        .await?;
        let since = day_start - (days - 1).max(0) * DAY_MS;
        let paid = sqlx::query_as::<_, (i64, i64)>(
            "SELECT paid_at, amount_fen - refunded_fen FROM orders WHERE paid_at IS NOT NULL AND paid_at >= $1",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        let mut revenue: Vec<(i64, i64, i64)> = Vec::new();
        for (paid_at, fen) in paid {
            let day = day_start - (day_start - paid_at + DAY_MS - 1).div_euclid(DAY_MS) * DAY_MS;
            match revenue.iter_mut().find(|(d, _, _)| *d == day) {
                Some(entry) => {
                    entry.1 += fen;
                    entry.2 += 1;
                }
                None => revenue.push((day, fen, 1)),
            }
        }
        revenue.sort();
        let database_file_bytes = count(
            &self.pool,
            "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM files",
            &[],
        )
        .await?;
        Ok(SiteCounts {
            users_total,
            users_today,
            users_week,
            tasks,
            revenue,
            database_file_bytes,
        })
    }

    /// The audit log, newest first, filtered by a text found in the actor, action or target.
    pub async fn audit_log(
        &self,
        query: &str,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<AuditEntry>, i64)> {
        let pattern = crate::like_pattern(query);
        let condition = "(LOWER(actor_name) LIKE $1 ESCAPE '\\' OR LOWER(action) LIKE $1 ESCAPE '\\' \
             OR LOWER(target) LIKE $1 ESCAPE '\\')";
        let rows = sqlx::query(&format!(
            "SELECT id, actor_id, actor_name, action, target, before_json, after_json, created_at \
             FROM audit_log WHERE {condition} ORDER BY id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(&pattern)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        let total: i64 =
            sqlx::query_scalar(&format!("SELECT COUNT(*) FROM audit_log WHERE {condition}"))
                .bind(&pattern)
                .fetch_one(&self.pool)
                .await?;
        Ok((
            rows.iter().map(audit_from_row).collect::<Result<_>>()?,
            total,
        ))
    }

    /// Runs one statement as it is, for tests that show what the database itself refuses.
    #[doc(hidden)]
    pub async fn execute_for_tests(&self, sql: &str) -> Result<u64> {
        Ok(sqlx::query(sql).execute(&self.pool).await?.rows_affected())
    }

    /// Creates a package (`id` = `None`) or changes one, logged with what it was. Orders already
    /// paid keep what they bought: an order copies its package when it is made.
    pub async fn operator_save_product(
        &self,
        actor: Actor<'_>,
        id: Option<i64>,
        p: &crate::NewProduct,
    ) -> Result<crate::Product> {
        use crate::orders::{PRODUCT_COLUMNS, product_from_row};
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let before = match id {
            Some(id) => Some(
                sqlx::query(&format!(
                    "SELECT {PRODUCT_COLUMNS} FROM products WHERE id = $1"
                ))
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or(StoreError::NotFound)
                .and_then(|row| product_from_row(&row))?,
            ),
            None => None,
        };
        let product = match id {
            Some(id) => product_from_row(&sqlx::query(&format!(
                "UPDATE products SET name = $1, description = $2, price_fen = $3, grant_kind = $4, \
                 grant_amount = $5, valid_days = $6, sort_order = $7, updated_at = $8 WHERE id = $9 \
                 RETURNING {PRODUCT_COLUMNS}"
            ))
            .bind(&p.name)
            .bind(&p.description)
            .bind(p.price_fen)
            .bind(p.grant_kind.as_str())
            .bind(p.grant_amount)
            .bind(p.valid_days)
            .bind(p.sort_order)
            .bind(now)
            .bind(id)
            .fetch_one(&mut *tx)
            .await?)?,
            None => crate::orders::insert_product(&mut tx, p, now).await?,
        };
        audit(
            &mut tx,
            actor,
            if before.is_some() {
                "package.update"
            } else {
                "package.create"
            },
            &format!("package:{} {}", product.id, product.name),
            &before.as_ref().map(product_json).unwrap_or_default(),
            &product_json(&product),
        )
        .await?;
        tx.commit().await?;
        Ok(product)
    }

    /// Puts a package on sale or retires it, logged.
    pub async fn operator_set_product_active(
        &self,
        actor: Actor<'_>,
        id: i64,
        active: bool,
    ) -> Result<()> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query("SELECT name, active FROM products WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::NotFound)?;
        let name: String = row.try_get("name")?;
        let was: i64 = row.try_get("active")?;
        sqlx::query("UPDATE products SET active = $1, updated_at = $2 WHERE id = $3")
            .bind(i64::from(active))
            .bind(now_ms())
            .bind(id)
            .execute(&mut *tx)
            .await?;
        audit(
            &mut tx,
            actor,
            if active {
                "package.activate"
            } else {
                "package.retire"
            },
            &format!("package:{id} {name}"),
            &serde_json::json!({ "active": was != 0 }).to_string(),
            &serde_json::json!({ "active": active }).to_string(),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records a console action that changed something outside the database (a file, a
    /// setting applied elsewhere).
    pub async fn record_audit(
        &self,
        actor: Actor<'_>,
        action: &str,
        target: &str,
        before: &str,
        after: &str,
    ) -> Result<()> {
        let mut conn = self.pool.acquire().await?;
        audit(&mut conn, actor, action, target, before, after).await
    }

    /// The entries of one configuration entity, by id.
    pub async fn config_entries(&self, entity: &str) -> Result<Vec<ConfigEntry>> {
        let rows = sqlx::query(
            "SELECT entity, id, value_json, updated_at FROM config_entries WHERE entity = $1 ORDER BY id",
        )
        .bind(entity)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(config_from_row).collect()
    }

    pub async fn config_entry(&self, entity: &str, id: &str) -> Result<ConfigEntry> {
        let row = sqlx::query(
            "SELECT entity, id, value_json, updated_at FROM config_entries WHERE entity = $1 AND id = $2",
        )
        .bind(entity)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        config_from_row(&row)
    }

    /// Creates or replaces one configuration entry (`value` is JSON the caller has checked),
    /// logged with what it was before.
    pub async fn put_config_entry(
        &self,
        actor: Actor<'_>,
        entity: &str,
        id: &str,
        value: &str,
    ) -> Result<ConfigEntry> {
        self.put_config_entry_logged(actor, entity, id, value, "config.put", &|v| v.to_string())
            .await
    }

    /// `put_config_entry` for an entry holding a secret: the log keeps `shown(value)` of the
    /// values before and after (e.g. without an API key) under `action`.
    pub async fn put_config_entry_logged(
        &self,
        actor: Actor<'_>,
        entity: &str,
        id: &str,
        value: &str,
        action: &str,
        shown: &(dyn Fn(&str) -> String + Sync),
    ) -> Result<ConfigEntry> {
        let mut tx = self.begin_write().await?;
        let entry = put_entry_in(&mut tx, actor, entity, id, value, action, shown).await?;
        tx.commit().await?;
        Ok(entry)
    }

    /// Switches an entry of `entity` on or off (`{"enabled": …}`), refusing to switch off the
    /// last of `group` still on (`Conflict("last_switch_on")`; an entry missing is on). Check
    /// and write in one transaction, one such change at a time, so two operators switching off
    /// the last two at once cannot both succeed.
    pub async fn put_switch_keeping_one(
        &self,
        actor: Actor<'_>,
        entity: &str,
        id: &str,
        enabled: bool,
        group: &[&str],
    ) -> Result<ConfigEntry> {
        let mut tx = self.begin_write().await?;
        if self.backend == crate::Backend::Postgres {
            // SQLite's write transactions are one at a time already.
            sqlx::query("SELECT pg_advisory_xact_lock(7305)")
                .execute(&mut *tx)
                .await?;
        }
        if !enabled {
            let rows: Vec<(String, String)> =
                sqlx::query_as("SELECT id, value_json FROM config_entries WHERE entity = $1")
                    .bind(entity)
                    .fetch_all(&mut *tx)
                    .await?;
            let off = |other: &str| {
                other == id
                    || rows.iter().any(|(row_id, value)| {
                        row_id == other
                            && serde_json::from_str::<serde_json::Value>(value)
                                .ok()
                                .and_then(|v| v.get("enabled").and_then(serde_json::Value::as_bool))
                                == Some(false)
                    })
            };
            if group.iter().all(|other| off(other)) {
                return Err(StoreError::Conflict("last_switch_on"));
            }
        }
        let value = serde_json::json!({ "enabled": enabled }).to_string();
        let entry = put_entry_in(&mut tx, actor, entity, id, &value, "config.put", &|v| {
            v.to_string()
        })
        .await?;
        tx.commit().await?;
        Ok(entry)
    }

    /// Removes one configuration entry; `NotFound` when there was none.
    pub async fn delete_config_entry(
        &self,
        actor: Actor<'_>,
        entity: &str,
        id: &str,
    ) -> Result<()> {
        self.delete_config_entry_logged(actor, entity, id, "config.delete", &|v| v.to_string())
            .await
    }

    /// `delete_config_entry`, the log keeping `shown(value)` under `action`.
    pub async fn delete_config_entry_logged(
        &self,
        actor: Actor<'_>,
        entity: &str,
        id: &str,
        action: &str,
        shown: &(dyn Fn(&str) -> String + Sync),
    ) -> Result<()> {
        let mut tx = self.begin_write().await?;
        let before: Option<String> = sqlx::query_scalar(
            "SELECT value_json FROM config_entries WHERE entity = $1 AND id = $2",
        )
        .bind(entity)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(before) = before else {
            return Err(StoreError::NotFound);
        };
        sqlx::query("DELETE FROM config_entries WHERE entity = $1 AND id = $2")
            .bind(entity)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        audit(
            &mut tx,
            actor,
            action,
            &format!("{entity}:{id}"),
            &shown(&before),
            "",
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
