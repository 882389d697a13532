//! Similarity checks (查重): uploads, pricing, the task and its reports.

pub mod check_api;
pub mod task;

use super::UPLOAD_BODY_LIMIT;
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/base/check_api/word_count",
            post(check_api::word_count).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        )
        .route(
            "/api/base/check_api/check_init",
            post(check_api::check_init).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        )
        .route(
            "/api/base/check_api/check_cost",
            post(check_api::check_cost),
        )
        .route(
            "/api/base/check_api/check_submit",
            post(check_api::check_submit),
        )
        .route(
            "/api/base/check_api/query_list",
            post(check_api::query_list),
        )
        .route(
            "/api/base/check_api/load_by_id",
            post(check_api::load_by_id),
        )
        .route(
            "/api/base/check_api/report_paragraphs",
            get(check_api::report_paragraphs),
        )
        .route(
            "/api/base/check_api/download_report",
            get(check_api::download_report),
        )
        .route(
            "/api/base/check_api/verify_report",
            get(check_api::verify_report),
        )
        .route(
            "/api/base/check_api/update_title",
            post(check_api::update_title),
        )
        .route("/api/base/check_api/delete", post(check_api::delete))
}
