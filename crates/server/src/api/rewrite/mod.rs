//! Rewriting (降重 / 降AIGC, paragraph and smart rewriting): the task, its comparisons and
//! downloads, and the rewrites started from a finished check or detection.

pub mod from_reports;
pub mod machine_api;
pub mod paper_machine_api;
pub mod task;

use super::UPLOAD_BODY_LIMIT;
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/base/paper_machine_api/word_count",
            post(paper_machine_api::word_count).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        )
        .route(
            "/api/base/paper_machine_api/machine_init",
            post(paper_machine_api::machine_init).layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        )
        .route(
            "/api/base/paper_machine_api/check_machine_submit",
            post(paper_machine_api::check_machine_submit),
        )
        .route(
            "/api/base/paper_machine_api/check_aigc_machine_submit",
            post(paper_machine_api::check_aigc_machine_submit),
        )
        .route(
            "/api/base/paper_machine_api/check_aigc_and_machine_submit",
            post(paper_machine_api::check_aigc_and_machine_submit),
        )
        .route(
            "/api/base/paper_machine_api/machine_submit",
            post(paper_machine_api::machine_submit),
        )
        .route(
            "/api/base/paper_machine_api/reload",
            post(paper_machine_api::reload),
        )
        .route(
            "/api/base/paper_machine_api/query_list",
            post(paper_machine_api::query_list),
        )
        .route(
            "/api/base/paper_machine_api/load_by_id",
            post(paper_machine_api::load_by_id),
        )
        .route(
            "/api/base/paper_machine_api/query_content_list",
            post(paper_machine_api::query_content_list),
        )
        .route(
            "/api/base/paper_machine_api/load_content_by_id",
            post(paper_machine_api::load_content_by_id),
        )
        .route(
            "/api/base/paper_machine_api/choose",
            post(paper_machine_api::choose),
        )
        .route(
            "/api/base/paper_machine_api/download",
            post(paper_machine_api::download),
        )
        .route(
            "/api/base/paper_machine_api/submit_check",
            post(paper_machine_api::submit_check),
        )
        .route(
            "/api/base/paper_machine_api/delete",
            post(paper_machine_api::delete),
        )
        .route(
            "/api/base/paper_machine_api/engine",
            get(paper_machine_api::engine),
        )
        .route(
            "/api/base/machine_api/check_order_id",
            post(paper_machine_api::check_order_id),
        )
        .route(
            "/api/base/machine_api/word_count",
            post(machine_api::word_count),
        )
        .route(
            "/api/base/machine_api/machine_cnki_init",
            post(machine_api::machine_cnki_init),
        )
        .route(
            "/api/base/machine_api/machine_init",
            post(machine_api::machine_init),
        )
        .route(
            "/api/base/machine_api/machine_cnki_submit",
            post(machine_api::machine_cnki_submit),
        )
        .route(
            "/api/base/machine_api/machine_submit",
            post(machine_api::machine_submit),
        )
        .route(
            "/api/base/machine_api/query_list",
            post(machine_api::query_list),
        )
        .route(
            "/api/base/machine_api/load_by_id",
            post(machine_api::load_by_id),
        )
        .route("/api/base/machine_api/delete", post(machine_api::delete))
        .route(
            "/api/base/machine_api/download_report",
            get(machine_api::download_report),
        )
        .route(
            "/api/base/check_api/check_machine_submit",
            post(from_reports::check_api_check_machine_submit),
        )
        .route(
            "/api/base/paper_aigc_api/aigc_machine_submit",
            post(from_reports::aigc_machine_submit),
        )
        .route(
            "/api/base/paper_aigc_api/machine_submit",
            post(from_reports::aigc_machine_submit_again),
        )
}
