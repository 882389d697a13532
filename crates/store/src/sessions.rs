use crate::{Result, Store, StoreError, User, now_ms, secrets};
use sqlx::{AnyConnection, Row};

/// What a new login records about where it came from.
#[derive(Debug, Clone, Default)]
pub struct NewSession<'a> {
    pub user_id: i64,
    /// "password", "register", "qr:local", ...
    pub via: &'a str,
    pub ip: &'a str,
    pub user_agent: &'a str,
    pub ttl_ms: i64,
}

/// A valid session and its user, as resolved from a bearer token.
#[derive(Debug, Clone)]
pub struct SessionUser {
    pub session_id: i64,
    pub token_hash: String,
    /// How the session was signed in: `password`, `register`, `qr:<provider>`.
    pub via: String,
    /// When the session was signed in, Unix milliseconds.
    pub signed_in_at: i64,
    pub user: User,
}

impl Store {
    /// Starts a session and returns the bearer token; only its digest is stored.
    pub async fn create_session(&self, new: NewSession<'_>) -> Result<String> {
        let mut conn = self.pool.acquire().await?;
        insert_session(&mut conn, new).await
    }

    /// Resolves a bearer token to its user; expired, revoked and unknown tokens are `NotFound`.
    pub async fn session_user(&self, token: &str) -> Result<SessionUser> {
        let digest = secrets::token_digest(token);
        let row = sqlx::query(
            "SELECT s.id AS session_id, s.via, s.created_at AS signed_in_at, u.id, u.login_name, u.avatar, u.introduction, u.is_operator, u.created_at \
             FROM sessions s JOIN users u ON u.id = s.user_id \
             WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2 AND u.disabled_at IS NULL",
        )
        .bind(&digest)
        .bind(now_ms())
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        Ok(SessionUser {
            session_id: row.try_get("session_id")?,
            token_hash: digest,
            via: row.try_get("via")?,
            signed_in_at: row.try_get("signed_in_at")?,
            user: User {
                id: row.try_get("id")?,
                login_name: row.try_get("login_name")?,
                avatar: row.try_get("avatar")?,
                introduction: row.try_get("introduction")?,
                is_operator: row.try_get::<i64, _>("is_operator")? != 0,
                disabled: false,
                created_at: row.try_get("created_at")?,
            },
        })
    }

    pub async fn revoke_session(&self, session_id: i64) -> Result<()> {
        sqlx::query("UPDATE sessions SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
            .bind(now_ms())
            .bind(session_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

pub(crate) async fn insert_session(
    conn: &mut AnyConnection,
    new: NewSession<'_>,
) -> Result<String> {
    let token = secrets::new_token();
    let now = now_ms();
    // A disabled user gets no session, however they signed in (password, QR, registration).
    let inserted = sqlx::query(
        "INSERT INTO sessions (user_id, token_hash, via, ip, user_agent, created_at, expires_at) \
         SELECT id, $2, $3, $4, $5, $6, $7 FROM users WHERE id = $1 AND disabled_at IS NULL",
    )
    .bind(new.user_id)
    .bind(secrets::token_digest(&token))
    .bind(new.via)
    .bind(new.ip)
    .bind(truncate(new.user_agent, 300))
    .bind(now)
    .bind(now + new.ttl_ms)
    .execute(&mut *conn)
    .await?;
    if inserted.rows_affected() == 0 {
        return Err(StoreError::Disabled);
    }
    Ok(token)
}

pub(crate) fn truncate(s: &str, max_chars: usize) -> &str {
    match s.char_indices().nth(max_chars) {
        Some((idx, _)) => &s[..idx],
        None => s,
    }
}
