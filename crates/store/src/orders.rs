//! Packages (套餐), orders and what paying them writes, exactly once: an order moves from
//! pending to paid by one conditional update, in the same transaction as the credit or the
//! grant it pays for and the provider's notification, whose id is unique. A notification seen
//! twice, for an unknown order or with another amount changes nothing and is kept as evidence.

use crate::accounts::{LedgerKind, Movement, apply_movement};
use crate::{Result, Store, StoreError, now_ms};
use rand::Rng;
use rand::rngs::OsRng;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};
use std::collections::HashMap;

const DAY_MS: i64 = 86_400_000;

/// What an order pays for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderKind {
    /// A package: a grant of checks, detections, rewriting characters, papers or slide decks.
    Package,
    /// Money for the balance, with the bonus of its tier.
    TopUp,
    /// One task's price, paid by scanning when the balance is short.
    Task,
}

impl OrderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderKind::Package => "package",
            OrderKind::TopUp => "top_up",
            OrderKind::Task => "task",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "package" => OrderKind::Package,
            "top_up" => OrderKind::TopUp,
            "task" => OrderKind::Task,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderStatus {
    Pending,
    Paid,
    /// Expired or closed unpaid.
    Closed,
    /// Paid, then refunded in full.
    Refunded,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Pending => "pending",
            OrderStatus::Paid => "paid",
            OrderStatus::Closed => "closed",
            OrderStatus::Refunded => "refunded",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "pending" => OrderStatus::Pending,
            "paid" => OrderStatus::Paid,
            "closed" => OrderStatus::Closed,
            "refunded" => OrderStatus::Refunded,
            _ => return Err(StoreError::Conflict("order_status_unknown")),
        })
    }
}

/// What a package grants. The string form is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantKind {
    /// Similarity checks (查重), one per paper.
    Check,
    /// AI-text detections (AIGC检测), one per paper.
    Aigc,
    /// Characters of rewriting (降重 / 降AIGC).
    RewriteChars,
    /// Generated papers.
    Paper,
    /// Defence slide decks.
    Ppt,
}

impl GrantKind {
    pub const ALL: [GrantKind; 5] = [
        GrantKind::Check,
        GrantKind::Aigc,
        GrantKind::RewriteChars,
        GrantKind::Paper,
        GrantKind::Ppt,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GrantKind::Check => "check",
            GrantKind::Aigc => "aigc",
            GrantKind::RewriteChars => "rewrite_chars",
            GrantKind::Paper => "paper",
            GrantKind::Ppt => "ppt",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        GrantKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The unit its amounts are counted in, as pages and the ledger say it.
    pub fn unit(self) -> &'static str {
        match self {
            GrantKind::RewriteChars => "字",
            GrantKind::Paper => "篇",
            GrantKind::Ppt => "份",
            GrantKind::Check | GrantKind::Aigc => "次",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub price_fen: i64,
    pub grant_kind: GrantKind,
    pub grant_amount: i64,
    pub valid_days: i64,
    pub sort_order: i64,
    pub active: bool,
}

/// A package as the operator defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProduct {
    pub name: String,
    pub description: String,
    pub price_fen: i64,
    pub grant_kind: GrantKind,
    pub grant_amount: i64,
    pub valid_days: i64,
    pub sort_order: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub id: i64,
    pub out_trade_no: String,
    pub user_id: i64,
    pub kind: OrderKind,
    pub channel: String,
    pub title: String,
    pub amount_fen: i64,
    pub credit_fen: i64,
    pub product_id: Option<i64>,
    pub grant_kind: Option<GrantKind>,
    pub grant_amount: i64,
    pub grant_days: i64,
    pub task_id: Option<i64>,
    pub status: OrderStatus,
    pub provider_trade_no: Option<String>,
    pub pay_url: Option<String>,
    pub refunded_fen: i64,
    pub created_at: i64,
    pub expires_at: i64,
    pub paid_at: Option<i64>,
    pub closed_at: Option<i64>,
}

/// An order about to be created. For a package, `product` is the package as sold; for a
/// top-up, `credit_fen` is what the balance receives; for a task, `task_id` names it.
#[derive(Debug, Clone)]
pub struct NewOrder<'a> {
    pub user_id: i64,
    pub kind: OrderKind,
    pub channel: &'a str,
    pub title: &'a str,
    pub amount_fen: i64,
    pub credit_fen: i64,
    pub product: Option<&'a Product>,
    pub task_id: Option<i64>,
    pub ttl_ms: i64,
}

/// A provider's word that an order was paid, after its signature was verified.
#[derive(Debug, Clone)]
pub struct PaymentNotice<'a> {
    pub provider: &'a str,
    /// The notification's own id (WeChat Pay's `id`, Alipay's `notify_id`); a query result
    /// found by reconciliation uses the provider's trade number.
    pub event_id: &'a str,
    pub out_trade_no: &'a str,
    pub amount_fen: i64,
    pub provider_trade_no: &'a str,
}

/// What a payment notice did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentOutcome {
    /// The order is paid now, and what it pays for written.
    Paid(Order),
    /// The order was paid already (another notice, or the reconciliation, came first).
    AlreadyPaid(Order),
    /// This very notice was handled before.
    Duplicate,
    UnknownOrder,
    AmountMismatch {
        expected_fen: i64,
        got_fen: i64,
    },
}

impl PaymentOutcome {
    fn as_str(&self) -> &'static str {
        match self {
            PaymentOutcome::Paid(_) => "paid",
            PaymentOutcome::AlreadyPaid(_) => "already_paid",
            PaymentOutcome::Duplicate => "duplicate",
            PaymentOutcome::UnknownOrder => "unknown_order",
            PaymentOutcome::AmountMismatch { .. } => "amount_mismatch",
        }
    }
}

/// A package's grant as the account holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub id: i64,
    pub order_id: i64,
    pub kind: GrantKind,
    pub total: i64,
    pub remaining: i64,
    pub expires_at: i64,
    pub created_at: i64,
    /// The package's name as it was sold.
    pub title: String,
}

/// One task's use of a grant, as the account's history shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantUse {
    pub id: i64,
    pub grant_id: i64,
    pub kind: GrantKind,
    pub title: String,
    pub task_id: i64,
    /// What stays used; 0 once refunded in full.
    pub units: i64,
    pub reason: String,
    pub created_at: i64,
}

/// What a refund did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refund {
    pub refund_no: String,
    pub order: Order,
    pub amount_fen: i64,
    /// False when this refund number was handled before (nothing written again).
    pub new: bool,
}

pub(crate) const ORDER_COLUMNS: &str = "id, out_trade_no, user_id, kind, channel, title, amount_fen, credit_fen, \
    product_id, grant_kind, grant_amount, grant_days, task_id, status, provider_trade_no, pay_url, \
    refunded_fen, created_at, expires_at, paid_at, closed_at";

pub(crate) fn order_from_row(row: &AnyRow) -> Result<Order> {
    let kind: String = row.try_get("kind")?;
    let status: String = row.try_get("status")?;
    let grant_kind: Option<String> = row.try_get("grant_kind")?;
    Ok(Order {
        id: row.try_get("id")?,
        out_trade_no: row.try_get("out_trade_no")?,
        user_id: row.try_get("user_id")?,
        kind: OrderKind::parse(&kind).ok_or(StoreError::Conflict("order_kind_unknown"))?,
        channel: row.try_get("channel")?,
        title: row.try_get("title")?,
        amount_fen: row.try_get("amount_fen")?,
        credit_fen: row.try_get("credit_fen")?,
        product_id: row.try_get("product_id")?,
        grant_kind: grant_kind.as_deref().and_then(GrantKind::parse),
        grant_amount: row.try_get("grant_amount")?,
        grant_days: row.try_get("grant_days")?,
        task_id: row.try_get("task_id")?,
        status: OrderStatus::parse(&status)?,
        provider_trade_no: row.try_get("provider_trade_no")?,
        pay_url: row.try_get("pay_url")?,
        refunded_fen: row.try_get("refunded_fen")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        paid_at: row.try_get("paid_at")?,
        closed_at: row.try_get("closed_at")?,
    })
}

pub(crate) const PRODUCT_COLUMNS: &str =
    "id, name, description, price_fen, grant_kind, grant_amount, valid_days, sort_order, active";

pub(crate) fn product_from_row(row: &AnyRow) -> Result<Product> {
    let kind: String = row.try_get("grant_kind")?;
    let active: i64 = row.try_get("active")?;
    Ok(Product {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        price_fen: row.try_get("price_fen")?,
        grant_kind: GrantKind::parse(&kind).ok_or(StoreError::Conflict("grant_kind_unknown"))?,
        grant_amount: row.try_get("grant_amount")?,
        valid_days: row.try_get("valid_days")?,
        sort_order: row.try_get("sort_order")?,
        active: active != 0,
    })
}

fn grant_from_row(row: &AnyRow) -> Result<Grant> {
    let kind: String = row.try_get("kind")?;
    Ok(Grant {
        id: row.try_get("id")?,
        order_id: row.try_get("order_id")?,
        kind: GrantKind::parse(&kind).ok_or(StoreError::Conflict("grant_kind_unknown"))?,
        total: row.try_get("total")?,
        remaining: row.try_get("remaining")?,
        expires_at: row.try_get("expires_at")?,
        created_at: row.try_get("created_at")?,
        title: row.try_get("title")?,
    })
}

const GRANT_COLUMNS: &str =
    "g.id, g.order_id, g.kind, g.total, g.remaining, g.expires_at, g.created_at, o.title";

/// Takes `charge.units` from the user's live grants of its kind, those expiring first first, and
/// records each take against `task_id`. Not enough → `InsufficientFunds` (the caller's
/// transaction is rolled back, so nothing is taken).
pub(crate) async fn take_grant_units(
    conn: &mut AnyConnection,
    user_id: i64,
    task_id: i64,
    charge: crate::GrantCharge,
    reason: &str,
    now: i64,
) -> Result<()> {
    let rows = sqlx::query(
        "SELECT id, remaining FROM account_grants \
         WHERE user_id = $1 AND kind = $2 AND remaining > 0 AND expires_at > $3 ORDER BY expires_at, id",
    )
    .bind(user_id)
    .bind(charge.kind.as_str())
    .bind(now)
    .fetch_all(&mut *conn)
    .await?;
    let mut left = charge.units;
    for row in rows {
        if left == 0 {
            break;
        }
        let id: i64 = row.try_get("id")?;
        let remaining: i64 = row.try_get("remaining")?;
        let take = remaining.min(left);
        // Conditional: a concurrent use of the same grant makes this one fail, never overdraw.
        let taken = sqlx::query(
            "UPDATE account_grants SET remaining = remaining - $1 WHERE id = $2 AND remaining >= $1",
        )
        .bind(take)
        .bind(id)
        .execute(&mut *conn)
        .await?;
        if taken.rows_affected() == 0 {
            return Err(StoreError::InsufficientFunds);
        }
        sqlx::query(
            "INSERT INTO grant_uses (grant_id, user_id, task_id, units, reason, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(id)
        .bind(user_id)
        .bind(task_id)
        .bind(take)
        .bind(reason)
        .bind(now)
        .execute(&mut *conn)
        .await?;
        left -= take;
    }
    if left > 0 {
        return Err(StoreError::InsufficientFunds);
    }
    Ok(())
}

/// The kind of the grants `task_id` used, and how many of its units a return would restore
/// (those taken from packages never refunded).
pub(crate) async fn returnable_units(
    conn: &mut AnyConnection,
    task_id: i64,
) -> Result<(Option<GrantKind>, i64)> {
    let rows = sqlx::query(
        "SELECT g.kind, u.units, o.refunded_fen FROM grant_uses u JOIN account_grants g ON g.id = u.grant_id \
         JOIN orders o ON o.id = g.order_id WHERE u.task_id = $1 AND u.units > 0",
    )
    .bind(task_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut kind = None;
    let mut restorable = 0;
    for row in rows {
        kind = GrantKind::parse(&row.try_get::<String, _>("kind")?);
        if row.try_get::<i64, _>("refunded_fen")? == 0 {
            restorable += row.try_get::<i64, _>("units")?;
        }
    }
    Ok((kind, restorable))
}

/// Days a package keeps to use what a failed task gave back, when it had expired meanwhile.
const RETURN_GRACE_DAYS: i64 = 7;

/// Gives `units` of what `task_id` took back to the grants it took them from, latest use first.
pub(crate) async fn return_grant_units(
    conn: &mut AnyConnection,
    task_id: i64,
    units: i64,
) -> Result<()> {
    let uses = sqlx::query(
        "SELECT id, grant_id, units FROM grant_uses WHERE task_id = $1 AND units > 0 ORDER BY id DESC",
    )
    .bind(task_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut left = units;
    let grace_until = crate::now_ms() + RETURN_GRACE_DAYS * DAY_MS;
    for row in uses {
        if left == 0 {
            break;
        }
        let (id, grant_id, used): (i64, i64, i64) = (
            row.try_get("id")?,
            row.try_get("grant_id")?,
            row.try_get("units")?,
        );
        let back = used.min(left);
        sqlx::query("UPDATE grant_uses SET units = units - $1 WHERE id = $2")
            .bind(back)
            .bind(id)
            .execute(&mut *conn)
            .await?;
        // A package refunded to the buyer (in part or in full) takes nothing back: its money
        // came back instead. One that expired meanwhile gets a few days to use what returns.
        let refunded: i64 = sqlx::query_scalar(
            "SELECT o.refunded_fen FROM orders o JOIN account_grants g ON g.order_id = o.id WHERE g.id = $1",
        )
        .bind(grant_id)
        .fetch_one(&mut *conn)
        .await?;
        if refunded == 0 {
            sqlx::query(
                "UPDATE account_grants SET remaining = remaining + $1, \
                 expires_at = CASE WHEN expires_at < $3 THEN $3 ELSE expires_at END WHERE id = $2",
            )
            .bind(back)
            .bind(grant_id)
            .bind(grace_until)
            .execute(&mut *conn)
            .await?;
        }
        left -= back;
    }
    Ok(())
}

/// A new order number: "WJ", the time in milliseconds and six random digits — 21 characters
/// of [A-Z0-9], inside what WeChat Pay (6–32) and Alipay (≤ 64) accept, and unguessable enough
/// that a number cannot be used to probe other users' orders.
fn new_out_trade_no(now: i64) -> String {
    format!("WJ{now}{:06}", OsRng.gen_range(0..1_000_000))
}

async fn load_order_by_trade_no(conn: &mut AnyConnection, out_trade_no: &str) -> Result<Order> {
    let row = sqlx::query(&format!(
        "SELECT {ORDER_COLUMNS} FROM orders WHERE out_trade_no = $1"
    ))
    .bind(out_trade_no)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?;
    order_from_row(&row)
}

/// Writes what a just-paid order pays for, inside the caller's transaction.
async fn deliver(conn: &mut AnyConnection, order: &Order, now: i64) -> Result<()> {
    let id = order.id.to_string();
    match order.kind {
        OrderKind::TopUp | OrderKind::Task => {
            let reason = match order.kind {
                OrderKind::TopUp if order.credit_fen > order.amount_fen => format!(
                    "充值 {}（含赠送 {}）",
                    yuan(order.credit_fen),
                    yuan(order.credit_fen - order.amount_fen)
                ),
                OrderKind::TopUp => format!("充值 {}", yuan(order.credit_fen)),
                // "任务支付：<task>": the money is in the balance for that task.
                _ => format!(
                    "扫码补足余额，用于{}",
                    order
                        .title
                        .strip_prefix("任务支付：")
                        .map_or_else(|| order.title.clone(), |task| format!("任务「{task}」"))
                ),
            };
            apply_movement(
                conn,
                Movement {
                    user_id: order.user_id,
                    kind: LedgerKind::OrderPayment,
                    delta_fen: order.credit_fen,
                    delta_free_checks: 0,
                    reason: &reason,
                    reference: Some(("order", &id)),
                },
            )
            .await?;
        }
        OrderKind::Package => {
            let kind = order
                .grant_kind
                .ok_or(StoreError::Conflict("grant_kind_unknown"))?;
            sqlx::query(
                "INSERT INTO account_grants (user_id, order_id, kind, total, remaining, expires_at, created_at) \
                 VALUES ($1, $2, $3, $4, $4, $5, $6)",
            )
            .bind(order.user_id)
            .bind(order.id)
            .bind(kind.as_str())
            .bind(order.grant_amount)
            .bind(now + order.grant_days * DAY_MS)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            // The ledger shows the purchase too; the balance does not move.
            apply_movement(
                conn,
                Movement {
                    user_id: order.user_id,
                    kind: LedgerKind::OrderPayment,
                    delta_fen: 0,
                    delta_free_checks: 0,
                    reason: &format!("购买套餐：{}", order.title),
                    reference: Some(("order", &id)),
                },
            )
            .await?;
        }
    }
    Ok(())
}

/// Puts a package on sale.
pub(crate) async fn insert_product(
    conn: &mut AnyConnection,
    p: &NewProduct,
    now: i64,
) -> Result<Product> {
    let row = sqlx::query(&format!(
        "INSERT INTO products (name, description, price_fen, grant_kind, grant_amount, valid_days, \
         sort_order, active, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $8) \
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
    .fetch_one(&mut *conn)
    .await?;
    product_from_row(&row)
}

/// "¥12.30".
fn yuan(fen: i64) -> String {
    format!("¥{}.{:02}", fen / 100, fen % 100)
}

impl Store {
    /// Adds a package to the catalogue.
    pub async fn create_product(&self, p: &NewProduct) -> Result<Product> {
        let mut conn = self.pool.acquire().await?;
        insert_product(&mut conn, p, now_ms()).await
    }

    /// The catalogue in display order; with `active_only`, what can be bought now.
    pub async fn products(&self, active_only: bool) -> Result<Vec<Product>> {
        let rows = sqlx::query(&format!(
            "SELECT {PRODUCT_COLUMNS} FROM products WHERE active = 1 OR $1 = 0 ORDER BY sort_order, id"
        ))
        .bind(i64::from(active_only))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(product_from_row).collect()
    }

    pub async fn product(&self, id: i64) -> Result<Product> {
        let row = sqlx::query(&format!(
            "SELECT {PRODUCT_COLUMNS} FROM products WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        product_from_row(&row)
    }

    /// Withdraws a package from sale (orders already paid keep what they bought).
    pub async fn set_product_active(&self, id: i64, active: bool) -> Result<()> {
        let done = sqlx::query("UPDATE products SET active = $1, updated_at = $2 WHERE id = $3")
            .bind(i64::from(active))
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Creates a pending order with a new out_trade_no; it expires after `ttl_ms`.
    pub async fn create_order(&self, o: &NewOrder<'_>) -> Result<Order> {
        if o.amount_fen <= 0 || o.amount_fen > crate::MAX_ACCOUNT_AMOUNT || o.credit_fen < 0 {
            return Err(StoreError::Conflict("amount_out_of_range"));
        }
        let now = now_ms();
        for _ in 0..5 {
            let inserted = sqlx::query(&format!(
                "INSERT INTO orders (out_trade_no, user_id, kind, channel, title, amount_fen, credit_fen, \
                 product_id, grant_kind, grant_amount, grant_days, task_id, status, created_at, expires_at, \
                 updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending', $13, $14, $13) \
                 RETURNING {ORDER_COLUMNS}"
            ))
            .bind(new_out_trade_no(now))
            .bind(o.user_id)
            .bind(o.kind.as_str())
            .bind(o.channel)
            .bind(o.title)
            .bind(o.amount_fen)
            .bind(o.credit_fen)
            .bind(o.product.map(|p| p.id))
            .bind(o.product.map(|p| p.grant_kind.as_str()))
            .bind(o.product.map_or(0, |p| p.grant_amount))
            .bind(o.product.map_or(0, |p| p.valid_days))
            .bind(o.task_id)
            .bind(now)
            .bind(now + o.ttl_ms)
            .fetch_one(&self.pool)
            .await;
            match inserted {
                Ok(row) => return order_from_row(&row),
                // Two orders in the same millisecond drew the same digits: draw again.
                Err(e) if StoreError::is_unique_violation(&e) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Conflict("out_trade_no"))
    }

    /// Keeps the provider's payment link or QR content (WeChat `code_url`, Alipay `qr_code`).
    pub async fn set_order_pay_url(&self, order_id: i64, pay_url: &str) -> Result<()> {
        sqlx::query("UPDATE orders SET pay_url = $1, updated_at = $2 WHERE id = $3")
            .bind(pay_url)
            .bind(now_ms())
            .bind(order_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// A user's own order (another user's is `NotFound`).
    pub async fn order(&self, order_id: i64, user_id: i64) -> Result<Order> {
        let row = sqlx::query(&format!(
            "SELECT {ORDER_COLUMNS} FROM orders WHERE id = $1 AND user_id = $2"
        ))
        .bind(order_id)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        order_from_row(&row)
    }

    pub async fn order_by_trade_no(&self, out_trade_no: &str) -> Result<Order> {
        let mut conn = self.pool.acquire().await?;
        load_order_by_trade_no(&mut conn, out_trade_no).await
    }

    /// A user's orders, newest first.
    pub async fn orders_of(&self, user_id: i64, limit: i64, offset: i64) -> Result<Vec<Order>> {
        let rows = sqlx::query(&format!(
            "SELECT {ORDER_COLUMNS} FROM orders WHERE user_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(user_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(order_from_row).collect()
    }

    /// Keeps the submission a task's page would make once its scan-to-pay order is paid.
    pub async fn set_order_submission(&self, order_id: i64, submission: &str) -> Result<()> {
        sqlx::query("UPDATE orders SET submit_after_paid = $1 WHERE id = $2")
            .bind(submission)
            .bind(order_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Takes a paid order's submission, once: whoever gets it (the notification's follow-up or
    /// the reconciler, on any node) makes it; everyone else gets `None`.
    pub async fn take_order_submission(&self, order_id: i64) -> Result<Option<String>> {
        let kept: Option<Option<String>> = sqlx::query_scalar(
            "SELECT submit_after_paid FROM orders WHERE id = $1 AND status = 'paid'",
        )
        .bind(order_id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(Some(submission)) = kept else {
            return Ok(None);
        };
        let taken = sqlx::query(
            "UPDATE orders SET submit_after_paid = NULL WHERE id = $1 AND submit_after_paid = $2",
        )
        .bind(order_id)
        .bind(&submission)
        .execute(&self.pool)
        .await?;
        Ok((taken.rows_affected() == 1).then_some(submission))
    }

    /// Paid orders whose submission nobody has made yet, paid before `paid_before`.
    pub async fn paid_orders_to_submit(&self, paid_before: i64, limit: i64) -> Result<Vec<Order>> {
        let rows = sqlx::query(&format!(
            "SELECT {ORDER_COLUMNS} FROM orders WHERE status = 'paid' AND submit_after_paid IS NOT NULL \
             AND paid_at < $1 ORDER BY id LIMIT $2"
        ))
        .bind(paid_before)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(order_from_row).collect()
    }

    /// The latest scan-to-pay order a user opened for a task (`check_order_id` reports it).
    pub async fn latest_task_order(&self, task_id: i64, user_id: i64) -> Result<Option<Order>> {
        let row = sqlx::query(&format!(
            "SELECT {ORDER_COLUMNS} FROM orders WHERE task_id = $1 AND user_id = $2 AND kind = 'task' \
             ORDER BY id DESC LIMIT 1"
        ))
        .bind(task_id)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(order_from_row).transpose()
    }

    /// Pending orders created before `created_before` (for reconciliation with the provider).
    pub async fn pending_orders(&self, created_before: i64, limit: i64) -> Result<Vec<Order>> {
        self.pending_orders_after(created_before, 0, limit).await
    }

    /// `pending_orders` with ids above `after_id`: a page of them, for going through all.
    pub async fn pending_orders_after(
        &self,
        created_before: i64,
        after_id: i64,
        limit: i64,
    ) -> Result<Vec<Order>> {
        self.pending_orders_due(created_before, after_id, limit, i64::MAX)
            .await
    }

    /// `pending_orders_after`, leaving out orders whose next query is deferred past `due_at`
    /// (`defer_order_query`).
    pub async fn pending_orders_due(
        &self,
        created_before: i64,
        after_id: i64,
        limit: i64,
        due_at: i64,
    ) -> Result<Vec<Order>> {
        let rows = sqlx::query(&format!(
            "SELECT {ORDER_COLUMNS} FROM orders WHERE status = 'pending' AND created_at < $1 \
             AND id > $2 AND next_query_at <= $4 ORDER BY id LIMIT $3"
        ))
        .bind(created_before)
        .bind(after_id)
        .bind(limit)
        .bind(due_at)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(order_from_row).collect()
    }

    /// Asks the reconciler to leave a pending order alone until `until` (Unix ms).
    pub async fn defer_order_query(&self, order_id: i64, until: i64) -> Result<()> {
        sqlx::query("UPDATE orders SET next_query_at = $1 WHERE id = $2 AND status = 'pending'")
            .bind(until)
            .bind(order_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Closes a pending order unpaid; returns whether it was pending.
    pub async fn close_order(&self, order_id: i64) -> Result<bool> {
        let now = now_ms();
        let done = sqlx::query(
            "UPDATE orders SET status = 'closed', closed_at = $1, updated_at = $1 \
             WHERE id = $2 AND status = 'pending'",
        )
        .bind(now)
        .bind(order_id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records a verified payment notice and, the first time an order is paid, writes what it
    /// pays for — all in one transaction. An order closed by expiry is still paid when the
    /// provider says the money was taken: the student paid, and the credit is theirs.
    pub async fn record_payment(&self, notice: &PaymentNotice<'_>) -> Result<PaymentOutcome> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let recorded = sqlx::query(
            "INSERT INTO payment_events (provider, event_id, out_trade_no, amount_fen, outcome, received_at) \
             VALUES ($1, $2, $3, $4, 'received', $5) ON CONFLICT (provider, event_id) DO NOTHING",
        )
        .bind(notice.provider)
        .bind(notice.event_id)
        .bind(notice.out_trade_no)
        .bind(notice.amount_fen)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if recorded.rows_affected() == 0 {
            return Ok(PaymentOutcome::Duplicate);
        }
        let outcome = match load_order_by_trade_no(&mut tx, notice.out_trade_no).await {
            Err(StoreError::NotFound) => PaymentOutcome::UnknownOrder,
            Err(e) => return Err(e),
            Ok(order) if order.amount_fen != notice.amount_fen => PaymentOutcome::AmountMismatch {
                expected_fen: order.amount_fen,
                got_fen: notice.amount_fen,
            },
            Ok(order) => {
                let moved = sqlx::query(
                    "UPDATE orders SET status = 'paid', paid_at = $1, provider_trade_no = $2, \
                     closed_at = NULL, updated_at = $1 WHERE id = $3 AND status IN ('pending', 'closed')",
                )
                .bind(now)
                .bind(notice.provider_trade_no)
                .bind(order.id)
                .execute(&mut *tx)
                .await?;
                let order = load_order_by_trade_no(&mut tx, notice.out_trade_no).await?;
                if moved.rows_affected() == 1 {
                    deliver(&mut tx, &order, now).await?;
                    PaymentOutcome::Paid(order)
                } else {
                    PaymentOutcome::AlreadyPaid(order)
                }
            }
        };
        sqlx::query("UPDATE payment_events SET outcome = $1 WHERE provider = $2 AND event_id = $3")
            .bind(outcome.as_str())
            .bind(notice.provider)
            .bind(notice.event_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(outcome)
    }

    /// Refunds `amount_fen` of a paid order under the operator's refund number, once: the same
    /// number again changes nothing. What the order wrote is reversed in proportion — a top-up's
    /// credit taken back from the balance (refused if already spent), a package's grant reduced.
    pub async fn refund_order(
        &self,
        order_id: i64,
        refund_no: &str,
        amount_fen: i64,
        reason: &str,
    ) -> Result<Refund> {
        let mut tx = self.begin_write().await?;
        let refund = refund_in(
            &mut tx,
            order_id,
            refund_no,
            amount_fen,
            reason,
            "succeeded",
        )
        .await?;
        tx.commit().await?;
        Ok(refund)
    }

    /// An operator's refund, before the provider is asked: written as `pending` with what the
    /// order gave taken back and the audit entry, all in one transaction. The provider's answer
    /// settles it (`settle_refund`).
    pub async fn operator_refund_order(
        &self,
        actor: crate::Actor<'_>,
        order_id: i64,
        refund_no: &str,
        amount_fen: i64,
        reason: &str,
    ) -> Result<Refund> {
        let mut tx = self.begin_write().await?;
        let refund = refund_in(&mut tx, order_id, refund_no, amount_fen, reason, "pending").await?;
        if refund.new {
            crate::console::audit(
                &mut tx,
                actor,
                "order.refund",
                &format!("order:{} {}", refund.order.id, refund.order.out_trade_no),
                &serde_json::json!({ "refundedFen": refund.order.refunded_fen - amount_fen }).to_string(),
                &serde_json::json!({ "refundNo": refund_no, "amountFen": amount_fen, "reason": reason })
                    .to_string(),
            )
            .await?;
        }
        tx.commit().await?;
        Ok(refund)
    }

    /// Records the provider's answer to a refund: `succeeded` with its refund number, or still
    /// `pending` with why the last attempt failed.
    ///
    /// A success reported for a refund that was given up (the provider paid after all — it
    /// should not, as giving up asks it first and holds the refund meanwhile) is kept on the
    /// refund for the operator, and `Ok(false)` says so.
    pub async fn settle_refund(
        &self,
        refund_no: &str,
        succeeded: bool,
        provider_refund_no: Option<&str>,
        error: Option<&str>,
    ) -> Result<bool> {
        let now = now_ms();
        let done = sqlx::query(
            "UPDATE order_refunds SET status = CASE WHEN $1 = 1 THEN 'succeeded' ELSE status END, \
             provider_refund_no = COALESCE($2, provider_refund_no), error = $3, updated_at = $4, \
             attempt_until = 0 WHERE refund_no = $5 AND status IN ('pending', 'abandoning')",
        )
        .bind(i64::from(succeeded))
        .bind(provider_refund_no)
        .bind(error)
        .bind(now)
        .bind(refund_no)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() > 0 || !succeeded {
            return Ok(true);
        }
        let late = sqlx::query(
            "UPDATE order_refunds SET error = $1, provider_refund_no = COALESCE($2, provider_refund_no), \
             updated_at = $3 WHERE refund_no = $4 AND status = 'abandoned'",
        )
        .bind("支付服务商在放弃之后仍完成了这笔退款：用户已收到退款，但收回的余额或套餐次数已还给用户，请人工核对")
        .bind(provider_refund_no)
        .bind(now)
        .bind(refund_no)
        .execute(&self.pool)
        .await?;
        Ok(late.rows_affected() == 0)
    }

    /// Takes a pending refund for one attempt at the provider: `false` when another attempt
    /// holds it, it is being given up, or it is settled.
    pub async fn claim_refund_attempt(&self, refund_no: &str) -> Result<bool> {
        let now = now_ms();
        let claimed = sqlx::query(
            "UPDATE order_refunds SET attempt_until = $1 \
             WHERE refund_no = $2 AND status = 'pending' AND attempt_until <= $3",
        )
        .bind(now + REFUND_ATTEMPT_MS)
        .bind(refund_no)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(claimed.rows_affected() == 1)
    }

    /// Starts giving a refund up: it becomes `abandoning` (no attempt will ask the provider to
    /// make it any more) if no attempt holds it and the last one is at least `quiet_ms` old.
    /// Conflicts: `refund_not_pending`, `refund_in_flight`, `refund_too_recent`.
    pub async fn begin_abandon(&self, refund_no: &str, quiet_ms: i64) -> Result<RefundRecord> {
        let now = now_ms();
        let taken = sqlx::query(
            "UPDATE order_refunds SET status = 'abandoning', attempt_until = $1 \
             WHERE refund_no = $2 AND status IN ('pending', 'abandoning') AND attempt_until <= $3 \
             AND updated_at <= $4",
        )
        .bind(now + REFUND_ATTEMPT_MS)
        .bind(refund_no)
        .bind(now)
        .bind(now - quiet_ms)
        .execute(&self.pool)
        .await?;
        let refund = self.refund_by_no(refund_no).await?;
        if taken.rows_affected() == 1 {
            return Ok(refund);
        }
        Err(StoreError::Conflict(
            if !matches!(refund.status.as_str(), "pending" | "abandoning") {
                "refund_not_pending"
            } else if refund.attempt_until > now {
                "refund_in_flight"
            } else {
                "refund_too_recent"
            },
        ))
    }

    /// Gives a refund being given up back to the retries (the provider could not say).
    pub async fn cancel_abandon(&self, refund_no: &str) -> Result<()> {
        sqlx::query(
            "UPDATE order_refunds SET status = 'pending', attempt_until = 0 \
             WHERE refund_no = $1 AND status = 'abandoning'",
        )
        .bind(refund_no)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Gives up a refund the provider never made (it refused it for good, or never received
    /// it), after `begin_abandon` and the provider's word: the refund becomes `abandoned`, the
    /// order's refunded amount goes back down, and exactly what writing the refund took back —
    /// the balance credited by a top-up, a package's uses — is the user's again, in one
    /// transaction with its ledger row and audit entry.
    pub async fn abandon_refund(
        &self,
        actor: crate::Actor<'_>,
        refund_no: &str,
        reason: &str,
    ) -> Result<RefundRecord> {
        let mut tx = self.begin_write().await?;
        let now = now_ms();
        let refund = sqlx::query(&format!(
            "SELECT {REFUND_COLUMNS} FROM order_refunds WHERE refund_no = $1"
        ))
        .bind(refund_no)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let refund = refund_from_row(&refund)?;
        let abandoned = sqlx::query(
            "UPDATE order_refunds SET status = 'abandoned', error = $1, updated_at = $2, attempt_until = 0 \
             WHERE refund_no = $3 AND status = 'abandoning'",
        )
        .bind(format!("已放弃：{reason}"))
        .bind(now)
        .bind(refund_no)
        .execute(&mut *tx)
        .await?;
        if abandoned.rows_affected() == 0 {
            return Err(StoreError::Conflict("refund_not_pending"));
        }
        // The order's row first (locked by the update on PostgreSQL), as a refund takes it.
        let moved = sqlx::query(
            "UPDATE orders SET refunded_fen = refunded_fen - $1, \
             status = CASE WHEN status = 'refunded' THEN 'paid' ELSE status END, updated_at = $2 \
             WHERE id = $3 AND refunded_fen >= $1",
        )
        .bind(refund.amount_fen)
        .bind(now)
        .bind(refund.order_id)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 0 {
            return Err(StoreError::Conflict("refund_not_pending"));
        }
        let row = sqlx::query(&format!("SELECT {ORDER_COLUMNS} FROM orders WHERE id = $1"))
            .bind(refund.order_id)
            .fetch_one(&mut *tx)
            .await?;
        let order = order_from_row(&row)?;
        let id = order.id.to_string();
        let what = if order.kind == OrderKind::Package {
            format!("已恢复套餐 {} 次", refund.taken_uses)
        } else {
            format!(
                "已恢复余额 ¥{}.{:02}",
                refund.taken_fen / 100,
                refund.taken_fen % 100
            )
        };
        let note = format!("退款未完成：{}（{reason}），{what}", order.title);
        // The account row before the grants, as on every path that takes both.
        apply_movement(
            &mut tx,
            Movement {
                user_id: order.user_id,
                kind: LedgerKind::OrderRefund,
                delta_fen: refund.taken_fen,
                delta_free_checks: 0,
                reason: &note,
                reference: Some(("order", &id)),
            },
        )
        .await?;
        if refund.taken_uses > 0 {
            sqlx::query("UPDATE account_grants SET remaining = remaining + $1 WHERE order_id = $2")
                .bind(refund.taken_uses)
                .bind(order.id)
                .execute(&mut *tx)
                .await?;
        }
        crate::console::audit(
            &mut tx,
            actor,
            "order.refund_abandon",
            &format!("order:{} {}", order.id, order.out_trade_no),
            &serde_json::json!({ "refundNo": refund_no, "status": "pending", "refundedFen": order.refunded_fen + refund.amount_fen })
                .to_string(),
            &serde_json::json!({ "refundNo": refund_no, "status": "abandoned", "refundedFen": order.refunded_fen, "reason": reason })
                .to_string(),
        )
        .await?;
        let row = sqlx::query(&format!(
            "SELECT {REFUND_COLUMNS} FROM order_refunds WHERE refund_no = $1"
        ))
        .bind(refund_no)
        .fetch_one(&mut *tx)
        .await?;
        let abandoned = refund_from_row(&row)?;
        tx.commit().await?;
        Ok(abandoned)
    }

    /// Per order, the fen of its refunds the provider has not confirmed (what the buyer's
    /// list shows as 退款处理中 rather than refunded).
    pub async fn pending_refund_fen(&self, order_ids: &[i64]) -> Result<HashMap<i64, i64>> {
        let mut out = HashMap::new();
        for chunk in order_ids.chunks(200) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "SELECT order_id, CAST(SUM(amount_fen) AS BIGINT) AS fen FROM order_refunds \
                 WHERE status IN ('pending', 'abandoning') AND order_id IN ({}) GROUP BY order_id",
                marks.join(", ")
            );
            let mut query = sqlx::query(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            for row in query.fetch_all(&self.pool).await? {
                let fen: i64 = row.try_get("fen")?;
                out.insert(row.try_get::<i64, _>("order_id")?, fen);
            }
        }
        Ok(out)
    }

    /// Refunds the provider has not confirmed yet, those asked least recently first (so refunds
    /// a provider keeps refusing do not hold up the others).
    pub async fn pending_refunds(&self, limit: i64) -> Result<Vec<RefundRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {REFUND_COLUMNS} FROM order_refunds WHERE status = 'pending' ORDER BY updated_at, created_at LIMIT $1"
        ))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(refund_from_row).collect()
    }

    /// A refund by our refund number.
    pub async fn refund_by_no(&self, refund_no: &str) -> Result<RefundRecord> {
        let row = sqlx::query(&format!(
            "SELECT {REFUND_COLUMNS} FROM order_refunds WHERE refund_no = $1"
        ))
        .bind(refund_no)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        refund_from_row(&row)
    }

    /// The refunds of an order, oldest first.
    pub async fn refunds_of(&self, order_id: i64) -> Result<Vec<RefundRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {REFUND_COLUMNS} FROM order_refunds WHERE order_id = $1 ORDER BY created_at"
        ))
        .bind(order_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(refund_from_row).collect()
    }

    /// An order by id, whoever bought it (the console).
    pub async fn order_by_id(&self, order_id: i64) -> Result<Order> {
        let row = sqlx::query(&format!("SELECT {ORDER_COLUMNS} FROM orders WHERE id = $1"))
            .bind(order_id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::NotFound)?;
        order_from_row(&row)
    }
}

const REFUND_COLUMNS: &str = "refund_no, order_id, amount_fen, reason, status, provider_refund_no, error, created_at, updated_at, attempt_until, taken_fen, taken_uses";

/// A refund as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundRecord {
    pub refund_no: String,
    pub order_id: i64,
    pub amount_fen: i64,
    pub reason: String,
    /// `pending` (the provider has not confirmed it), `succeeded`, or `abandoned` (never made;
    /// what it took back was restored).
    pub status: String,
    pub provider_refund_no: Option<String>,
    /// Why the provider's last attempt failed (a pending refund is asked again).
    pub error: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// An attempt at the provider holds the refund until then (Unix ms).
    pub attempt_until: i64,
    /// What writing it took back: balance (fen) and package uses.
    pub taken_fen: i64,
    pub taken_uses: i64,
}

fn refund_from_row(row: &AnyRow) -> Result<RefundRecord> {
    Ok(RefundRecord {
        refund_no: row.try_get("refund_no")?,
        order_id: row.try_get("order_id")?,
        amount_fen: row.try_get("amount_fen")?,
        reason: row.try_get("reason")?,
        status: row.try_get("status")?,
        provider_refund_no: row.try_get("provider_refund_no")?,
        error: row.try_get("error")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        attempt_until: row.try_get("attempt_until")?,
        taken_fen: row.try_get("taken_fen")?,
        taken_uses: row.try_get("taken_uses")?,
    })
}

/// How long one attempt at the provider holds a refund (a call times out well within it).
pub const REFUND_ATTEMPT_MS: i64 = 60_000;

/// Keeps what writing a refund took back, for giving it up exactly.
async fn record_taken(tx: &mut AnyConnection, refund_no: &str, fen: i64, uses: i64) -> Result<()> {
    sqlx::query("UPDATE order_refunds SET taken_fen = $1, taken_uses = $2 WHERE refund_no = $3")
        .bind(fen)
        .bind(uses)
        .bind(refund_no)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// The part of a top-up's (or task payment's) credit that `refunded` fen of it take back,
/// bonus included, rounded in the user's favour.
fn credit_share(order: &Order, refunded: i64) -> i64 {
    order.credit_fen * refunded / order.amount_fen
}

/// The uses of a package's grant that `refunded` fen of it take back, rounded up.
fn grant_share(order: &Order, refunded: i64) -> i64 {
    (order.grant_amount * refunded).div_euclid(order.amount_fen)
        + i64::from((order.grant_amount * refunded) % order.amount_fen != 0)
}

/// Writes a refund of `amount_fen` under `refund_no` (once: the same number again changes
/// nothing) and takes back in proportion what the order gave.
async fn refund_in(
    tx: &mut AnyConnection,
    order_id: i64,
    refund_no: &str,
    amount_fen: i64,
    reason: &str,
    status: &str,
) -> Result<Refund> {
    {
        let now = now_ms();
        let earlier =
            sqlx::query("SELECT order_id, amount_fen FROM order_refunds WHERE refund_no = $1")
                .bind(refund_no)
                .fetch_optional(&mut *tx)
                .await?;
        let row = sqlx::query(&format!("SELECT {ORDER_COLUMNS} FROM orders WHERE id = $1"))
            .bind(order_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::NotFound)?;
        let order = order_from_row(&row)?;
        if let Some(earlier) = earlier {
            let (earlier_order, earlier_amount): (i64, i64) =
                (earlier.try_get("order_id")?, earlier.try_get("amount_fen")?);
            if earlier_order != order_id || earlier_amount != amount_fen {
                return Err(StoreError::Conflict("refund_no_reused"));
            }
            return Ok(Refund {
                refund_no: refund_no.to_string(),
                order,
                amount_fen,
                new: false,
            });
        }
        if !matches!(order.status, OrderStatus::Paid) {
            return Err(StoreError::Conflict("order_not_paid"));
        }
        if amount_fen <= 0 || order.refunded_fen + amount_fen > order.amount_fen {
            return Err(StoreError::Conflict("refund_exceeds_payment"));
        }
        // The writer's own first attempt at the provider holds the refund for a while.
        sqlx::query(
            "INSERT INTO order_refunds (refund_no, order_id, amount_fen, reason, created_at, status, updated_at, attempt_until) \
             VALUES ($1, $2, $3, $4, $5, $6, $5, $7)",
        )
        .bind(refund_no)
        .bind(order_id)
        .bind(amount_fen)
        .bind(reason)
        .bind(now)
        .bind(status)
        .bind(now + REFUND_ATTEMPT_MS)
        .execute(&mut *tx)
        .await?;
        let moved = sqlx::query(
            "UPDATE orders SET refunded_fen = refunded_fen + $1, \
             status = CASE WHEN refunded_fen + $1 >= amount_fen THEN 'refunded' ELSE status END, \
             updated_at = $2 WHERE id = $3 AND status = 'paid' AND refunded_fen + $1 <= amount_fen",
        )
        .bind(amount_fen)
        .bind(now)
        .bind(order_id)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 0 {
            return Err(StoreError::Conflict("refund_exceeds_payment"));
        }
        let id = order.id.to_string();
        let reason = format!(
            "订单退款：{}（{}），¥{}.{:02} 原路退回",
            order.title,
            reason,
            amount_fen / 100,
            amount_fen % 100
        );
        match order.kind {
            OrderKind::TopUp | OrderKind::Task => {
                // The credit in proportion (bonus included), rounded in the user's favour — over
                // all the order's refunds together, so refunding in many small parts takes back
                // what one refund of the sum would.
                let taken = credit_share(&order, order.refunded_fen + amount_fen)
                    - credit_share(&order, order.refunded_fen);
                record_taken(&mut *tx, refund_no, taken, 0).await?;
                // A top-up's bonus goes back with it, in proportion: the row says why more than
                // the refunded money leaves the balance.
                let reason = if taken > amount_fen {
                    format!(
                        "{reason}，收回余额 ¥{}.{:02}（含赠送 ¥{}.{:02}）",
                        taken / 100,
                        taken % 100,
                        (taken - amount_fen) / 100,
                        (taken - amount_fen) % 100
                    )
                } else {
                    reason
                };
                apply_movement(
                    &mut *tx,
                    Movement {
                        user_id: order.user_id,
                        kind: LedgerKind::OrderRefund,
                        delta_fen: -taken,
                        delta_free_checks: 0,
                        reason: &reason,
                        reference: Some(("order", &id)),
                    },
                )
                .await?;
            }
            OrderKind::Package => {
                // The grant in proportion, rounded up — over all the order's refunds together, so
                // small refunds do not each take back a whole use.
                let taken = grant_share(&order, order.refunded_fen + amount_fen)
                    - grant_share(&order, order.refunded_fen);
                record_taken(&mut *tx, refund_no, 0, taken).await?;
                // The account row before the grants, as on every path that takes both.
                apply_movement(
                    &mut *tx,
                    Movement {
                        user_id: order.user_id,
                        kind: LedgerKind::OrderRefund,
                        delta_fen: 0,
                        delta_free_checks: 0,
                        reason: &reason,
                        reference: Some(("order", &id)),
                    },
                )
                .await?;
                // What was used is not refunded, as a top-up's spent credit is not: the uses this
                // refund takes back must still be there (checked in the update itself, so a use
                // taken meanwhile cannot slip between a read and the write).
                if taken > 0 {
                    let kept = sqlx::query(
                        "UPDATE account_grants SET remaining = remaining - $1 \
                         WHERE order_id = $2 AND remaining >= $1",
                    )
                    .bind(taken)
                    .bind(order.id)
                    .execute(&mut *tx)
                    .await?;
                    if kept.rows_affected() == 0 {
                        return Err(StoreError::Conflict("package_used"));
                    }
                }
            }
        }
        let row = sqlx::query(&format!("SELECT {ORDER_COLUMNS} FROM orders WHERE id = $1"))
            .bind(order_id)
            .fetch_one(&mut *tx)
            .await?;
        let order = order_from_row(&row)?;
        Ok(Refund {
            refund_no: refund_no.to_string(),
            order,
            amount_fen,
            new: true,
        })
    }
}

impl Store {
    /// An account's grants that are still usable at `now` (unexpired, something left), those
    /// ending soonest first — the order they are consumed in.
    pub async fn active_grants(&self, user_id: i64, now: i64) -> Result<Vec<Grant>> {
        let rows = sqlx::query(&format!(
            "SELECT {GRANT_COLUMNS} FROM account_grants g JOIN orders o ON o.id = g.order_id \
             WHERE g.user_id = $1 AND g.remaining > 0 AND g.expires_at > $2 ORDER BY g.expires_at, g.id"
        ))
        .bind(user_id)
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(grant_from_row).collect()
    }

    /// Moves the user's grants `ms` closer to their expiry (tests of what expiry does cannot
    /// wait for the clock).
    #[doc(hidden)]
    pub async fn age_grants_for_tests(&self, user_id: i64, ms: i64) -> Result<()> {
        sqlx::query("UPDATE account_grants SET expires_at = expires_at - $1 WHERE user_id = $2")
            .bind(ms)
            .bind(user_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// What the user's packages paid for, newest first.
    pub async fn grant_uses(&self, user_id: i64, limit: i64, offset: i64) -> Result<Vec<GrantUse>> {
        let rows = sqlx::query(
            "SELECT u.id, u.grant_id, g.kind, o.title, u.task_id, u.units, u.reason, u.created_at \
             FROM grant_uses u JOIN account_grants g ON g.id = u.grant_id JOIN orders o ON o.id = g.order_id \
             WHERE u.user_id = $1 ORDER BY u.id DESC LIMIT $2 OFFSET $3",
        )
        .bind(user_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let kind: String = row.try_get("kind")?;
                Ok(GrantUse {
                    id: row.try_get("id")?,
                    grant_id: row.try_get("grant_id")?,
                    kind: GrantKind::parse(&kind)
                        .ok_or(StoreError::Conflict("grant_kind_unknown"))?,
                    title: row.try_get("title")?,
                    task_id: row.try_get("task_id")?,
                    units: row.try_get("units")?,
                    reason: row.try_get("reason")?,
                    created_at: row.try_get("created_at")?,
                })
            })
            .collect()
    }
}
