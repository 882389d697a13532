//! One module per API family of the spec (§7). `routes()` is the single route table.

pub mod account_info_api;
pub mod chat_gpt_api;
pub mod check_api;
pub mod login_api;
pub mod machine_api;
pub mod paper_aigc_api;
pub mod paper_machine_api;
pub mod paper_task;
pub mod site_api;

use crate::envelope::ApiError;
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

/// Uploads may be this large before the reader's own, clearer limit check runs.
const UPLOAD_BODY_LIMIT: usize = 64 * 1024 * 1024;

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
        .route(
            "/api/base/check_api/check_machine_submit",
            post(check_api::check_machine_submit),
        )
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
        .route(
            "/api/base/paper_aigc_api/aigc_machine_submit",
            post(paper_aigc_api::aigc_machine_submit),
        )
        .route(
            "/api/base/paper_aigc_api/machine_submit",
            post(paper_aigc_api::machine_submit),
        )
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
            "/api/base/chat_gpt_api/completions",
            post(chat_gpt_api::completions),
        )
        .route(
            "/api/base/chat_gpt_api/query_list",
            post(chat_gpt_api::query_list),
        )
        .route(
            "/api/base/chat_gpt_api/load_by_id",
            post(chat_gpt_api::load_by_id),
        )
        .route("/api/base/chat_gpt_api/delete", post(chat_gpt_api::delete))
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
