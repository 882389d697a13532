//! One module per API family of the spec (§7). `routes()` is the single route table.

pub mod account_info_api;
pub mod login_api;
pub mod site_api;

use crate::envelope::ApiError;
use crate::state::AppState;
use axum::Router;
use axum::routing::{get, post};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/health", get(site_api::health))
        .route("/api/base/site_api/f/config", get(site_api::config))
        .route("/api/base/login_api/f/login", post(login_api::login))
        .route("/api/base/login_api/f/register", post(login_api::register))
        .route("/api/base/login_api/current", post(login_api::current))
        .route("/api/base/login_api/logout", post(login_api::logout))
        .route(
            "/api/base/login_api/change_password",
            post(login_api::change_password),
        )
        .route(
            "/api/base/login_api/f/login_qr_code",
            post(login_api::login_qr_code),
        )
        .route(
            "/api/base/login_api/f/val_login_qr_code",
            post(login_api::val_login_qr_code),
        )
        .route("/api/base/login_api/f/qr_info", post(login_api::qr_info))
        .route(
            "/api/base/login_api/qr_confirm",
            post(login_api::qr_confirm),
        )
        .route(
            "/api/base/account_info_api/account",
            get(account_info_api::account),
        )
        .route("/api/docs/openapi.json", get(crate::openapi::document))
}

/// Unknown API paths answer in the envelope, never with the web app's HTML.
pub async fn api_not_found() -> ApiError {
    ApiError::not_found("api_not_found", "接口不存在")
}
