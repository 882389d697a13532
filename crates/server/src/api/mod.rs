//! One module per API family of the spec (§7): each holds its handlers, its task handler and its
//! routes, side by side. Families import `paper_task` (what every paper task shares) and never
//! each other, except rewriting, which starts from a finished check or detection.

pub mod account;
pub mod admin;
pub mod aigc;
pub mod chat;
pub mod check;
pub mod login;
pub mod order;
pub mod paper;
pub mod paper_task;
pub mod ppt;
pub mod rewrite;
pub mod site;

use crate::envelope::ApiError;
use crate::state::AppState;
use axum::Router;
use axum::routing::get;

/// Uploads may be this large before the reader's own, clearer limit check runs.
pub(crate) const UPLOAD_BODY_LIMIT: usize = 64 * 1024 * 1024;

pub fn routes() -> Router<AppState> {
    Router::new()
        .merge(site::routes())
        .merge(login::routes())
        .merge(account::routes())
        .merge(check::routes())
        .merge(aigc::routes())
        .merge(rewrite::routes())
        .merge(chat::routes())
        .merge(paper::routes())
        .merge(ppt::routes())
        .merge(order::routes())
        .merge(admin::routes())
        .route("/api/docs/openapi.json", get(crate::openapi::document))
}

/// A call of a feature that a later release brings: 501 with a stable code and a Chinese reason.
pub fn feature_unavailable(message: &str) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::NOT_IMPLEMENTED,
        "feature_unavailable",
        message,
    )
}

/// Unknown API paths answer in the envelope, never with the web app's HTML.
pub async fn api_not_found() -> ApiError {
    ApiError::not_found("api_not_found", "接口不存在")
}
