use crate::{Result, Store, StoreError, now_ms};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

/// Why an account changed. The string form is stored and shown to operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerKind {
    /// One free plagiarism check for an account's first QR login.
    QrFirstLoginBonus,
    /// Balance or credits added by an operator from the command line.
    OperatorCredit,
    /// Paid for a task when it was submitted.
    TaskCharge,
    /// A failed or cancelled task's charge given back.
    TaskRefund,
    /// An order paid through a payment provider: a top-up's credit, a task's price, or a
    /// package bought (its grant is in `account_grants`).
    OrderPayment,
    /// An order refunded by the operator, reversing what it wrote.
    OrderRefund,
}

impl LedgerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LedgerKind::QrFirstLoginBonus => "qr_first_login_bonus",
            LedgerKind::OperatorCredit => "operator_credit",
            LedgerKind::TaskCharge => "task_charge",
            LedgerKind::TaskRefund => "task_refund",
            LedgerKind::OrderPayment => "order_payment",
            LedgerKind::OrderRefund => "order_refund",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user_id: i64,
    pub balance_fen: i64,
    pub free_checks: i64,
    pub qr_bonus_granted_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub id: i64,
    pub kind: String,
    pub delta_fen: i64,
    pub delta_free_checks: i64,
    pub balance_after_fen: i64,
    pub free_checks_after: i64,
    pub reason: String,
    pub ref_type: Option<String>,
    pub ref_id: Option<String>,
    pub created_at: i64,
}

fn ledger_from_row(row: &AnyRow) -> Result<LedgerEntry> {
    Ok(LedgerEntry {
        id: row.try_get("id")?,
        kind: row.try_get("kind")?,
        delta_fen: row.try_get("delta_fen")?,
        delta_free_checks: row.try_get("delta_free_checks")?,
        balance_after_fen: row.try_get("balance_after_fen")?,
        free_checks_after: row.try_get("free_checks_after")?,
        reason: row.try_get("reason")?,
        ref_type: row.try_get("ref_type")?,
        ref_id: row.try_get("ref_id")?,
        created_at: row.try_get("created_at")?,
    })
}

/// One change to an account; the ledger row and the balance move together.
pub(crate) struct Movement<'a> {
    pub user_id: i64,
    pub kind: LedgerKind,
    pub delta_fen: i64,
    pub delta_free_checks: i64,
    pub reason: &'a str,
    pub reference: Option<(&'a str, &'a str)>,
}

/// The largest balance (fen) or number of free checks an account may hold, and so the largest
/// single movement: far beyond any real account, far below where the arithmetic could overflow
/// (SQLite would silently turn an overflowing sum into a float).
pub const MAX_ACCOUNT_AMOUNT: i64 = 1_000_000_000_000;

/// Applies a movement inside the caller's transaction. Refuses to take an account below zero or
/// above `MAX_ACCOUNT_AMOUNT`.
pub(crate) async fn apply_movement(conn: &mut AnyConnection, m: Movement<'_>) -> Result<Account> {
    let cap = MAX_ACCOUNT_AMOUNT as u64;
    if m.delta_fen.unsigned_abs() > cap || m.delta_free_checks.unsigned_abs() > cap {
        return Err(StoreError::Conflict("amount_out_of_range"));
    }
    let now = now_ms();
    let row = sqlx::query(
        "UPDATE accounts SET balance_fen = balance_fen + $1, free_checks = free_checks + $2, updated_at = $3 \
         WHERE user_id = $4 AND balance_fen + $1 >= 0 AND free_checks + $2 >= 0 \
         AND balance_fen + $1 <= $5 AND free_checks + $2 <= $5 \
         RETURNING user_id, balance_fen, free_checks, qr_bonus_granted_at",
    )
    .bind(m.delta_fen)
    .bind(m.delta_free_checks)
    .bind(now)
    .bind(m.user_id)
    .bind(MAX_ACCOUNT_AMOUNT)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else {
        let exists = sqlx::query("SELECT 1 FROM accounts WHERE user_id = $1")
            .bind(m.user_id)
            .fetch_optional(&mut *conn)
            .await?;
        return Err(match exists {
            None => StoreError::NotFound,
            Some(_) if m.delta_fen > 0 || m.delta_free_checks > 0 => {
                StoreError::Conflict("amount_out_of_range")
            }
            Some(_) => StoreError::InsufficientFunds,
        });
    };
    let account = account_from_row(&row)?;
    sqlx::query(
        "INSERT INTO account_ledger (user_id, kind, delta_fen, delta_free_checks, balance_after_fen, \
         free_checks_after, reason, ref_type, ref_id, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(m.user_id)
    .bind(m.kind.as_str())
    .bind(m.delta_fen)
    .bind(m.delta_free_checks)
    .bind(account.balance_fen)
    .bind(account.free_checks)
    .bind(m.reason)
    .bind(m.reference.map(|r| r.0))
    .bind(m.reference.map(|r| r.1))
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(account)
}

/// Grants the first-QR-login free check once per account and at most once per requesting IP per
/// day (China Standard Time); returns whether it was granted now. An account refused only because
/// its IP already had the day's grant stays eligible for a later QR login.
pub(crate) async fn grant_first_qr_bonus(
    conn: &mut AnyConnection,
    user_id: i64,
    requester_ip: &str,
) -> Result<bool> {
    let now = now_ms();
    let marked = sqlx::query(
        "UPDATE accounts SET qr_bonus_granted_at = $1 WHERE user_id = $2 AND qr_bonus_granted_at IS NULL",
    )
    .bind(now)
    .bind(user_id)
    .execute(&mut *conn)
    .await?;
    if marked.rows_affected() == 0 {
        return Ok(false);
    }
    let per_ip = sqlx::query(
        "INSERT INTO qr_bonus_grants (requester_ip, day, user_id, granted_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (requester_ip, day) DO NOTHING",
    )
    .bind(requester_ip)
    .bind(crate::throttle::cst_day(now))
    .bind(user_id)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    if per_ip.rows_affected() == 0 {
        // This IP already had today's free check: leave the account eligible for another day.
        sqlx::query("UPDATE accounts SET qr_bonus_granted_at = NULL WHERE user_id = $1")
            .bind(user_id)
            .execute(&mut *conn)
            .await?;
        return Ok(false);
    }
    apply_movement(
        conn,
        Movement {
            user_id,
            kind: LedgerKind::QrFirstLoginBonus,
            delta_fen: 0,
            delta_free_checks: 1,
            reason: "首次扫码登录赠送免费查重 1 次",
            reference: None,
        },
    )
    .await?;
    Ok(true)
}

fn account_from_row(row: &AnyRow) -> Result<Account> {
    Ok(Account {
        user_id: row.try_get("user_id")?,
        balance_fen: row.try_get("balance_fen")?,
        free_checks: row.try_get("free_checks")?,
        qr_bonus_granted_at: row.try_get("qr_bonus_granted_at")?,
    })
}

impl Store {
    pub async fn account(&self, user_id: i64) -> Result<Account> {
        let row = sqlx::query(
            "SELECT user_id, balance_fen, free_checks, qr_bonus_granted_at FROM accounts WHERE user_id = $1",
        )
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        account_from_row(&row)
    }

    /// The newest `limit` ledger rows of an account, newest first.
    pub async fn ledger(&self, user_id: i64, limit: i64) -> Result<Vec<LedgerEntry>> {
        let rows = sqlx::query(
            "SELECT id, kind, delta_fen, delta_free_checks, balance_after_fen, free_checks_after, reason, \
             ref_type, ref_id, created_at FROM account_ledger WHERE user_id = $1 ORDER BY id DESC LIMIT $2",
        )
        .bind(user_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(ledger_from_row).collect()
    }

    /// An operator's manual credit (or, with negative figures, a correction), recorded in the ledger.
    pub async fn operator_credit(
        &self,
        user_id: i64,
        delta_fen: i64,
        delta_free_checks: i64,
        reason: &str,
    ) -> Result<Account> {
        let mut tx = self.begin_write().await?;
        let account = apply_movement(
            &mut tx,
            Movement {
                user_id,
                kind: LedgerKind::OperatorCredit,
                delta_fen,
                delta_free_checks,
                reason,
                reference: None,
            },
        )
        .await?;
        tx.commit().await?;
        Ok(account)
    }
}
