//! `login_api`: password login, registration, logout, password change, current user and QR login.

use crate::auth::{AuthUser, ClientInfo, public_base};
use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::Params;
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use store::{NewSession, QrClaim, QrStatus, User};
use utoipa::{IntoParams, ToSchema};

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
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

/// Password login. Repeated failures from one IP for one username (or from one IP overall)
/// lock further attempts for a while.
#[utoipa::path(post, path = "/api/base/login_api/f/login", tag = "login_api",
    params(LoginForm), request_body(content = LoginForm, description = "Also accepted as query or form"),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<LoginResult>)),
        (status = 400, description = "用户名或密码为空", body = crate::envelope::ErrorBody),
        (status = 401, description = "invalid_credentials: 用户名或密码错误", body = crate::envelope::ErrorBody),
        (status = 429, description = "too_many_attempts, with Retry-After", body = crate::envelope::ErrorBody),
    ))]
pub async fn login(
    State(state): State<AppState>,
    client: ClientInfo,
    Params(form): Params<LoginForm>,
) -> ApiResult<LoginResult> {
    let username = form.username.trim();
    if username.is_empty() || form.password.is_empty() {
        return Err(ApiError::bad_request("invalid_input", "请输入用户名和密码"));
    }
    if let Err(secs) = state.login_limiter.check(&client.ip, username) {
        return Err(ApiError::too_many_requests(
            secs,
            format!("登录失败次数过多，请 {} 分钟后再试", secs.div_ceil(60)),
        ));
    }
    let Some(user) = state.store.verify_login(username, &form.password).await? else {
        state.login_limiter.record_failure(&client.ip, username);
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_credentials",
            "用户名或密码错误",
        ));
    };
    state.login_limiter.record_success(&client.ip, username);
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

pub const USERNAME_RULE: &str = "用户名需为 4–32 个字符，可使用字母、数字、汉字及 _ - . @";

/// A username of 4–32 characters: letters (any script), digits and `_ - . @`.
pub fn valid_username(name: &str) -> bool {
    let count = name.chars().count();
    (4..=32).contains(&count)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'))
}

fn check_new_password(password: &str) -> Result<(), ApiError> {
    let count = password.chars().count();
    if count < 8 {
        return Err(ApiError::bad_request(
            "weak_password",
            "密码至少需要 8 个字符",
        ));
    }
    if count > 128 {
        return Err(ApiError::bad_request(
            "invalid_password",
            "密码不能超过 128 个字符",
        ));
    }
    Ok(())
}

/// Creates an account and signs it in.
#[utoipa::path(post, path = "/api/base/login_api/f/register", tag = "login_api",
    params(LoginForm), request_body = LoginForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<LoginResult>)),
        (status = 400, description = "invalid_username / weak_password", body = crate::envelope::ErrorBody),
        (status = 409, description = "username_taken: 该用户名已被注册", body = crate::envelope::ErrorBody),
    ))]
pub async fn register(
    State(state): State<AppState>,
    client: ClientInfo,
    Params(form): Params<LoginForm>,
) -> ApiResult<LoginResult> {
    let username = form.username.trim();
    if !valid_username(username) {
        return Err(ApiError::bad_request("invalid_username", USERNAME_RULE));
    }
    check_new_password(&form.password)?;
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
    pub old_password: String,
    pub new_password: String,
}

/// Changes the password; every other session of the user is signed out.
#[utoipa::path(post, path = "/api/base/login_api/change_password", tag = "login_api",
    security(("bearer" = [])), request_body = ChangePasswordForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 400, description = "wrong_password / weak_password", body = crate::envelope::ErrorBody),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
    ))]
pub async fn change_password(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ChangePasswordForm>,
) -> ApiResult<bool> {
    let verified = state
        .store
        .verify_login(&session.user.login_name, &form.old_password)
        .await?;
    if verified.is_none() {
        return Err(ApiError::bad_request("wrong_password", "原密码不正确"));
    }
    check_new_password(&form.new_password)?;
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
#[utoipa::path(post, path = "/api/base/login_api/f/login_qr_code", tag = "login_api",
    responses((status = 200, body = inline(crate::envelope::Envelope<QrCodeResult>))))]
pub async fn login_qr_code(
    State(state): State<AppState>,
    headers: HeaderMap,
    client: ClientInfo,
) -> ApiResult<QrCodeResult> {
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
/// token (handed out once only).
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

/// The signed-in phone user approves the QR login (built-in provider).
#[utoipa::path(post, path = "/api/base/login_api/qr_confirm", tag = "login_api",
    security(("bearer" = [])), params(QrIdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 401, description = "not_logged_in", body = crate::envelope::ErrorBody),
        (status = 404, description = "qr_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "qr_used", body = crate::envelope::ErrorBody),
        (status = 410, description = "qr_expired", body = crate::envelope::ErrorBody),
    ))]
pub async fn qr_confirm(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<QrIdForm>,
) -> ApiResult<bool> {
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
    use super::valid_username;

    #[test]
    fn username_rules() {
        assert!(valid_username("abcd"));
        assert!(valid_username("张三同学"));
        assert!(valid_username("a.b-c_d@x"));
        assert!(!valid_username("abc"));
        assert!(!valid_username("has space"));
        assert!(!valid_username(&"x".repeat(33)));
        assert!(valid_username(&"x".repeat(32)));
    }
}
