//! `account_info_api`: balance, free check credits and the recent ledger.

use crate::auth::AuthUser;
use crate::envelope::ApiResult;
use crate::envelope::Success;
use crate::state::AppState;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerRow {
    pub id: i64,
    /// Stable kind, e.g. `qr_first_login_bonus`, `operator_credit`.
    pub kind: String,
    /// Change of balance in fen (1/100 yuan); negative for spending.
    pub delta_fen: i64,
    pub delta_free_checks: i64,
    pub balance_after_fen: i64,
    pub free_checks_after: i64,
    /// Why the account changed, in Chinese.
    pub reason: String,
    /// Unix milliseconds.
    pub created_at: i64,
}

/// What a paid package left to use.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantRow {
    /// `check`, `aigc`, `rewrite_chars`, `paper` or `ppt`.
    pub kind: String,
    /// "查重 3 次" of the package as bought.
    pub label: String,
    pub total: i64,
    pub remaining: i64,
    /// "次", "字", "篇" or "份".
    pub unit: String,
    /// Unix milliseconds; unused uses lapse then.
    pub expires_at: i64,
}

/// One task a package paid for.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantUseRow {
    /// The package's name as bought.
    pub package: String,
    pub kind: String,
    /// What stays used (0 once given back in full).
    pub units: i64,
    /// "次", "字" or "篇".
    pub unit: String,
    pub reason: String,
    pub task_id: i64,
    pub created_at: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountInfo {
    pub user_id: i64,
    pub login_name: String,
    /// Balance in fen (1/100 yuan).
    pub balance_fen: i64,
    /// Free plagiarism checks left.
    pub free_check_credits: i64,
    /// Packages' uses still open, those ending first first.
    pub grants: Vec<GrantRow>,
    /// The latest tasks packages paid for, newest first.
    pub grant_uses: Vec<GrantUseRow>,
    /// The newest 50 ledger rows, newest first.
    pub ledger: Vec<LedgerRow>,
}

const RECENT_LEDGER_ROWS: i64 = 50;

#[utoipa::path(get, path = "/api/base/account_info_api/account", tag = "account_info_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<AccountInfo>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
    ))]
pub async fn account(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
) -> ApiResult<AccountInfo> {
    Ok(Success(account_of(&state, &session.user).await?))
}

/// A user's balance, packages and recent ledger: what the account centre and the console show.
pub async fn account_of(
    state: &AppState,
    user: &store::User,
) -> Result<AccountInfo, crate::envelope::ApiError> {
    let account = state.store.account(user.id).await?;
    let ledger = state
        .store
        .ledger(user.id, RECENT_LEDGER_ROWS)
        .await?
        .into_iter()
        .map(|e| LedgerRow {
            id: e.id,
            kind: e.kind,
            delta_fen: e.delta_fen,
            delta_free_checks: e.delta_free_checks,
            balance_after_fen: e.balance_after_fen,
            free_checks_after: e.free_checks_after,
            reason: e.reason,
            created_at: e.created_at,
        })
        .collect();
    let grants = state
        .store
        .active_grants(user.id, store::now_ms())
        .await?
        .into_iter()
        .map(|g| GrantRow {
            kind: g.kind.as_str().into(),
            label: crate::api::order::product_package_api::grant_label(g.kind, g.total),
            total: g.total,
            remaining: g.remaining,
            unit: g.kind.unit().into(),
            expires_at: g.expires_at,
        })
        .collect();
    let grant_uses = state
        .store
        .grant_uses(user.id, RECENT_LEDGER_ROWS, 0)
        .await?
        .into_iter()
        .map(|u| GrantUseRow {
            package: u.title,
            kind: u.kind.as_str().into(),
            units: u.units,
            unit: u.kind.unit().into(),
            reason: u.reason,
            task_id: u.task_id,
            created_at: u.created_at,
        })
        .collect();
    Ok(AccountInfo {
        grants,
        grant_uses,
        user_id: user.id,
        login_name: user.login_name.clone(),
        balance_fen: account.balance_fen,
        free_check_credits: account.free_checks,
        ledger,
    })
}
