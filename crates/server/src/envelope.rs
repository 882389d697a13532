//! The response envelope of ARCHITECTURE §2 and the error type every handler returns.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use store::StoreError;
use utoipa::ToSchema;

/// Success: `{"code":200,"success":true,"message":"操作成功","result":…}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Envelope<T> {
    #[schema(example = 200)]
    pub code: u16,
    pub success: bool,
    pub message: String,
    pub result: T,
}

/// Failure: a real HTTP status, a Chinese sentence for people and a stable code for programs.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    #[schema(example = 401)]
    pub code: u16,
    #[schema(example = false)]
    pub success: bool,
    #[schema(example = "未登录、请登录后使用!")]
    pub message: String,
    #[schema(example = "not_logged_in")]
    pub error: String,
}

pub struct Success<T>(pub T);

impl<T: Serialize> IntoResponse for Success<T> {
    fn into_response(self) -> Response {
        Json(Envelope {
            code: 200,
            success: true,
            message: "操作成功".into(),
            result: self.0,
        })
        .into_response()
    }
}

pub type ApiResult<T> = Result<Success<T>, ApiError>;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub retry_after_secs: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after_secs: None,
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_logged_in() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "not_logged_in",
            "未登录、请登录后使用!",
        )
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    pub fn too_many_requests(retry_after_secs: u64, message: impl Into<String>) -> Self {
        ApiError {
            retry_after_secs: Some(retry_after_secs),
            ..Self::new(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts", message)
        }
    }

    pub fn internal(err: impl std::fmt::Display) -> Self {
        tracing::error!(error = %err, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "服务器内部错误，请稍后重试",
        )
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => ApiError::not_found("not_found", "记录不存在或已删除"),
            StoreError::Conflict(what) => {
                ApiError::conflict("conflict", format!("数据冲突（{what}），请刷新后重试"))
            }
            StoreError::InsufficientFunds => ApiError::new(
                StatusCode::PAYMENT_REQUIRED,
                "insufficient_balance",
                "账户余额或免费次数不足",
            ),
            StoreError::Invalid(message) => ApiError::bad_request("invalid_file", message),
            StoreError::NotOperator => ApiError::new(
                StatusCode::FORBIDDEN,
                "not_operator",
                "此功能仅限运营人员使用",
            ),
            StoreError::Disabled => ApiError::new(
                StatusCode::FORBIDDEN,
                "account_disabled",
                "该账号已被停用，如有疑问请联系客服",
            ),
            other => ApiError::internal(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(ErrorBody {
                code: self.status.as_u16(),
                success: false,
                message: self.message,
                error: self.code.into(),
            }),
        )
            .into_response();
        if let Some(secs) = self.retry_after_secs
            && let Ok(value) = HeaderValue::from_str(&secs.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}
