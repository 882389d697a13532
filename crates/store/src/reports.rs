//! Report verification codes: one per finished task, made the first time its report is shown.

use crate::tasks::{TASK_COLUMNS, Task, TaskStatus, task_from_row};
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

impl Store {
    /// The verification code of a user's finished task, made on first use.
    pub async fn report_code(&self, task_id: i64, user_id: i64) -> Result<String> {
        let task = self.task(task_id, user_id).await?;
        if task.status != TaskStatus::Done {
            return Err(StoreError::Conflict("report not finished"));
        }
        sqlx::query(
            "INSERT INTO report_codes (code, task_id, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (task_id) DO NOTHING",
        )
        .bind(new_code())
        .bind(task_id)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        let code: String = sqlx::query_scalar("SELECT code FROM report_codes WHERE task_id = $1")
            .bind(task_id)
            .fetch_one(&self.pool)
            .await?;
        Ok(code)
    }

    /// The finished task a verification code belongs to, whoever owns it.
    pub async fn task_by_report_code(&self, code: &str) -> Result<Option<Task>> {
        let code = normalize_report_code(code);
        if code.len() != CODE_LEN {
            return Ok(None);
        }
        let row = sqlx::query(&format!(
            "SELECT {TASK_COLUMNS} FROM tasks WHERE id = \
             (SELECT task_id FROM report_codes WHERE code = $1)"
        ))
        .bind(code)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(task_from_row).transpose()
    }
}
