//! Versions of the editable prompts (`llm::prompts`): every save, return to an older version or
//! to the built-in text adds a version, written with its audit entry in one transaction. The
//! latest version of each prompt is the one in force in every process.

use crate::console::{Actor, audit};
use crate::{Result, Store, StoreError, now_ms};
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::HashMap;

/// One version of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptVersion {
    pub id: i64,
    pub name: String,
    /// The text (empty for a return to the built-in text).
    pub body: String,
    pub is_builtin: bool,
    pub note: String,
    pub actor_name: String,
    pub created_at: i64,
}

/// What a new version says.
#[derive(Debug, Clone, Copy)]
pub enum PromptChange<'a> {
    /// This text.
    Text(&'a str),
    /// Back to the text the release ships with.
    Builtin,
}

const VERSION_COLUMNS: &str = "id, name, body, is_builtin, note, actor_name, created_at";

fn version_from_row(row: &AnyRow) -> Result<PromptVersion> {
    Ok(PromptVersion {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        body: row.try_get("body")?,
        is_builtin: row.try_get::<i64, _>("is_builtin")? != 0,
        note: row.try_get("note")?,
        actor_name: row.try_get("actor_name")?,
        created_at: row.try_get("created_at")?,
    })
}

/// The latest version of every prompt, as a `WHERE` over `prompt_versions p`.
const LATEST: &str = "p.id IN (SELECT MAX(id) FROM prompt_versions GROUP BY name)";

impl Store {
    /// The latest version of each prompt that has one.
    pub async fn latest_prompt_versions(&self) -> Result<Vec<PromptVersion>> {
        let rows = sqlx::query(&format!(
            "SELECT {VERSION_COLUMNS} FROM prompt_versions p WHERE {LATEST} ORDER BY name"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(version_from_row).collect()
    }

    /// The texts in force that replace built-in ones (name → text).
    pub async fn prompt_overrides(&self) -> Result<HashMap<String, String>> {
        Ok(self
            .latest_prompt_versions()
            .await?
            .into_iter()
            .filter(|v| !v.is_builtin)
            .map(|v| (v.name, v.body))
            .collect())
    }

    /// The newest version id of all prompts (0 when none): a process reloads when it changes.
    pub async fn prompt_stamp(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar::<_, Option<i64>>("SELECT MAX(id) FROM prompt_versions")
                .fetch_one(&self.pool)
                .await?
                .unwrap_or(0),
        )
    }

    /// A prompt's versions, newest first.
    pub async fn prompt_versions(&self, name: &str) -> Result<Vec<PromptVersion>> {
        let rows = sqlx::query(&format!(
            "SELECT {VERSION_COLUMNS} FROM prompt_versions WHERE name = $1 ORDER BY id DESC"
        ))
        .bind(name)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(version_from_row).collect()
    }

    /// Adds a version of `name` and its audit entry. `Conflict("prompt_unchanged")` when it
    /// says what is in force already (`builtin` is the built-in text, to compare with).
    pub async fn save_prompt_version(
        &self,
        actor: Actor<'_>,
        name: &str,
        change: PromptChange<'_>,
        builtin: &str,
        note: &str,
    ) -> Result<PromptVersion> {
        let mut tx = self.begin_write().await?;
        let current: Option<(String, i64)> = sqlx::query_as(
            "SELECT body, is_builtin FROM prompt_versions WHERE name = $1 ORDER BY id DESC LIMIT 1",
        )
        .bind(name)
        .fetch_optional(&mut *tx)
        .await?;
        let in_force = match &current {
            Some((body, 0)) => body.as_str(),
            _ => builtin,
        };
        let (body, is_builtin, action) = match change {
            PromptChange::Text(text) => (text, false, "prompt.save"),
            PromptChange::Builtin => ("", true, "prompt.reset"),
        };
        let same = match change {
            PromptChange::Text(text) => text == in_force,
            PromptChange::Builtin => current.as_ref().is_none_or(|(_, b)| *b != 0),
        };
        if same {
            return Err(StoreError::Conflict("prompt_unchanged"));
        }
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO prompt_versions (name, body, is_builtin, note, actor_id, actor_name, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(name)
        .bind(body)
        .bind(i64::from(is_builtin))
        .bind(note)
        .bind(actor.id)
        .bind(actor.name)
        .bind(now_ms())
        .fetch_one(&mut *tx)
        .await?;
        let chars = |text: &str| text.chars().count();
        audit(
            &mut tx,
            actor,
            action,
            &format!("prompt:{name}"),
            &serde_json::json!({ "chars": chars(in_force) }).to_string(),
            &serde_json::json!({ "version": id, "chars": chars(if is_builtin { builtin } else { body }), "note": note })
                .to_string(),
        )
        .await?;
        let row = sqlx::query(&format!(
            "SELECT {VERSION_COLUMNS} FROM prompt_versions WHERE id = $1"
        ))
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
        let version = version_from_row(&row)?;
        tx.commit().await?;
        Ok(version)
    }
}
