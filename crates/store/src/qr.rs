use crate::accounts::grant_first_qr_bonus;
use crate::sessions::{NewSession, insert_session, truncate};
use crate::{Result, Store, StoreError, User, now_ms, secrets};
use sqlx::Row;
use sqlx::any::AnyRow;

/// Where a QR login stands, as seen at the time it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QrStatus {
    /// Shown on the desktop, not yet confirmed on a phone.
    Pending,
    /// Confirmed on a phone; the desktop has not collected its token yet.
    Confirmed,
    /// The desktop collected its token; the QR cannot be used again.
    Consumed,
    /// Not completed within its lifetime.
    Expired,
}

impl QrStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            QrStatus::Pending => "pending",
            QrStatus::Confirmed => "confirmed",
            QrStatus::Consumed => "consumed",
            QrStatus::Expired => "expired",
        }
    }
}

#[derive(Debug, Clone)]
pub struct QrLogin {
    pub id: String,
    pub provider: String,
    pub status: QrStatus,
    pub requester_ip: String,
    pub requester_agent: String,
    pub created_at: i64,
    pub expires_at: i64,
}

/// The outcome of the desktop's poll.
#[derive(Debug, Clone)]
pub enum QrClaim {
    Pending,
    /// Confirmed and now collected: the new session's token.
    LoggedIn {
        token: String,
        user: User,
        first_login_bonus: bool,
    },
    Expired,
    AlreadyUsed,
}

impl QrLogin {
    /// Whether a request from `ip` with `user_agent` comes from the very client that asked for
    /// this QR login (same address and same browser), as stored on the row.
    pub fn same_client(&self, ip: &str, user_agent: &str) -> bool {
        self.requester_ip == ip && self.requester_agent == truncate(user_agent, 300)
    }
}

fn qr_from_row(row: &AnyRow, now: i64) -> Result<QrLogin> {
    let stored: String = row.try_get("status")?;
    let expires_at: i64 = row.try_get("expires_at")?;
    let status = match stored.as_str() {
        "consumed" => QrStatus::Consumed,
        _ if expires_at <= now => QrStatus::Expired,
        "confirmed" => QrStatus::Confirmed,
        _ => QrStatus::Pending,
    };
    Ok(QrLogin {
        id: row.try_get("id")?,
        provider: row.try_get("provider")?,
        status,
        requester_ip: row.try_get("requester_ip")?,
        requester_agent: row.try_get("requester_agent")?,
        created_at: row.try_get("created_at")?,
        expires_at,
    })
}

impl Store {
    pub async fn create_qr_login(
        &self,
        provider: &str,
        ttl_ms: i64,
        requester_ip: &str,
        requester_agent: &str,
    ) -> Result<QrLogin> {
        let id = secrets::new_id();
        let now = now_ms();
        sqlx::query(
            "INSERT INTO qr_logins (id, provider, status, requester_ip, requester_agent, created_at, expires_at) \
             VALUES ($1, $2, 'pending', $3, $4, $5, $6)",
        )
        .bind(&id)
        .bind(provider)
        .bind(requester_ip)
        .bind(truncate(requester_agent, 300))
        .bind(now)
        .bind(now + ttl_ms)
        .execute(&self.pool)
        .await?;
        self.qr_login(&id).await
    }

    pub async fn qr_login(&self, id: &str) -> Result<QrLogin> {
        let row = sqlx::query(
            "SELECT id, provider, status, requester_ip, requester_agent, created_at, expires_at \
             FROM qr_logins WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?;
        qr_from_row(&row, now_ms())
    }

    /// A signed-in user approves a pending QR login. `Err(status)` says why it could not be
    /// approved (already approved, collected or expired).
    pub async fn confirm_qr_login(
        &self,
        id: &str,
        user_id: i64,
    ) -> Result<std::result::Result<(), QrStatus>> {
        let now = now_ms();
        let updated = sqlx::query(
            "UPDATE qr_logins SET status = 'confirmed', user_id = $1, confirmed_at = $2 \
             WHERE id = $3 AND status = 'pending' AND expires_at > $2",
        )
        .bind(user_id)
        .bind(now)
        .bind(id)
        .execute(&self.pool)
        .await?;
        if updated.rows_affected() == 1 {
            return Ok(Ok(()));
        }
        Ok(Err(self.qr_login(id).await?.status))
    }

    /// The desktop's poll: collects the session once the QR is confirmed. Exactly one poll can
    /// collect it; the first QR login of an account also grants its free check, in the same
    /// transaction, unless the requesting IP already had a free check granted today.
    pub async fn claim_qr_login(
        &self,
        id: &str,
        session_ttl_ms: i64,
        ip: &str,
        user_agent: &str,
    ) -> Result<QrClaim> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "UPDATE qr_logins SET status = 'consumed', consumed_at = $1 \
             WHERE id = $2 AND status = 'confirmed' AND expires_at > $1 RETURNING user_id, provider, requester_ip",
        )
        .bind(now)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Ok(match self.qr_login(id).await?.status {
                QrStatus::Pending => QrClaim::Pending,
                QrStatus::Expired => QrClaim::Expired,
                QrStatus::Consumed | QrStatus::Confirmed => QrClaim::AlreadyUsed,
            });
        };
        let user_id: i64 = row.try_get("user_id")?;
        let provider: String = row.try_get("provider")?;
        let requester_ip: String = row.try_get("requester_ip")?;
        let via = format!("qr:{provider}");
        let token = insert_session(
            &mut tx,
            NewSession {
                user_id,
                via: &via,
                ip,
                user_agent,
                ttl_ms: session_ttl_ms,
            },
        )
        .await?;
        let first_login_bonus = grant_first_qr_bonus(&mut tx, user_id, &requester_ip).await?;
        tx.commit().await?;
        let user = self.user_by_id(user_id).await?;
        Ok(QrClaim::LoggedIn {
            token,
            user,
            first_login_bonus,
        })
    }
}
