//! `login_api`: password login, registration, logout, password change, current user and QR login.

use crate::account_policy::{CredentialsInBody, check_new_password, check_new_username};
pub use crate::account_policy::{USERNAME_RULE, valid_username};
use crate::auth::{AuthUser, ClientInfo, public_base};
use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::Params;
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use store::{NewSession, QrClaim, QrStatus, User};
use utoipa::{IntoParams, ToSchema};

/// Sent in the request body, as JSON or as a form; a password in the query string is refused
/// (`credentials_in_url`).
#[derive(Debug, Deserialize, ToSchema)]
pub struct LoginForm {
    /// Trimmed before use.
    pub username: String,
    pub password: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LoginResult {
    pub access_token: String,
    #[schema(example = "Bearer")]
    pub token_type: &'static str,
    /// Unix milliseconds.
    pub expires_at: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentUser {
    pub id: i64,
    pub login_name: String,
    /// Display name; the login name until profiles exist.
    pub name: String,
    /// Image URL; empty means the client's default avatar.
    pub avatar: String,
    pub introduction: String,
    /// Front-end route roles; every user is `admin` (spec §6).
    pub roles: Vec<String>,
    /// Whether this account may use the operator console.
    pub operator: bool,
    /// Unix milliseconds.
    pub created_at: i64,
}

impl From<&User> for CurrentUser {
    fn from(u: &User) -> Self {
        CurrentUser {
            id: u.id,
            login_name: u.login_name.clone(),
            name: u.login_name.clone(),
            avatar: u.avatar.clone(),
            introduction: u.introduction.clone(),
            roles: vec!["admin".into()],
            operator: u.is_operator,
            created_at: u.created_at,
        }
    }
}

fn login_result(state: &AppState, token: String) -> LoginResult {
    LoginResult {
        access_token: token,
        token_type: "Bearer",
        expires_at: store::now_ms() + state.config.session_ttl_ms(),
    }
}

/// Password login. Credentials travel in the body (JSON or form) only; a password in the query
/// string is refused with 400 `credentials_in_url`, because addresses end up in proxy logs and
/// browser history. Failed logins are counted in the database (a restart forgets nothing) in
/// three buckets: this IP with this username (`login_max_failures`), this username from any IP
/// (`login_max_failures_per_account`) and this IP for any username
/// (`login_max_failures_per_ip`); a full bucket locks further attempts, right password or not,
/// for `login_lock_minutes`.
#[utoipa::path(post, path = "/api/base/login_api/f/login", tag = "login_api",
    request_body(content = LoginForm, description = "JSON or form body; never the query string"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<LoginResult>)),
        (status = 400, description = "invalid_input: 用户名或密码为空; credentials_in_url: 密码放在了网址中", body = crate::envelope::ErrorBody),
        (status = 401, description = "invalid_credentials: 用户名或密码错误", body = crate::envelope::ErrorBody),
        (status = 403, description = "account_disabled: 该账号已被运营人员停用", body = crate::envelope::ErrorBody),
        (status = 429, description = "too_many_attempts, with Retry-After (seconds, also in the message)", body = crate::envelope::ErrorBody),
    ))]
pub async fn login(
    State(state): State<AppState>,
    client: ClientInfo,
    _: CredentialsInBody,
    Params(form): Params<LoginForm>,
) -> ApiResult<LoginResult> {
    let username = form.username.trim();
    if username.is_empty() || form.password.is_empty() {
        return Err(ApiError::bad_request("invalid_input", "请输入用户名和密码"));
    }
    state.login_limiter.check(&client.ip, username).await?;
    let Some(user) = state.store.verify_login(username, &form.password).await? else {
        state
            .login_limiter
            .record_failure(&client.ip, username)
            .await?;
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_credentials",
            "用户名或密码错误",
        ));
    };
    state
        .login_limiter
        .record_success(&client.ip, username)
        .await?;
    let token = start_session(&state, &client, user.id, "password").await?;
    Ok(Success(login_result(&state, token)))
}

async fn start_session(
    state: &AppState,
    client: &ClientInfo,
    user_id: i64,
    via: &str,
) -> Result<String, ApiError> {
    Ok(state
        .store
        .create_session(NewSession {
            user_id,
            via,
            ip: &client.ip,
            user_agent: &client.user_agent,
            ttl_ms: state.config.session_ttl_ms(),
        })
        .await?)
}

/// Creates an account and signs it in. The name is 4–32 ASCII letters, digits, CJK ideographs
/// or `_ - . @` (full-width forms and letters of other scripts, which can pass for Latin ones,
/// are refused), and not a reserved name (`admin`, `root`, `system`, `support`, `wenjian`, `文鉴`,
/// `管理员`, `客服`, …). The password is 8–128 characters, not only spaces, does not contain the
/// name (ignoring case) and is not a common password. Registrations are limited per client IP
/// (`register_max_per_ip_per_hour`) and for everyone together (`register_max_per_minute`),
/// counted in the database once the input is valid. Credentials in the query string are refused.
#[utoipa::path(post, path = "/api/base/login_api/f/register", tag = "login_api",
    request_body(content = LoginForm, description = "JSON or form body; never the query string"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<LoginResult>)),
        (status = 400, description = "invalid_username (length, characters, full-width or look-alike letters) / reserved_username / weak_password (under 8) / invalid_password (over 128) / blank_password / password_contains_username / common_password / credentials_in_url", body = crate::envelope::ErrorBody),
        (status = 409, description = "username_taken: 该用户名已被注册", body = crate::envelope::ErrorBody),
        (status = 429, description = "too_many_registrations, with Retry-After (seconds, also in the message)", body = crate::envelope::ErrorBody),
    ))]
pub async fn register(
    State(state): State<AppState>,
    client: ClientInfo,
    _: CredentialsInBody,
    Params(form): Params<LoginForm>,
) -> ApiResult<LoginResult> {
    let username = form.username.trim();
    check_new_username(username)?;
    check_new_password(&form.password, username)?;
    crate::rate_limit::check_registration(&state.store, &state.config, &client.ip).await?;
    let user = match state
        .store
        .create_user(username, &form.password, false)
        .await
    {
        Ok(user) => user,
        Err(store::StoreError::Conflict(_)) => {
            return Err(ApiError::conflict("username_taken", "该用户名已被注册"));
        }
        Err(e) => return Err(e.into()),
    };
    tracing::info!(user_id = user.id, "registered");
    let token = start_session(&state, &client, user.id, "register").await?;
    Ok(Success(login_result(&state, token)))
}

/// The signed-in user.
#[utoipa::path(post, path = "/api/base/login_api/current", tag = "login_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<CurrentUser>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
    ))]
pub async fn current(AuthUser(session): AuthUser) -> ApiResult<CurrentUser> {
    Ok(Success(CurrentUser::from(&session.user)))
}

/// Ends this session; the token stops working at once.
#[utoipa::path(post, path = "/api/base/login_api/logout", tag = "login_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
    ))]
pub async fn logout(State(state): State<AppState>, AuthUser(session): AuthUser) -> ApiResult<bool> {
    state.store.revoke_session(session.session_id).await?;
    Ok(Success(true))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ChangePasswordForm {
    /// May be empty within `QR_RESET_MINUTES` of signing in by QR code (the forgotten-password
    /// path: the phone that confirmed the QR login vouches for the account holder).
    #[serde(default)]
    pub old_password: String,
    pub new_password: String,
}

/// How long after a QR login the password may be set without the old one.
pub const QR_RESET_MINUTES: i64 = 15;

/// Whether `session` may set a new password without the old one: signed in by QR code within
/// the last `QR_RESET_MINUTES`.
pub fn may_reset_without_old(session: &store::SessionUser, now_ms: i64) -> bool {
    session.via.starts_with("qr:") && now_ms - session.signed_in_at <= QR_RESET_MINUTES * 60_000
}

/// Changes the password; every other session of the user is signed out. A wrong old password
/// counts as a failed login of this account from this IP, and the same lockouts apply (429
/// `too_many_attempts`), so a stolen session cannot be used to guess the password. Within 15
/// minutes of a QR login the old password may be left empty (forgot password: the confirming
/// phone vouches for the holder); otherwise an empty one is `old_password_required`. The new
/// password follows the registration rules. Passwords in the query string are refused.
#[utoipa::path(post, path = "/api/base/login_api/change_password", tag = "login_api",
    security(("bearer" = [])),
    request_body(content = ChangePasswordForm, description = "JSON or form body; never the query string"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 400, description = "wrong_password / old_password_required / weak_password / invalid_password / blank_password / password_contains_username / common_password / credentials_in_url", body = crate::envelope::ErrorBody),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
        (status = 429, description = "too_many_attempts, with Retry-After", body = crate::envelope::ErrorBody),
    ))]
pub async fn change_password(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    client: ClientInfo,
    _: CredentialsInBody,
    Params(form): Params<ChangePasswordForm>,
) -> ApiResult<bool> {
    let name = &session.user.login_name;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    if form.old_password.is_empty() {
        if !may_reset_without_old(&session, now) {
            return Err(ApiError::bad_request(
                "old_password_required",
                format!(
                    "请输入原密码；忘记原密码时，请先用手机扫码登录，登录后 {QR_RESET_MINUTES} 分钟内可直接设置新密码"
                ),
            ));
        }
    } else {
        state.login_limiter.check(&client.ip, name).await?;
        let verified = state.store.verify_login(name, &form.old_password).await?;
        if verified.is_none() {
            state.login_limiter.record_failure(&client.ip, name).await?;
            return Err(ApiError::bad_request("wrong_password", "原密码不正确"));
        }
        state.login_limiter.record_success(&client.ip, name).await?;
    }
    check_new_password(&form.new_password, name)?;
    state
        .store
        .set_password(
            session.user.id,
            &form.new_password,
            Some(&session.token_hash),
        )
        .await?;
    Ok(Success(true))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QrCodeResult {
    pub id: String,
    /// The text to encode in the QR image: a link to `/m/qr/{id}` on this server.
    pub qr_code: String,
    /// Unix milliseconds.
    pub expires_at: i64,
    pub expires_in_seconds: i64,
}

/// Starts a QR login; the desktop shows `qrCode` as a QR image and polls `val_login_qr_code`.
/// The asking client's IP and User-Agent are recorded on the QR (shown on the phone, and
/// compared in `qr_confirm`). Limited per client IP (`qr_max_per_ip_per_minute`); expired QR
/// logins are swept from the database periodically.
#[utoipa::path(post, path = "/api/base/login_api/f/login_qr_code", tag = "login_api",
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<QrCodeResult>)),
        (status = 429, description = "too_many_qr_codes, with Retry-After (seconds, also in the message)", body = crate::envelope::ErrorBody),
    ))]
pub async fn login_qr_code(
    State(state): State<AppState>,
    headers: HeaderMap,
    client: ClientInfo,
) -> ApiResult<QrCodeResult> {
    crate::rate_limit::check_qr_creation(&state.store, &state.config, &client.ip).await?;
    let qr = state
        .store
        .create_qr_login(
            state.qr_provider.name(),
            state.config.qr_ttl_seconds * 1000,
            &client.ip,
            &client.user_agent,
        )
        .await?;
    let qr_code = state
        .qr_provider
        .qr_text(&qr.id, &public_base(&headers, &state));
    Ok(Success(QrCodeResult {
        qr_code,
        expires_in_seconds: (qr.expires_at - qr.created_at) / 1000,
        expires_at: qr.expires_at,
        id: qr.id,
    }))
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct QrIdForm {
    pub id: String,
}

fn qr_state_error(status: QrStatus) -> ApiError {
    match status {
        QrStatus::Expired => ApiError::new(
            StatusCode::GONE,
            "qr_expired",
            "二维码已过期，请刷新后重新扫码",
        ),
        _ => ApiError::conflict("qr_used", "该二维码已使用，请刷新后重新扫码"),
    }
}

fn qr_not_found() -> ApiError {
    ApiError::not_found("qr_not_found", "二维码不存在或已失效，请刷新后重新扫码")
}

fn map_qr_missing(err: store::StoreError) -> ApiError {
    match err {
        store::StoreError::NotFound => qr_not_found(),
        other => other.into(),
    }
}

/// The desktop's poll. `false` while waiting; once confirmed on a phone, the new session's
/// token (handed out once only). The first QR login of an account grants one free similarity
/// check, but at most one such grant per requesting IP per day (China Standard Time, kept in
/// the database): further accounts from the same address that day sign in without it and stay
/// eligible on a later day.
#[utoipa::path(post, path = "/api/base/login_api/f/val_login_qr_code", tag = "login_api",
    params(QrIdForm),
    responses(
        (status = 200, description = "`false` while pending, else the login", body = inline(crate::envelope::Envelope<Option<LoginResult>>)),
        (status = 404, description = "qr_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "qr_used: already collected", body = crate::envelope::ErrorBody),
        (status = 410, description = "qr_expired", body = crate::envelope::ErrorBody),
    ))]
pub async fn val_login_qr_code(
    State(state): State<AppState>,
    client: ClientInfo,
    Params(form): Params<QrIdForm>,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse;
    let claim = state
        .store
        .claim_qr_login(
            &form.id,
            state.config.session_ttl_ms(),
            &client.ip,
            &client.user_agent,
        )
        .await
        .map_err(map_qr_missing)?;
    match claim {
        QrClaim::Pending => Ok(Success(false).into_response()),
        QrClaim::LoggedIn {
            token,
            user,
            first_login_bonus,
        } => {
            tracing::info!(user_id = user.id, first_login_bonus, "QR login");
            Ok(Success(login_result(&state, token)).into_response())
        }
        QrClaim::Expired => Err(qr_state_error(QrStatus::Expired)),
        QrClaim::AlreadyUsed => Err(qr_state_error(QrStatus::Consumed)),
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QrInfo {
    pub id: String,
    /// pending, confirmed, consumed or expired.
    pub status: String,
    pub provider: String,
    /// The address and browser of the computer asking to sign in.
    pub requester_ip: String,
    pub requester_agent: String,
    pub created_at: i64,
    pub expires_at: i64,
}

/// What a QR login would authorise, for the phone confirmation page.
#[utoipa::path(post, path = "/api/base/login_api/f/qr_info", tag = "login_api",
    params(QrIdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<QrInfo>)),
        (status = 404, description = "qr_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn qr_info(
    State(state): State<AppState>,
    Params(form): Params<QrIdForm>,
) -> ApiResult<QrInfo> {
    let qr = state
        .store
        .qr_login(&form.id)
        .await
        .map_err(map_qr_missing)?;
    Ok(Success(QrInfo {
        id: qr.id,
        status: qr.status.as_str().into(),
        provider: qr.provider,
        requester_ip: qr.requester_ip,
        requester_agent: qr.requester_agent,
        created_at: qr.created_at,
        expires_at: qr.expires_at,
    }))
}

/// The signed-in phone user approves the QR login (built-in provider). The confirmation must
/// come from another device than the one that asked: a request with the same IP **and**
/// User-Agent as recorded on the QR is refused with 403 `qr_same_device` (a phone on the same
/// Wi-Fi shares the IP but not the browser, and is accepted). Together with the per-IP daily
/// cap on the first-login free check and the registration limits, this keeps a script from
/// minting free checks by confirming its own codes.
#[utoipa::path(post, path = "/api/base/login_api/qr_confirm", tag = "login_api",
    security(("bearer" = [])), params(QrIdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
        (status = 403, description = "qr_same_device: 请使用另一台设备（手机）扫码确认", body = crate::envelope::ErrorBody),
        (status = 404, description = "qr_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "qr_used", body = crate::envelope::ErrorBody),
        (status = 410, description = "qr_expired", body = crate::envelope::ErrorBody),
    ))]
pub async fn qr_confirm(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    client: ClientInfo,
    Params(form): Params<QrIdForm>,
) -> ApiResult<bool> {
    let qr = state
        .store
        .qr_login(&form.id)
        .await
        .map_err(map_qr_missing)?;
    if qr.status != QrStatus::Pending {
        return Err(qr_state_error(qr.status));
    }
    if qr.same_client(&client.ip, &client.user_agent) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "qr_same_device",
            "请使用另一台设备（手机）扫码确认：二维码不能在请求登录的同一浏览器中确认",
        ));
    }
    state
        .store
        .confirm_qr_login(&form.id, session.user.id)
        .await
        .map_err(map_qr_missing)?
        .map_err(qr_state_error)?;
    Ok(Success(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(via: &str, signed_in_at: i64) -> store::SessionUser {
        store::SessionUser {
            session_id: 1,
            token_hash: String::new(),
            via: via.into(),
            signed_in_at,
            user: store::User {
                id: 1,
                login_name: "u".into(),
                avatar: String::new(),
                introduction: String::new(),
                is_operator: false,
                disabled: false,
                created_at: 0,
            },
        }
    }

    #[test]
    fn only_a_fresh_qr_login_may_skip_the_old_password() {
        let now = 100 * 60_000;
        assert!(may_reset_without_old(
            &session("qr:wechat", now - 60_000),
            now
        ));
        assert!(!may_reset_without_old(
            &session("qr:wechat", now - 16 * 60_000),
            now
        ));
        assert!(!may_reset_without_old(&session("password", now), now));
        assert!(!may_reset_without_old(&session("register", now), now));
    }
}
