//! `store` owns every SQL statement of Wenjian: migrations, users and sessions, QR logins,
//! accounts and their ledger. One code path serves SQLite (embedded default) and PostgreSQL
//! (chosen by the database URL) through sqlx's `Any` driver; statements use `$n` placeholders,
//! which both backends accept.

mod accounts;
mod catalogue;
mod console;
mod error;
mod files;
mod library;
mod library_runs;
mod moving;
mod objects;
mod ops;
mod orders;
mod postings;
mod prompts;
mod qr;
mod reports;
pub mod secrets;
mod sessions;
mod tasks;
pub mod testing;
mod throttle;
mod users;

pub use accounts::{Account, LedgerEntry, LedgerKind, MAX_ACCOUNT_AMOUNT};
pub use catalogue::{
    CatalogueCounts, CatalogueEntry, CatalogueFilter, Catalogued, ScopeCount, text_hash,
};
pub use console::{
    Actor, AuditEntry, ConfigEntry, OrderFilter, OrderSummary, SiteCounts, TaskFilter, TaskSummary,
    UserSummary,
};
pub use error::StoreError;
pub use files::{FileStore, StoredFile};
pub use library::SqlLibrary;
pub use moving::CopiedTable;
pub use objects::{Bucket, BucketSettings};
pub use ops::{QueueDepth, TaskLatency, WorkerPresence};
pub use orders::{
    Grant, GrantKind, GrantUse, NewOrder, NewProduct, Order, OrderKind, OrderStatus, PaymentNotice,
    PaymentOutcome, Product, Refund, RefundRecord,
};
pub use prompts::{PromptChange, PromptVersion};
pub use qr::{QrClaim, QrLogin, QrStatus};
pub use reports::{NewSnapshot, ReportSnapshot, format_report_code, normalize_report_code};
pub use sessions::{NewSession, SessionUser};
pub use tasks::{Charge, ClaimedJob, GrantCharge, Share, Task, TaskStatus, backoff_ms};
pub use throttle::{QR_SWEEP_GRACE_MS, RateDecision, Swept};
pub use users::User;

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{AnyPool, Executor};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub type Result<T> = std::result::Result<T, StoreError>;

/// Which database engine the URL selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn from_url(url: &str) -> Result<Self> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Backend::Postgres)
        } else {
            Err(StoreError::Config(format!(
                "不支持的数据库地址：{url}（应以 sqlite: 或 postgres: 开头）"
            )))
        }
    }
}

/// The handle every other crate uses to reach the database.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

/// `text` for a LIKE pattern with its wildcards taken literally (a backslash escapes them; every
/// query using it says `ESCAPE '\'`).
pub(crate) fn like_literal(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// `%query%` for LIKE (lower case), with the pattern characters of the query taken literally.
pub(crate) fn like_pattern(query: &str) -> String {
    format!("%{}%", like_literal(query.trim()).to_lowercase())
}

/// Current time in Unix milliseconds, the unit of every timestamp column.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Store {
    /// Connects to the database named by `url`, creating the SQLite file (and its folder) if needed.
    pub async fn connect(url: &str) -> Result<Self> {
        install_default_drivers();
        let backend = Backend::from_url(url)?;
        if backend == Backend::Sqlite {
            ensure_sqlite_parent_dir(url)?;
        }
        let pool = AnyPoolOptions::new()
            .max_connections(if backend == Backend::Sqlite { 8 } else { 16 })
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        if backend == Backend::Sqlite {
            // WAL lets readers proceed while a writer commits; the setting persists in the file.
            pool.execute("PRAGMA journal_mode=WAL").await?;
        }
        Ok(Store { pool, backend })
    }

    /// Connects and brings the schema up to date.
    pub async fn open(url: &str) -> Result<Self> {
        let store = Self::connect(url).await?;
        store.migrate().await?;
        Ok(store)
    }

    pub async fn migrate(&self) -> Result<()> {
        match self.backend {
            Backend::Sqlite => {
                sqlx::migrate!("./migrations/sqlite")
                    .run(&self.pool)
                    .await?
            }
            Backend::Postgres => {
                sqlx::migrate!("./migrations/postgres")
                    .run(&self.pool)
                    .await?
            }
        }
        Ok(())
    }

    /// A transaction that will write. On SQLite it takes the write lock at once (`BEGIN
    /// IMMEDIATE`), so concurrent writers wait their turn instead of failing when a read inside
    /// the transaction would otherwise have to be upgraded.
    pub(crate) async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>> {
        Ok(match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn ensure_sqlite_parent_dir(url: &str) -> Result<()> {
    let path = url
        .trim_start_matches("sqlite://")
        .trim_start_matches("sqlite:");
    let path = path.split('?').next().unwrap_or("");
    if path.is_empty() || path == ":memory:" {
        return Ok(());
    }
    if let Some(parent) = std::path::Path::new(path).parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|e| {
            StoreError::Config(format!("无法创建数据目录 {}：{e}", parent.display()))
        })?;
    }
    Ok(())
}
