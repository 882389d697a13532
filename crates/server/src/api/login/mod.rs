//! Login, registration and QR login.

pub mod login_api;

use crate::state::AppState;
use axum::Router;
use axum::routing::post;

pub fn routes() -> Router<AppState> {
    Router::new()
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
}
