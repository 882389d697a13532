use crate::{Result, Store, StoreError, now_ms, secrets};
use sqlx::Row;
use sqlx::any::AnyRow;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub login_name: String,
    pub avatar: String,
    pub introduction: String,
    pub is_operator: bool,
    /// Disabled by an operator: no session works and none can start.
    pub disabled: bool,
    pub created_at: i64,
}

pub(crate) const USER_COLUMNS: &str =
    "id, login_name, avatar, introduction, is_operator, disabled_at, created_at";

pub(crate) fn user_from_row(row: &AnyRow) -> Result<User> {
    Ok(User {
        id: row.try_get("id")?,
        login_name: row.try_get("login_name")?,
        avatar: row.try_get("avatar")?,
        introduction: row.try_get("introduction")?,
        is_operator: row.try_get::<i64, _>("is_operator")? != 0,
        disabled: row.try_get::<Option<i64>, _>("disabled_at")?.is_some(),
        created_at: row.try_get("created_at")?,
    })
}

/// Login names are unique regardless of letter case.
fn login_key(login_name: &str) -> String {
    login_name.to_lowercase()
}

impl Store {
    /// Creates a user and their (empty) account in one transaction.
    /// A taken login name gives `StoreError::Conflict("login_name")`.
    pub async fn create_user(
        &self,
        login_name: &str,
        password: &str,
        is_operator: bool,
    ) -> Result<User> {
        let hash = secrets::hash_password(password)?;
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(&format!(
            "INSERT INTO users (login_name, login_name_key, password_hash, is_operator, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $5) RETURNING {USER_COLUMNS}"
        ))
        .bind(login_name)
        .bind(login_key(login_name))
        .bind(hash)
        .bind(i64::from(is_operator))
        .bind(now)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| {
            if StoreError::is_unique_violation(&e) {
                StoreError::Conflict("login_name")
            } else {
                e.into()
            }
        })?;
        let user = user_from_row(&row)?;
        sqlx::query("INSERT INTO accounts (user_id, updated_at) VALUES ($1, $2)")
            .bind(user.id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(user)
    }

    pub async fn user_by_id(&self, id: i64) -> Result<User> {
        let row = sqlx::query(&format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::NotFound)?;
        user_from_row(&row)
    }

    pub async fn user_by_login(&self, login_name: &str) -> Result<User> {
        let row = sqlx::query(&format!(
            "SELECT {USER_COLUMNS} FROM users WHERE login_name_key = $1"
        ))
        .bind(login_key(login_name.trim()))
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        user_from_row(&row)
    }

    /// Checks a password. `None` when the name is unknown or the password is wrong,
    /// so callers cannot tell the two apart.
    pub async fn verify_login(&self, login_name: &str, password: &str) -> Result<Option<User>> {
        let row = sqlx::query(&format!(
            "SELECT {USER_COLUMNS}, password_hash FROM users WHERE login_name_key = $1"
        ))
        .bind(login_key(login_name))
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            // Spend about the same time as a real check so timing does not reveal names.
            let _ = secrets::verify_password(password, dummy_hash());
            return Ok(None);
        };
        let hash: Option<String> = row.try_get("password_hash")?;
        match hash {
            Some(hash) if secrets::verify_password(password, &hash) => {
                Ok(Some(user_from_row(&row)?))
            }
            _ => Ok(None),
        }
    }

    /// Replaces a user's password and revokes every other session of theirs.
    pub async fn set_password(
        &self,
        user_id: i64,
        new_password: &str,
        keep_session_hash: Option<&str>,
    ) -> Result<()> {
        let hash = secrets::hash_password(new_password)?;
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let updated =
            sqlx::query("UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3")
                .bind(hash)
                .bind(now)
                .bind(user_id)
                .execute(&mut *tx)
                .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        sqlx::query(
            "UPDATE sessions SET revoked_at = $1 \
             WHERE user_id = $2 AND revoked_at IS NULL AND token_hash <> $3",
        )
        .bind(now)
        .bind(user_id)
        .bind(keep_session_hash.unwrap_or(""))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn list_users(&self) -> Result<Vec<User>> {
        let rows = sqlx::query(&format!("SELECT {USER_COLUMNS} FROM users ORDER BY id"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(user_from_row).collect()
    }
}

/// An Argon2id hash of a fixed string, used only to equalise timing for unknown names.
fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| secrets::hash_password("wenjian-timing-equaliser").unwrap_or_default())
}
