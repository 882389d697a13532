//! AI-text detection (AIGC检测): uploads, pricing, the task and its reports.

pub mod paper_aigc_api;
pub mod task;

use super::UPLOAD_BODY_LIMIT;
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::post;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/base/paper_aigc_api/word_count",
            post(paper_aigc_api::word_count).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        )
        .route(
            "/api/base/paper_aigc_api/machine_init",
            post(paper_aigc_api::machine_init).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        )
        .route(
            "/api/base/paper_aigc_api/check_order_id",
            post(paper_aigc_api::check_order_id),
        )
        .route(
            "/api/base/paper_aigc_api/submit_check",
            post(paper_aigc_api::submit_check),
        )
        .route(
            "/api/base/paper_aigc_api/reload",
            post(paper_aigc_api::reload),
        )
        .route(
            "/api/base/paper_aigc_api/query_list",
            post(paper_aigc_api::query_list),
        )
        .route(
            "/api/base/paper_aigc_api/load_by_id",
            post(paper_aigc_api::load_by_id),
        )
        .route(
            "/api/base/paper_aigc_api/query_content_list",
            post(paper_aigc_api::query_content_list),
        )
        .route(
            "/api/base/paper_aigc_api/load_content_by_id",
            post(paper_aigc_api::load_content_by_id),
        )
        .route(
            "/api/base/paper_aigc_api/download_report",
            post(paper_aigc_api::download_report).get(paper_aigc_api::download_report),
        )
        .route(
            "/api/base/paper_aigc_api/delete",
            post(paper_aigc_api::delete),
        )
}
