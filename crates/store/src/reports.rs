//! Report verification codes: one per finished task, made the first time its report is shown.

use crate::tasks::TaskStatus;
use crate::{Result, Store, StoreError, now_ms};
use rand::Rng;
use rand::rngs::OsRng;

/// Letters and digits that cannot be mistaken for one another when typed from paper.
const CODE_ALPHABET: &[u8] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ";
const CODE_LEN: usize = 16;

fn new_code() -> String {
    (0..CODE_LEN)
        .map(|_| CODE_ALPHABET[OsRng.gen_range(0..CODE_ALPHABET.len())] as char)
        .collect()
}

/// The code as stored: typed codes may have lower case, spaces or dashes (it is printed in
/// groups of four).
pub fn normalize_report_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// `ABCD-EFGH-…`, as printed on the cover.
pub fn format_report_code(code: &str) -> String {
    code.as_bytes()
        .chunks(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join("-")
}

/// The official report of a finished task as it stood when the task finished.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportSnapshot {
    /// The verification code, as stored (no dashes).
    pub code: String,
    /// The task it was made from.
    pub task_id: i64,
    pub user_id: i64,
    pub kind: String,
    pub report_number: String,
    /// The record's title when the task finished.
    pub title: String,
    pub checked_at: i64,
    /// JSON of the figures and settings (the server's shape); empty until taken.
    pub summary: String,
    /// When the owner deleted the record; the snapshot stays verifiable.
    pub deleted_at: Option<i64>,
}

/// What a finished task's official report is made of.
#[derive(Debug, Clone)]
pub struct NewSnapshot<'a> {
    pub task_id: i64,
    pub user_id: i64,
    pub kind: &'a str,
    pub report_number: &'a str,
    pub title: &'a str,
    pub checked_at: i64,
    pub summary: &'a str,
}

const SNAPSHOT_COLUMNS: &str = "code, source_task_id AS task_id, user_id, kind, report_number, title, checked_at, summary, deleted_at";

fn snapshot_from_row(row: &sqlx::any::AnyRow) -> Result<ReportSnapshot> {
    use sqlx::Row;
    Ok(ReportSnapshot {
        code: row.try_get("code")?,
        task_id: row.try_get("task_id")?,
        user_id: row.try_get("user_id")?,
        kind: row.try_get("kind")?,
        report_number: row.try_get("report_number")?,
        title: row.try_get("title")?,
        checked_at: row.try_get("checked_at")?,
        summary: row.try_get("summary")?,
        deleted_at: row.try_get("deleted_at")?,
    })
}

impl Store {
    /// Takes the official snapshot of a task as it finishes. Until its code is issued a later
    /// call replaces it (a job run again after its worker died measures again); once issued the
    /// snapshot never changes, except that one without a summary (a code made before snapshots
    /// existed) gets it filled. A task run again after an issued report gets a new snapshot,
    /// its report number suffixed with the run (`WJ…-000042-2`).
    pub async fn take_report_snapshot(&self, new: &NewSnapshot<'_>) -> Result<ReportSnapshot> {
        let earlier: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM report_snapshots WHERE source_task_id = $1 AND task_id IS NULL",
        )
        .bind(new.task_id)
        .fetch_one(&self.pool)
        .await?;
        let number = match earlier {
            0 => new.report_number.to_string(),
            n => format!("{}-{}", new.report_number, n + 1),
        };
        sqlx::query(
            "INSERT INTO report_snapshots (code, task_id, source_task_id, user_id, kind, report_number, title, checked_at, summary, created_at) \
             VALUES ($1, $2, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (task_id) DO UPDATE SET report_number = excluded.report_number, title = excluded.title, \
             checked_at = excluded.checked_at, summary = excluded.summary \
             WHERE report_snapshots.summary = '' OR report_snapshots.issued_at IS NULL",
        )
        .bind(new_code())
        .bind(new.task_id)
        .bind(new.user_id)
        .bind(new.kind)
        .bind(number)
        .bind(new.title)
        .bind(new.checked_at)
        .bind(new.summary)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        let row = sqlx::query(&format!(
            "SELECT {SNAPSHOT_COLUMNS} FROM report_snapshots WHERE report_snapshots.task_id = $1"
        ))
        .bind(new.task_id)
        .fetch_one(&self.pool)
        .await?;
        snapshot_from_row(&row)
    }

    /// The snapshot of a user's finished task, marked issued (its code shown) from now on;
    /// `None` when none was taken yet.
    pub async fn issue_report_snapshot(
        &self,
        task_id: i64,
        user_id: i64,
    ) -> Result<Option<ReportSnapshot>> {
        let task = self.task(task_id, user_id).await?;
        if task.status != TaskStatus::Done {
            return Err(StoreError::Conflict("report not finished"));
        }
        sqlx::query(
            "UPDATE report_snapshots SET issued_at = $1 WHERE report_snapshots.task_id = $2 AND user_id = $3 AND issued_at IS NULL",
        )
        .bind(now_ms())
        .bind(task_id)
        .bind(user_id)
        .execute(&self.pool)
        .await?;
        let row = sqlx::query(&format!(
            "SELECT {SNAPSHOT_COLUMNS} FROM report_snapshots WHERE report_snapshots.task_id = $1 AND user_id = $2"
        ))
        .bind(task_id)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(snapshot_from_row).transpose()
    }

    /// The issued snapshot a verification code belongs to, whoever owns it and whether or not
    /// its record still exists.
    pub async fn report_snapshot_by_code(&self, code: &str) -> Result<Option<ReportSnapshot>> {
        let code = normalize_report_code(code);
        if code.len() != CODE_LEN {
            return Ok(None);
        }
        let row = sqlx::query(&format!(
            "SELECT {SNAPSHOT_COLUMNS} FROM report_snapshots WHERE code = $1 AND issued_at IS NOT NULL"
        ))
        .bind(code)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(snapshot_from_row).transpose()
    }
}
